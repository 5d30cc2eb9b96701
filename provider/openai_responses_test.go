package provider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// The Responses adapter against the fake provider's /v1/responses.

// responsesRequest is a Responses call to the fake for a turn, recording every delta in got.
func responsesRequest(fp *fakeprovider.Server, turn provider.Turn, got *[]seen) provider.Request {
	req := request(fp, "openai")
	req.API, req.Turn = provider.APIOpenAIResponses, turn
	chunks := 0
	req.OnChunk = func() { chunks++ }
	req.OnDelta = func(d provider.Delta) { *got = append(*got, seen{d, chunks}) }
	return req
}

// sentBody is the body of the fake's call n (from 1), decoded.
func sentBody(t *testing.T, fp *fakeprovider.Server, n int) map[string]any {
	t.Helper()
	calls := fp.Calls()
	if len(calls) < n {
		t.Fatalf("%d calls, want %d", len(calls), n)
	}
	var body map[string]any
	if err := json.Unmarshal(calls[n-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func TestResponsesStreamATextAnswer(t *testing.T) {
	fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "an answer in five words", Usage: &fakeprovider.Usage{Input: 12, Output: 5}}}}})
	var got []seen
	resp, err := provider.Complete(context.Background(), responsesRequest(fp, provider.TextTurn("hi"), &got))
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Answer
	if a.Text != "an answer in five words" || a.FinishReason != provider.FinishStop || a.Usage != (provider.Usage{Input: 12, Output: 5}) {
		t.Errorf("%+v", a)
	}
	// The text goes out as it streams: a delta for each of the five pieces, each as it came.
	if d := describe(got); !slices.Equal(d, []string{"text an ", "text answer ", "text in ", "text five ", "text words"}) {
		t.Errorf("deltas %q", d)
	}
	for i := 1; i < len(got); i++ {
		if got[i].chunks <= got[i-1].chunks {
			t.Errorf("delta %d handed out at chunk %d, after %d", i, got[i].chunks, got[i-1].chunks)
		}
	}
	consistent(t, a, got)
	sameJSON(t, sentBody(t, fp, 1), `{"model": "m", "stream": true, "store": false,
		"input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}`)
}

func TestAFullTurnGoesOutOnTheResponsesWire(t *testing.T) {
	fp := start(t, nil)
	var got []seen
	if _, err := provider.Complete(context.Background(), responsesRequest(fp, fullTurn(), &got)); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(png)
	sameJSON(t, sentBody(t, fp, 1), strings.ReplaceAll(`{
		"model": "m", "stream": true, "store": false,
		"input": [
			{"type": "message", "role": "system", "content": [{"type": "input_text", "text": "be brief"}]},
			{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "use metric units"}]},
			{"type": "message", "role": "user", "content": [
				{"type": "input_text", "text": "what is this, and the weather?"},
				{"type": "input_image", "image_url": "data:image/png;base64,PNG", "detail": "high"},
				{"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "auto"}]},
			{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]},
			{"type": "function_call", "call_id": "call.1:a", "name": "weather", "arguments": "{\"city\":\"Paris\"}"},
			{"type": "function_call", "call_id": "call_2", "name": "clock", "arguments": "{}"},
			{"type": "function_call_output", "call_id": "call.1:a", "output": [
				{"type": "input_text", "text": "18 C"},
				{"type": "input_image", "image_url": "data:image/png;base64,PNG", "detail": "auto"}]},
			{"type": "function_call_output", "call_id": "call_2", "output": "boom"},
			{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "thanks; and tomorrow?"}]}],
		"tools": [
			{"type": "function", "name": "weather", "description": "the weather in a city", "strict": true,
				"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
			{"type": "function", "name": "clock", "strict": false, "parameters": {"type": "object"}}],
		"tool_choice": "auto", "parallel_tool_calls": false,
		"temperature": 1.5, "top_p": 0.9, "max_output_tokens": 500}`, "base64,PNG", "base64,"+b64))
	d := provider.Dropped(fullTurn(), provider.APIOpenAIResponses)
	slices.Sort(d)
	if want := []string{"messages.content.cacheControl", "messages.content.isError", "messages.content.reasoning (not a Responses reasoning item)",
		"params.frequencyPenalty", "params.presencePenalty", "params.seed", "params.stop", "tools.cacheControl"}; !slices.Equal(d, want) {
		t.Errorf("Dropped = %q, want %q", d, want)
	}
}

