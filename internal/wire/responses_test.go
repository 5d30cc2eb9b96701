package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/batonhq/baton/provider"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

func fullResponsesParams() responses.ResponseNewParams {
	weather := responses.ToolParamOfFunction("get_weather", weatherSchema(), true)
	weather.OfFunction.Description = openai.String("The weather in a city")
	out1 := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp":21}`)
	out1.OfFunctionCallOutput.CallID = openai.String("call_1")
	out2 := responses.ResponseInputItemParamOfFunctionCallOutput(responses.ResponseFunctionCallOutputItemListParam{
		responses.ResponseFunctionCallOutputItemParamOfInputText("see the chart"),
		{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String("https://example.com/chart.png"), Detail: responses.ResponseInputImageContentDetailLow}},
	})
	out2.OfFunctionCallOutput.CallID = openai.String("call_2")
	return responses.ResponseNewParams{
		Model:        "openai/gpt-5",
		Instructions: openai.String("Be brief."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Use metric units.", responses.EasyInputMessageRoleDeveloper),
			responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
				responses.ResponseInputContentParamOfInputText("What is in this picture, and the weather?"),
				{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String("data:image/png;base64," + pngB64), Detail: responses.ResponseInputImageDetailHigh}},
				{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String("https://example.com/cat.jpg"), Detail: "auto"}},
			}, responses.EasyInputMessageRoleUser),
			{OfReasoning: &responses.ResponseReasoningItemParam{ID: "rs_1", EncryptedContent: openai.String("gAAAA-opaque"),
				Summary: []responses.ResponseReasoningItemSummaryParam{{Text: "Thinking about the weather."}}}},
			responses.ResponseInputItemParamOfOutputMessage([]responses.ResponseOutputMessageContentUnionParam{
				{OfOutputText: &responses.ResponseOutputTextParam{Text: "Let me check.", Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}},
			}, "msg_1", responses.ResponseOutputMessageStatusCompleted),
			responses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_1", "get_weather"),
			responses.ResponseInputItemParamOfFunctionCall(`{}`, "call_2", "chart"),
			out1,
			out2,
			responses.ResponseInputItemParamOfMessage("Thanks.", responses.EasyInputMessageRoleUser),
		}},
		Tools: []responses.ToolUnionParam{
			weather,
			responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch),
			responses.ToolParamOfFunction("chart", map[string]any{"type": "object"}, false),
		},
		ToolChoice:        responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_weather"}},
		ParallelToolCalls: openai.Bool(false),
		Temperature:       openai.Float(0.2),
		TopP:              openai.Float(0.9),
		MaxOutputTokens:   openai.Int(512),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
			Name: "weather", Schema: weatherSchema(), Strict: openai.Bool(true), Description: openai.String("a report")}}},
		Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortLow},
		User:      openai.String("session-1"),
		Store:     openai.Bool(false),
		// Not modelled: forwarded in Extra (metadata is also echoed).
		Metadata:         shared.Metadata{"team": "core"},
		Include:          []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		ServiceTier:      responses.ResponseNewParamsServiceTierFlex,
		PromptCacheKey:   openai.String("pk-1"),
		SafetyIdentifier: openai.String("sid-1"),
	}
}

func TestDecodeResponses(t *testing.T) {
	b := body(t, fullResponsesParams(), map[string]any{"stream": true, "fallbacks": []string{"anthropic/claude-sonnet-4-5"}, "wait_for_cooldown": "10m"})
	req, e := DecodeResponses(b)
	if e != nil {
		t.Fatalf("DecodeResponses: %+v", e)
	}
	if req.Model != "openai/gpt-5" || !req.Stream || req.Session != "session-1" || req.WaitForCooldown.String() != "10m0s" {
		t.Errorf("request = model %q stream %v session %q wait %v", req.Model, req.Stream, req.Session, req.WaitForCooldown)
	}
	if req.Fallbacks == nil || !reflect.DeepEqual(*req.Fallbacks, []string{"anthropic/claude-sonnet-4-5"}) {
		t.Errorf("fallbacks = %v", req.Fallbacks)
	}
	schema, _ := json.Marshal(weatherSchema())
	want := provider.Turn{
		Messages: []provider.Message{
			{Role: provider.RoleSystem, Content: []provider.Part{provider.TextPart("Be brief.")}},
			{Role: provider.RoleDeveloper, Content: []provider.Part{provider.TextPart("Use metric units.")}},
			{Role: provider.RoleUser, Content: []provider.Part{
				provider.TextPart("What is in this picture, and the weather?"),
				{Type: provider.PartImage, MediaType: "image/png", Data: pngData, Detail: "high"},
				{Type: provider.PartImage, URL: "https://example.com/cat.jpg", Detail: "auto"},
			}},
			{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: provider.PartReasoning, Text: "Thinking about the weather.", ReasoningID: "rs_1", Encrypted: "gAAAA-opaque"},
				provider.TextPart("Let me check."),
				{Type: provider.PartToolCall, CallID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				{Type: provider.PartToolCall, CallID: "call_2", Name: "chart", Arguments: `{}`},
			}},
			{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: "call_1", Result: []provider.Part{provider.TextPart(`{"temp":21}`)}}}},
			{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: "call_2", Result: []provider.Part{
				provider.TextPart("see the chart"), {Type: provider.PartImage, URL: "https://example.com/chart.png", Detail: "low"}}}}},
			{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart("Thanks.")}},
		},
		Tools: []provider.Tool{
			{Name: "get_weather", Description: "The weather in a city", Schema: schema, Strict: ptr(true)},
			{Name: "chart", Schema: json.RawMessage(`{"type":"object"}`), Strict: ptr(false)},
		},
		ToolChoice:        &provider.ToolChoice{Type: provider.ToolChoiceNamed, Name: "get_weather"},
		ParallelToolCalls: ptr(false),
		Params: provider.Params{
			Temperature: ptr(0.2), TopP: ptr(0.9), MaxTokens: ptr(int64(512)),
			ResponseFormat:  &provider.ResponseFormat{Type: provider.FormatJSONSchema, Name: "weather", Description: "a report", Schema: schema, Strict: ptr(true)},
			ReasoningEffort: "low",
		},
		Wire: WireResponses,
		Extra: map[string]json.RawMessage{
			"metadata": json.RawMessage(`{"team":"core"}`), "include": json.RawMessage(`["reasoning.encrypted_content"]`),
			"service_tier": json.RawMessage(`"flex"`), "prompt_cache_key": json.RawMessage(`"pk-1"`), "safety_identifier": json.RawMessage(`"sid-1"`),
		},
	}
	sameJSON(t, "turn", req.Turn, want)

	rr := req.Responses
	if rr == nil {
		t.Fatal("no Responses fields")
	}
	if rr.Store || rr.Background || rr.PreviousResponseID != "" || len(rr.PriorCallResults) != 0 {
		t.Errorf("state = %+v", rr.ResponsesEcho)
	}
	if len(rr.BuiltinTools) != 1 || rr.BuiltinTools[0].Param != "tools[1]" || rr.BuiltinTools[0].Type != "web_search" ||
		!bytes.Contains(rr.BuiltinTools[0].Raw, []byte(`"web_search"`)) {
		t.Errorf("builtin tools = %+v", rr.BuiltinTools)
	}
	if len(rr.ReasoningItems) != 1 {
		t.Fatalf("reasoning items = %+v", rr.ReasoningItems)
	}
	ri := rr.ReasoningItems[0]
	if ri.Param != "input[2]" || ri.Message != 3 || ri.Part != 0 || ri.ID != "rs_1" || !json.Valid(ri.Raw) {
		t.Errorf("reasoning item = %+v", ri)
	}
	wantEcho := ResponsesEcho{Store: false, Instructions: ptr("Be brief."), Metadata: json.RawMessage(`{"team":"core"}`),
		ParallelToolCalls: ptr(false), ToolChoice: json.RawMessage(`{"name":"get_weather","type":"function"}`),
		Temperature: ptr(0.2), TopP: ptr(0.9), MaxOutputTokens: ptr(int64(512)), Reasoning: json.RawMessage(`{"effort":"low"}`), User: "session-1"}
	echo := rr.ResponsesEcho
	if !json.Valid(echo.Tools) || !bytes.Contains(echo.Tools, []byte(`"web_search"`)) || !bytes.Contains(echo.Text, []byte(`"json_schema"`)) {
		t.Errorf("echo tools %s text %s", echo.Tools, echo.Text)
	}
	echo.Tools, echo.Text = nil, nil
	sameJSON(t, "echo", echo, wantEcho)
}

func TestDecodeResponsesForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want func(t *testing.T, r Request)
	}{
		{"input a string, defaults", `{"model":"a/b","input":"hi"}`, func(t *testing.T, r Request) {
			sameJSON(t, "turn", r.Turn, provider.Turn{Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart("hi")}}}, Wire: WireResponses})
			if rr := r.Responses; !rr.Store || rr.Background || rr.BuiltinTools != nil || rr.Instructions != nil || r.Stream {
				t.Errorf("responses = %+v", rr)
			}
		}},
		{"assistant items are one message", `{"model":"a/b","input":[{"role":"user","content":"go"},{"type":"reasoning","id":"rs_x","summary":[]},` +
			`{"role":"assistant","content":"Sure."},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"c1","output":""},{"role":"assistant","content":[{"type":"output_text","text":"done"},{"type":"refusal","refusal":"no more"}]}]}`,
			func(t *testing.T, r Request) {
				sameJSON(t, "messages", r.Turn.Messages[1:], []provider.Message{
					{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartReasoning}, provider.TextPart("Sure."), {Type: provider.PartToolCall, CallID: "c1", Name: "f", Arguments: "{}"}}},
					{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: "c1"}}},
					{Role: provider.RoleAssistant, Content: []provider.Part{provider.TextPart("done"), provider.TextPart("no more")}},
				})
				if ri := r.Responses.ReasoningItems; len(ri) != 1 || ri[0].Message != 1 || ri[0].Part != 0 || ri[0].ID != "rs_x" {
					t.Errorf("reasoning items = %+v", ri)
				}
			}},
		{"reasoning content when there is no summary", `{"model":"a/b","input":[{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"a"},{"type":"reasoning_text","text":"b"}]},{"role":"user","content":"x"}]}`,
			func(t *testing.T, r Request) {
				if p := r.Turn.Messages[0].Content[0]; p.Type != provider.PartReasoning || p.Text != "a\n\nb" {
					t.Errorf("part = %+v", p)
				}
			}},
		{"previous_response_id: results of stored calls", `{"model":"a/b","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"call_old","output":"42"}]}`,
			func(t *testing.T, r Request) {
				if rr := r.Responses; rr.PreviousResponseID != "resp_1" || !reflect.DeepEqual(rr.PriorCallResults, []PriorCallResult{{CallID: "call_old", Param: "input[0].call_id"}}) {
					t.Errorf("responses = %+v", rr)
				}
				if e := r.Responses.PriorCallResults[0].Refusal(); e.Param != "input[0].call_id" || !strings.Contains(e.Message, "call_old") {
					t.Errorf("refusal = %+v", e)
				}
				if len(r.Turn.Messages) != 1 || r.Turn.Messages[0].Role != provider.RoleTool {
					t.Errorf("messages = %+v", r.Turn.Messages)
				}
			}},
		{"previous_response_id and no input", `{"model":"a/b","previous_response_id":"resp_1","input":[]}`, func(t *testing.T, r Request) {
			if len(r.Turn.Messages) != 0 || r.Responses.PreviousResponseID != "resp_1" {
				t.Errorf("turn = %+v", r.Turn)
			}
		}},
		{"built-in tools and tool choice", `{"model":"a/b","input":"x","tools":[{"type":"web_search_preview"},{"type":"function","name":"f","parameters":{"type":"object"}},{"type":"mcp","server_label":"s"},{"type":"custom","name":"g"}],"tool_choice":{"type":"file_search"}}`,
			func(t *testing.T, r Request) {
				var got []string
				for _, b := range r.Responses.BuiltinTools {
					got = append(got, b.Param+"="+b.Type)
				}
				if !reflect.DeepEqual(got, []string{"tools[0]=web_search_preview", "tools[2]=mcp", "tools[3]=custom", "tool_choice=file_search"}) {
					t.Errorf("builtin tools = %v", got)
				}
				if len(r.Turn.Tools) != 1 || r.Turn.Tools[0].Name != "f" || r.Turn.ToolChoice != nil {
					t.Errorf("turn tools = %+v, choice %+v", r.Turn.Tools, r.Turn.ToolChoice)
				}
				if e := r.Responses.BuiltinTools[1].Refusal(); e.Param != "tools[2]" || !strings.Contains(e.Message, `"mcp"`) {
					t.Errorf("refusal = %+v", e)
				}
			}},
		{"verbosity and reasoning summary go to Extra", `{"model":"a/b","input":"x","text":{"verbosity":"low"},"reasoning":{"effort":"high","summary":"auto"},"tool_choice":"required","background":true}`,
			func(t *testing.T, r Request) {
				if p := r.Turn.Params; p.ResponseFormat != nil || p.ReasoningEffort != "high" || r.Turn.ToolChoice.Type != provider.ToolChoiceRequired {
					t.Errorf("turn = %+v", r.Turn)
				}
				sameJSON(t, "extra", r.Turn.Extra, map[string]json.RawMessage{"text": json.RawMessage(`{"verbosity":"low"}`), "reasoning": json.RawMessage(`{"effort":"high","summary":"auto"}`)})
				if !r.Responses.Background || !r.Responses.Store {
					t.Errorf("responses = %+v", r.Responses)
				}
			}},
		{"json_object, nulls", `{"model":"a/b","input":"x","text":{"format":{"type":"json_object"}},"reasoning":{"effort":null,"summary":null},"temperature":null,"instructions":null,"tools":null,"stream_options":{"include_obfuscation":false}}`,
			func(t *testing.T, r Request) {
				if f := r.Turn.Params.ResponseFormat; f == nil || f.Type != provider.FormatJSONObject || r.Turn.Params.Temperature != nil || r.Turn.Extra != nil {
					t.Errorf("turn = %+v", r.Turn)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, e := DecodeResponses([]byte(tc.body))
			if e != nil {
				t.Fatalf("DecodeResponses: %+v", e)
			}
			tc.want(t, r)
		})
	}
}

