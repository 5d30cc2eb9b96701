package wire

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/batonhq/baton/provider"
)

func fullAnthropicParams() anthropic.MessageNewParams {
	failed := anthropic.ToolResultBlockParam{ToolUseID: "toolu_2", IsError: anthropic.Bool(true),
		CacheControl: anthropic.NewCacheControlEphemeralParam(),
		Content: []anthropic.ToolResultBlockParamContentUnion{
			{OfText: &anthropic.TextBlockParam{Text: "camera offline; last frame:"}},
			{OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{MediaType: "image/jpeg", Data: base64Std(jpegData)}}}},
		}}
	return anthropic.MessageNewParams{
		Model:     "anthropic/claude-sonnet-4-5",
		MaxTokens: 1024,
		System: []anthropic.TextBlockParam{
			{Text: "You are terse.", CacheControl: anthropic.NewCacheControlEphemeralParam()},
			{Text: "Answer in English."},
		},
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(
				anthropic.NewTextBlock("What is this, and the weather?"),
				anthropic.NewImageBlockBase64("image/png", pngB64),
				anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: "https://example.com/cat.jpg"}),
			),
			anthropic.NewAssistantMessage(
				anthropic.NewThinkingBlock("sig-1", "The user wants two things."),
				anthropic.NewRedactedThinkingBlock("opaque-data"),
				anthropic.NewTextBlock("Checking."),
				anthropic.NewToolUseBlock("toolu_1", map[string]any{"city": "Paris"}, "get_weather"),
				anthropic.NewToolUseBlock("toolu_2", map[string]any{}, "snapshot"),
			),
			anthropic.NewUserMessage(
				anthropic.NewToolResultBlock("toolu_1", "21°C", false),
				anthropic.NewTextBlock("Thanks."),
				anthropic.ContentBlockParamUnion{OfToolResult: &failed},
			),
		},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: "get_weather", Description: anthropic.String("The weather in a city"), Strict: anthropic.Bool(true),
			InputSchema:  anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}},
			CacheControl: anthropic.NewCacheControlEphemeralParam(),
		}}, {OfTool: &anthropic.ToolParam{Name: "snapshot", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}}}}},
		ToolChoice:    anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "get_weather", DisableParallelToolUse: anthropic.Bool(true)}},
		Thinking:      anthropic.ThinkingConfigParamOfEnabled(2048),
		Metadata:      anthropic.MetadataParam{UserID: anthropic.String("session-a")},
		Temperature:   anthropic.Float(0.5),
		TopP:          anthropic.Float(0.8),
		StopSequences: []string{"END"},
		// Not modelled: forwarded in Extra.
		TopK:        anthropic.Int(40),
		ServiceTier: "standard_only",
	}
}

func TestDecodeAnthropic(t *testing.T) {
	b := body(t, fullAnthropicParams(), map[string]any{"stream": true, "fallbacks": []string{"openai/gpt-5"}})
	req, e := DecodeAnthropic(b)
	if e != nil {
		t.Fatalf("DecodeAnthropic: %+v", e)
	}
	if req.Model != "anthropic/claude-sonnet-4-5" || !req.Stream || req.IncludeUsage || req.Session != "session-a" {
		t.Errorf("request = model %q stream %v session %q", req.Model, req.Stream, req.Session)
	}
	if req.Fallbacks == nil || !reflect.DeepEqual(*req.Fallbacks, []string{"openai/gpt-5"}) {
		t.Errorf("fallbacks = %v", req.Fallbacks)
	}
	cc := json.RawMessage(`{"type":"ephemeral"}`)
	want := provider.Turn{
		Messages: []provider.Message{
			{Role: provider.RoleSystem, Content: []provider.Part{{Type: provider.PartText, Text: "You are terse.", CacheControl: cc}, provider.TextPart("Answer in English.")}},
			{Role: provider.RoleUser, Content: []provider.Part{
				provider.TextPart("What is this, and the weather?"),
				{Type: provider.PartImage, MediaType: "image/png", Data: pngData},
				{Type: provider.PartImage, URL: "https://example.com/cat.jpg"},
			}},
			{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: provider.PartReasoning, Text: "The user wants two things.", Signature: "sig-1"},
				{Type: provider.PartReasoning, Redacted: "opaque-data"},
				provider.TextPart("Checking."),
				{Type: provider.PartToolCall, CallID: "toolu_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				{Type: provider.PartToolCall, CallID: "toolu_2", Name: "snapshot", Arguments: `{}`},
			}},
			{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: "toolu_1", Result: []provider.Part{provider.TextPart("21°C")}}}},
			{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: "toolu_2", IsError: true, CacheControl: cc, Result: []provider.Part{
				provider.TextPart("camera offline; last frame:"), {Type: provider.PartImage, MediaType: "image/jpeg", Data: jpegData},
			}}}},
			{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart("Thanks.")}},
		},
		Tools: []provider.Tool{
			{Name: "get_weather", Description: "The weather in a city", Strict: ptr(true), CacheControl: cc,
				Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "snapshot", Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
		ToolChoice:        &provider.ToolChoice{Type: provider.ToolChoiceNamed, Name: "get_weather"},
		ParallelToolCalls: ptr(false),
		Params: provider.Params{Temperature: ptr(0.5), TopP: ptr(0.8), MaxTokens: ptr(int64(1024)), Stop: []string{"END"},
			ThinkingBudget: ptr(int64(2048))},
		Wire: provider.WireAnthropic,
		Extra: map[string]json.RawMessage{"metadata": json.RawMessage(`{"user_id":"session-a"}`), "top_k": json.RawMessage(`40`),
			"service_tier": json.RawMessage(`"standard_only"`)},
	}
	sameJSON(t, "turn", req.Turn, want)
}