func TestResponsesToolCallRoundTrip(t *testing.T) {
	weather := fakeprovider.ToolCall{ID: "call_weather_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{ToolCalls: []fakeprovider.ToolCall{weather}}, {Text: "18 C in Paris"}}}})
	turn := provider.Turn{Messages: []provider.Message{user("weather in Paris?")},
		Tools: []provider.Tool{{Name: "get_weather", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}}
	var got []seen
	resp, err := provider.Complete(context.Background(), responsesRequest(fp, turn, &got))
	if err != nil {
		t.Fatal(err)
	}
	want := provider.ToolCall{ID: "call_weather_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	if a := resp.Answer; len(a.ToolCalls) != 1 || a.ToolCalls[0] != want || a.FinishReason != provider.FinishToolCalls || a.Text != "" {
		t.Fatalf("%+v", a)
	}
	// Handed out once, whole, after its last argument piece.
	if d := describe(got); !slices.Equal(d, []string{`call call_weather_1 get_weather {"city":"Paris"}`}) || got[0].chunks < 4 {
		t.Errorf("deltas %q at %v", d, got)
	}

	// The next turn: the call and its result, by the same call id.
	turn.Messages = append(turn.Messages, assistant(call(want.ID, want.Name, want.Arguments)), tool(result(want.ID, "18 C")))
	got = nil
	resp, err = provider.Complete(context.Background(), responsesRequest(fp, turn, &got))
	if err != nil || resp.Answer.Text != "18 C in Paris" {
		t.Fatalf("%+v %v", resp, err)
	}
	input := sentBody(t, fp, 2)["input"].([]any)
	sameJSON(t, input[1:], `[
		{"type": "function_call", "call_id": "call_weather_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
		{"type": "function_call_output", "call_id": "call_weather_1", "output": "18 C"}]`)
}

func TestResponsesImageInput(t *testing.T) {
	fp := start(t, nil)
	turn := provider.Turn{Messages: []provider.Message{user("look", provider.Part{Type: provider.PartImage, Data: png})}}
	var got []seen
	if _, err := provider.Complete(context.Background(), responsesRequest(fp, turn, &got)); err != nil {
		t.Fatal(err)
	}
	part := sentBody(t, fp, 1)["input"].([]any)[0].(map[string]any)["content"].([]any)[1].(map[string]any)
	url, _ := part["image_url"].(string)
	data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(url, "data:image/png;base64,"))
	if part["type"] != "input_image" || part["detail"] != "auto" || err != nil || !bytes.Equal(data, png) {
		t.Errorf("%v", part)
	}
}

func TestResponsesFormats(t *testing.T) {
	for _, c := range []struct {
		format *provider.ResponseFormat
		want   string
	}{
		{&provider.ResponseFormat{Type: provider.FormatJSONSchema, Name: "weather", Description: "a forecast", Strict: ptr(true),
			Schema: json.RawMessage(`{"type":"object","properties":{"c":{"type":"number"}},"required":["c"],"additionalProperties":false}`)},
			`{"format": {"type": "json_schema", "name": "weather", "description": "a forecast", "strict": true,
				"schema": {"type": "object", "properties": {"c": {"type": "number"}}, "required": ["c"], "additionalProperties": false}}}`},
		{&provider.ResponseFormat{Type: provider.FormatJSONSchema, Schema: json.RawMessage(`{"type":"object"}`)},
			`{"format": {"type": "json_schema", "name": "json_output", "schema": {"type": "object"}}}`},
		{&provider.ResponseFormat{Type: provider.FormatJSONObject}, `{"format": {"type": "json_object"}}`},
	} {
		fp := start(t, nil)
		turn := provider.TextTurn("forecast?")
		turn.Params.ResponseFormat = c.format
		var got []seen
		if _, err := provider.Complete(context.Background(), responsesRequest(fp, turn, &got)); err != nil {
			t.Fatal(err)
		}
		sameJSON(t, sentBody(t, fp, 1)["text"], c.want)
	}
}

func TestResponsesReasoningItemsGoBackOnlyToTheResponsesWire(t *testing.T) {
	fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Thinking: "the user wants weather", Signature: "enc-abc",
		Text: "Sunny.", Usage: &fakeprovider.Usage{Input: 100, Output: 20, Cached: 64}}, {Text: "Rain."}}}})
	turn := provider.TextTurn("weather?")
	turn.Params.ReasoningEffort = "medium"
	var got []seen
	resp, err := provider.Complete(context.Background(), responsesRequest(fp, turn, &got))
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Answer
	item := provider.Part{Type: provider.PartReasoning, Text: "the user wants weather", ReasoningID: "rs_fake_1", Encrypted: "enc-abc"}
	if len(a.Reasoning) != 1 || !reflectEqual(a.Reasoning[0], item) || a.Text != "Sunny." {
		t.Fatalf("%+v", a)
	}
	// Usage: cached input, and the reasoning part of the output.
	if a.Usage != (provider.Usage{Input: 100, Output: 20, CachedInput: 64, Reasoning: 4}) {
		t.Errorf("usage %+v", a.Usage)
	}
	// The summary streams as reasoning; the whole item follows it, before the text.
	if d := describe(got); !slices.Equal(d, []string{"reasoning the ", "reasoning user ", "reasoning wants ", "reasoning weather",
		"thinking block the user wants weather signed ", "text Sunny."}) || got[4].ReasoningPart.Encrypted != "enc-abc" {
		t.Errorf("deltas %q", d)
	}
	consistent(t, a, got)
	body := sentBody(t, fp, 1)
	sameJSON(t, body["reasoning"], `{"effort": "medium"}`)
	sameJSON(t, body["include"], `["reasoning.encrypted_content"]`)

	// The item survives the records a reply keeps.
	_, raw, err := provider.EncodeAnswerContent(a)
	if _, back, err2 := provider.DecodeAnswerContent(nil, raw); err != nil || err2 != nil || !reflectEqual(back[0], item) {
		t.Fatalf("through the records: %+v %v %v", back, err, err2)
	}

	// The next turn goes back to a Responses candidate whole, reasoning item first.
	next := provider.Turn{Messages: []provider.Message{user("weather?"), assistant(item, "Sunny."), user("and tomorrow?")}}
	got = nil
	if _, err := provider.Complete(context.Background(), responsesRequest(fp, next, &got)); err != nil {
		t.Fatal(err)
	}
	body = sentBody(t, fp, 2)
	sameJSON(t, body["input"].([]any)[1:3], `[
		{"type": "reasoning", "id": "rs_fake_1", "summary": [{"type": "summary_text", "text": "the user wants weather"}], "encrypted_content": "enc-abc"},
		{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]}]`)
	sameJSON(t, body["include"], `["reasoning.encrypted_content"]`)
	if d := provider.Dropped(next, provider.APIOpenAIResponses); len(d) != 0 {
		t.Errorf("Dropped on the Responses wire: %q", d)
	}

	// The other wires drop it, and say so.
	if d := provider.Dropped(next, provider.APIOpenAICompletions); !slices.Equal(d, []string{"messages.content.reasoning (in an assistant message)"}) {
		t.Errorf("Dropped on Chat Completions: %q", d)
	}
	if d := provider.Dropped(next, provider.APIAnthropicMessages); !slices.Equal(d, []string{"messages.content.reasoning (without a signature)"}) {
		t.Errorf("Dropped on Anthropic Messages: %q", d)
	}
	chat := request(fp, "openai")
	chat.Turn = next
	if _, err := provider.Complete(context.Background(), chat); err != nil {
		t.Fatal(err)
	}
	if sent := string(fp.Calls()[2].Body); strings.Contains(sent, "enc-abc") || strings.Contains(sent, "rs_fake_1") || strings.Contains(sent, "wants weather") {
		t.Errorf("the reasoning item went to Chat Completions: %s", sent)
	}

	// An item without its encrypted content names nothing in a stateless call: dropped.
	bare := item
	bare.Encrypted = ""
	next.Messages[1] = assistant(bare, "Sunny.")
	if d := provider.Dropped(next, provider.APIOpenAIResponses); !slices.Equal(d, []string{"messages.content.reasoning (without encrypted content)"}) {
		t.Errorf("Dropped %q", d)
	}
}

