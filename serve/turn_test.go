package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// turnWorld is a serve endpoint in front of a worker, the fake provider and a store for turn
// content: openai/gpt-5 (OpenAI wire) falls back to anthropic/claude (Anthropic wire).
type turnWorld struct {
	*testsuite.World
	h *httptest.Server
}

func newTurnWorld(t *testing.T, rules []fakeprovider.Rule) *turnWorld {
	t.Helper()
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-turn-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-turn-b"}}, rules)
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	h := httptest.NewServer(&server{client: srv.Client(), taskQueue: tq, config: w.Config, timeout: time.Minute, content: w.Store, responses: w.Store})
	t.Cleanup(h.Close)
	return &turnWorld{World: w, h: h}
}

func (tw *turnWorld) openai() openai.Client {
	return openai.NewClient(option.WithBaseURL(tw.h.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

func (tw *turnWorld) anthropic() anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(tw.h.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
}

// lastBody is what the provider received on its last call.
func (tw *turnWorld) lastBody(t *testing.T) map[string]any {
	t.Helper()
	calls := tw.Fake.Calls()
	if len(calls) == 0 {
		t.Fatal("the provider saw no call")
	}
	var body map[string]any
	if err := json.Unmarshal(calls[len(calls)-1].Body, &body); err != nil {
		t.Fatalf("provider body: %v", err)
	}
	return body
}

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name: "get_weather", Description: openai.String("the weather in a city"),
	Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
})

func toolCallReply(id, name, args string) fakeprovider.Response {
	return fakeprovider.Response{ToolCalls: []fakeprovider.ToolCall{{ID: id, Name: name, Arguments: args}},
		Usage: &fakeprovider.Usage{Input: 40, Output: 9, Cached: 32}}
}

func overloaded() fakeprovider.Response {
	return fakeprovider.Response{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
}

func TestOpenAIClientRunsAToolStepThroughServe(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
			tw := newTurnWorld(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{
				toolCallReply("call_w1", "get_weather", `{"city":"Paris"}`),
				{Text: "It is 18 degrees in Paris.", Usage: &fakeprovider.Usage{Input: 60, Output: 7}},
			}}})
			client := tw.openai()
			params := openai.ChatCompletionNewParams{
				Model: "openai/gpt-5",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are terse."),
					openai.UserMessage("What is the weather in Paris?")},
				Tools:               []openai.ChatCompletionToolUnionParam{weatherTool},
				ToolChoice:          openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")},
				ParallelToolCalls:   openai.Bool(false),
				Temperature:         openai.Float(0.3),
				TopP:                openai.Float(0.9),
				MaxCompletionTokens: openai.Int(300),
				Stop:                openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END"}},
				Seed:                openai.Int(7),
				PresencePenalty:     openai.Float(0.1),
				FrequencyPenalty:    openai.Float(0.2),
				ReasoningEffort:     shared.ReasoningEffortLow,
			}
			msg, finish, usage := complete(t, client, params, stream)
			if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "call_w1" || msg.ToolCalls[0].Function.Name != "get_weather" ||
				msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || finish != "tool_calls" {
				t.Fatalf("tool call: %+v finish %q", msg.ToolCalls, finish)
			}
			if usage.PromptTokens != 40 || usage.CompletionTokens != 9 || usage.PromptTokensDetails.CachedTokens != 32 {
				t.Errorf("usage %+v, want the provider's 40/9 with 32 cached", usage)
			}
			sent := tw.lastBody(t)
			for field, want := range map[string]any{"temperature": 0.3, "top_p": 0.9, "max_completion_tokens": 300.0, "seed": 7.0,
				"presence_penalty": 0.1, "frequency_penalty": 0.2, "reasoning_effort": "low", "parallel_tool_calls": false, "tool_choice": "auto"} {
				if sent[field] != want {
					t.Errorf("the provider got %s = %v, want %v", field, sent[field], want)
				}
			}
			if stop, _ := json.Marshal(sent["stop"]); string(stop) != `["END"]` {
				t.Errorf("stop: %s", stop)
			}
			if tools, _ := json.Marshal(sent["tools"]); !strings.Contains(string(tools), `"name":"get_weather"`) || !strings.Contains(string(tools), `"required":["city"]`) {
				t.Errorf("tools: %s", tools)
			}

			// The follow-up turn carries the tool result and is answered.
			params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage(`{"celsius":18}`, "call_w1"))
			msg, finish, _ = complete(t, client, params, stream)
			if msg.Content != "It is 18 degrees in Paris." || finish != "stop" {
				t.Errorf("answer %q finish %q", msg.Content, finish)
			}
			msgs, _ := json.Marshal(tw.lastBody(t)["messages"])
			if !strings.Contains(string(msgs), `"tool_call_id":"call_w1"`) || !strings.Contains(string(msgs), `"id":"call_w1"`) {
				t.Errorf("the provider did not get the tool step: %s", msgs)
			}
		})
	}
}

