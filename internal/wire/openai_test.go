package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/batonhq/baton/provider"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// Tiny images with real magic bytes (SniffImage reads only those).
var (
	pngData  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpegData = []byte("\xFF\xD8\xFF\xE0\x00\x10JFIF")
	pngB64   = base64.StdEncoding.EncodeToString(pngData)
)

// body marshals an SDK's params as the SDK sends them, with extra top-level fields set.
func body(t testing.TB, params any, set map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) == 0 {
		return b
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON compares two values by their JSON forms.
func sameJSON(t testing.TB, what string, got, want any) {
	t.Helper()
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return out
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		gb, _ := json.MarshalIndent(g, "", "  ")
		wb, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}

func weatherSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}
}

func fullOpenAIParams() openai.ChatCompletionNewParams {
	assistant := openai.ChatCompletionAssistantMessageParam{
		Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfString: openai.String("Let me check.")},
		Name:    openai.String("helper"),
		ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
			ID: "call_1", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
	}
	return openai.ChatCompletionNewParams{
		Model: "openai/gpt-5",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.DeveloperMessage("Be brief."),
			openai.SystemMessage("You are baton's test."),
			openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
				openai.TextContentPart("What is in this picture, and the weather?"),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + pngB64, Detail: "high"}),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "https://example.com/cat.jpg"}),
			}),
			{OfAssistant: &assistant},
			openai.ToolMessage(`{"temp":21}`, "call_1"),
			openai.UserMessage("Thanks."),
		},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Description: openai.String("The weather in a city"), Parameters: weatherSchema(), Strict: openai.Bool(true)})},
		ToolChoice:          openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"}),
		ParallelToolCalls:   openai.Bool(false),
		Temperature:         openai.Float(0.2),
		TopP:                openai.Float(0.9),
		MaxTokens:           openai.Int(100),
		MaxCompletionTokens: openai.Int(512),
		Stop:                openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END", "STOP"}},
		Seed:                openai.Int(7),
		PresencePenalty:     openai.Float(0.1),
		FrequencyPenalty:    openai.Float(0.3),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "weather", Description: openai.String("a report"), Schema: weatherSchema(), Strict: openai.Bool(true)}}},
		ReasoningEffort: shared.ReasoningEffortLow,
		User:            openai.String("session-1"),
		N:               openai.Int(1),
		StreamOptions:   openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		// Not modelled: forwarded in Extra.
		Metadata:       shared.Metadata{"team": "core"},
		Store:          openai.Bool(true),
		ServiceTier:    "flex",
		PromptCacheKey: openai.String("pk-1"),
		LogitBias:      map[string]int64{"50256": -100},
	}
}

func TestDecodeOpenAI(t *testing.T) {
	b := body(t, fullOpenAIParams(), map[string]any{"stream": true, "fallbacks": []string{"anthropic/claude-sonnet-4-5"}})
	req, e := DecodeOpenAI(b)
	if e != nil {
		t.Fatalf("DecodeOpenAI: %+v", e)
	}
	if req.Model != "openai/gpt-5" || !req.Stream || !req.IncludeUsage || req.Session != "session-1" {
		t.Errorf("request = model %q stream %v includeUsage %v session %q", req.Model, req.Stream, req.IncludeUsage, req.Session)
	}
	if req.Fallbacks == nil || !reflect.DeepEqual(*req.Fallbacks, []string{"anthropic/claude-sonnet-4-5"}) {
		t.Errorf("fallbacks = %v", req.Fallbacks)
	}
	schema, _ := json.Marshal(weatherSchema())
	want := provider.Turn{
		Messages: []provider.Message{
			{Role: provider.RoleDeveloper, Content: []provider.Part{provider.TextPart("Be brief.")}},
			{Role: provider.RoleSystem, Content: []provider.Part{provider.TextPart("You are baton's test.")}},
			{Role: provider.RoleUser, Content: []provider.Part{
				provider.TextPart("What is in this picture, and the weather?"),
				{Type: provider.PartImage, MediaType: "image/png", Data: pngData, Detail: "high"},
				{Type: provider.PartImage, URL: "https://example.com/cat.jpg"},
			}},
			{Role: provider.RoleAssistant, Content: []provider.Part{
				provider.TextPart("Let me check."),
				{Type: provider.PartToolCall, CallID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			}},
			{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: "call_1", Result: []provider.Part{provider.TextPart(`{"temp":21}`)}}}},
			{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart("Thanks.")}},
		},
		Tools:             []provider.Tool{{Name: "get_weather", Description: "The weather in a city", Schema: schema, Strict: ptr(true)}},
		ToolChoice:        &provider.ToolChoice{Type: provider.ToolChoiceNamed, Name: "get_weather"},
		ParallelToolCalls: ptr(false),
		Params: provider.Params{
			Temperature: ptr(0.2), TopP: ptr(0.9), MaxTokens: ptr(int64(512)), MaxTokensField: "max_completion_tokens",
			Stop: []string{"END", "STOP"}, Seed: ptr(int64(7)), PresencePenalty: ptr(0.1), FrequencyPenalty: ptr(0.3),
			ResponseFormat:  &provider.ResponseFormat{Type: provider.FormatJSONSchema, Name: "weather", Description: "a report", Schema: schema, Strict: ptr(true)},
			ReasoningEffort: "low",
		},
		Wire: provider.WireOpenAI,
		Extra: map[string]json.RawMessage{
			"metadata": json.RawMessage(`{"team":"core"}`), "store": json.RawMessage(`true`), "service_tier": json.RawMessage(`"flex"`),
			"prompt_cache_key": json.RawMessage(`"pk-1"`), "logit_bias": json.RawMessage(`{"50256":-100}`),
		},
	}
	sameJSON(t, "turn", req.Turn, want)
}

func TestDecodeOpenAIForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want func(t *testing.T, r Request)
	}{
		{"max_tokens alone", `{"model":"a/b","messages":[{"role":"user","content":"hi"}],"max_tokens":9}`, func(t *testing.T, r Request) {
			if p := r.Turn.Params; p.MaxTokens == nil || *p.MaxTokens != 9 || p.MaxTokensField != "max_tokens" {
				t.Errorf("params = %+v", p)
			}
		}},
		{"stop string, nulls, tool_choice string", `{"model":"a/b","messages":[{"role":"user","content":"hi","name":"bob"}],"stop":"END","temperature":null,"n":null,"tool_choice":"required","stream":false}`, func(t *testing.T, r Request) {
			if !reflect.DeepEqual(r.Turn.Params.Stop, []string{"END"}) || r.Turn.Params.Temperature != nil || r.Turn.ToolChoice.Type != provider.ToolChoiceRequired || r.Stream {
				t.Errorf("turn = %+v", r.Turn)
			}
		}},
		{"assistant: null content, tool calls, reasoning", `{"model":"agent:main","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"reasoning_content":"thinking","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"done"}]}],"fallbacks":[]}`, func(t *testing.T, r Request) {
			sameJSON(t, "messages", r.Turn.Messages[1:], []provider.Message{
				{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartReasoning, Text: "thinking"}, {Type: provider.PartToolCall, CallID: "c1", Name: "f", Arguments: "{}"}}},
				{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: "c1", Result: []provider.Part{provider.TextPart("done")}}}},
			})
			if r.Fallbacks == nil || len(*r.Fallbacks) != 0 {
				t.Errorf("fallbacks = %v, want an empty list", r.Fallbacks)
			}
			if r.Turn.Extra != nil {
				t.Errorf("extra = %v", r.Turn.Extra)
			}
		}},
		{"response_format json_object", `{"model":"a/b","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`, func(t *testing.T, r Request) {
			if f := r.Turn.Params.ResponseFormat; f == nil || f.Type != provider.FormatJSONObject {
				t.Errorf("response format = %+v", f)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, e := DecodeOpenAI([]byte(tc.body))
			if e != nil {
				t.Fatalf("DecodeOpenAI: %+v", e)
			}
			tc.want(t, r)
		})
	}
}