func TestDecodeAnthropicForms(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       func(t *testing.T, r Request)
	}{
		{"string system and content, no max_tokens", `{"model":"a/b","system":"Be kind.","messages":[{"role":"user","content":"hi"}]}`, func(t *testing.T, r Request) {
			sameJSON(t, "messages", r.Turn.Messages, []provider.Message{
				{Role: provider.RoleSystem, Content: []provider.Part{provider.TextPart("Be kind.")}},
				{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart("hi")}},
			})
			if r.Turn.Params.MaxTokens != nil || r.Turn.Extra != nil {
				t.Errorf("turn = %+v", r.Turn)
			}
		}},
		{"tool choices", `{"model":"a/b","messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"any"}}`, func(t *testing.T, r Request) {
			if r.Turn.ToolChoice == nil || r.Turn.ToolChoice.Type != provider.ToolChoiceRequired || r.Turn.ParallelToolCalls != nil {
				t.Errorf("tool choice = %+v, parallel %v", r.Turn.ToolChoice, r.Turn.ParallelToolCalls)
			}
		}},
		{"only tool results", `{"model":"a/b","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"a": 1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}]}`, func(t *testing.T, r Request) {
			sameJSON(t, "messages", r.Turn.Messages, []provider.Message{
				{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolCall, CallID: "t1", Name: "f", Arguments: `{"a":1}`}}},
				{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: "t1"}}},
			})
		}},
		{"adaptive thinking goes to Extra", `{"model":"a/b","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"adaptive"}}`, func(t *testing.T, r Request) {
			if string(r.Turn.Extra["thinking"]) != `{"type":"adaptive"}` || r.Turn.Params.ThinkingBudget != nil {
				t.Errorf("extra = %v", r.Turn.Extra)
			}
		}},
		{"disabled thinking", `{"model":"a/b","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"disabled"}}`, func(t *testing.T, r Request) {
			if r.Turn.Extra != nil || r.Turn.Params.ThinkingBudget != nil {
				t.Errorf("turn = %+v", r.Turn)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, e := DecodeAnthropic([]byte(tc.body))
			if e != nil {
				t.Fatalf("DecodeAnthropic: %+v", e)
			}
			tc.want(t, r)
		})
	}
}