// complete sends params through the SDK, whole or streamed (accumulated as the SDK does).
func complete(t *testing.T, client openai.Client, params openai.ChatCompletionNewParams, stream bool) (openai.ChatCompletionMessage, string, openai.CompletionUsage) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !stream {
		c, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		return c.Choices[0].Message, c.Choices[0].FinishReason, c.Usage
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) == 0 {
		t.Fatal("the stream had no choice")
	}
	return acc.Choices[0].Message, acc.Choices[0].FinishReason, acc.Usage
}

func TestAnthropicClientRunsAToolStepThroughServe(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
			tw := newTurnWorld(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{
				toolCallReply("toolu_01", "get_weather", `{"city":"Oslo"}`),
				{Text: "Cold: 2 degrees.", Usage: &fakeprovider.Usage{Input: 70, Output: 5, Cached: 50}},
			}}})
			client := tw.anthropic()
			params := anthropic.MessageNewParams{
				Model: "anthropic/claude", MaxTokens: 500,
				System:        []anthropic.TextBlockParam{{Text: "Be brief."}},
				Messages:      []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Oslo?"))},
				Tools:         []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
				Temperature:   anthropic.Float(0.5),
				TopK:          anthropic.Int(40),
				StopSequences: []string{"STOP"},
			}
			m := completeAnthropicWith(t, client, params, stream)
			var use anthropic.ToolUseBlock
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					use = b.AsToolUse()
				}
			}
			if use.ID != "toolu_01" || use.Name != "get_weather" || string(use.Input) != `{"city":"Oslo"}` || m.StopReason != "tool_use" {
				t.Fatalf("tool use %+v stop %q", use, m.StopReason)
			}
			sent := tw.lastBody(t)
			if sent["temperature"] != 0.5 || sent["top_k"] != 40.0 || sent["max_tokens"] != 500.0 {
				t.Errorf("the provider got temperature %v top_k %v max_tokens %v", sent["temperature"], sent["top_k"], sent["max_tokens"])
			}
			if stops, _ := json.Marshal(sent["stop_sequences"]); string(stops) != `["STOP"]` {
				t.Errorf("stop_sequences %s", stops)
			}
			if sys, _ := json.Marshal(sent["system"]); !strings.Contains(string(sys), "Be brief.") {
				t.Errorf("system: %s", sys)
			}
			params.Messages = append(params.Messages, m.ToParam(),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_01", "2 degrees", false)))
			m = completeAnthropicWith(t, client, params, stream)
			if len(m.Content) != 1 || m.Content[0].Text != "Cold: 2 degrees." || m.StopReason != "end_turn" {
				t.Errorf("answer %+v stop %q", m.Content, m.StopReason)
			}
			if m.Usage.InputTokens != 20 || m.Usage.CacheReadInputTokens != 50 || m.Usage.OutputTokens != 5 {
				t.Errorf("usage %+v, want the provider's 20 + 50 cached, 5 out", m.Usage)
			}
		})
	}
}