func TestDecodeOpenAIRefusals(t *testing.T) {
	user := func(parts ...openai.ChatCompletionContentPartUnionParam) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: "a/b", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(parts)}}
	}
	image := func(url string) openai.ChatCompletionContentPartUnionParam {
		return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url})
	}
	text := openai.TextContentPart("look")
	sdk := func(p openai.ChatCompletionNewParams) string { return string(body(t, p, nil)) }
	unknownCall := openai.ChatCompletionNewParams{Model: "a/b", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.UserMessage("hi"), openai.ToolMessage("result", "call_nope")}}
	n2 := openai.ChatCompletionNewParams{Model: "a/b", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, N: openai.Int(2)}
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, body, param, says string
	}{
		{"tool result with an unknown call id", sdk(unknownCall), "messages[1].tool_call_id", "call_nope"},
		{"schema not an object", `{"model":"a/b",` + msgs + `,"tools":[{"type":"function","function":{"name":"f","parameters":[1,2]}}]}`, "tools[0].function.parameters", "not a JSON object"},
		{"bad base64", sdk(user(text, image("data:image/png;base64,!!!not base64"))), "messages[0].content[1].image_url.url", "base64"},
		{"text/plain image", sdk(user(text, image("data:text/plain;base64,aGVsbG8="))), "messages[0].content[1].image_url.url", "not an image type"},
		{"media type not the data's", sdk(user(text, image("data:image/jpeg;base64,"+pngB64))), "messages[0].content[1].image_url.url", "image/png"},
		{"not an image at all", sdk(user(image("data:image/png;base64,aGVsbG8="))), "messages[0].content[0].image_url.url", "not a PNG"},
		{"ftp image", sdk(user(image("ftp://x/y.png"))), "messages[0].content[0].image_url.url", "http(s)"},
		{"n=2", sdk(n2), "n", "one choice"},
		{"audio part", sdk(user(text, openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: "AAAA", Format: "wav"}))), "messages[0].content[1]", "not supported"},
		{"file part", sdk(user(openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{FileID: openai.String("file-1")}))), "messages[0].content[0]", "not supported"},
		{"image in a system message", `{"model":"a/b","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, "messages[0].content[0].type", "not allowed"},
		{"function role", `{"model":"a/b","messages":[{"role":"function","name":"f","content":"x"}]}`, "messages[0].role", `"function"`},
		{"function_call", `{"model":"a/b","messages":[{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}]}`, "messages[0].function_call", "not supported"},
		{"custom tool", `{"model":"a/b",` + msgs + `,"tools":[{"type":"custom","custom":{"name":"g"}}]}`, "tools[0].type", "custom"},
		{"tool without a name", `{"model":"a/b",` + msgs + `,"tools":[{"type":"function","function":{"parameters":{}}}]}`, "tools[0].function.name", "name"},
		{"tool_choice names no tool", `{"model":"a/b",` + msgs + `,"tool_choice":{"type":"function","function":{"name":"g"}}}`, "tool_choice", `"g"`},
		{"tool_choice word", `{"model":"a/b",` + msgs + `,"tool_choice":"always"}`, "tool_choice", "always"},
		{"response schema not an object", `{"model":"a/b",` + msgs + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":true}}}`, "response_format.json_schema.schema", "not a JSON object"},
		{"temperature a string", `{"model":"a/b",` + msgs + `,"temperature":"hot"}`, "temperature", "temperature: want a number"},
		{"max_tokens not an integer", `{"model":"a/b",` + msgs + `,"max_tokens":1.5}`, "max_tokens", "want an integer"},
		{"stream not a bool", `{"model":"a/b",` + msgs + `,"stream":"yes"}`, "stream", "want true or false"},
		{"fallbacks not strings", `{"model":"a/b",` + msgs + `,"fallbacks":[1]}`, "fallbacks", "array of strings"},
		{"no model", `{` + msgs + `}`, "model", "provider/model"},
		{"empty messages", `{"model":"a/b","messages":[]}`, "messages", "non-empty"},
		{"user content null", `{"model":"a/b","messages":[{"role":"user","content":null}]}`, "messages[0].content", "want a string"},
		{"tool message without an id", `{"model":"a/b","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id", "tool_call_id"},
		{"not JSON", `{"model":`, "", "not valid JSON"},
		{"not an object", `[1,2]`, "", "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e := DecodeOpenAI([]byte(tc.body))
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Status != http.StatusBadRequest || e.Type != "invalid_request_error" || e.Param != tc.param || !strings.Contains(e.Message, tc.says) {
				t.Errorf("error = %+v, want param %q saying %q", e, tc.param, tc.says)
			}
			if tc.param != "" && !strings.HasPrefix(e.Message, tc.param+": ") {
				t.Errorf("message %q does not start with the field", e.Message)
			}
		})
	}
}

func testAnswer() provider.Answer {
	return provider.Answer{
		Text: strings.Repeat("Héllo wörld, ünïcode text — ", 6),
		ToolCalls: []provider.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris","days":[1,2,3],"note":"` + strings.Repeat("x", 100) + `"}`},
			{ID: "call_b", Name: "now", Arguments: `{}`},
		},
		Reasoning:    []provider.Part{{Type: provider.PartReasoning, Text: "First, the weather.", Signature: "sig-1"}},
		FinishReason: provider.FinishToolCalls,
		Usage:        provider.Usage{Input: 120, Output: 45, CachedInput: 100},
	}
}