func TestDecodeResponsesRefusals(t *testing.T) {
	in := func(items ...string) string { return `{"model":"a/b","input":[` + strings.Join(items, ",") + `]}` }
	user := func(parts ...string) string { return `{"role":"user","content":[` + strings.Join(parts, ",") + `]}` }
	text := `{"type":"input_text","text":"look"}`
	image := func(url string) string { return `{"type":"input_image","image_url":"` + url + `","detail":"auto"}` }
	call := `{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`
	x := `"input":"x"`
	for _, tc := range []struct {
		name, body, param, says string
	}{
		{"output for no call", in(user(text), `{"type":"function_call_output","call_id":"call_nope","output":"x"}`), "input[1].call_id", "call_nope"},
		{"output before its call", in(`{"type":"function_call_output","call_id":"c1","output":"x"}`, call), "input[0].call_id", "c1"},
		{"unknown item type", in(`{"type":"banana"}`), "input[0].type", `"banana" is not an item type`},
		{"built-in tool call item", in(user(text), `{"type":"web_search_call","id":"ws_1","status":"completed"}`), "input[1].type", "not supported"},
		{"item reference", in(`{"type":"item_reference","id":"msg_1"}`), "input[0].type", "not supported"},
		{"item without type or role", in(`{"content":"x"}`), "input[0].type", "want message"},
		{"item not an object", in(`"hi"`), "input[0]", "want an item"},
		{"unknown part type", in(user(`{"type":"input_video"}`)), "input[0].content[0].type", "input_video"},
		{"file part", in(user(text, `{"type":"input_file","file_id":"file-1"}`)), "input[0].content[1].type", "not supported"},
		{"image by file id", in(user(`{"type":"input_image","file_id":"file-1","detail":"auto"}`)), "input[0].content[0].file_id", "file id"},
		{"image in a system message", in(`{"role":"system","content":[` + image("https://x/y.png") + `]}`), "input[0].content[0].type", "not allowed"},
		{"output_text in a user message", in(user(`{"type":"output_text","text":"x"}`)), "input[0].content[0].type", "not allowed"},
		{"bad role", in(`{"role":"tool","content":"x"}`), "input[0].role", `"tool"`},
		{"content null", in(`{"role":"user","content":null}`), "input[0].content", "want a string"},
		{"call without call_id", in(`{"type":"function_call","name":"f","arguments":"{}"}`), "input[0].call_id", "call's id"},
		{"call without name", in(`{"type":"function_call","call_id":"c1","arguments":"{}"}`), "input[0].name", "name"},
		{"call arguments an object", in(`{"type":"function_call","call_id":"c1","name":"f","arguments":{}}`), "input[0].arguments", "want a string"},
		{"namespaced call", in(`{"type":"function_call","call_id":"c1","name":"f","namespace":"ns","arguments":"{}"}`), "input[0].namespace", "namespace"},
		{"output without output", in(call, `{"type":"function_call_output","call_id":"c1"}`), "input[1].output", "want a string"},
		{"output without call_id", in(call, `{"type":"function_call_output","output":"x"}`), "input[1].call_id", "want the id"},
		{"output with a file", in(call, `{"type":"function_call_output","call_id":"c1","output":[{"type":"input_file","file_id":"f"}]}`), "input[1].output[0].type", "not supported"},
		{"output image not its media type", in(call, `{"type":"function_call_output","call_id":"c1","output":[`+image("data:image/jpeg;base64,"+pngB64)+`]}`), "input[1].output[0].image_url", "image/png"},
		{"summary part type", in(`{"type":"reasoning","id":"rs","summary":[{"type":"text","text":"x"}]}`), "input[0].summary[0].type", "summary_text"},
		{"damaged reasoning", in(`{"type":"reasoning","id":"rs","summary":[],"encrypted_content":"` + reasoningBlobPrefix + `!!"}`), "input[0].encrypted_content", "damaged"},
		{"bad base64", in(user(image("data:image/png;base64,!!!not base64"))), "input[0].content[0].image_url", "base64"},
		{"media type not the data's", in(user(text, image("data:image/jpeg;base64,"+pngB64))), "input[0].content[1].image_url", "image/png"},
		{"ftp image", in(user(image("ftp://x/y.png"))), "input[0].content[0].image_url", "http(s)"},
		{"schema not an object, after a built-in tool", `{"model":"a/b",` + x + `,"tools":[{"type":"web_search"},{"type":"function","name":"f","parameters":[1]}]}`, "tools[1].parameters", "not a JSON object"},
		{"tool without a name", `{"model":"a/b",` + x + `,"tools":[{"type":"file_search"},{"type":"function","parameters":{}}]}`, "tools[1].name", "name"},
		{"unknown tool type", `{"model":"a/b",` + x + `,"tools":[{"type":"teleport"}]}`, "tools[0].type", "teleport"},
		{"tool_choice names no tool", `{"model":"a/b",` + x + `,"tool_choice":{"type":"function","name":"g"}}`, "tool_choice", `"g"`},
		{"tool_choice word", `{"model":"a/b",` + x + `,"tool_choice":"always"}`, "tool_choice", "always"},
		{"tool_choice type", `{"model":"a/b",` + x + `,"tool_choice":{"type":"psychic"}}`, "tool_choice.type", "psychic"},
		{"text format type", `{"model":"a/b",` + x + `,"text":{"format":{"type":"yaml"}}}`, "text.format.type", "yaml"},
		{"text format schema", `{"model":"a/b",` + x + `,"text":{"format":{"type":"json_schema","name":"x","schema":true}}}`, "text.format.schema", "not a JSON object"},
		{"conversation", `{"model":"a/b",` + x + `,"conversation":"conv_1"}`, "conversation", "not supported"},
		{"prompt", `{"model":"a/b","prompt":{"id":"pmpt_1"}}`, "prompt", "not supported"},
		{"background not stored", `{"model":"a/b",` + x + `,"background":true,"store":false}`, "background", "store"},
		{"no input", `{"model":"a/b"}`, "input", "want a string"},
		{"empty input", `{"model":"a/b","input":[]}`, "input", "non-empty"},
		{"input a number", `{"model":"a/b","input":7}`, "input", "want a string"},
		{"temperature a string", `{"model":"a/b",` + x + `,"temperature":"hot"}`, "temperature", "want a number"},
		{"max_output_tokens not an integer", `{"model":"a/b",` + x + `,"max_output_tokens":1.5}`, "max_output_tokens", "want an integer"},
		{"no model", `{` + x + `}`, "model", "provider/model"},
		{"stream not a bool", `{"model":"a/b",` + x + `,"stream":"yes"}`, "stream", "want true or false"},
		{"store not a bool", `{"model":"a/b",` + x + `,"store":1}`, "store", "want true or false"},
		{"wait_for_cooldown", `{"model":"a/b",` + x + `,"wait_for_cooldown":"soon"}`, "wait_for_cooldown", "soon"},
		{"fallbacks not strings", `{"model":"a/b",` + x + `,"fallbacks":[1]}`, "fallbacks", "array of strings"},
		{"metadata not an object", `{"model":"a/b",` + x + `,"metadata":[1]}`, "metadata", "want an object"},
		{"effort a number", `{"model":"a/b",` + x + `,"reasoning":{"effort":3}}`, "reasoning.effort", "want a string"},
		{"instructions a number", `{"model":"a/b",` + x + `,"instructions":3}`, "instructions", "want a string"},
		{"previous_response_id a number", `{"model":"a/b",` + x + `,"previous_response_id":3}`, "previous_response_id", "want a string"},
		{"not JSON", `{"model":`, "", "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, e := DecodeResponses([]byte(tc.body))
			if e == nil {
				t.Fatalf("accepted: %+v", r)
			}
			if e.Status != http.StatusBadRequest || e.Type != "invalid_request_error" || e.Param != tc.param || !strings.Contains(e.Message, tc.says) {
				t.Errorf("error = %+v, want param %q saying %q", e, tc.param, tc.says)
			}
			if tc.param != "" && !strings.HasPrefix(e.Message, tc.param+": ") {
				t.Errorf("message %q does not start with the field", e.Message)
			}
			if !reflect.DeepEqual(r, Request{}) {
				t.Errorf("a refused request came back half-done: %+v", r)
			}
		})
	}
}