func TestToolsSurviveAFailoverAcrossWires(t *testing.T) {
	t.Run("OpenAI caller, Anthropic fallback", func(t *testing.T) {
		tw := newTurnWorld(t, []fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{overloaded()}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{
				toolCallReply("toolu_x1", "get_weather", `{"city":"Rome"}`), {Text: "Sunny in Rome."}}},
		})
		client := tw.openai()
		params := openai.ChatCompletionNewParams{Model: "openai/gpt-5", Tools: []openai.ChatCompletionToolUnionParam{weatherTool},
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Use tools."), openai.UserMessage("Rome?")}}
		msg, finish, _ := complete(t, client, params, true)
		if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "toolu_x1" || msg.ToolCalls[0].Function.Arguments != `{"city":"Rome"}` || finish != "tool_calls" {
			t.Fatalf("tool call through the fallback: %+v %q", msg.ToolCalls, finish)
		}
		params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("sunny", "toolu_x1"))
		msg, _, _ = complete(t, client, params, false)
		if msg.Content != "Sunny in Rome." {
			t.Errorf("answer %q", msg.Content)
		}
		// Anthropic's shape: the system prompt on top, the tool result first in the user message
		// right after the assistant's tool_use, the ids kept.
		sent := tw.lastBody(t)
		if sys, _ := json.Marshal(sent["system"]); !strings.Contains(string(sys), "Use tools.") {
			t.Errorf("system: %s", sys)
		}
		var msgs []struct {
			Role    string
			Content []map[string]any
		}
		raw, _ := json.Marshal(sent["messages"])
		if err := json.Unmarshal(raw, &msgs); err != nil || len(msgs) != 3 {
			t.Fatalf("messages %s (%v)", raw, err)
		}
		if msgs[1].Role != "assistant" || msgs[1].Content[0]["type"] != "tool_use" || msgs[1].Content[0]["id"] != "toolu_x1" ||
			msgs[2].Role != "user" || msgs[2].Content[0]["type"] != "tool_result" || msgs[2].Content[0]["tool_use_id"] != "toolu_x1" {
			t.Errorf("tool step on the Anthropic wire: %s", raw)
		}
	})
	t.Run("Anthropic caller, OpenAI fallback", func(t *testing.T) {
		tw := newTurnWorld(t, []fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{overloaded()}},
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{
				toolCallReply("call_o1", "lookup", `{"q":"baton"}`), {Text: "Found it."}}},
		})
		client := tw.anthropic()
		params := anthropic.MessageNewParams{Model: "anthropic/claude", MaxTokens: 256,
			System:   []anthropic.TextBlockParam{{Text: "Search first."}},
			Tools:    []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "lookup", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"q": map[string]any{"type": "string"}}}}}},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("find baton"))}}
		// A job primary with an explicit fallback, as the OpenAI endpoint takes it.
		m := completeAnthropicWith(t, client, params, true, aoption.WithJSONSet("fallbacks", []string{"openai/gpt-5"}))
		if len(m.Content) != 1 || m.Content[0].Type != "tool_use" || m.Content[0].ID != "call_o1" || string(m.Content[0].Input) != `{"q":"baton"}` || m.StopReason != "tool_use" {
			t.Fatalf("tool use through the fallback: %+v %q", m.Content, m.StopReason)
		}
		params.Messages = append(params.Messages, m.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock("call_o1", "baton is a gateway", false)))
		m = completeAnthropicWith(t, client, params, false, aoption.WithJSONSet("fallbacks", []string{"openai/gpt-5"}))
		if len(m.Content) != 1 || m.Content[0].Text != "Found it." {
			t.Errorf("answer %+v", m.Content)
		}
		raw, _ := json.Marshal(tw.lastBody(t)["messages"])
		for _, want := range []string{`{"content":"Search first.","role":"system"}`, `"id":"call_o1"`, `"role":"tool","tool_call_id":"call_o1"`} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("the OpenAI-wire fallback lacks %s: %s", want, raw)
			}
		}
	})
}