func TestDecodeAnthropicRefusals(t *testing.T) {
	sdk := func(p anthropic.MessageNewParams) string { return string(body(t, p, nil)) }
	user := func(blocks ...anthropic.ContentBlockParamUnion) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{Model: "a/b", MaxTokens: 10, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(blocks...)}}
	}
	text := anthropic.NewTextBlock("look")
	webSearch := user(text)
	webSearch.Tools = []anthropic.ToolUnionParam{{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{}}}
	doc := anthropic.NewDocumentBlock(anthropic.PlainTextSourceParam{Data: "a document"})
	badInner := anthropic.ToolResultBlockParam{ToolUseID: "t1", Content: []anthropic.ToolResultBlockParamContentUnion{
		{OfText: &anthropic.TextBlockParam{Text: "frame:"}},
		{OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{MediaType: "image/png", Data: base64Std(jpegData)}}}},
	}}
	withCall := anthropic.MessageNewParams{Model: "a/b", MaxTokens: 10, Messages: []anthropic.MessageParam{
		anthropic.NewUserMessage(text),
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("t1", map[string]any{}, "f")),
		anthropic.NewUserMessage(text, anthropic.ContentBlockParamUnion{OfToolResult: &badInner}),
	}}
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, body, param, says string
	}{
		{"tool result with an unknown call id", sdk(user(text, anthropic.NewToolResultBlock("toolu_nope", "x", false))), "messages[0].content[1].tool_use_id", "toolu_nope"},
		{"schema not an object", `{"model":"a/b",` + msgs + `,"tools":[{"name":"f","input_schema":"object"}]}`, "tools[0].input_schema", "not a JSON object"},
		{"bad base64", sdk(user(text, anthropic.NewImageBlockBase64("image/png", "!!!not base64"))), "messages[0].content[1].source.data", "base64"},
		{"text/plain image", sdk(user(anthropic.NewImageBlockBase64("text/plain", "aGVsbG8="))), "messages[0].content[0].source.media_type", "not an image type"},
		{"not an image at all", sdk(user(anthropic.NewImageBlockBase64("image/png", "aGVsbG8="))), "messages[0].content[0].source.data", "not a PNG"},
		{"media type not the data's, in a tool result", sdk(withCall), "messages[2].content[1].content[1].source.media_type", "image/jpeg"},
		{"document block", sdk(user(text, doc)), "messages[0].content[1]", "not supported"},
		{"server tool", sdk(webSearch), "tools[0]", "web_search_20250305"},
		{"tool_use in a user message", `{"model":"a/b","messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`, "messages[0].content[0].type", "assistant"},
		{"system role", `{"model":"a/b","messages":[{"role":"system","content":"x"}]}`, "messages[0].role", `"system"`},
		{"tool_choice names no tool", `{"model":"a/b",` + msgs + `,"tool_choice":{"type":"tool","name":"g"}}`, "tool_choice", `"g"`},
		{"tool_choice type", `{"model":"a/b",` + msgs + `,"tool_choice":{"type":"sometimes"}}`, "tool_choice.type", "sometimes"},
		{"thinking without a budget", `{"model":"a/b",` + msgs + `,"thinking":{"type":"enabled"}}`, "thinking.budget_tokens", "budget"},
		{"temperature a string", `{"model":"a/b",` + msgs + `,"temperature":"warm"}`, "temperature", "temperature: want a number"},
		{"max_tokens a string", `{"model":"a/b",` + msgs + `,"max_tokens":"10"}`, "max_tokens", "want an integer"},
		{"metadata.user_id a number", `{"model":"a/b",` + msgs + `,"metadata":{"user_id":5}}`, "metadata.user_id", "want a string"},
		{"system image", `{"model":"a/b",` + msgs + `,"system":[{"type":"image"}]}`, "system[0].type", "text"},
		{"file image source", `{"model":"a/b","messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages[0].content[0].source.type", "not supported"},
		{"no model", `{` + msgs + `}`, "model", "provider/model"},
		{"no messages", `{"model":"a/b"}`, "messages", "non-empty"},
		{"not JSON", `{`, "", "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e := DecodeAnthropic([]byte(tc.body))
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Status != http.StatusBadRequest || e.Param != tc.param || !strings.Contains(e.Message, tc.says) {
				t.Errorf("error = %+v, want param %q saying %q", e, tc.param, tc.says)
			}
			if tc.param != "" && !strings.HasPrefix(e.Message, tc.param+": ") {
				t.Errorf("message %q does not start with the field", e.Message)
			}
		})
	}
}

func testAnthropicAnswer() provider.Answer {
	a := testAnswer()
	a.Reasoning = append(a.Reasoning, provider.Part{Type: provider.PartReasoning, Redacted: "opaque"},
		provider.Part{Type: provider.PartReasoning, Text: strings.Repeat("more thought ", 10), Signature: "sig-2"})
	return a
}

// sameContent compares the content blocks of two messages.
func sameContent(t *testing.T, got, want []anthropic.ContentBlockUnion) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d blocks, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		var gi, wi any
		_ = json.Unmarshal(orEmpty(g.Input), &gi)
		_ = json.Unmarshal(orEmpty(w.Input), &wi)
		if g.Type != w.Type || g.Text != w.Text || g.Thinking != w.Thinking || g.Signature != w.Signature || g.Data != w.Data ||
			g.ID != w.ID || g.Name != w.Name || !reflect.DeepEqual(gi, wi) {
			t.Errorf("block %d = %s, want %s", i, g.RawJSON(), w.RawJSON())
		}
	}
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func TestAnthropicResponse(t *testing.T) {
	a := testAnthropicAnswer()
	raw := AnthropicResponse(Reply{ID: "msg_1", Model: "anthropic/claude-sonnet-4-5", Answer: a})
	var m anthropic.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.ID != "msg_1" || m.Model != "anthropic/claude-sonnet-4-5" || string(m.Role) != "assistant" || m.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("message = %s", raw)
	}
	if u := m.Usage; u.InputTokens != 20 || u.OutputTokens != 45 || u.CacheReadInputTokens != 100 || u.CacheCreationInputTokens != 0 {
		t.Errorf("usage = %+v", u)
	}
	var types []string
	for _, b := range m.Content {
		types = append(types, b.Type)
	}
	if strings.Join(types, ",") != "thinking,redacted_thinking,thinking,text,tool_use,tool_use" {
		t.Fatalf("blocks = %v", types)
	}
	if m.Content[0].Thinking != "First, the weather." || m.Content[0].Signature != "sig-1" || m.Content[1].Data != "opaque" || m.Content[3].Text != a.Text {
		t.Errorf("content = %s", raw)
	}
	tu := m.Content[4].AsToolUse()
	var input map[string]any
	if err := json.Unmarshal(tu.Input, &input); err != nil || tu.ID != "call_a" || tu.Name != "get_weather" || input["city"] != "Paris" {
		t.Errorf("tool use = %+v (%v)", tu, err)
	}

	for _, tc := range []struct {
		answer provider.Answer
		stop   anthropic.StopReason
		json   string
	}{
		{provider.Answer{Text: "hi"}, anthropic.StopReasonEndTurn, `"content":[{"type":"text","text":"hi"}]`},
		{provider.Answer{Text: "hi", FinishReason: provider.FinishLength}, anthropic.StopReasonMaxTokens, ``},
		{provider.Answer{FinishReason: provider.FinishContentFilter}, anthropic.StopReasonRefusal, `"content":[{"type":"text","text":""}]`},
		{provider.Answer{ToolCalls: []provider.ToolCall{{ID: "t", Name: "f", Arguments: "not json"}}}, anthropic.StopReasonToolUse, `"content":[{"type":"tool_use","id":"t","name":"f","input":{}}]`},
	} {
		raw := AnthropicResponse(Reply{ID: "x", Answer: tc.answer})
		var m anthropic.Message
		if err := json.Unmarshal(raw, &m); err != nil || m.StopReason != tc.stop || !bytes.Contains(raw, []byte(tc.json)) {
			t.Errorf("%+v → %s (%v)", tc.answer, raw, err)
		}
	}
}

func readAnthropicStream(t *testing.T, b []byte) (anthropic.Message, []string, error) {
	t.Helper()
	stream := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(sseResponse(b)), nil)
	var m anthropic.Message
	var events []string
	for stream.Next() {
		ev := stream.Current()
		events = append(events, ev.Type)
		if err := m.Accumulate(ev); err != nil {
			t.Fatalf("accumulate %s: %v", ev.RawJSON(), err)
		}
	}
	return m, events, stream.Err()
}

func TestAnthropicStream(t *testing.T) {
	a := testAnthropicAnswer()
	var buf bytes.Buffer
	flushes := 0
	s := NewAnthropicStream(&buf, func() { flushes++ }, "msg_1", "anthropic/claude-sonnet-4-5", provider.Usage{Input: 120, CachedInput: 100})
	StreamAnswer(s, a)
	s.Text("after the end") // ignored
	if !strings.HasPrefix(buf.String(), "event: message_start\n") || !strings.Contains(buf.String(), "event: ping\n") ||
		!strings.HasSuffix(buf.String(), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") || flushes == 0 {
		t.Fatalf("stream:\n%s", buf.String())
	}
	got, events, err := readAnthropicStream(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 20 {
		t.Errorf("only %d events: the answer was not cut into pieces", len(events))
	}
	var want anthropic.Message
	if err := json.Unmarshal(AnthropicResponse(Reply{ID: "msg_1", Model: "anthropic/claude-sonnet-4-5", Answer: a}), &want); err != nil {
		t.Fatal(err)
	}
	sameContent(t, got.Content, want.Content)
	if got.ID != "msg_1" || got.Model != want.Model || got.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("message = %+v", got)
	}
	if u := got.Usage; u.InputTokens != 20 || u.OutputTokens != 45 || u.CacheReadInputTokens != 100 {
		t.Errorf("usage = %+v", u)
	}

	// An empty answer still has a text block, as the response does.
	buf.Reset()
	StreamAnswer(NewAnthropicStream(&buf, nil, "m", "x", provider.Usage{}), provider.Answer{})
	got, _, err = readAnthropicStream(t, buf.Bytes())
	if err != nil || len(got.Content) != 1 || got.Content[0].Type != "text" || got.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("empty answer: %+v (%v)", got, err)
	}
}

func TestAnthropicStreamInterleaved(t *testing.T) {
	var buf bytes.Buffer
	s := NewAnthropicStream(&buf, nil, "msg", "m", provider.Usage{Input: 5})
	s.Text("a")
	s.ToolCall(0, "t0", "f")
	s.ToolArgs(0, `{"x":`)
	s.Text("b")
	s.ToolArgs(0, `1}`) // its block is still open
	s.Thinking("hm")
	s.Text("c")
	s.Finish("", provider.Usage{Input: 5, Output: 3})
	got, _, err := readAnthropicStream(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, b := range got.Content {
		types = append(types, b.Type)
	}
	if strings.Join(types, ",") != "text,tool_use,text,thinking,text" || string(got.Content[1].Input) != `{"x":1}` || got.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("blocks %v, input %s, stop %s", types, got.Content[1].Input, got.StopReason)
	}
}

func TestAnthropicStreamError(t *testing.T) {
	var buf bytes.Buffer
	s := NewAnthropicStream(&buf, nil, "msg", "m", provider.Usage{})
	s.Text("partial")
	s.Error(&Error{Status: 503, Type: "server_error", Message: "no candidate answered"})
	s.Finish("stop", provider.Usage{}) // ignored
	if strings.Contains(buf.String(), "message_stop") || !strings.Contains(buf.String(), "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"no candidate answered\"}}\n\n") {
		t.Fatalf("stream:\n%s", buf.String())
	}
	_, _, err := readAnthropicStream(t, buf.Bytes())
	if err == nil || !strings.Contains(err.Error(), "no candidate answered") {
		t.Errorf("stream error = %v", err)
	}
}

func TestWriteAnthropicError(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Status: 400, Type: "invalid_request_error", Message: "m"}, "invalid_request_error"},
		{Error{Status: 401, Type: "invalid_request_error", Code: "invalid_api_key", Message: "m"}, "authentication_error"},
		{Error{Status: 404, Type: "invalid_request_error", Message: "m"}, "not_found_error"},
		{Error{Status: 405, Type: "invalid_request_error", Message: "m"}, "invalid_request_error"},
		{Error{Status: 429, Type: "rate_limit_error", Message: "m", RetryAfter: 3}, "rate_limit_error"},
		{Error{Status: 502, Type: "server_error", Message: "m"}, "api_error"},
		{Error{Status: 504, Type: "server_error", Message: "m"}, "api_error"},
		{Error{Status: 503, Type: "server_error", Message: "m"}, "overloaded_error"},
		{Error{Status: 500, Type: "overloaded_error", Message: "m"}, "overloaded_error"},
	} {
		rec := httptest.NewRecorder()
		WriteAnthropicError(rec, &tc.e)
		if rec.Code != tc.e.Status || (tc.e.RetryAfter > 0) != (rec.Header().Get("Retry-After") != "") {
			t.Errorf("%+v: status %d, headers %v", tc.e, rec.Code, rec.Header())
		}
		sameJSON(t, "body", json.RawMessage(rec.Body.Bytes()), map[string]any{"type": "error", "error": map[string]any{"type": tc.want, "message": "m"}})
		// The SDK reads it as an API error of that type.
		var body struct {
			Error struct{ Type string } `json:"error"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error.Type != tc.want {
			t.Errorf("%+v: body %s", tc.e, rec.Body.String())
		}
	}
}

func FuzzDecodeAnthropic(f *testing.F) {
	f.Add(body(f, fullAnthropicParams(), map[string]any{"stream": true, "fallbacks": []string{"x/y"}}))
	f.Add([]byte(`{"model":"a/b","system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]}`))
	f.Add([]byte(`{"model":"a/b","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]},{"type":"text","text":"y"}]}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"}}`))
	f.Add([]byte(`{"model":"a/b","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled","budget_tokens":1024},"metadata":{"user_id":"u"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, e := DecodeAnthropic(b)
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if strings.TrimSpace(req.Model) == "" || len(req.Turn.Messages) == 0 || req.Turn.Wire != provider.WireAnthropic {
			t.Fatalf("accepted %+v", req)
		}
		if te := provider.CheckTurn(req.Turn); te != nil {
			t.Fatalf("accepted a turn CheckTurn refuses: %v", te)
		}
	})
}