// sdkInvalid lists the fields of a value the official client decoded whose JSON was there but
// of a type it did not expect (the client does not fail on those: it marks them).
func sdkInvalid(v reflect.Value, path string) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, sdkInvalid(v.Elem(), path)...)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			out = append(out, sdkInvalid(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Struct:
		// A union reads its variant's fields only when asked for the variant.
		if m := v.MethodByName("AsAny"); m.IsValid() && m.Type().NumIn() == 0 && m.Type().NumOut() == 1 {
			out = append(out, sdkInvalid(m.Call(nil)[0], path+".AsAny")...)
		}
		if meta := v.FieldByName("JSON"); meta.IsValid() && meta.Kind() == reflect.Struct {
			for i := 0; i < meta.NumField(); i++ {
				if !meta.Type().Field(i).IsExported() {
					continue
				}
				if f, ok := meta.Field(i).Interface().(respjson.Field); ok && f.Raw() != "" && f.Raw() != "null" && !f.Valid() {
					out = append(out, path+"."+meta.Type().Field(i).Name+"="+f.Raw())
				}
			}
		}
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() && f.Name != "JSON" {
				out = append(out, sdkInvalid(v.Field(i), path+"."+f.Name)...)
			}
		}
	}
	return out
}

func testEcho() ResponsesEcho {
	return ResponsesEcho{Store: true, Instructions: ptr("Be brief."), Metadata: json.RawMessage(`{"team":"core"}`),
		ToolChoice: json.RawMessage(`"auto"`), Tools: json.RawMessage(`[{"type":"function","name":"get_weather","parameters":{"type":"object"},"strict":true}]`),
		Temperature: ptr(0.2), MaxOutputTokens: ptr(int64(512)), PreviousResponseID: "resp_prev", User: "session-1"}
}

