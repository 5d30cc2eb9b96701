package provider_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/workflows"
)

// The reply's records (workflows/contract.go) carry a turn and an answer's tool calls and reasoning as
// opaque JSON: exactly the JSON the typed fields had, so that recorded histories replay, and
// results recorded before decode as they did.
func TestRecordsCarryContentAsTheTypedFieldsDid(t *testing.T) {
	answer := provider.Answer{Text: "<checking> & more", FinishReason: provider.FinishToolCalls,
		ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		Reasoning: []provider.Part{{Type: provider.PartReasoning, Text: "think", Signature: "sig"}, {Type: provider.PartReasoning, Redacted: "opaque"}},
		Usage:     provider.Usage{Input: 12, Output: 3, CachedInput: 4}}

	// The outcome and the result as they were typed before (an outcome now writes its text and
	// token counts even when empty, as the result always did: both embed policy.Answer).
	type typedOutcome struct {
		OK           bool                `json:"ok"`
		Text         string              `json:"text"`
		ToolCalls    []provider.ToolCall `json:"toolCalls,omitempty"`
		Reasoning    []provider.Part     `json:"reasoning,omitempty"`
		FinishReason string              `json:"finishReason,omitempty"`
		Input        int64               `json:"inputTokens"`
		Output       int64               `json:"outputTokens"`
		CachedInput  int64               `json:"cachedInputTokens,omitempty"`
	}
	type typedResult struct {
		Text         string              `json:"text"`
		ToolCalls    []provider.ToolCall `json:"toolCalls,omitempty"`
		Reasoning    []provider.Part     `json:"reasoning,omitempty"`
		FinishReason string              `json:"finishReason,omitempty"`
		Input        int64               `json:"inputTokens"`
		Output       int64               `json:"outputTokens"`
		CachedInput  int64               `json:"cachedInputTokens,omitempty"`
		Served       policy.Served       `json:"served"`
		Attempts     []policy.Attempt    `json:"attempts"`
		Notices      []string            `json:"notices"`
	}
	for _, a := range []provider.Answer{answer, {Text: "plain", FinishReason: provider.FinishStop}} {
		calls, reasoning, err := provider.EncodeAnswerContent(a)
		if err != nil {
			t.Fatal(err)
		}
		u := a.Usage
		same(t, "outcome", typedOutcome{true, a.Text, a.ToolCalls, a.Reasoning, a.FinishReason, u.Input, u.Output, u.CachedInput},
			policy.AttemptOutcome{OK: true, Answer: policy.Answer{Text: a.Text, ToolCalls: calls, Reasoning: reasoning, FinishReason: a.FinishReason,
				Input: u.Input, Output: u.Output, CachedInput: u.CachedInput}})
		served := policy.Served{Provider: "openai", Model: "gpt-5", Profile: "openai:default"}
		old := typedResult{a.Text, a.ToolCalls, a.Reasoning, a.FinishReason, u.Input, u.Output, u.CachedInput, served, nil, nil}
		same(t, "result", old, policy.ReplyResult{Answer: policy.Answer{Text: a.Text, ToolCalls: calls, Reasoning: reasoning,
			FinishReason: a.FinishReason, Input: u.Input, Output: u.Output, CachedInput: u.CachedInput}, Served: served})

		// A result recorded before decodes to the same answer.
		data, _ := json.Marshal(old)
		var res policy.ReplyResult
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		gotCalls, gotReasoning, err := provider.DecodeAnswerContent(res.ToolCalls, res.Reasoning)
		if err != nil || !reflect.DeepEqual(gotCalls, a.ToolCalls) || !reflect.DeepEqual(gotReasoning, a.Reasoning) {
			t.Errorf("decoded %+v %+v %v, want %+v %+v", gotCalls, gotReasoning, err, a.ToolCalls, a.Reasoning)
		}
	}

	// A turn: an image's bytes, a tool's schema, a cache mark.
	turn := provider.Turn{Tools: []provider.Tool{{Name: "f", Schema: json.RawMessage(`{"type": "object"}`)}},
		Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart("a < b"),
			{Type: provider.PartImage, MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n\x00"), CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}}}},
		Wire: provider.WireAnthropic, Extra: map[string]json.RawMessage{"metadata": json.RawMessage(`{"user_id": "u"}`)}}
	raw, err := json.Marshal(turn) // as workflows.WithTurn puts it on a request
	if err != nil {
		t.Fatal(err)
	}
	type typedRequest struct {
		Agent   string         `json:"agent"`
		Message string         `json:"message"`
		Turn    *provider.Turn `json:"turn,omitempty"`
	}
	type typedAttempt struct {
		Turn *provider.Turn `json:"turn,omitempty"`
	}
	req := workflows.ReplyRequest{Agent: "main", Message: "a < b", Turn: raw}
	want, _ := json.Marshal(typedRequest{Agent: "main", Message: "a < b", Turn: &turn})
	got, _ := json.Marshal(struct {
		Agent   string          `json:"agent"`
		Message string          `json:"message"`
		Turn    json.RawMessage `json:"turn,omitempty"`
	}{req.Agent, req.Message, req.Turn})
	if !bytes.Equal(got, want) {
		t.Errorf("request\n got %s\nwant %s", got, want)
	}
	var back workflows.AttemptRequest
	data, _ := json.Marshal(typedAttempt{Turn: &turn})
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	var decoded provider.Turn
	if err := json.Unmarshal(back.Turn, &decoded); err != nil || !reflect.DeepEqual(normalize(decoded), normalize(turn)) {
		t.Errorf("a turn recorded before decodes to %+v (%v)", decoded, err)
	}
	if data, _ := json.Marshal(workflows.AttemptRequest{Agent: "main"}); bytes.Contains(data, []byte(`"turn"`)) {
		t.Errorf("no turn, no field: %s", data)
	}
}

// same checks that two values encode to the same JSON, byte for byte.
func same(t *testing.T, what string, typed, opaque any) {
	t.Helper()
	want, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(opaque)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s\n got %s\nwant %s", what, got, want)
	}
}
