package provider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/provider"
)

// The turn on both wires: each test serves a scripted SSE stream from an httptest server, captures
// the request body the adapter sent, and checks it against the JSON the wire wants.

func system(s string) provider.Message {
	return provider.Message{Role: provider.RoleSystem, Content: []provider.Part{provider.TextPart(s)}}
}
func user(parts ...any) provider.Message      { return msg(provider.RoleUser, parts) }
func assistant(parts ...any) provider.Message { return msg(provider.RoleAssistant, parts) }
func tool(parts ...provider.Part) provider.Message {
	return provider.Message{Role: provider.RoleTool, Content: parts}
}

// msg takes strings as text parts.
func msg(role string, parts []any) provider.Message {
	m := provider.Message{Role: role}
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			m.Content = append(m.Content, provider.TextPart(p))
		case provider.Part:
			m.Content = append(m.Content, p)
		}
	}
	return m
}

func call(id, name, args string) provider.Part {
	return provider.Part{Type: provider.PartToolCall, CallID: id, Name: name, Arguments: args}
}

func result(id string, parts ...any) provider.Part {
	p := provider.Part{Type: provider.PartToolResult, CallID: id}
	p.Result = msg("", parts).Content
	return p
}

func ptr[T any](v T) *T { return &v }

// A tiny valid PNG header and some bytes: enough for the sniffer.
var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// server answers every call with a scripted SSE stream and keeps the last request body.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	body   []byte
	header http.Header
	path   string
}

func serve(t *testing.T, stream string) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.body, s.header, s.path = body, r.Header.Clone(), r.URL.Path
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) sent(t *testing.T) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var v map[string]any
	if err := json.Unmarshal(s.body, &v); err != nil {
		t.Fatalf("the request body is not JSON: %v\n%s", err, s.body)
	}
	return v
}

// openAIStream frames chunks as Chat Completions SSE, ending with [DONE].
func openAIStream(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// anthropicStream frames events as Messages SSE, each named by its type.
func anthropicStream(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &head)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", head.Type, e)
	}
	return b.String()
}