func reflectEqual(a, b provider.Part) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// responsesFailure is reason a policy would give e, mapped as activities.FailureOf maps it.
func responsesFailure(e *provider.Error) policy.Reason {
	return policy.AttemptReason(policy.Failure{Provider: "openai", Status: e.Status, Code: e.Code, Type: e.Type, Message: e.Message,
		Wrapped: e.Wrapped, Detail: e.Detail, Body: e.BodyPreview, Page: e.Page, DetailPage: e.DetailPage,
		Net: policy.NetErrorKind(e.Net), Stream: policy.StreamFault(e.Stream)})
}

func TestResponsesInBandErrorsAreStreamFaults(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog"
	for _, c := range []struct {
		name   string
		err    string
		failed bool // response.failed rather than an error event
		code   string
		reason policy.Reason
	}{
		{"a rate limit", `{"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-5 on tokens per min (TPM)"}`, false, "rate_limit_exceeded", policy.ReasonRateLimit},
		{"a server error in response.failed", `{"code":"server_error","message":"An error occurred while processing your request. You can retry your request."}`,
			true, "server_error", policy.ReasonTimeout},
		{"overloaded", `{"type":"overloaded_error","message":"Overloaded"}`, false, "overloaded_error", policy.ReasonOverloaded},
		{"a context overflow", `{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}`, true, "context_length_exceeded", policy.ReasonContextOverflow},
		// A quota exceeded is a rate limit, as in a 429's body; money is billing.
		{"a quota", `{"code":"insufficient_quota","message":"You exceeded your current quota, please check your plan and billing details."}`, false, "insufficient_quota", policy.ReasonRateLimit},
		{"no credit", `{"code":"insufficient_quota","message":"Your credit balance is too low to access the API."}`, true, "insufficient_quota", policy.ReasonBilling},
		{"a bad key, masked", `{"code":"invalid_api_key","message":"Incorrect API key provided: ` + secret + `"}`, false, "invalid_api_key", policy.ReasonAuth},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := fakeprovider.Response{Text: text, StreamError: json.RawMessage(c.err), StreamErrorAfterChunks: intp(3)}
			if c.failed {
				r.Finish = "failed"
			}
			fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{r}}})
			var got []seen
			resp, err := provider.Complete(context.Background(), responsesRequest(fp, provider.TextTurn("hi"), &got))
			var e *provider.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %+v, %v; want a *provider.Error", resp, err)
			}
			if e.Stream != provider.FaultInBandError || e.Status != 0 || e.Code != c.code || !e.Partial || e.PartialText != "the quick brown " {
				t.Errorf("%+v (partial text %q)", e, e.PartialText)
			}
			if reason := responsesFailure(e); reason != c.reason {
				t.Errorf("classified %s, want %s", reason, c.reason)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(e.BodyPreview, secret) || strings.Contains(e.Detail, secret) {
				t.Errorf("the key leaks: %+v", e)
			}
		})
	}
}

