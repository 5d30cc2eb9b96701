package provider

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// What the Converse wire drops from a turn (bedrockDrops, which Dropped calls for the wire).
func TestBedrockDrops(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	yes, no := true, false
	seed, temp := int64(7), 0.5
	mark := json.RawMessage(`{"type":"ephemeral"}`)
	results := []Part{{Type: PartText, Text: "18 C", CacheControl: mark}}
	full := Turn{
		Messages: []Message{
			{Role: RoleSystem, Content: []Part{{Type: PartText, Text: "be brief", CacheControl: mark}}},
			{Role: RoleUser, Content: []Part{TextPart("look"), {Type: PartImage, Data: png, Detail: "high"}, {Type: PartImage, URL: "https://example.com/cat.jpg"}}},
			{Role: RoleAssistant, Content: []Part{{Type: PartReasoning, Text: "hm", Signature: "sig"}, {Type: PartToolCall, CallID: "c1", Name: "f"}}},
			{Role: RoleTool, Content: []Part{{Type: PartToolResult, CallID: "c1", Result: results}}},
		},
		Tools:             []Tool{{Name: "f", Strict: &yes, CacheControl: mark}},
		ParallelToolCalls: &no,
		Params:            Params{Seed: &seed, PresencePenalty: &temp, FrequencyPenalty: &temp, Temperature: &temp},
	}
	for _, c := range []struct {
		name string
		turn func() Turn
		want []string
	}{
		{"a full turn", func() Turn { return full }, []string{"messages.content.detail", "messages.content.image (a URL)",
			"messages.content.result.cacheControl", "parallelToolCalls", "params.frequencyPenalty", "params.presencePenalty", "params.seed", "tools.strict"}},
		{"tool choice none, nothing to call back", func() Turn {
			return Turn{Messages: []Message{{Role: RoleUser, Content: []Part{TextPart("hi")}}}, Tools: []Tool{{Name: "f"}}, ToolChoice: &ToolChoice{Type: ToolChoiceNone}}
		}, []string{"toolChoice"}},
		{"reasoning without a signature", func() Turn {
			return Turn{Messages: []Message{{Role: RoleUser, Content: []Part{TextPart("hi")}},
				{Role: RoleAssistant, Content: []Part{{Type: PartReasoning, ReasoningID: "rs_1", Encrypted: "e"}, TextPart("ok")}}}}
		}, []string{"messages.content.reasoning (without a signature)"}},
	} {
		d := &drops{}
		bedrockDrops(c.turn(), d)
		got := slices.Clone(d.list)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: dropped %q, want %q", c.name, got, c.want)
		}
	}

	// A model other than Claude takes neither thinking nor reasoning blocks back.
	turn := full
	turn.Params = Params{ReasoningEffort: "high"}
	d := &drops{}
	bedrockBody("amazon.nova-pro-v1:0", turn, d, "", "")
	if !slices.Contains(d.list, "params.reasoningEffort") || !slices.Contains(d.list, bedrockNotClaude) {
		t.Errorf("dropped for Nova: %q", d.list)
	}
	d = &drops{}
	bedrockBody(bedrockModelID, turn, d, "", "")
	if slices.Contains(d.list, "params.reasoningEffort") || slices.Contains(d.list, bedrockNotClaude) {
		t.Errorf("dropped for Claude: %q", d.list)
	}
}

const bedrockModelID = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"

func TestBedrockNames(t *testing.T) {
	for in, want := range map[string]string{
		"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/": "ThrottlingException",
		"com.amazon.coral.service#ExpiredTokenException":                           "ExpiredTokenException",
		"throttlingException":    "ThrottlingException",
		"  ValidationException ": "ValidationException",
		"":                       "",
	} {
		if got := bedrockName(in); got != want {
			t.Errorf("bedrockName(%q) = %q, want %q", in, got, want)
		}
	}
	if bedrockClaude("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3") || !bedrockClaude("us.anthropic.claude-3-5-haiku-20241022-v1:0") {
		t.Error("bedrockClaude")
	}
}

// Messages whose every block was dropped leave roles that still alternate, from a user message.
func TestBedrockConversationsAlternate(t *testing.T) {
	turn := Turn{Messages: []Message{
		{Role: RoleUser, Content: []Part{{Type: PartImage, URL: "https://example.com/cat.jpg"}}},
		{Role: RoleAssistant, Content: []Part{TextPart("a cat")}},
		{Role: RoleUser, Content: []Part{TextPart("and this?")}},
		{Role: RoleAssistant, Content: []Part{{Type: PartReasoning, Text: "hm", Signature: "sig"}}},
		{Role: RoleUser, Content: []Part{TextPart("well?")}},
	}}
	in, _ := bedrockBody("amazon.nova-pro-v1:0", turn, nil, "", "")
	var got []string
	for _, m := range in.Messages {
		var texts []string
		for _, c := range m.Content {
			if tb, ok := c.(*types.ContentBlockMemberText); ok {
				texts = append(texts, tb.Value)
			}
		}
		got = append(got, string(m.Role)+": "+strings.Join(texts, " | "))
	}
	want := []string{"user: " + conversationStart, "assistant: a cat", "user: and this? | well?"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}