// A plain text answer on each wire.
var (
	openAIText = openAIStream(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"ok"}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	anthropicText = anthropicStream(`{"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
		`{"type":"message_stop"}`)
)

var wires = []struct{ api, textStream string }{
	{provider.APIOpenAICompletions, openAIText},
	{provider.APIAnthropicMessages, anthropicText},
}

// complete sends a turn to a scripted server of the API's wire and returns the answer and the
// body sent.
func complete(t *testing.T, api, stream string, turn provider.Turn) (provider.Response, map[string]any, error) {
	t.Helper()
	suffix := ""
	if api == provider.APIOpenAICompletions {
		suffix = "/v1"
	}
	s := serve(t, stream)
	resp, err := provider.Complete(context.Background(), provider.Request{
		Provider: "p", Model: "m", API: api, BaseURL: s.URL + suffix, Turn: turn,
		Credential:        provider.Credential{Type: "api_key", Key: secret},
		FirstTokenTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second,
	})
	return resp, s.sent(t), err
}

// sameJSON compares a decoded body with the JSON a wire wants, showing both on a mismatch.
func sameJSON(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(normalize(got), w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		ww, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("sent:\n%s\nwant:\n%s", g, ww)
	}
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// fullTurn has a bit of everything: system and developer text with a cache mark, a user message
// with an inline and a linked image, an assistant message that reasons and calls two tools (one id
// Anthropic would refuse), the two results (one with an image, one an error), a user follow-up,
// two tools, a tool choice and every sampling parameter.
func fullTurn() provider.Turn {
	sys := provider.TextPart("be brief")
	sys.CacheControl = json.RawMessage(`{"type":"ephemeral"}`)
	failed := result("call_2", "boom")
	failed.IsError = true
	return provider.Turn{
		Messages: []provider.Message{
			{Role: provider.RoleSystem, Content: []provider.Part{sys}},
			{Role: provider.RoleDeveloper, Content: []provider.Part{provider.TextPart("use metric units")}},
			user("what is this, and the weather?",
				provider.Part{Type: provider.PartImage, Data: png, MediaType: "image/png", Detail: "high"},
				provider.Part{Type: provider.PartImage, URL: "https://example.com/cat.jpg"}),
			assistant(provider.Part{Type: provider.PartReasoning, Text: "they want weather", Signature: "sig=="},
				"Let me check.", call("call.1:a", "weather", `{"city":"Paris"}`), call("call_2", "clock", "")),
			tool(result("call.1:a", "18 C", provider.Part{Type: provider.PartImage, Data: png})),
			tool(failed),
			user("thanks; and tomorrow?"),
		},
		Tools: []provider.Tool{
			{Name: "weather", Description: "the weather in a city", Strict: ptr(true), CacheControl: json.RawMessage(`{"type":"ephemeral"}`),
				Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "clock"},
		},
		ToolChoice:        &provider.ToolChoice{Type: provider.ToolChoiceAuto},
		ParallelToolCalls: ptr(false),
		Params: provider.Params{Temperature: ptr(1.5), TopP: ptr(0.9), MaxTokens: ptr(int64(500)), MaxTokensField: "max_tokens",
			Stop: []string{"END"}, Seed: ptr(int64(7)), PresencePenalty: ptr(0.5), FrequencyPenalty: ptr(0.25)},
	}
}

func TestAFullTurnGoesOutAsEachWireWantsIt(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString(png)
	cases := []struct {
		api, want string
		dropped   []string
	}{
		{provider.APIOpenAICompletions, `{
			"model": "m", "stream": true, "stream_options": {"include_usage": true},
			"messages": [
				{"role": "system", "content": "be brief"},
				{"role": "developer", "content": "use metric units"},
				{"role": "user", "content": [
					{"type": "text", "text": "what is this, and the weather?"},
					{"type": "image_url", "image_url": {"url": "data:image/png;base64,PNG", "detail": "high"}},
					{"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}]},
				{"role": "assistant", "content": "Let me check.", "tool_calls": [
					{"id": "call.1:a", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
					{"id": "call_2", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]},
				{"role": "tool", "tool_call_id": "call.1:a", "content": "18 C"},
				{"role": "tool", "tool_call_id": "call_2", "content": "boom"},
				{"role": "user", "content": [
					{"type": "text", "text": "Attached image(s) from tool result:"},
					{"type": "image_url", "image_url": {"url": "data:image/png;base64,PNG"}}]},
				{"role": "user", "content": "thanks; and tomorrow?"}],
			"tools": [
				{"type": "function", "function": {"name": "weather", "description": "the weather in a city", "strict": true,
					"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
				{"type": "function", "function": {"name": "clock"}}],
			"tool_choice": "auto", "parallel_tool_calls": false,
			"temperature": 1.5, "top_p": 0.9, "max_tokens": 500, "stop": ["END"], "seed": 7,
			"presence_penalty": 0.5, "frequency_penalty": 0.25}`,
			[]string{"messages.content.cacheControl", "messages.content.isError", "messages.content.reasoning (in an assistant message)", "tools.cacheControl"}},
		{provider.APIAnthropicMessages, `{
			"model": "m", "stream": true, "max_tokens": 500,
			"system": [
				{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}},
				{"type": "text", "text": "use metric units"}],
			"messages": [
				{"role": "user", "content": [
					{"type": "text", "text": "what is this, and the weather?"},
					{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "PNG"}},
					{"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}}]},
				{"role": "assistant", "content": [
					{"type": "thinking", "thinking": "they want weather", "signature": "sig=="},
					{"type": "text", "text": "Let me check."},
					{"type": "tool_use", "id": "call_1_a", "name": "weather", "input": {"city": "Paris"}},
					{"type": "tool_use", "id": "call_2", "name": "clock", "input": {}}]},
				{"role": "user", "content": [
					{"type": "tool_result", "tool_use_id": "call_1_a", "content": [
						{"type": "text", "text": "18 C"},
						{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "PNG"}}]},
					{"type": "tool_result", "tool_use_id": "call_2", "is_error": true, "content": [{"type": "text", "text": "boom"}]},
					{"type": "text", "text": "thanks; and tomorrow?"}]}],
			"tools": [
				{"name": "weather", "description": "the weather in a city", "cache_control": {"type": "ephemeral"},
					"input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
				{"name": "clock", "input_schema": {"type": "object"}}],
			"tool_choice": {"type": "auto", "disable_parallel_tool_use": true},
			"temperature": 1, "top_p": 0.9, "stop_sequences": ["END"]}`,
			[]string{"messages.content.detail", "params.frequencyPenalty", "params.presencePenalty", "params.seed", "tools.strict"}},
	}
	for _, c := range cases {
		t.Run(c.api, func(t *testing.T) {
			stream := openAIText
			if c.api == provider.APIAnthropicMessages {
				stream = anthropicText
			}
			resp, body, err := complete(t, c.api, stream, fullTurn())
			if err != nil || resp.Answer.Text != "ok" {
				t.Fatalf("%+v %v", resp, err)
			}
			want := strings.ReplaceAll(strings.ReplaceAll(c.want, `"PNG"`, `"`+b64+`"`), `base64,PNG"`, `base64,`+b64+`"`)
			sameJSON(t, body, want)
			got := provider.Dropped(fullTurn(), c.api)
			slices.Sort(got)
			if !slices.Equal(got, c.dropped) {
				t.Errorf("Dropped = %q, want %q", got, c.dropped)
			}
		})
	}
}

func TestImageBytesArriveIntactOnBothWires(t *testing.T) {
	turn := provider.Turn{Messages: []provider.Message{user("look", provider.Part{Type: provider.PartImage, Data: png})}}
	_, body, err := complete(t, provider.APIAnthropicMessages, anthropicText, turn)
	if err != nil {
		t.Fatal(err)
	}
	src := body["messages"].([]any)[0].(map[string]any)["content"].([]any)[1].(map[string]any)["source"].(map[string]any)
	data, _ := base64.StdEncoding.DecodeString(src["data"].(string))
	if !bytes.Equal(data, png) || src["media_type"] != "image/png" {
		t.Errorf("anthropic image source %v", src)
	}
	_, body, err = complete(t, provider.APIOpenAICompletions, openAIText, turn)
	if err != nil {
		t.Fatal(err)
	}
	url := body["messages"].([]any)[0].(map[string]any)["content"].([]any)[1].(map[string]any)["image_url"].(map[string]any)["url"].(string)
	mt, data, err := provider.ParseDataURL(url)
	if err != nil || mt != "image/png" || !bytes.Equal(data, png) {
		t.Errorf("openai image url %q: %v", url, err)
	}

	// A data: URL given as a URL goes to Anthropic as base64.
	turn = provider.Turn{Messages: []provider.Message{user(provider.Part{Type: provider.PartImage, URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)})}}
	_, body, err = complete(t, provider.APIAnthropicMessages, anthropicText, turn)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, body["messages"], `[{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "`+
		base64.StdEncoding.EncodeToString(png)+`"}}]}]`)
}

func TestAnthropicMessageOrder(t *testing.T) {
	cases := []struct {
		name string
		msgs []provider.Message
		want string
	}{
		{"the user's text after tool results joins the results' message, after them",
			[]provider.Message{user("hi"), assistant(call("a", "f", "{}")), user("and then?"), tool(result("a", "done"))},
			`[{"role": "user", "content": [{"type": "text", "text": "hi"}]},
			  {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
			  {"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "done"}]},
				{"type": "text", "text": "and then?"}]}]`},
		{"a late tool result goes right after the assistant message that made the call",
			[]provider.Message{user("hi"), assistant(call("a", "f", `{"x":1}`)), user("wait"), assistant("ok"), tool(result("a", "done"))},
			`[{"role": "user", "content": [{"type": "text", "text": "hi"}]},
			  {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}}]},
			  {"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "done"}]},
				{"type": "text", "text": "wait"}]},
			  {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]`},
		{"messages of one role merge; parallel results share one user message in order",
			[]provider.Message{system("s1"), user("a"), user("b"), assistant("c"), assistant(call("x:1", "f", ""), call("x:2", "g", "not json")),
				tool(result("x:1", "r1")), tool(result("x:2", "r2")), system("s2")},
			`[{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
			  {"role": "assistant", "content": [{"type": "text", "text": "c"},
				{"type": "tool_use", "id": "x_1", "name": "f", "input": {}},
				{"type": "tool_use", "id": "x_2", "name": "g", "input": {}}]},
			  {"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "x_1", "content": [{"type": "text", "text": "r1"}]},
				{"type": "tool_result", "tool_use_id": "x_2", "content": [{"type": "text", "text": "r2"}]}]}]`},
		{"reasoning leads the assistant message; unsigned reasoning and empty text are dropped; a prefill loses its trailing space",
			[]provider.Message{user("q"), assistant("  "), assistant(provider.Part{Type: provider.PartReasoning, Text: "from gpt"}, "answer: ",
				provider.Part{Type: provider.PartReasoning, Redacted: "opaque"})},
			`[{"role": "user", "content": [{"type": "text", "text": "q"}]},
			  {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "opaque"}, {"type": "text", "text": "answer:"}]}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, body, err := complete(t, provider.APIAnthropicMessages, anthropicText, provider.Turn{Messages: c.msgs})
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, body["messages"], c.want)
		})
	}
}

func TestOpenAIToolIDsAndResultImages(t *testing.T) {
	long := strings.Repeat("toolu_", 10) // another provider's 60-character id
	turn := provider.Turn{Messages: []provider.Message{user("hi"), assistant(call(long, "f", `{}`)),
		tool(result(long, provider.Part{Type: provider.PartImage, URL: "https://example.com/x.png"})), user("so?")}}
	_, body, err := complete(t, provider.APIOpenAICompletions, openAIText, turn)
	if err != nil {
		t.Fatal(err)
	}
	msgs := body["messages"].([]any)
	id := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["id"].(string)
	if len(id) > 40 || id == long || msgs[2].(map[string]any)["tool_call_id"] != id {
		t.Errorf("ids %q / %v", id, msgs[2])
	}
	sameJSON(t, msgs[2:], `[{"role": "tool", "tool_call_id": "`+id+`", "content": "(see attached image)"},
		{"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"},
			{"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}]},
		{"role": "user", "content": "so?"}]`)
}

func TestStreamedToolCallsAssemble(t *testing.T) {
	cases := []struct {
		api, stream string
		want        provider.Answer
	}{
		{provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"need the "}}]}`,
			`{"choices":[{"index":0,"delta":{"reasoning_content":"weather"}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"clock","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":60}}}`),
			provider.Answer{
				ToolCalls:    []provider.ToolCall{{ID: "call_a", Name: "weather", Arguments: `{"city":"Paris"}`}, {ID: "call_b", Name: "clock", Arguments: "{}"}},
				Reasoning:    []provider.Part{{Type: provider.PartReasoning, Text: "need the weather"}},
				FinishReason: provider.FinishToolCalls, Usage: provider.Usage{Input: 100, Output: 20, CachedInput: 60}}},
		{provider.APIAnthropicMessages, anthropicStream(
			`{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":60,"cache_creation_input_tokens":30,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"need the "}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"weather"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig=="}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"ping"}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Checking."}}`,
			`{"type":"content_block_stop","index":2}`,
			`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}}`,
			`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":""}}`,
			`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}`,
			`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`,
			`{"type":"content_block_stop","index":3}`,
			`{"type":"content_block_start","index":4,"content_block":{"type":"tool_use","id":"toolu_2","name":"clock","input":{}}}`,
			`{"type":"content_block_stop","index":4}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":42}}`,
			`{"type":"message_stop"}`),
			provider.Answer{Text: "Checking.",
				ToolCalls: []provider.ToolCall{{ID: "toolu_1", Name: "weather", Arguments: `{"city": "Paris"}`}, {ID: "toolu_2", Name: "clock", Arguments: "{}"}},
				Reasoning: []provider.Part{{Type: provider.PartReasoning, Text: "need the weather", Signature: "sig=="},
					{Type: provider.PartReasoning, Redacted: "opaque"}},
				FinishReason: provider.FinishToolCalls, Usage: provider.Usage{Input: 100, Output: 42, CachedInput: 60, CacheWrite: 30}}},
	}
	for _, c := range cases {
		t.Run(c.api, func(t *testing.T) {
			resp, _, err := complete(t, c.api, c.stream, provider.TextTurn("weather?"))
			if err != nil {
				t.Fatalf("a tool-call answer is a success: %v", err)
			}
			if !reflect.DeepEqual(resp.Answer, c.want) {
				t.Errorf("answer\n%+v\nwant\n%+v", resp.Answer, c.want)
			}
		})
	}
}

func TestOpenAIToolCallsFromLooserServers(t *testing.T) {
	// No index, whole calls in one chunk each, a reused index with a new id, no id at all, and a
	// plain "stop" although the model called tools.
	resp, _, err := complete(t, provider.APIOpenAICompletions, openAIStream(
		`{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"n\":1}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":5,"function":{"name":"h"}}]}}]}`,
		`{"choices":[{"delta":{"reasoning":"via openrouter"},"finish_reason":"stop"}]}`), provider.TextTurn("go"))
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Answer
	if len(a.ToolCalls) != 3 || a.ToolCalls[0] != (provider.ToolCall{ID: "a", Name: "f", Arguments: `{"n":1}`}) ||
		a.ToolCalls[1] != (provider.ToolCall{ID: "b", Name: "g", Arguments: "{}"}) ||
		a.ToolCalls[2].Name != "h" || !strings.HasPrefix(a.ToolCalls[2].ID, "call_") || a.ToolCalls[2].Arguments != "{}" {
		t.Errorf("%+v", a.ToolCalls)
	}
	if a.FinishReason != provider.FinishToolCalls || len(a.Reasoning) != 1 || a.Reasoning[0].Text != "via openrouter" {
		t.Errorf("%+v", a)
	}
}

func TestFinishReasonsMap(t *testing.T) {
	openAI := map[string]string{"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter", "function_call": "tool_calls"}
	for in, want := range openAI {
		resp, _, err := complete(t, provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"index":0,"delta":{"content":"some text"}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"`+in+`"}]}`), provider.TextTurn("go"))
		if err != nil || resp.Answer.FinishReason != want {
			t.Errorf("openai %s: %q %v, want %s", in, resp.Answer.FinishReason, err, want)
		}
	}
	anthropic := map[string]string{"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
		"tool_use": "tool_calls", "refusal": "content_filter"}
	for in, want := range anthropic {
		resp, _, err := complete(t, provider.APIAnthropicMessages, strings.Replace(anthropicText, "end_turn", in, 1), provider.TextTurn("go"))
		if err != nil || resp.Answer.FinishReason != want {
			t.Errorf("anthropic %s: %q %v, want %s", in, resp.Answer.FinishReason, err, want)
		}
	}
}

func TestUsageMeansTheSameOnBothWires(t *testing.T) {
	// 1,000 input tokens of which 600 were read from the cache, and 50 output tokens.
	resp, _, err := complete(t, provider.APIOpenAICompletions, openAIStream(
		`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":600}}}`), provider.TextTurn("go"))
	want := provider.Usage{Input: 1000, Output: 50, CachedInput: 600}
	if err != nil || resp.Answer.Usage != want {
		t.Errorf("openai %+v %v", resp.Answer.Usage, err)
	}
	resp, _, err = complete(t, provider.APIAnthropicMessages, anthropicStream(
		`{"type":"message_start","message":{"usage":{"input_tokens":300,"cache_read_input_tokens":600,"cache_creation_input_tokens":100,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"hi"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":50}}`,
		`{"type":"message_stop"}`), provider.TextTurn("go"))
	want.CacheWrite = 100 // Anthropic says what it wrote to the cache (priced apart)
	if err != nil || resp.Answer.Usage != want || resp.Answer.Text != "hi" {
		t.Errorf("anthropic %+v %v", resp.Answer, err)
	}
}

func TestExtraFieldsGoOnlyToTheCallersWire(t *testing.T) {
	extra := map[string]json.RawMessage{"user": []byte(`"u-1"`), "metadata": []byte(`{"a":1}`), "top_k": []byte(`5`),
		"dotted.key": []byte(`true`), "stream": []byte(`false`), "model": []byte(`"other"`), "messages": []byte(`[]`)}
	for _, w := range wires {
		for _, callerWire := range []string{provider.WireOpenAI, provider.WireAnthropic} {
			t.Run(w.api+"/from "+callerWire, func(t *testing.T) {
				turn := provider.TextTurn("hi")
				turn.Wire, turn.Extra = callerWire, extra
				_, body, err := complete(t, w.api, w.textStream, turn)
				if err != nil {
					t.Fatal(err)
				}
				same := callerWire == provider.WireOpenAI && w.api == provider.APIOpenAICompletions ||
					callerWire == provider.WireAnthropic && w.api == provider.APIAnthropicMessages
				for _, k := range []string{"user", "metadata", "top_k", "dotted.key"} {
					if v, ok := body[k]; ok != same {
						t.Errorf("%s: present %v (%v), want %v", k, ok, v, same)
					}
				}
				if same && (body["user"] != "u-1" || !reflect.DeepEqual(body["metadata"], map[string]any{"a": 1.0})) {
					t.Errorf("values changed: %v %v", body["user"], body["metadata"])
				}
				if body["stream"] != true || body["model"] != "m" || len(body["messages"].([]any)) != 1 {
					t.Errorf("an extra field overrode the adapter's own: %v", body)
				}
				dropped := provider.Dropped(turn, w.api)
				if same && !slices.Equal(dropped, []string{"extra.messages", "extra.model", "extra.stream"}) ||
					!same && len(dropped) != len(extra) {
					t.Errorf("Dropped = %q", dropped)
				}
			})
		}
	}

	// A field the turn sets itself is not replaced by an extra of the same name.
	turn := provider.TextTurn("hi")
	turn.Wire, turn.Extra = provider.WireOpenAI, map[string]json.RawMessage{"temperature": []byte(`0.1`)}
	turn.Params.Temperature = ptr(0.7)
	_, body, _ := complete(t, provider.APIOpenAICompletions, openAIText, turn)
	if body["temperature"] != 0.7 || !slices.Equal(provider.Dropped(turn, provider.APIOpenAICompletions), []string{"extra.temperature"}) {
		t.Errorf("temperature %v", body["temperature"])
	}

	// Anthropic's max_tokens: the caller's extra replaces the default, not the turn's own value.
	turn = provider.TextTurn("hi")
	turn.Wire, turn.Extra = provider.WireAnthropic, map[string]json.RawMessage{"max_tokens": []byte(`777`)}
	_, body, _ = complete(t, provider.APIAnthropicMessages, anthropicText, turn)
	if body["max_tokens"] != 777.0 {
		t.Errorf("max_tokens %v, want the extra's 777", body["max_tokens"])
	}
	turn.Params.MaxTokens = ptr(int64(100))
	_, body, _ = complete(t, provider.APIAnthropicMessages, anthropicText, turn)
	if body["max_tokens"] != 100.0 {
		t.Errorf("max_tokens %v, want the turn's 100", body["max_tokens"])
	}
}

func TestJSONResponseFormat(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"number"}},"required":["answer"]}`)
	format := &provider.ResponseFormat{Type: provider.FormatJSONSchema, Name: "sum", Description: "the sum", Schema: schema, Strict: ptr(true)}
	turn := provider.TextTurn("1+1?")
	turn.Params.ResponseFormat = format

	t.Run("openai sends it as it is", func(t *testing.T) {
		_, body, err := complete(t, provider.APIOpenAICompletions, openAIText, turn)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["response_format"], `{"type": "json_schema", "json_schema": {"name": "sum", "description": "the sum", "strict": true,
			"schema": {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"]}}}`)
		if body["max_completion_tokens"] != nil || body["max_tokens"] != nil {
			t.Errorf("no max tokens asked: %v", body)
		}
	})

	t.Run("anthropic forces a tool and answers its input as text", func(t *testing.T) {
		resp, body, err := complete(t, provider.APIAnthropicMessages, anthropicStream(
			`{"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"sum","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"answer\""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":": 2}"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
			`{"type":"message_stop"}`), turn)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["tools"], `[{"name": "sum", "description": "the sum",
			"input_schema": {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"]}}]`)
		sameJSON(t, body["tool_choice"], `{"type": "tool", "name": "sum"}`)
		if a := resp.Answer; a.Text != `{"answer": 2}` || a.FinishReason != provider.FinishStop || len(a.ToolCalls) != 0 {
			t.Errorf("%+v", a)
		}
	})

	t.Run("anthropic with tools of its own: an instruction instead", func(t *testing.T) {
		withTools := turn
		withTools.Tools = []provider.Tool{{Name: "calc"}}
		withTools.Messages = append([]provider.Message{system("be exact")}, turn.Messages...)
		_, body, err := complete(t, provider.APIAnthropicMessages, anthropicText, withTools)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["tools"], `[{"name": "calc", "input_schema": {"type": "object"}}]`)
		sys := body["system"].([]any)
		last := sys[len(sys)-1].(map[string]any)["text"].(string)
		if len(sys) != 2 || !strings.Contains(last, `{"type":"object","properties":{"answer":{"type":"number"}},"required":["answer"]}`) || body["tool_choice"] != nil {
			t.Errorf("system %v, tool_choice %v", sys, body["tool_choice"])
		}
	})

	t.Run("json_object on anthropic", func(t *testing.T) {
		obj := provider.TextTurn("json please")
		obj.Params.ResponseFormat = &provider.ResponseFormat{Type: provider.FormatJSONObject}
		_, body, err := complete(t, provider.APIAnthropicMessages, anthropicText, obj)
		if err != nil {
			t.Fatal(err)
		}
		tools := body["tools"].([]any)
		if len(tools) != 1 || tools[0].(map[string]any)["name"] != "json_output" ||
			!reflect.DeepEqual(tools[0].(map[string]any)["input_schema"], map[string]any{"type": "object"}) {
			t.Errorf("tools %v", tools)
		}
	})
}

func TestReasoningCrossesWires(t *testing.T) {
	t.Run("an effort becomes a thinking budget, and sampling controls go", func(t *testing.T) {
		turn := provider.TextTurn("think")
		turn.Params = provider.Params{ReasoningEffort: "medium", Temperature: ptr(0.3), TopP: ptr(0.5), MaxTokens: ptr(int64(1000))}
		_, body, err := complete(t, provider.APIAnthropicMessages, anthropicText, turn)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["thinking"], `{"type": "enabled", "budget_tokens": 8192}`)
		if body["max_tokens"] != 9192.0 || body["temperature"] != nil || body["top_p"] != nil {
			t.Errorf("%v", body)
		}
		if d := provider.Dropped(turn, provider.APIAnthropicMessages); !slices.Equal(d, []string{"params.temperature", "params.topP"}) {
			t.Errorf("Dropped %q", d)
		}
	})
	t.Run("a thinking budget becomes an effort", func(t *testing.T) {
		turn := provider.TextTurn("think")
		turn.Params = provider.Params{ThinkingBudget: ptr(int64(3000)), MaxTokens: ptr(int64(100))}
		_, body, err := complete(t, provider.APIOpenAICompletions, openAIText, turn)
		if err != nil {
			t.Fatal(err)
		}
		if body["reasoning_effort"] != "medium" || body["max_completion_tokens"] != 100.0 {
			t.Errorf("%v", body)
		}
	})
	t.Run("thinking is left out where Anthropic refuses it", func(t *testing.T) {
		for name, turn := range map[string]provider.Turn{
			"a tool call of another model's in progress": {Messages: []provider.Message{user("hi"), assistant(call("a", "f", "{}")), tool(result("a", "ok"))},
				Tools: []provider.Tool{{Name: "f"}}, Params: provider.Params{ThinkingBudget: ptr(int64(2048))}},
			"a forced tool": {Messages: []provider.Message{user("hi")}, Tools: []provider.Tool{{Name: "f"}},
				ToolChoice: &provider.ToolChoice{Type: provider.ToolChoiceRequired}, Params: provider.Params{ThinkingBudget: ptr(int64(2048))}},
		} {
			_, body, err := complete(t, provider.APIAnthropicMessages, anthropicText, turn)
			if err != nil || body["thinking"] != nil {
				t.Errorf("%s: thinking %v (%v)", name, body["thinking"], err)
			}
			if d := provider.Dropped(turn, provider.APIAnthropicMessages); !slices.Equal(d, []string{"params.thinkingBudget"}) {
				t.Errorf("%s: Dropped %q", name, d)
			}
		}
		// With the model's own signed thinking first, thinking stays.
		turn := provider.Turn{Messages: []provider.Message{user("hi"),
			assistant(provider.Part{Type: provider.PartReasoning, Text: "hm", Signature: "s"}, call("a", "f", "{}")), tool(result("a", "ok"))},
			Tools: []provider.Tool{{Name: "f"}}, Params: provider.Params{ThinkingBudget: ptr(int64(500))}}
		_, body, _ := complete(t, provider.APIAnthropicMessages, anthropicText, turn)
		sameJSON(t, body["thinking"], `{"type": "enabled", "budget_tokens": 1024}`)
	})
}

func TestToolChoices(t *testing.T) {
	cases := []struct {
		choice            *provider.ToolChoice
		parallel          *bool
		openAI, anthropic string
	}{
		{&provider.ToolChoice{Type: provider.ToolChoiceAuto}, nil, `"auto"`, `{"type": "auto"}`},
		{&provider.ToolChoice{Type: provider.ToolChoiceNone}, ptr(false), `"none"`, `{"type": "none"}`},
		{&provider.ToolChoice{Type: provider.ToolChoiceRequired}, ptr(false), `"required"`, `{"type": "any", "disable_parallel_tool_use": true}`},
		{&provider.ToolChoice{Type: provider.ToolChoiceNamed, Name: "f"}, nil, `{"type": "function", "function": {"name": "f"}}`, `{"type": "tool", "name": "f"}`},
		{nil, ptr(false), `null`, `{"type": "auto", "disable_parallel_tool_use": true}`},
		{nil, ptr(true), `null`, `null`},
	}
	for _, c := range cases {
		turn := provider.Turn{Messages: []provider.Message{user("hi")}, Tools: []provider.Tool{{Name: "f"}}, ToolChoice: c.choice, ParallelToolCalls: c.parallel}
		_, body, err := complete(t, provider.APIOpenAICompletions, openAIText, turn)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["tool_choice"], c.openAI)
		if c.parallel != nil && body["parallel_tool_calls"] != *c.parallel {
			t.Errorf("parallel_tool_calls %v", body["parallel_tool_calls"])
		}
		_, body, err = complete(t, provider.APIAnthropicMessages, anthropicText, turn)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["tool_choice"], c.anthropic)
	}
	// Without tools, a tool choice means nothing, and both wires refuse it.
	turn := provider.Turn{Messages: []provider.Message{user("hi")}, ToolChoice: &provider.ToolChoice{Type: provider.ToolChoiceAuto}}
	for _, w := range wires {
		_, body, _ := complete(t, w.api, w.textStream, turn)
		if body["tool_choice"] != nil {
			t.Errorf("%s: tool_choice %v without tools", w.api, body["tool_choice"])
		}
	}
}

func TestEmptyAndToolOnlyAnswers(t *testing.T) {
	emptyStreams := map[string]string{
		provider.APIOpenAICompletions: openAIStream(`{"choices":[{"index":0,"delta":{"content":" "},"finish_reason":"stop"}]}`),
		provider.APIAnthropicMessages: anthropicStream(`{"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":0}}`, `{"type":"message_stop"}`),
	}
	for api, stream := range emptyStreams {
		_, _, err := complete(t, api, stream, provider.TextTurn("hi"))
		var e *provider.Error
		if !errors.As(err, &e) || e.Stream != provider.FaultEmpty {
			t.Errorf("%s: an answer with nothing in it: %v", api, err)
		}
	}
	toolOnly := map[string]string{
		provider.APIOpenAICompletions: openAIStream(
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`),
		provider.APIAnthropicMessages: anthropicStream(`{"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c","name":"f","input":{}}}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":3}}`, `{"type":"message_stop"}`),
	}
	for api, stream := range toolOnly {
		resp, _, err := complete(t, api, stream, provider.TextTurn("hi"))
		if err != nil || len(resp.Answer.ToolCalls) != 1 || resp.Answer.ToolCalls[0] != (provider.ToolCall{ID: "c", Name: "f", Arguments: "{}"}) {
			t.Errorf("%s: %+v %v", api, resp.Answer, err)
		}
	}
}

func TestAToolCallCutMidStreamIsAFailure(t *testing.T) {
	streams := map[string]string{
		provider.APIOpenAICompletions: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a"}}]}}]}` + "\n\n",
		provider.APIAnthropicMessages: strings.Join(strings.SplitAfter(anthropicStream(`{"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c","name":"f","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}`), "\n\n")[:3], ""),
	}
	for api, stream := range streams {
		resp, _, err := complete(t, api, stream, provider.TextTurn("hi"))
		var e *provider.Error
		if !errors.As(err, &e) || e.Stream != provider.FaultCut || !e.Partial || len(resp.Answer.ToolCalls) != 0 {
			t.Errorf("%s: %+v %v", api, resp, err)
		}
	}
}

func TestAnthropicPingsKeepAStreamAlive(t *testing.T) {
	// Pings every 100 ms for 600 ms, with a 300 ms idle timeout: thinking at length is not a stall.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		flush := w.(http.Flusher).Flush
		events := strings.SplitAfter(anthropicText, "\n\n")
		_, _ = io.WriteString(w, events[0]) // message_start
		flush()
		for range 6 {
			time.Sleep(100 * time.Millisecond)
			_, _ = io.WriteString(w, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
			flush()
		}
		_, _ = io.WriteString(w, strings.Join(events[1:], ""))
	}))
	defer srv.Close()
	resp, err := provider.Complete(context.Background(), provider.Request{Provider: "anthropic", Model: "m", BaseURL: srv.URL,
		Credential: provider.Credential{Key: secret}, Turn: provider.TextTurn("hi"),
		FirstTokenTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	if err != nil || resp.Answer.Text != "ok" {
		t.Fatalf("%+v %v", resp, err)
	}
}