func TestOpenAIResponse(t *testing.T) {
	a := testAnswer()
	raw := OpenAIResponse(Reply{ID: "chatcmpl-1", Model: "openai/gpt-5", Created: 1700000000, Answer: a})
	var c openai.ChatCompletion
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.ID != "chatcmpl-1" || c.Model != "openai/gpt-5" || c.Created != 1700000000 || string(c.Object) != "chat.completion" || len(c.Choices) != 1 {
		t.Fatalf("completion = %s", raw)
	}
	ch := c.Choices[0]
	if ch.Message.Content != a.Text || ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 2 {
		t.Fatalf("choice = %s", raw)
	}
	for i, tc := range ch.Message.ToolCalls {
		w := a.ToolCalls[i]
		if tc.ID != w.ID || tc.Function.Name != w.Name || tc.Function.Arguments != w.Arguments || tc.Type != "function" {
			t.Errorf("tool call %d = %+v", i, tc)
		}
	}
	if u := c.Usage; u.PromptTokens != 120 || u.CompletionTokens != 45 || u.TotalTokens != 165 || u.PromptTokensDetails.CachedTokens != 100 {
		t.Errorf("usage = %+v", u)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["reasoning_content"] != "First, the weather." {
		t.Errorf("reasoning_content = %v", msg["reasoning_content"])
	}

	// No text, tool calls: content is null; no finish reason given: tool_calls.
	raw = OpenAIResponse(Reply{ID: "x", Answer: provider.Answer{ToolCalls: a.ToolCalls[:1]}})
	if !bytes.Contains(raw, []byte(`"content":null`)) || !bytes.Contains(raw, []byte(`"finish_reason":"tool_calls"`)) {
		t.Errorf("tool-only answer = %s", raw)
	}
	// Text only: stop.
	raw = OpenAIResponse(Reply{ID: "x", Answer: provider.Answer{Text: "hi"}})
	if !bytes.Contains(raw, []byte(`"finish_reason":"stop"`)) || bytes.Contains(raw, []byte("tool_calls")) || bytes.Contains(raw, []byte("reasoning_content")) {
		t.Errorf("text answer = %s", raw)
	}
}

func sseResponse(b []byte) *http.Response {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(b))}
}

func TestOpenAIStream(t *testing.T) {
	a := testAnswer()
	var buf bytes.Buffer
	flushes := 0
	s := NewOpenAIStream(&buf, func() { flushes++ }, "chatcmpl-1", "openai/gpt-5", 1700000000, true)
	StreamAnswer(s, a)
	s.Text("after the end") // ignored
	if !bytes.HasSuffix(buf.Bytes(), []byte("data: [DONE]\n\n")) || flushes == 0 {
		t.Fatalf("stream does not end with [DONE] (%d flushes):\n%s", flushes, buf.String())
	}
	if !strings.HasPrefix(buf.String(), `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"openai/gpt-5","choices":[{"index":0,"delta":{"role":"assistant","content":""}`) {
		t.Errorf("first chunk:\n%s", buf.String()[:200])
	}
	stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(sseResponse(buf.Bytes())), nil)
	acc := openai.ChatCompletionAccumulator{}
	reasoning := ""
	chunks := 0
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		if !acc.AddChunk(chunk) {
			t.Fatalf("chunk %d refused: %s", chunks, chunk.RawJSON())
		}
		if len(chunk.Choices) > 0 {
			var d struct {
				ReasoningContent string `json:"reasoning_content"`
			}
			_ = json.Unmarshal([]byte(chunk.Choices[0].Delta.RawJSON()), &d)
			reasoning += d.ReasoningContent
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if chunks < 10 {
		t.Errorf("only %d chunks: the answer was not cut into pieces", chunks)
	}
	c := acc.ChatCompletion
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != a.Text || c.Choices[0].FinishReason != "tool_calls" || c.ID != "chatcmpl-1" || c.Model != "openai/gpt-5" {
		t.Fatalf("accumulated = %+v", c)
	}
	if reasoning != "First, the weather." {
		t.Errorf("reasoning = %q", reasoning)
	}
	calls := c.Choices[0].Message.ToolCalls
	if len(calls) != 2 {
		t.Fatalf("tool calls = %+v", calls)
	}
	for i, tc := range calls {
		w := a.ToolCalls[i]
		if tc.ID != w.ID || tc.Function.Name != w.Name || tc.Function.Arguments != w.Arguments {
			t.Errorf("tool call %d = %+v, want %+v", i, tc, w)
		}
	}
	if u := c.Usage; u.PromptTokens != 120 || u.CompletionTokens != 45 || u.TotalTokens != 165 || u.PromptTokensDetails.CachedTokens != 100 {
		t.Errorf("usage = %+v", u)
	}

	// Without include_usage, no usage chunk.
	buf.Reset()
	StreamAnswer(NewOpenAIStream(&buf, nil, "x", "m", 1, false), provider.Answer{Text: "hi"})
	if bytes.Contains(buf.Bytes(), []byte(`"usage"`)) || !bytes.Contains(buf.Bytes(), []byte(`"finish_reason":"stop"`)) {
		t.Errorf("stream without usage:\n%s", buf.String())
	}
}