func TestResponsesFaultsAndEnds(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog"
	cases := []struct {
		name  string
		resp  fakeprovider.Response
		check func(t *testing.T, a provider.Answer, e *provider.Error)
	}{
		{"a 429 before the stream", fakeprovider.Response{Status: 429, Headers: map[string]string{"retry-after": "2"},
			Body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
			func(t *testing.T, _ provider.Answer, e *provider.Error) {
				if e == nil || e.Status != 429 || e.Code != "rate_limit_exceeded" || e.Message != "Rate limit reached" || e.Headers["retry-after"] != "2" ||
					e.Stream != "" || responsesFailure(e) != policy.ReasonRateLimit {
					t.Errorf("%+v", e)
				}
			}},
		{"a reset before headers", fakeprovider.Response{Reset: true}, func(t *testing.T, _ provider.Answer, e *provider.Error) {
			if e == nil || e.Net != "reset" && e.Net != "eof" {
				t.Errorf("%+v", e)
			}
		}},
		{"no headers within the response timeout", fakeprovider.Response{DelayMs: 2000, Text: text}, func(t *testing.T, _ provider.Answer, e *provider.Error) {
			if e == nil || e.Stream != provider.FaultResponseTimeout {
				t.Errorf("%+v", e)
			}
		}},
		{"a cut", fakeprovider.Response{Text: text, CutAfterChunks: intp(3)}, func(t *testing.T, _ provider.Answer, e *provider.Error) {
			if e == nil || e.Stream != provider.FaultCut || !e.Partial || e.PartialText != "the quick brown " {
				t.Errorf("%+v", e)
			}
		}},
		{"a cut mid-call hands out nothing of it", fakeprovider.Response{ToolCalls: []fakeprovider.ToolCall{{Name: "f", Arguments: `{"a":"bcdefghijk"}`}}, CutAfterChunks: intp(2)},
			func(t *testing.T, _ provider.Answer, e *provider.Error) {
				if e == nil || e.Stream != provider.FaultCut || e.PartialToolCalls != 0 {
					t.Errorf("%+v", e)
				}
			}},
		{"a stall", fakeprovider.Response{Text: text, StallAfterChunks: intp(2), StallMs: 3000}, func(t *testing.T, _ provider.Answer, e *provider.Error) {
			if e == nil || e.Stream != provider.FaultStall || !e.Partial {
				t.Errorf("%+v", e)
			}
		}},
		{"a malformed chunk", fakeprovider.Response{Text: text, MalformedChunk: intp(2)}, func(t *testing.T, _ provider.Answer, e *provider.Error) {
			if e == nil || e.Stream != provider.FaultMalformed {
				t.Errorf("%+v", e)
			}
		}},
		{"a 200 with nothing", fakeprovider.Response{Empty: true}, func(t *testing.T, _ provider.Answer, e *provider.Error) {
			if e == nil || e.Stream != provider.FaultEmpty {
				t.Errorf("%+v", e)
			}
		}},
		{"response.failed without a scripted error", fakeprovider.Response{Text: "a b", Finish: "failed"}, func(t *testing.T, _ provider.Answer, e *provider.Error) {
			if e == nil || e.Stream != provider.FaultInBandError || e.Code != "server_error" || e.PartialText != "a b" {
				t.Errorf("%+v", e)
			}
		}},
		{"incomplete at the token limit", fakeprovider.Response{Text: "a b", Finish: "max_output_tokens"}, func(t *testing.T, a provider.Answer, e *provider.Error) {
			if e != nil || a.Text != "a b" || a.FinishReason != provider.FinishLength {
				t.Errorf("%+v %v", a, e)
			}
		}},
		{"incomplete at a filter", fakeprovider.Response{Text: "a b", Finish: "content_filter"}, func(t *testing.T, a provider.Answer, e *provider.Error) {
			if e != nil || a.FinishReason != provider.FinishContentFilter {
				t.Errorf("%+v %v", a, e)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{c.resp}}})
			var got []seen
			resp, err := provider.Complete(context.Background(), responsesRequest(fp, provider.TextTurn("hi"), &got))
			var e *provider.Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("%v is not a *provider.Error", err)
			}
			if e != nil && resp.Answer.Text != "" {
				t.Errorf("partial text returned: %q", resp.Answer.Text)
			}
			c.check(t, resp.Answer, e)
		})
	}
}