func TestResponsesResponse(t *testing.T) {
	a := testAnswer()
	a.Reasoning = append(a.Reasoning, provider.Part{Type: provider.PartReasoning, Redacted: "opaque"}, provider.Part{Type: provider.PartReasoning, Text: "Plain."})
	a.Usage.Reasoning = 7
	raw := ResponsesResponse(Reply{ID: "resp_abc", Model: "openai/gpt-5", Created: 1700000000, Answer: a}, testEcho())
	var r responses.Response
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if bad := sdkInvalid(reflect.ValueOf(r), "response"); len(bad) > 0 {
		t.Errorf("fields the client could not read: %v\n%s", bad, raw)
	}
	j := r.JSON
	for name, f := range map[string]respjson.Field{"id": j.ID, "created_at": j.CreatedAt, "error": j.Error, "incomplete_details": j.IncompleteDetails,
		"instructions": j.Instructions, "metadata": j.Metadata, "model": j.Model, "object": j.Object, "output": j.Output,
		"parallel_tool_calls": j.ParallelToolCalls, "temperature": j.Temperature, "tool_choice": j.ToolChoice, "tools": j.Tools,
		"top_p": j.TopP, "status": j.Status, "usage": j.Usage, "text": j.Text, "reasoning": j.Reasoning, "store": j.ExtraFields["store"], "background": j.Background,
		"max_output_tokens": j.MaxOutputTokens, "previous_response_id": j.PreviousResponseID} {
		if f.Raw() == "" {
			t.Errorf("%s missing", name)
		}
	}
	if r.ID != "resp_abc" || r.Object != "response" || r.CreatedAt != 1700000000 || r.Status != "completed" || r.Model != "openai/gpt-5" ||
		r.Instructions.OfString != "Be brief." || r.Metadata["team"] != "core" || !r.ParallelToolCalls || r.Temperature != 0.2 ||
		r.ToolChoice.OfToolChoiceMode != "auto" || len(r.Tools) != 1 || r.Tools[0].Name != "get_weather" || r.MaxOutputTokens != 512 ||
		r.PreviousResponseID != "resp_prev" || j.ExtraFields["store"].Raw() != "true" || r.Background || r.Text.Format.Type != "text" || r.User != "session-1" || r.JSON.Error.Raw() != "null" {
		t.Errorf("response = %s", raw)
	}
	if u := r.Usage; u.InputTokens != 120 || u.OutputTokens != 45 || u.TotalTokens != 165 || u.InputTokensDetails.CachedTokens != 100 || u.OutputTokensDetails.ReasoningTokens != 7 {
		t.Errorf("usage = %+v", u)
	}
	if r.OutputText() != a.Text {
		t.Errorf("output text = %q", r.OutputText())
	}
	var kinds []string
	for _, it := range r.Output {
		kinds = append(kinds, it.Type+":"+it.ID)
	}
	if !reflect.DeepEqual(kinds, []string{"reasoning:rs_abc_0", "reasoning:rs_abc_1", "reasoning:rs_abc_2", "message:msg_abc_3", "function_call:fc_abc_4", "function_call:fc_abc_5"}) {
		t.Fatalf("output = %v", kinds)
	}
	rs := r.Output[0].AsReasoning()
	if len(rs.Summary) != 1 || rs.Summary[0].Text != "First, the weather." || rs.Summary[0].Type != "summary_text" || !strings.HasPrefix(rs.EncryptedContent, reasoningBlobPrefix) {
		t.Errorf("reasoning = %+v", rs)
	}
	if rs := r.Output[1].AsReasoning(); len(rs.Summary) != 0 || rs.EncryptedContent == "" || !rs.JSON.Summary.Valid() {
		t.Errorf("redacted reasoning = %s", rs.RawJSON())
	}
	if rs := r.Output[2].AsReasoning(); rs.Summary[0].Text != "Plain." || rs.JSON.EncryptedContent.Raw() != "" {
		t.Errorf("plain reasoning = %s", rs.RawJSON())
	}
	msg := r.Output[3].AsMessage()
	if msg.Role != "assistant" || msg.Status != "completed" || len(msg.Content) != 1 || msg.Content[0].Type != "output_text" ||
		msg.Content[0].Text != a.Text || msg.Content[0].JSON.Annotations.Raw() != "[]" {
		t.Errorf("message = %s", msg.RawJSON())
	}
	for i, c := range a.ToolCalls {
		fc := r.Output[4+i].AsFunctionCall()
		if fc.CallID != c.ID || fc.Name != c.Name || fc.Arguments != c.Arguments || fc.Status != "completed" {
			t.Errorf("call %d = %s", i, fc.RawJSON())
		}
	}

	// Cut short: incomplete, the message too; no echo: the API's defaults.
	raw = ResponsesResponse(Reply{ID: "resp_x", Model: "m", Answer: provider.Answer{Text: "half", FinishReason: provider.FinishLength}}, ResponsesEcho{})
	r = responses.Response{}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" || r.Output[0].Status != "incomplete" ||
		r.Output[0].ID != "msg_x_0" || !r.ParallelToolCalls || r.ToolChoice.OfToolChoiceMode != "auto" || r.JSON.Tools.Raw() != "[]" ||
		r.JSON.Metadata.Raw() != "{}" || r.JSON.Temperature.Raw() != "null" || r.JSON.PreviousResponseID.Raw() != "null" || r.JSON.User.Raw() != "" {
		t.Errorf("incomplete response = %s", raw)
	}
	// Other statuses.
	for _, tc := range []struct {
		status, code string
		e            *Error
		usage        bool
		lastItem     string
	}{
		{"queued", "", nil, false, "in_progress"},
		{"in_progress", "", nil, false, "in_progress"},
		{"cancelled", "", nil, false, "incomplete"},
		{"failed", "rate_limit_exceeded", &Error{Status: 429, Message: "slow down"}, false, "incomplete"},
		{"failed", "server_error", nil, false, "incomplete"},
	} {
		raw := ResponsesObject(Reply{ID: "resp_y", Model: "m", Answer: provider.Answer{Text: "so far"}}, ResponsesEcho{Background: true, Store: true}, tc.status, tc.e)
		var r responses.Response
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if string(r.Status) != tc.status || string(r.Error.Code) != tc.code || r.JSON.Usage.Raw() != "null" || r.Output[0].Status != tc.lastItem || !r.Background {
			t.Errorf("%s: %s", tc.status, raw)
		}
		if bad := sdkInvalid(reflect.ValueOf(r), "response"); len(bad) > 0 {
			t.Errorf("%s: fields the client could not read: %v", tc.status, bad)
		}
	}
}