func TestOpenAIStreamError(t *testing.T) {
	var buf bytes.Buffer
	s := NewOpenAIStream(&buf, nil, "x", "m", 1, true)
	s.Text("partial")
	s.Error(&Error{Status: 429, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "every candidate is cooling down"})
	s.Finish("stop", provider.Usage{}) // ignored
	if bytes.Contains(buf.Bytes(), []byte("[DONE]")) || bytes.Contains(buf.Bytes(), []byte("finish_reason\":\"stop")) {
		t.Fatalf("stream after an error:\n%s", buf.String())
	}
	stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(sseResponse(buf.Bytes())), nil)
	for stream.Next() {
	}
	var se *ssestream.StreamError
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "every candidate is cooling down") {
		t.Fatalf("stream error = %v", err)
	} else if ok := errors.As(err, &se); !ok || !bytes.Contains(se.Event.Data, []byte(`"code":"rate_limit_exceeded"`)) {
		t.Errorf("stream error event = %v", err)
	}
}

func TestWriteOpenAIError(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteOpenAIError(rec, &Error{Status: 429, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "slow down", RetryAfter: 12})
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "12" || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("status %d, headers %v", rec.Code, rec.Header())
	}
	sameJSON(t, "body", json.RawMessage(rec.Body.Bytes()), map[string]any{"error": map[string]any{"message": "slow down", "type": "rate_limit_error", "param": nil, "code": "rate_limit_exceeded"}})

	rec = httptest.NewRecorder()
	WriteOpenAIError(rec, BadRequest("messages[0].role", "messages[0].role: %q is wrong", "x"))
	if rec.Code != 400 || rec.Header().Get("Retry-After") != "" {
		t.Errorf("status %d, headers %v", rec.Code, rec.Header())
	}
	sameJSON(t, "body", json.RawMessage(rec.Body.Bytes()), map[string]any{"error": map[string]any{"message": `messages[0].role: "x" is wrong`, "type": "invalid_request_error", "param": "messages[0].role", "code": nil}})
}

func TestSplitText(t *testing.T) {
	s := strings.Repeat("aé€😀", 40)
	pieces := splitText(s, 64)
	if strings.Join(pieces, "") != s {
		t.Fatal("pieces do not join back")
	}
	for _, p := range pieces[:len(pieces)-1] {
		if len(p) < 64 || len(p) > 67 || !utf8.ValidString(p) {
			t.Errorf("piece of %d bytes %q", len(p), p)
		}
	}
}

func FuzzDecodeOpenAI(f *testing.F) {
	f.Add(body(f, fullOpenAIParams(), map[string]any{"stream": true, "fallbacks": []string{"x/y"}}))
	f.Add([]byte(`{"model":"a/b","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`))
	f.Add([]byte(`{"model":"a/b","messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`))
	f.Add([]byte(`{"model":"a/b","messages":[{"role":"user","content":"hi"}],"max_tokens":1e3,"stop":["a"],"n":1,"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, e := DecodeOpenAI(b)
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if strings.TrimSpace(req.Model) == "" || len(req.Turn.Messages) == 0 || req.Turn.Wire != provider.WireOpenAI {
			t.Fatalf("accepted %+v", req)
		}
		if te := provider.CheckTurn(req.Turn); te != nil {
			t.Fatalf("accepted a turn CheckTurn refuses: %v", te)
		}
	})
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