func TestResponsesPrefill(t *testing.T) {
	const fox = "The quick brown fox jumps over the lazy dog."
	for _, c := range []struct {
		name, continuation, want string
		last                     string
	}{
		{"a final assistant message", provider.ContinuePrefill, " fox jumps over the lazy dog.",
			`{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The quick brown"}]}`},
		{"followed by an instruction", provider.ContinueInstruction, fox,
			`{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Continue your previous answer exactly where it stopped. Do not repeat any of it, and do not add any preamble."}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: fox, Prefill: "honour"}}}})
			turn := provider.TextTurn("say the pangram")
			turn.Params.ResponseFormat = &provider.ResponseFormat{Type: provider.FormatJSONObject}
			var got []seen
			req := responsesRequest(fp, turn, &got)
			req.Prefill, req.Continuation = "The quick brown ", c.continuation
			resp, err := provider.Complete(context.Background(), req)
			if err != nil || resp.Answer.Text != c.want {
				t.Fatalf("%+v %v, want %q", resp.Answer, err, c.want)
			}
			body := sentBody(t, fp, 1)
			input := body["input"].([]any)
			sameJSON(t, input[len(input)-1], c.last)
			if body["text"] != nil {
				t.Errorf("a response format with a prefill: %v", body["text"])
			}
		})
	}
}

// A streamed 1,000-token answer through the Responses adapter, as BenchmarkStream1000Tokens does
// for the other two: overhead-ns/chunk is what the adapter adds to a plain read of the stream.
func BenchmarkResponsesStream1000Tokens(b *testing.B) {
	fp := benchFake(b)
	req := provider.Request{Provider: "openai", API: provider.APIOpenAIResponses, Model: "m", BaseURL: fp.BaseURL("openai", false),
		Credential: provider.Credential{Key: "sk-bench"}, Turn: provider.TextTurn("go")}
	var ev struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	}
	benchStream(b, req, fp.BaseURL("openai", false)+"/responses", `{"model":"m","stream":true,"input":"go"}`, &ev)
}

func TestResponsesOddStreams(t *testing.T) {
	frame := anthropicStream // events named by their type, as the Responses API names them
	done := `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":2}}}`
	cases := []struct {
		name  string
		sse   string
		check func(t *testing.T, a provider.Answer, got []seen, err error)
	}{
		{"only the terminal response, its output whole", frame(
			`{"type":"response.created","response":{"status":"in_progress","output":[]}}`,
			`{"type":"response.completed","response":{"status":"completed","output":[
				{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}],"encrypted_content":"e"},
				{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"hello"}]},
				{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"x\":1}"}]}}`),
			func(t *testing.T, a provider.Answer, got []seen, err error) {
				if err != nil || a.Text != "hello" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_1" || a.FinishReason != provider.FinishToolCalls ||
					len(a.Reasoning) != 1 || a.Reasoning[0].Text != "a\n\nb" || a.Reasoning[0].Encrypted != "e" {
					t.Errorf("%+v %v", a, err)
				}
				consistent(t, a, got)
			}},
		{"a call handed out at its arguments' done, the item's done after it", frame(
			`{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"x\""}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":":1}"}`,
			`{"type":"response.function_call_arguments.done","item_id":"fc_1","arguments":"{\"x\":1}"}`,
			`{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"x\":1}"}}`,
			done),
			func(t *testing.T, a provider.Answer, got []seen, err error) {
				if d := describe(got); err != nil || !slices.Equal(d, []string{`call call_1 f {"x":1}`}) || got[0].chunks != 4 || a.Usage.Input != 3 {
					t.Errorf("%q %+v %v", d, a, err)
				}
			}},
		{"arguments after the call was handed out", frame(
			`{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}`,
			`{"type":"response.function_call_arguments.done","item_id":"fc_1","arguments":"{}"}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"late\":1}"}`,
			done),
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultMalformed || e.PartialToolCalls != 1 {
					t.Errorf("%v", err)
				}
			}},
		{"raw reasoning text, from an open-weight model's server", frame(
			`{"type":"response.output_item.added","item":{"type":"reasoning","id":"rs_1","summary":[]}}`,
			`{"type":"response.reasoning_text.delta","item_id":"rs_1","content_index":0,"delta":"hm"}`,
			`{"type":"response.output_item.done","item":{"type":"reasoning","id":"rs_1","summary":[]}}`,
			`{"type":"response.output_text.delta","item_id":"msg_1","delta":"ok"}`,
			done),
			func(t *testing.T, a provider.Answer, got []seen, err error) {
				// Without encrypted content the item cannot go back, but its text is the answer's reasoning.
				if err != nil || a.Text != "ok" || len(a.Reasoning) != 1 || a.Reasoning[0].Text != "hm" || a.Reasoning[0].ReasoningID != "rs_1" {
					t.Errorf("%+v %v", a, err)
				}
				consistent(t, a, got)
			}},
		{"an error event with an error object", frame(
			`{"type":"response.output_text.delta","item_id":"msg_1","delta":"so far"}`,
			`{"type":"error","error":{"type":"server_error","code":"server_error","message":"The server had an error"}}`),
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultInBandError || e.Type != "server_error" || e.PartialText != "so far" ||
					responsesFailure(e) != policy.ReasonTimeout {
					t.Errorf("%+v", e)
				}
			}},
		{"response.failed without an error object", frame(`{"type":"response.failed","response":{"status":"failed","error":null}}`),
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultInBandError {
					t.Errorf("%v", err)
				}
			}},
		{"a stream without its terminal event", frame(`{"type":"response.output_text.delta","item_id":"msg_1","delta":"so far"}`),
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultCut || e.PartialText != "so far" {
					t.Errorf("%v", err)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, got, _, err := streamWith(t, provider.APIOpenAIResponses, strings.ReplaceAll(c.sse, "\n\t\t\t\t", ""),
				provider.TextTurn("hi"), func(*provider.Request) {})
			c.check(t, resp.Answer, got, err)
		})
	}
}