// sseEvents splits a stream into its events, each with its type line.
func sseEvents(t *testing.T, b []byte) (types []string, data [][]byte, raw [][]byte) {
	t.Helper()
	for _, ev := range bytes.SplitAfter(b, []byte("\n\n")) {
		if len(ev) == 0 {
			continue
		}
		lines := strings.SplitN(strings.TrimSuffix(string(ev), "\n\n"), "\n", 2)
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("not an event: %q", ev)
		}
		types = append(types, strings.TrimPrefix(lines[0], "event: "))
		data = append(data, []byte(strings.TrimPrefix(lines[1], "data: ")))
		raw = append(raw, ev)
	}
	return types, data, raw
}

func testHead() ResponsesHead {
	return ResponsesHead{ID: "resp_abc", Model: "openai/gpt-5", CreatedAt: 1700000000, Echo: testEcho()}
}

// decodeStream reads a stream with the official client and checks every event: its type is the
// SSE event's, its sequence number the next, no field unreadable.
func decodeStream(t *testing.T, b []byte) []responses.ResponseStreamEventUnion {
	t.Helper()
	types, _, _ := sseEvents(t, b)
	stream := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(sseResponse(b)), nil)
	var events []responses.ResponseStreamEventUnion
	for stream.Next() {
		ev := stream.Current()
		n := len(events)
		if n >= len(types) || ev.Type != types[n] || ev.SequenceNumber != int64(n) {
			t.Fatalf("event %d: type %q sequence %d (SSE event %v)", n, ev.Type, ev.SequenceNumber, types)
		}
		variant := ev.AsAny()
		if variant == nil {
			t.Fatalf("event %d: the client does not know %q", n, ev.Type)
		}
		if bad := sdkInvalid(reflect.ValueOf(variant), ev.Type); len(bad) > 0 {
			t.Errorf("event %d: fields the client could not read: %v\n%s", n, bad, ev.RawJSON())
		}
		events = append(events, ev)
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(events) != len(types) {
		t.Fatalf("client read %d events of %d", len(events), len(types))
	}
	return events
}

func TestResponsesStream(t *testing.T) {
	a := testAnswer()
	var buf bytes.Buffer
	flushes := 0
	s := NewResponsesStream(&buf, func() { flushes++ }, testHead(), -1)
	s.Answer(a)
	s.Text("after the end") // ignored
	events := decodeStream(t, buf.Bytes())
	if flushes != len(events) || s.LastWritten() != int64(len(events)-1) || s.Err() != nil {
		t.Errorf("%d flushes, last written %d, %d events", flushes, s.LastWritten(), len(events))
	}
	var types []string
	text, args, summary := "", map[string]string{}, ""
	for _, ev := range events {
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			text += ev.Delta
		case "response.function_call_arguments.delta":
			args[ev.ItemID] += ev.Delta
		case "response.reasoning_summary_text.delta":
			summary += ev.Delta
		case "response.output_text.done":
			if ev.Text != a.Text || ev.ItemID != "msg_abc_1" || ev.OutputIndex != 1 {
				t.Errorf("text done = %s", ev.RawJSON())
			}
		case "response.function_call_arguments.done":
			if ev.Arguments != args[ev.ItemID] {
				t.Errorf("arguments done = %s, deltas %q", ev.RawJSON(), args[ev.ItemID])
			}
		case "response.output_item.added":
			if it := ev.AsResponseOutputItemAdded().Item; it.Type == "function_call" && (it.CallID == "" || it.Status != "in_progress") {
				t.Errorf("call added = %s", ev.RawJSON())
			}
		}
	}
	head := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta"}
	if !reflect.DeepEqual(types[:len(head)], head) {
		t.Errorf("events begin %v", types[:len(head)])
	}
	if tail := types[len(types)-4:]; !reflect.DeepEqual(tail, []string{"response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"}) {
		t.Errorf("events end %v", tail)
	}
	if text != a.Text || summary != "First, the weather." || args["fc_abc_2"] != a.ToolCalls[0].Arguments || args["fc_abc_3"] != a.ToolCalls[1].Arguments {
		t.Errorf("text %q summary %q args %v", text, summary, args)
	}
	if c := events[0].AsResponseCreated().Response; c.Status != "in_progress" || c.ID != "resp_abc" || len(c.Output) != 0 || c.JSON.Usage.Raw() != "null" {
		t.Errorf("created = %s", events[0].RawJSON())
	}
	// The completed response is the non-streamed one, byte for byte.
	var done struct {
		Response json.RawMessage `json:"response"`
	}
	_ = json.Unmarshal([]byte(events[len(events)-1].RawJSON()), &done)
	if want := ResponsesResponse(Reply{ID: "resp_abc", Model: "openai/gpt-5", Created: 1700000000, Answer: a}, testEcho()); !bytes.Equal(done.Response, want) {
		t.Errorf("completed response:\n%s\nwant\n%s", done.Response, want)
	}
}