// completeAnthropicWith sends params through the Anthropic SDK, whole or streamed.
func completeAnthropicWith(t *testing.T, client anthropic.Client, params anthropic.MessageNewParams, stream bool, opts ...aoption.RequestOption) anthropic.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !stream {
		m, err := client.Messages.New(ctx, params, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return *m
	}
	s := client.Messages.NewStreaming(ctx, params, opts...)
	var m anthropic.Message
	for s.Next() {
		if err := m.Accumulate(s.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnAgentLoopOfTwoToolStepsOutlivesAFailingPrimary(t *testing.T) {
	tw := newTurnWorld(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{
			toolCallReply("call_a", "get_weather", `{"city":"Lima"}`), // step 1: the primary answers
			overloaded(), // step 2: it fails from here on
		}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{
			toolCallReply("toolu_b", "get_weather", `{"city":"Quito"}`),
			{Text: "Lima 20, Quito 14."},
		}},
	})
	client := tw.openai()
	params := openai.ChatCompletionNewParams{Model: "openai/gpt-5", Tools: []openai.ChatCompletionToolUnionParam{weatherTool},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Compare Lima and Quito.")}}
	results := map[string]string{"call_a": `{"celsius":20}`, "toolu_b": `{"celsius":14}`}
	var answer string
	for step := 0; step < 4 && answer == ""; step++ {
		msg, _, _ := complete(t, client, params, step%2 == 1)
		if len(msg.ToolCalls) == 0 {
			answer = msg.Content
			break
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, tc := range msg.ToolCalls {
			params.Messages = append(params.Messages, openai.ToolMessage(results[tc.ID], tc.ID))
		}
	}
	if answer != "Lima 20, Quito 14." {
		t.Fatalf("the loop ended with %q", answer)
	}
	raw, _ := json.Marshal(tw.lastBody(t)["messages"])
	for _, want := range []string{`"tool_use_id":"call_a"`, `"tool_use_id":"toolu_b"`, `celsius\":20`, `celsius\":14`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the model that answered did not get %s: %s", want, raw)
		}
	}
}

// tinyPNG is a PNG header and some bytes: enough for every check that looks at images.
func pngOf(n int) []byte {
	b := bytes.Repeat([]byte{0xA5}, n)
	copy(b, "\x89PNG\r\n\x1a\n")
	return b
}

func TestAnImageReachesEachWireByteForByte(t *testing.T) {
	tw := newTurnWorld(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "a grey square"}, overloaded()}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "a grey square, says claude"}}},
	})
	img := pngOf(3000)
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)
	params := openai.ChatCompletionNewParams{Model: "openai/gpt-5", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("What is this?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL, Detail: "high"})})}}
	client := tw.openai()
	if msg, _, _ := complete(t, client, params, false); msg.Content != "a grey square" {
		t.Fatalf("answer %q", msg.Content)
	}
	raw, _ := json.Marshal(tw.lastBody(t)["messages"])
	if !strings.Contains(string(raw), strings.ReplaceAll(dataURL, "+", `\u002b`)) && !strings.Contains(string(raw), dataURL) {
		t.Errorf("the OpenAI-wire provider did not get the image as sent")
	}
	if !strings.Contains(string(raw), `"detail":"high"`) {
		t.Errorf("detail lost: %.300s", raw)
	}
	// The same turn, failed over to the Anthropic wire: a base64 image block of the same bytes.
	if msg, _, _ := complete(t, client, params, true); msg.Content != "a grey square, says claude" {
		t.Fatalf("answer %q", msg.Content)
	}
	var sent struct {
		Messages []struct {
			Content []struct {
				Type   string
				Source struct {
					Type      string
					MediaType string `json:"media_type"`
					Data      string
				}
			}
		}
	}
	body := tw.Fake.Calls()[len(tw.Fake.Calls())-1].Body
	if err := json.Unmarshal(body, &sent); err != nil || len(sent.Messages) != 1 || len(sent.Messages[0].Content) != 2 {
		t.Fatalf("anthropic body %.400s (%v)", body, err)
	}
	src := sent.Messages[0].Content[1].Source
	got, _ := base64.StdEncoding.DecodeString(src.Data)
	if sent.Messages[0].Content[1].Type != "image" || src.Type != "base64" || src.MediaType != "image/png" || !bytes.Equal(got, img) {
		t.Errorf("image on the Anthropic wire: %s %s %s, %d bytes equal %v", sent.Messages[0].Content[1].Type, src.Type, src.MediaType, len(got), bytes.Equal(got, img))
	}
}

func TestBadTurnsAreRefusedInTheCallersWireAndStartNothing(t *testing.T) {
	tw := newTurnWorld(t, nil)
	tw.h.Config.Handler.(*server).maxBody = 64 << 10
	png := base64.StdEncoding.EncodeToString(pngOf(64))
	openAICases := []struct{ name, body, param string }{
		{"tool result without its call", `{"model":"openai/gpt-5","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"call_zz","content":"x"}]}`, "messages[1].tool_call_id"},
		{"schema not an object", `{"model":"openai/gpt-5","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":"yes"}}]}`, "tools[0].function.parameters"},
		{"image not base64", `{"model":"openai/gpt-5","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,@@@"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"not an image type", `{"model":"openai/gpt-5","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:text/html;base64,` + png + `"}}]}]}`, "messages[0].content[0].image_url.url"},
	}
	for _, c := range openAICases {
		resp, body := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", c.body, nil)
		var e struct {
			Error struct {
				Param         any
				Type, Message string
			}
		}
		_ = json.Unmarshal([]byte(body), &e)
		param, _ := e.Error.Param.(string)
		if resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || param != c.param || e.Error.Message == "" {
			t.Errorf("openai %s: %d %.300s (want 400 naming %q)", c.name, resp.StatusCode, body, c.param)
		}
	}
	// A body over BATON_MAX_REQUEST_BYTES is 413 with the limit, in each wire.
	big := strings.Repeat("a", 70<<10)
	for path, body := range map[string]string{
		"/v1/chat/completions": `{"model":"openai/gpt-5","messages":[{"role":"user","content":"` + big + `"}]}`,
		"/v1/messages":         `{"model":"anthropic/claude","max_tokens":9,"messages":[{"role":"user","content":"` + big + `"}]}`,
	} {
		resp, out := testsuite.Post(t, tw.h.URL+path, body, nil)
		if resp.StatusCode != 413 || !strings.Contains(out, "limit of 65536 bytes") || !strings.Contains(out, "BATON_MAX_REQUEST_BYTES") {
			t.Errorf("%s over the limit: %d %.300s", path, resp.StatusCode, out)
		}
	}
	if resp, body := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", `{"model":"agent:nobody","messages":[{"role":"user","content":"hi"}]}`, nil); resp.StatusCode != 400 ||
		!strings.Contains(body, `agent \"nobody\" is not in the config`) || !strings.Contains(body, `"param":"model"`) {
		t.Errorf("an unknown agent: %d %s", resp.StatusCode, body)
	}
	tw.h.Config.Handler.(*server).hasProfile = func(_ context.Context, p string) bool { return p == "openai" || p == "anthropic" }
	if resp, body := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","fallbacks":["xai/grok-4"],"messages":[{"role":"user","content":"hi"}]}`, nil); resp.StatusCode != 400 ||
		!strings.Contains(body, `provider \"xai\" has no models.providers entry and no stored profile`) || !strings.Contains(body, `"param":"fallbacks[0]"`) {
		t.Errorf("an unreachable provider: %d %s", resp.StatusCode, body)
	}
	anthropicCases := []struct{ name, body, names string }{
		{"tool result without its call", `{"model":"anthropic/claude","max_tokens":9,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_zz","content":"x"}]}]}`, "messages[0].content[0].tool_use_id"},
		{"schema not an object", `{"model":"anthropic/claude","max_tokens":9,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":[1]}]}`, "tools[0].input_schema"},
		{"image not base64", `{"model":"anthropic/claude","max_tokens":9,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"@@@"}}]}]}`, "messages[0].content[0].source"},
		{"not an image type", `{"model":"anthropic/claude","max_tokens":9,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"application/pdf","data":"` + png + `"}}]}]}`, "messages[0].content[0].source"},
	}
	for _, c := range anthropicCases {
		resp, body := testsuite.Post(t, tw.h.URL+"/v1/messages", c.body, nil)
		var e struct {
			Type  string
			Error struct{ Type, Message string }
		}
		_ = json.Unmarshal([]byte(body), &e)
		if resp.StatusCode != 400 || e.Type != "error" || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, c.names) {
			t.Errorf("anthropic %s: %d %.300s (want 400 naming %q)", c.name, resp.StatusCode, body, c.names)
		}
	}
	if calls := tw.Fake.Calls(); len(calls) != 0 {
		t.Errorf("refused turns reached the provider %d times", len(calls))
	}
}