func TestResponsesStreamDeterministic(t *testing.T) {
	calls := func(s *ResponsesStream) {
		s.SetModel("openai/gpt-5")
		s.Reasoning("Hmm, ")
		s.Reasoning("the weather.")
		s.ReasoningPart(provider.Part{Type: provider.PartReasoning, Text: "Hmm, the weather. Done.", Signature: "sig"})
		s.Text("Checking")
		s.SetModel("anthropic/claude") // a failover mid-answer
		s.Text(" now.")
		s.ToolCall(0, "call_1", "get_weather")
		s.ToolArgs(0, `{"city":`)
		s.ToolArgs(0, `"Paris"}`)
		s.ToolArgs(1, `{}`) // a call never started: started for it
		s.Finish(provider.FinishToolCalls, provider.Usage{Input: 10, Output: 5})
	}
	run := func(skip int64) ([]byte, *ResponsesStream) {
		var buf bytes.Buffer
		s := NewResponsesStream(&buf, nil, testHead(), skip)
		calls(s)
		return buf.Bytes(), s
	}
	full, s := run(-1)
	again, _ := run(-1)
	if !bytes.Equal(full, again) {
		t.Fatal("the same calls gave different bytes")
	}
	events := decodeStream(t, full)
	if s.LastWritten() != int64(len(events)-1) {
		t.Errorf("last written %d of %d events", s.LastWritten(), len(events))
	}
	_, _, raw := sseEvents(t, full)
	for n := int64(-1); n < int64(len(raw)); n++ {
		tail, s := run(n)
		if want := bytes.Join(raw[n+1:], nil); !bytes.Equal(tail, want) {
			t.Fatalf("skip through %d:\n%s\nwant\n%s", n, tail, want)
		}
		if want := int64(len(raw) - 1); n == want && s.LastWritten() != -1 || n < want && s.LastWritten() != want {
			t.Errorf("skip through %d: last written %d", n, s.LastWritten())
		}
	}

	// What the calls said, as the client reads it.
	summary := ""
	for _, ev := range events {
		if ev.Type == "response.reasoning_summary_text.delta" {
			summary += ev.Delta
		}
	}
	final := events[len(events)-1].AsResponseCompleted().Response
	if summary != "Hmm, the weather. Done." || final.Model != "anthropic/claude" || events[0].Response.Model != "openai/gpt-5" {
		t.Errorf("summary %q, models %q then %q", summary, events[0].Response.Model, final.Model)
	}
	if len(final.Output) != 4 || final.Output[3].Type != "function_call" || final.Output[3].Arguments.OfString != "{}" || final.Output[3].CallID != "call_abc_3" ||
		final.Output[2].Arguments.OfString != `{"city":"Paris"}` || final.Output[1].AsMessage().Content[0].Text != "Checking now." {
		t.Errorf("output = %s", final.RawJSON())
	}
	p, ok := partFromBlob(final.Output[0].EncryptedContent)
	if !ok || p.Signature != "sig" || p.Text != "Hmm, the weather. Done." {
		t.Errorf("reasoning blob = %+v %v", p, ok)
	}
}