func TestATenMegabyteImageFailsOverWithoutBloatingTheHistory(t *testing.T) {
	tw := newTurnWorld(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{overloaded()}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "a very large grey square"}}},
	})
	img := pngOf(10 << 20)
	body, _ := json.Marshal(map[string]any{"model": "openai/gpt-5", "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "Describe it."},
		map[string]any{"type": "image_url", "image_url": map[string]string{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)}}}}}})
	resp, out := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", string(body), nil)
	if resp.StatusCode != 200 || !strings.Contains(out, "a very large grey square") {
		t.Fatalf("%d %.300s", resp.StatusCode, out)
	}
	// The fallback got the image whole.
	var sent struct {
		Messages []struct {
			Content []struct{ Source struct{ Data string } }
		}
	}
	calls := tw.Fake.Calls()
	if err := json.Unmarshal(calls[len(calls)-1].Body, &sent); err != nil || len(sent.Messages) != 1 || len(sent.Messages[0].Content) != 2 {
		t.Fatalf("fallback body: %v", err)
	}
	if got, _ := base64.StdEncoding.DecodeString(sent.Messages[0].Content[1].Source.Data); !bytes.Equal(got, img) {
		t.Errorf("the fallback got %d bytes of a %d-byte image", len(got), len(img))
	}
	size := testsuite.HistorySize(t, testsuite.SharedServer(t).Client(), resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id"))
	if size > 64<<10 {
		t.Errorf("the reply's history is %d bytes, want under 64 KB", size)
	}
	t.Logf("history of a 10 MB image turn through a failover: %d bytes", size)
}

func TestStructuredOutputSurvivesAFailoverToAnthropic(t *testing.T) {
	tw := newTurnWorld(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: `{"city":"Oslo","celsius":2}`}, overloaded()}},
		// Anthropic answers a json_schema format through the forced tool baton asks for.
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{
			{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_f", Name: "report", Arguments: `{"city":"Oslo","celsius":2}`}}}}},
	})
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "celsius": map[string]any{"type": "number"}}}
	params := openai.ChatCompletionNewParams{Model: "openai/gpt-5", MaxTokens: openai.Int(120),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Oslo as JSON.")},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "report", Schema: schema, Strict: openai.Bool(true)}}}}
	client := tw.openai()
	for i, stream := range []bool{false, true} {
		msg, finish, _ := complete(t, client, params, stream)
		if msg.Content != `{"city":"Oslo","celsius":2}` || len(msg.ToolCalls) != 0 || finish != "stop" {
			t.Errorf("answer %d: %q, %d tool calls, finish %q", i, msg.Content, len(msg.ToolCalls), finish)
		}
		sent := tw.lastBody(t)
		if i == 0 {
			// The OpenAI-wire primary got the format as sent, and the caller's max_tokens spelling.
			if rf, _ := json.Marshal(sent["response_format"]); !strings.Contains(string(rf), `"type":"json_schema"`) || !strings.Contains(string(rf), `"name":"report"`) ||
				sent["max_tokens"] != 120.0 || sent["max_completion_tokens"] != nil {
				t.Errorf("primary got response_format %s, max_tokens %v", rf, sent["max_tokens"])
			}
			continue
		}
		// The Anthropic-wire fallback was asked for the schema through a forced tool.
		tools, _ := json.Marshal(sent["tools"])
		choice, _ := json.Marshal(sent["tool_choice"])
		if !strings.Contains(string(tools), `"name":"report"`) || !strings.Contains(string(tools), `"celsius"`) || string(choice) != `{"name":"report","type":"tool"}` {
			t.Errorf("fallback got tools %s, tool_choice %s", tools, choice)
		}
	}
}