// The reasoning a caller got back comes back whole in its next request: an Anthropic thinking
// block keeps its signature through a Responses caller.
func TestResponsesReasoningRoundTrip(t *testing.T) {
	a := testAnswer()
	a.Reasoning = append(a.Reasoning, provider.Part{Type: provider.PartReasoning, Redacted: "opaque"},
		provider.Part{Type: provider.PartReasoning, Text: "From a Responses candidate.", ReasoningID: "rs_openai", Encrypted: "gAAAA"})
	var r responses.Response
	if err := json.Unmarshal(ResponsesResponse(Reply{ID: "resp_1", Model: "m", Answer: a}, ResponsesEcho{}), &r); err != nil {
		t.Fatal(err)
	}
	input := []any{map[string]any{"role": "user", "content": "weather?"}}
	for _, it := range r.Output {
		input = append(input, json.RawMessage(it.RawJSON()))
	}
	for _, c := range a.ToolCalls {
		input = append(input, map[string]any{"type": "function_call_output", "call_id": c.ID, "output": "ok"})
	}
	b, _ := json.Marshal(map[string]any{"model": "a/b", "input": input})
	req, e := DecodeResponses(b)
	if e != nil {
		t.Fatalf("DecodeResponses: %+v", e)
	}
	want := []provider.Part{a.Reasoning[0], a.Reasoning[1], a.Reasoning[2], provider.TextPart(a.Text)}
	for _, c := range a.ToolCalls {
		want = append(want, provider.Part{Type: provider.PartToolCall, CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	sameJSON(t, "assistant", req.Turn.Messages[1], provider.Message{Role: provider.RoleAssistant, Content: want})
	if ri := req.Responses.ReasoningItems; len(ri) != 3 || ri[2].ID != "rs_1_2" || ri[2].Message != 1 || ri[2].Part != 2 {
		t.Errorf("reasoning items = %+v", ri)
	}
}

func TestResponsesStreamEnds(t *testing.T) {
	types := func(b []byte) []string {
		var out []string
		for _, ev := range decodeStream(t, b) {
			out = append(out, ev.Type)
		}
		return out
	}
	t.Run("error mid-answer", func(t *testing.T) {
		var buf bytes.Buffer
		s := NewResponsesStream(&buf, nil, testHead(), -1)
		s.Text("partial")
		s.Error(&Error{Status: 429, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "every candidate is cooling down", RetryAfter: 30})
		s.Finish("stop", provider.Usage{}) // ignored
		s.Error(&Error{Message: "again"})  // ignored
		events := decodeStream(t, buf.Bytes())
		got := types(buf.Bytes())
		if !reflect.DeepEqual(got, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "error", "response.failed"}) {
			t.Fatalf("events = %v", got)
		}
		ee := events[5].AsError()
		if ee.Code != "rate_limit_exceeded" || !strings.Contains(ee.Message, "retry after 30 s") || ee.JSON.Param.Raw() != "null" {
			t.Errorf("error event = %s", ee.RawJSON())
		}
		f := events[6].AsResponseFailed().Response
		if f.Status != "failed" || f.Error.Code != "rate_limit_exceeded" || len(f.Output) != 1 || f.Output[0].Status != "incomplete" || f.OutputText() != "partial" {
			t.Errorf("failed = %s", f.RawJSON())
		}
	})
	t.Run("error first", func(t *testing.T) {
		var buf bytes.Buffer
		NewResponsesStream(&buf, nil, testHead(), -1).Error(&Error{Status: 502, Message: "no candidate answered"})
		if got := types(buf.Bytes()); !reflect.DeepEqual(got, []string{"response.created", "response.in_progress", "error", "response.failed"}) {
			t.Errorf("events = %v", got)
		}
	})
	t.Run("cut short", func(t *testing.T) {
		var buf bytes.Buffer
		a := provider.Answer{Text: "half", FinishReason: provider.FinishLength, Usage: provider.Usage{Input: 3, Output: 9}}
		NewResponsesStream(&buf, nil, testHead(), -1).Answer(a)
		events := decodeStream(t, buf.Bytes())
		last := events[len(events)-1]
		var done struct {
			Response json.RawMessage `json:"response"`
		}
		_ = json.Unmarshal([]byte(last.RawJSON()), &done)
		want := ResponsesResponse(Reply{ID: "resp_abc", Model: "openai/gpt-5", Created: 1700000000, Answer: a}, testEcho())
		if last.Type != "response.incomplete" || last.Response.IncompleteDetails.Reason != "max_output_tokens" || !bytes.Equal(done.Response, want) {
			t.Errorf("incomplete = %s\nwant %s", last.RawJSON(), want)
		}
	})
	t.Run("background", func(t *testing.T) {
		var buf bytes.Buffer
		h := testHead()
		h.Echo.Background = true
		NewResponsesStream(&buf, nil, h, -1).Answer(provider.Answer{Text: "hi"})
		events := decodeStream(t, buf.Bytes())
		if events[0].Response.Status != "queued" || events[1].Response.Status != "in_progress" || !events[0].Response.Background {
			t.Errorf("created %s", events[0].RawJSON())
		}
	})
}

func TestWriteResponsesError(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteResponsesError(rec, ResponseNotFound("resp_nope"))
	if rec.Code != 404 || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("status %d, headers %v", rec.Code, rec.Header())
	}
	sameJSON(t, "body", json.RawMessage(rec.Body.Bytes()), map[string]any{"error": map[string]any{"message": "Response with id 'resp_nope' not found.", "type": "invalid_request_error", "param": nil, "code": nil}})

	rec = httptest.NewRecorder()
	WriteResponsesError(rec, PreviousResponseNotFound("resp_old"))
	sameJSON(t, "body", json.RawMessage(rec.Body.Bytes()), map[string]any{"error": map[string]any{"message": "Previous response with id 'resp_old' not found.",
		"type": "invalid_request_error", "param": "previous_response_id", "code": "previous_response_not_found"}})

	rec = httptest.NewRecorder()
	_, e := DecodeResponses([]byte(`{"model":"a/b","input":[{"type":"banana"}]}`))
	WriteResponsesError(rec, e)
	var body struct {
		Error struct{ Param, Type string } `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 400 || body.Error.Param != "input[0].type" || body.Error.Type != "invalid_request_error" {
		t.Errorf("refusal: %d %s", rec.Code, rec.Body.Bytes())
	}
}

func FuzzDecodeResponses(f *testing.F) {
	f.Add(body(f, fullResponsesParams(), map[string]any{"stream": true}))
	f.Add([]byte(`{"model":"a/b","input":"hi","tools":[{"type":"web_search"}],"tool_choice":"auto"}`))
	f.Add([]byte(`{"model":"a/b","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}]}`))
	f.Add([]byte(`{"model":"a/b","input":[{"type":"reasoning","id":"r","summary":[],"encrypted_content":"baton.reasoning.v1.e30"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, e := DecodeResponses(b)
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if strings.TrimSpace(req.Model) == "" || req.Responses == nil || req.Turn.Wire != WireResponses ||
			(len(req.Turn.Messages) == 0 && req.Responses.PreviousResponseID == "") {
			t.Fatalf("accepted %+v", req)
		}
		if len(req.Responses.PriorCallResults) == 0 {
			if te := provider.CheckTurn(req.Turn); te != nil {
				t.Fatalf("accepted a turn CheckTurn refuses: %v", te)
			}
		}
	})
}

// A Gemini thought signature keeps the call it came on through a Responses caller's round trip,
// so it goes back to Gemini on that call (provider.Part).
func TestAGeminiSignatureKeepsItsCallThroughTheResponsesWire(t *testing.T) {
	in := provider.Part{Type: provider.PartReasoning, Encrypted: "c2lnbmF0dXJl", CallID: "call_w1"}
	out, ok := partFromBlob(reasoningBlob(in))
	if !ok || !reflect.DeepEqual(out, in) {
		t.Errorf("round trip %+v, want %+v", out, in)
	}
}
