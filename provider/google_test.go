package provider_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// The Gemini API adapter (google-gemini) against the fake provider's Gemini routes.

// geminiRequest is a Gemini API call to the fake for a turn, recording every delta in got.
func geminiRequest(fp *fakeprovider.Server, turn provider.Turn, got *[]seen) provider.Request {
	req := request(fp, "google")
	req.API, req.BaseURL, req.Turn = provider.APIGoogleGemini, fp.URL()+"/p/google", turn
	chunks := 0
	req.OnChunk = func() { chunks++ }
	req.OnDelta = func(d provider.Delta) { *got = append(*got, seen{d, chunks}) }
	return req
}

// googleFailure is the reason a policy gives e, mapped as activities.FailureOf maps it.
func googleFailure(e *provider.Error) policy.Reason {
	return policy.AttemptReason(policy.Failure{Provider: "google", Status: e.Status, Code: e.Code, Type: e.Type, Message: e.Message,
		Wrapped: e.Wrapped, Detail: e.Detail, Body: e.BodyPreview, Page: e.Page, DetailPage: e.DetailPage,
		Net: policy.NetErrorKind(e.Net), Stream: policy.StreamFault(e.Stream),
		Retry: policy.RetryInfo{After: e.Retry.After, HasAfter: e.Retry.HasAfter}})
}

// geminiSig is a signature as the Gemini wire carries it.
func geminiSig(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestGeminiStreamsATextAnswer(t *testing.T) {
	fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "an answer in five words",
		Usage: &fakeprovider.Usage{Input: 12, Output: 5, Cached: 4}}}}})
	var got []seen
	resp, err := provider.Complete(context.Background(), geminiRequest(fp, provider.TextTurn("hi"), &got))
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Answer
	if a.Text != "an answer in five words" || a.FinishReason != provider.FinishStop || a.Usage != (provider.Usage{Input: 12, Output: 5, CachedInput: 4}) {
		t.Errorf("%+v", a)
	}
	// Each piece goes out as it streams, at its own chunk.
	if d := describe(got); !slices.Equal(d, []string{"text an ", "text answer ", "text in ", "text five ", "text words"}) {
		t.Errorf("deltas %q", d)
	}
	for i := 1; i < len(got); i++ {
		if got[i].chunks <= got[i-1].chunks {
			t.Errorf("delta %d handed out at chunk %d, after %d", i, got[i].chunks, got[i-1].chunks)
		}
	}
	consistent(t, a, got)
	// The key went as the profile's (the fake maps it), on the streaming route.
	if c := fp.Calls()[0]; c.Provider != "google" || c.Model != "m" || c.Profile != "p:a" || !c.Stream {
		t.Errorf("call %+v", c)
	}
	sameJSON(t, sentBody(t, fp, 1), `{"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {}}`)
}

func TestAFullTurnGoesOutOnTheGeminiWire(t *testing.T) {
	fp := start(t, nil)
	turn := fullTurn()
	turn.Params.ReasoningEffort = "medium"
	turn.Params.ResponseFormat = &provider.ResponseFormat{Type: provider.FormatJSONSchema, Name: "forecast",
		Schema: json.RawMessage(`{"type":"object","properties":{"c":{"type":"number"}}}`)}
	var got []seen
	if _, err := provider.Complete(context.Background(), geminiRequest(fp, turn, &got)); err != nil {
		t.Fatal(err)
	}
	png64 := base64.StdEncoding.EncodeToString(png)
	sameJSON(t, sentBody(t, fp, 1), strings.ReplaceAll(`{
		"systemInstruction": {"role": "user", "parts": [{"text": "be brief"}, {"text": "use metric units"}]},
		"contents": [
			{"role": "user", "parts": [
				{"text": "what is this, and the weather?"},
				{"inlineData": {"mimeType": "image/png", "data": "PNG"}},
				{"fileData": {"fileUri": "https://example.com/cat.jpg", "mimeType": "image/jpeg"}}]},
			{"role": "model", "parts": [
				{"text": "Let me check."},
				{"functionCall": {"id": "call.1:a", "name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "skip/thought/signature/validator"},
				{"functionCall": {"id": "call_2", "name": "clock"}}]},
			{"role": "user", "parts": [
				{"functionResponse": {"id": "call.1:a", "name": "weather", "response": {"output": "18 C"}}},
				{"functionResponse": {"id": "call_2", "name": "clock", "response": {"error": "boom"}}},
				{"inlineData": {"mimeType": "image/png", "data": "PNG"}},
				{"text": "thanks; and tomorrow?"}]}],
		"tools": [{"functionDeclarations": [
			{"name": "weather", "description": "the weather in a city",
				"parametersJsonSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
			{"name": "clock"}]}],
		"toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
		"generationConfig": {"temperature": 1.5, "topP": 0.9, "maxOutputTokens": 500, "stopSequences": ["END"], "seed": 7,
			"presencePenalty": 0.5, "frequencyPenalty": 0.25,
			"responseMimeType": "application/json", "responseJsonSchema": {"type": "object", "properties": {"c": {"type": "number"}}},
			"thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}}}`, `"PNG"`, `"`+png64+`"`))

	// The bypass value is the documented string's bytes (URL-safe base64 on the page, standard here).
	sig := sentBody(t, fp, 1)["contents"].([]any)[1].(map[string]any)["parts"].([]any)[1].(map[string]any)["thoughtSignature"].(string)
	sent, _ := base64.StdEncoding.DecodeString(sig)
	documented, _ := base64.RawURLEncoding.DecodeString("skip_thought_signature_validator")
	if string(sent) != string(documented) || len(sent) == 0 {
		t.Errorf("the bypass signature %q is not the documented one", sig)
	}
}

func TestGeminiToolCallRoundTripKeepsItsThoughtSignature(t *testing.T) {
	weather := fakeprovider.ToolCall{Name: "get_weather", Arguments: `{"city":"Paris","days":[1,2]}`}
	fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{
		{Thinking: "the user wants weather", Signature: "sig-1", ToolCalls: []fakeprovider.ToolCall{weather, {Name: "clock"}},
			Usage: &fakeprovider.Usage{Input: 100, Output: 30}},
		{Text: "18 C in Paris"}}}})
	turn := provider.Turn{Messages: []provider.Message{user("weather in Paris?")},
		Tools:  []provider.Tool{{Name: "get_weather", Schema: json.RawMessage(`{"type":"object"}`)}, {Name: "clock"}},
		Params: provider.Params{ThinkingBudget: ptr(int64(2048))}}
	var got []seen
	resp, err := provider.Complete(context.Background(), geminiRequest(fp, turn, &got))
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Answer
	if len(a.ToolCalls) != 2 || a.FinishReason != provider.FinishToolCalls || a.Text != "" {
		t.Fatalf("%+v", a)
	}
	// The Gemini API sent no ids: the adapter made distinct ones.
	first, second := a.ToolCalls[0], a.ToolCalls[1]
	if !strings.HasPrefix(first.ID, "call_") || first.ID == second.ID || first.Name != "get_weather" || first.Arguments != weather.Arguments ||
		second.Name != "clock" || second.Arguments != "{}" {
		t.Errorf("calls %+v", a.ToolCalls)
	}
	// The thoughts and the signature the first call came with, tied to it.
	sig := provider.Part{Type: provider.PartReasoning, Text: "the user wants weather", Encrypted: geminiSig("sig-1"), CallID: first.ID}
	if len(a.Reasoning) != 1 || !reflectEqual(a.Reasoning[0], sig) {
		t.Errorf("reasoning %+v", a.Reasoning)
	}
	// Thoughts as they stream, the signed part before its call, each call once, whole.
	want := []string{"reasoning the ", "reasoning user ", "reasoning wants ", "reasoning weather", "thinking block the user wants weather signed ",
		"call " + first.ID + " get_weather " + weather.Arguments, "call " + second.ID + " clock {}"}
	if d := describe(got); !slices.Equal(d, want) {
		t.Errorf("deltas %q", d)
	}
	consistent(t, a, got)
	if u := a.Usage; u != (provider.Usage{Input: 100, Output: 30, Reasoning: 4}) {
		t.Errorf("usage %+v", u)
	}
	sameJSON(t, sentBody(t, fp, 1)["generationConfig"], `{"thinkingConfig": {"includeThoughts": true, "thinkingBudget": 2048}}`)

	// The next turn: the signature goes back on its call (not the bypass), the thoughts do not;
	// the results go by the calls' names and ids.
	turn.Messages = append(turn.Messages,
		assistant(a.Reasoning[0], call(first.ID, first.Name, first.Arguments), call(second.ID, second.Name, second.Arguments)),
		tool(result(first.ID, "18 C"), result(second.ID, "noon")))
	got = nil
	resp, err = provider.Complete(context.Background(), geminiRequest(fp, turn, &got))
	if err != nil || resp.Answer.Text != "18 C in Paris" {
		t.Fatalf("%+v %v", resp, err)
	}
	contents := sentBody(t, fp, 2)["contents"].([]any)
	sameJSON(t, contents[1:], `[
		{"role": "model", "parts": [
			{"functionCall": {"id": "`+first.ID+`", "name": "get_weather", "args": {"city": "Paris", "days": [1, 2]}}, "thoughtSignature": "`+geminiSig("sig-1")+`"},
			{"functionCall": {"id": "`+second.ID+`", "name": "clock"}}]},
		{"role": "user", "parts": [
			{"functionResponse": {"id": "`+first.ID+`", "name": "get_weather", "response": {"output": "18 C"}}},
			{"functionResponse": {"id": "`+second.ID+`", "name": "clock", "response": {"output": "noon"}}}]}]`)

	// Through the records a reply keeps, the part is whole.
	_, raw, err := provider.EncodeAnswerContent(a)
	if _, back, err2 := provider.DecodeAnswerContent(nil, raw); err != nil || err2 != nil || !reflectEqual(back[0], sig) {
		t.Fatalf("through the records: %+v %v %v", back, err, err2)
	}
	// No other wire takes a Gemini signature back.
	for _, api := range []string{provider.APIAnthropicMessages, provider.APIOpenAIResponses, provider.APIOpenAICompletions} {
		if d := provider.Dropped(provider.Turn{Messages: turn.Messages[:2]}, api); len(d) != 1 || !strings.HasPrefix(d[0], "messages.content.reasoning") {
			t.Errorf("%s: Dropped %q", api, d)
		}
	}
}

func TestGeminiTakesBackATextAnswersSignature(t *testing.T) {
	fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "Sunny.", Signature: "sig-text"}, {Text: "Rain."}}}})
	var got []seen
	resp, err := provider.Complete(context.Background(), geminiRequest(fp, provider.TextTurn("weather?"), &got))
	if err != nil {
		t.Fatal(err)
	}
	// The signature came on the last chunk's empty part: a reasoning part of no call.
	a := resp.Answer
	if want := (provider.Part{Type: provider.PartReasoning, Encrypted: geminiSig("sig-text")}); a.Text != "Sunny." || len(a.Reasoning) != 1 || !reflectEqual(a.Reasoning[0], want) {
		t.Fatalf("%+v", a)
	}
	next := provider.Turn{Messages: []provider.Message{user("weather?"), assistant(a.Reasoning[0], "Sunny."), user("and tomorrow?")}}
	if _, err := provider.Complete(context.Background(), geminiRequest(fp, next, &got)); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, sentBody(t, fp, 2)["contents"], `[
		{"role": "user", "parts": [{"text": "weather?"}]},
		{"role": "model", "parts": [{"text": "Sunny.", "thoughtSignature": "`+geminiSig("sig-text")+`"}]},
		{"role": "user", "parts": [{"text": "and tomorrow?"}]}]`)
}

func TestGeminiFaults(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog"
	overloaded := json.RawMessage(`{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}`)
	cases := []struct {
		name  string
		resp  fakeprovider.Response
		check func(t *testing.T, e *provider.Error)
	}{
		{"a cut", fakeprovider.Response{Text: text, CutAfterChunks: intp(3)}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultCut || !e.Partial || e.PartialText != "the quick brown " || !strings.Contains(e.Message, "no finishReason") {
				t.Errorf("%+v", e)
			}
		}},
		{"a cut before a call hands out nothing of it", fakeprovider.Response{Text: "a b", ToolCalls: []fakeprovider.ToolCall{{Name: "f"}}, CutAfterChunks: intp(2)},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultCut || e.PartialToolCalls != 0 || e.PartialText != "a b" {
					t.Errorf("%+v", e)
				}
			}},
		{"a stall", fakeprovider.Response{Text: text, StallAfterChunks: intp(2), StallMs: 3000}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultStall || !e.Partial || e.PartialText != "the quick " {
				t.Errorf("%+v", e)
			}
		}},
		{"a malformed chunk", fakeprovider.Response{Text: text, MalformedChunk: intp(2)}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultMalformed || e.PartialText != "the " || googleFailure(e) != policy.ReasonTimeout {
				t.Errorf("%+v", e)
			}
		}},
		{"an error object mid-answer", fakeprovider.Response{Text: text, StreamError: overloaded, StreamErrorAfterChunks: intp(3)},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultInBandError || e.Status != 0 || e.Type != "UNAVAILABLE" || e.Code != "OVERLOADED" || !e.Partial ||
					e.PartialText != "the quick brown " || e.Message != "The model is overloaded. Please try again later." ||
					googleFailure(e) != policy.ReasonOverloaded {
					t.Errorf("%+v", e)
				}
			}},
		{"an error object first", fakeprovider.Response{Text: text, StreamError: json.RawMessage(`{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}`)},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultInBandError || e.Code != "SERVER_ERROR" || e.PartialText != "" || googleFailure(e) != policy.ReasonTimeout {
					t.Errorf("%+v", e)
				}
			}},
		{"a 200 with nothing", fakeprovider.Response{Empty: true}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultEmpty || googleFailure(e) != policy.ReasonEmptyResponse {
				t.Errorf("%+v", e)
			}
		}},
		{"an answer of nothing but its finish", fakeprovider.Response{}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultEmpty {
				t.Errorf("%+v", e)
			}
		}},
		{"a reset before headers", fakeprovider.Response{Reset: true}, func(t *testing.T, e *provider.Error) {
			if e.Net != "reset" && e.Net != "eof" || googleFailure(e) != policy.ReasonTimeout {
				t.Errorf("%+v", e)
			}
		}},
		{"no headers within the response timeout", fakeprovider.Response{DelayMs: 2000, Text: text}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultResponseTimeout {
				t.Errorf("%+v", e)
			}
		}},
		{"a malformed function call", fakeprovider.Response{Text: "let me ", Finish: "MALFORMED_FUNCTION_CALL"}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultMalformed || e.Type != "MALFORMED_FUNCTION_CALL" || googleFailure(e) != policy.ReasonTimeout {
				t.Errorf("%+v", e)
			}
		}},
		{"a thought signature missing", fakeprovider.Response{Text: "no", Finish: "MISSING_THOUGHT_SIGNATURE"}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultInBandError || e.Type != "MISSING_THOUGHT_SIGNATURE" || googleFailure(e) != policy.ReasonFormat {
				t.Errorf("%+v", e)
			}
		}},
		{"an account limited for its use", fakeprovider.Response{Text: "no", Finish: "PUP_LIMITED_DISABLED"}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultInBandError || e.Type != "PUP_LIMITED_DISABLED" || googleFailure(e) != policy.ReasonAuthPermanent {
				t.Errorf("%+v", e)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{c.resp}}})
			var got []seen
			resp, err := provider.Complete(context.Background(), geminiRequest(fp, provider.TextTurn("hi"), &got))
			var e *provider.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %+v, %v; want a *provider.Error", resp, err)
			}
			if resp.Answer.Text != "" {
				t.Errorf("partial text returned: %q", resp.Answer.Text)
			}
			c.check(t, e)
		})
	}
}

func TestGeminiRequestsThatCannotGo(t *testing.T) {
	fp := start(t, nil)
	var got []seen
	// A model id the SDK will not put in a path: the request's fault, nothing sent.
	req := geminiRequest(fp, provider.TextTurn("hi"), &got)
	req.Model = "gemini?x=1"
	_, err := provider.Complete(context.Background(), req)
	var e *provider.Error
	if !errors.As(err, &e) || e.Type != "request" || e.Net != "" || googleFailure(e) != policy.ReasonFormat {
		t.Errorf("%+v", err)
	}
	// A profile without a key: never the environment's.
	t.Setenv("GOOGLE_API_KEY", "AIza-of-the-environment")
	req = geminiRequest(fp, provider.TextTurn("hi"), &got)
	req.Credential = provider.Credential{Type: "api_key"}
	_, err = provider.Complete(context.Background(), req)
	if !errors.As(err, &e) || !strings.Contains(e.Message, "no API key") || googleFailure(e) != policy.ReasonAuthPermanent {
		t.Errorf("%+v", err)
	}
	if calls := fp.Calls(); len(calls) != 0 {
		t.Errorf("calls %+v", calls)
	}
}

func TestGeminiFinishReasons(t *testing.T) {
	for finish, want := range map[string]string{"STOP": provider.FinishStop, "MAX_TOKENS": provider.FinishLength,
		"SAFETY": provider.FinishContentFilter, "RECITATION": provider.FinishContentFilter, "PROHIBITED_CONTENT": provider.FinishContentFilter} {
		fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "a b", Finish: finish}}}})
		var got []seen
		resp, err := provider.Complete(context.Background(), geminiRequest(fp, provider.TextTurn("hi"), &got))
		if err != nil || resp.Answer.FinishReason != want || resp.Answer.Text != "a b" {
			t.Errorf("%s: %+v %v", finish, resp.Answer, err)
		}
	}
}

func TestGeminiOddStreams(t *testing.T) {
	frame := func(chunks ...string) string {
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString("data: " + c + "\r\n\r\n")
		}
		return b.String()
	}
	stop := `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}`
	cases := []struct {
		name  string
		sse   string
		check func(t *testing.T, a provider.Answer, got []seen, err error)
	}{
		{"keep-alive comments between chunks", ": keep-alive\r\n\r\n" + frame(`{"candidates":[{"content":{"parts":[{"text":"he"}]}}]}`) +
			": keep-alive\r\n\r\n" + frame(`{"candidates":[{"content":{"parts":[{"text":"llo"}]}}]}`, stop),
			func(t *testing.T, a provider.Answer, got []seen, err error) {
				if err != nil || a.Text != "hello" || a.Usage.Input != 3 {
					t.Errorf("%+v %v", a, err)
				}
			}},
		{"the prompt blocked", frame(`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":8}}`),
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultInBandError || e.Type != "PROMPT_BLOCKED" || !strings.Contains(e.Message, "PROHIBITED_CONTENT") ||
					googleFailure(e) != policy.ReasonFormat {
					t.Errorf("%+v", e)
				}
			}},
		{"a function call with its id and whole arguments, a thought signed on its own", frame(
			`{"candidates":[{"content":{"parts":[{"text":"hm","thought":true,"thoughtSignature":"c2lnLXQ="}]}}]}`,
			`{"candidates":[{"content":{"parts":[{"functionCall":{"id":"fc-7","name":"f","args":{"n":12345678901234567890}}}]},"finishReason":"STOP"}]}`),
			func(t *testing.T, a provider.Answer, got []seen, err error) {
				want := provider.Part{Type: provider.PartReasoning, Text: "hm", Encrypted: "c2lnLXQ="}
				if err != nil || len(a.ToolCalls) != 1 || a.ToolCalls[0] != (provider.ToolCall{ID: "fc-7", Name: "f", Arguments: `{"n":12345678901234567890}`}) ||
					a.FinishReason != provider.FinishToolCalls || len(a.Reasoning) != 1 || !reflectEqual(a.Reasoning[0], want) {
					t.Errorf("%+v %v", a, err)
				}
				consistent(t, a, got)
			}},
		{"thoughts never signed", frame(`{"candidates":[{"content":{"parts":[{"text":"hm","thought":true}]}}]}`,
			`{"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`),
			func(t *testing.T, a provider.Answer, got []seen, err error) {
				if err != nil || a.Text != "ok" || len(a.Reasoning) != 1 || a.Reasoning[0].Text != "hm" || a.Reasoning[0].Encrypted != "" {
					t.Errorf("%+v %v", a, err)
				}
				consistent(t, a, got)
			}},
		{"the last chunk without its blank line", strings.TrimSuffix(frame(`{"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`), "\r\n"),
			func(t *testing.T, a provider.Answer, _ []seen, err error) {
				if err != nil || a.Text != "ok" {
					t.Errorf("%+v %v", a, err)
				}
			}},
		{"a chunk cut in its middle at the end", frame(`{"candidates":[{"content":{"parts":[{"text":"so far"}]}}]}`) + `data: {"candidates":[{"con`,
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultCut || e.PartialText != "so far" {
					t.Errorf("%+v", err)
				}
			}},
		{"an error object of the wrong shape", frame(`{"candidates":[{"content":{"parts":[{"text":"so far"}]}}]}`, `{"error":"quota"}`),
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultInBandError || e.Message != "quota" || e.PartialText != "so far" {
					t.Errorf("%+v", err)
				}
			}},
		{"a chunk of an unexpected shape", frame(`{"candidates":{"content":"x"}}`),
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultMalformed {
					t.Errorf("%+v", err)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, got, _, err := streamWith(t, provider.APIGoogleGemini, c.sse, provider.TextTurn("hi"), func(*provider.Request) {})
			c.check(t, resp.Answer, got, err)
		})
	}
}

// The error shapes Google sends, as the Gemini API (and Vertex AI) send them.
var googleErrors = []struct {
	name   string
	status int
	body   string
	typ    string
	code   string
	reason policy.Reason
	after  time.Duration
}{
	{"a rate limit", 429, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}},
		{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`,
		"RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED", policy.ReasonRateLimit, 7 * time.Second},
	// The free tier's daily quota: per model, back the next day; not money.
	{"the free tier's quota", 429, `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 50, model: gemini-2.5-pro\nPlease retry in 41.12549036s.","status":"RESOURCE_EXHAUSTED","details":[
		{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-pro"},"quotaValue":"50"}]},
		{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},
		{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"41.12549036s"}]}}`,
		"RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED", policy.ReasonRateLimit, 41125490360},
	{"prepaid credits used up", 429, `{"error":{"code":429,"message":"Your prepayment credits are depleted. Please go to AI Studio at https://ai.studio/projects to manage your project and billing.","status":"RESOURCE_EXHAUSTED"}}`,
		"RESOURCE_EXHAUSTED", "INSUFFICIENT_QUOTA", policy.ReasonBilling, 0},
	{"overloaded", 503, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
		"UNAVAILABLE", "OVERLOADED", policy.ReasonOverloaded, 0},
	{"unavailable in other words", 503, `{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}`,
		"UNAVAILABLE", "OVERLOADED", policy.ReasonOverloaded, 0},
	{"an internal error", 500, `{"error":{"code":500,"message":"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","status":"INTERNAL"}}`,
		"INTERNAL", "SERVER_ERROR", policy.ReasonTimeout, 0},
	{"a deadline", 504, `{"error":{"code":504,"message":"Deadline expired before operation could complete.","status":"DEADLINE_EXCEEDED"}}`,
		"DEADLINE_EXCEEDED", "SERVER_ERROR", policy.ReasonTimeout, 0},
	{"a bad key", 400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}},
		{"@type":"type.googleapis.com/google.rpc.LocalizedMessage","locale":"en-US","message":"API key not valid. Please pass a valid API key."}]}}`,
		"INVALID_ARGUMENT", "INVALID_API_KEY", policy.ReasonAuth, 0},
	{"an expired key", 400, `{"error":{"code":400,"message":"API key expired. Please renew the API key.","status":"INVALID_ARGUMENT","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`,
		"INVALID_ARGUMENT", "INVALID_API_KEY", policy.ReasonAuth, 0},
	{"unauthenticated", 401, `{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.","status":"UNAUTHENTICATED","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ACCESS_TOKEN_EXPIRED","domain":"googleapis.com","metadata":{"service":"aiplatform.googleapis.com","method":"google.cloud.aiplatform.v1.PredictionService.StreamGenerateContent"}}]}}`,
		"UNAUTHENTICATED", "INVALID_API_KEY", policy.ReasonAuth, 0},
	{"an API the project has not enabled", 403, `{"error":{"code":403,"message":"Generative Language API has not been used in project 123456 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/generativelanguage.googleapis.com/overview?project=123456 then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.","status":"PERMISSION_DENIED","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SERVICE_DISABLED","domain":"googleapis.com","metadata":{"consumer":"projects/123456","service":"generativelanguage.googleapis.com"}}]}}`,
		"PERMISSION_DENIED", "INVALID_API_KEY", policy.ReasonAuth, 0},
	{"a key blocked for the API", 403, `{"error":{"code":403,"message":"Requests to this API generativelanguage.googleapis.com method google.ai.generativelanguage.v1beta.GenerativeService.StreamGenerateContent are blocked.","status":"PERMISSION_DENIED","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_SERVICE_BLOCKED","domain":"googleapis.com"}]}}`,
		"PERMISSION_DENIED", "INVALID_API_KEY", policy.ReasonAuth, 0},
	{"billing off", 403, `{"error":{"code":403,"message":"This API method requires billing to be enabled. Please enable billing on project #123456 by visiting https://console.developers.google.com/billing/enable?project=123456 then retry. If you enabled billing recently, wait a few minutes for the action to propagate to our systems and retry.","status":"PERMISSION_DENIED","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"BILLING_DISABLED","domain":"googleapis.com"}]}}`,
		"PERMISSION_DENIED", "INSUFFICIENT_QUOTA", policy.ReasonBilling, 0},
	{"a suspended consumer, the key masked", 403, `{"error":{"code":403,"message":"Permission denied: Consumer 'api_key:` + secret + `' has been suspended.","status":"PERMISSION_DENIED","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"CONSUMER_SUSPENDED","domain":"googleapis.com","metadata":{"consumer":"projects/123456"}}]}}`,
		"PERMISSION_DENIED", "DEACTIVATED_WORKSPACE", policy.ReasonAuthPermanent, 0},
	{"a model that is not there", 404, `{"error":{"code":404,"message":"models/gemini-9 is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.","status":"NOT_FOUND"}}`,
		"NOT_FOUND", "MODEL_NOT_FOUND", policy.ReasonModelNotFound, 0},
	{"a context overflow", 400, `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
		"INVALID_ARGUMENT", "CONTEXT_LENGTH_EXCEEDED", policy.ReasonContextOverflow, 0},
	{"an invalid argument", 400, `{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}`,
		"INVALID_ARGUMENT", "UNKNOWN_PARAMETER", policy.ReasonFormat, 0},
	{"a missing thought signature", 400, `{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call default_api:get_weather , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.","status":"INVALID_ARGUMENT"}}`,
		"INVALID_ARGUMENT", "UNKNOWN_PARAMETER", policy.ReasonFormat, 0},
	{"a country not served", 400, `{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}`,
		"FAILED_PRECONDITION", "DEACTIVATED_WORKSPACE", policy.ReasonAuthPermanent, 0},
	{"a country the free tier does not serve", 400, `{"error":{"code":400,"message":"Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.","status":"FAILED_PRECONDITION"}}`,
		"FAILED_PRECONDITION", "INSUFFICIENT_QUOTA", policy.ReasonBilling, 0},
	{"a precondition", 400, `{"error":{"code":400,"message":"Precondition check failed.","status":"FAILED_PRECONDITION"}}`,
		"FAILED_PRECONDITION", "UNKNOWN_PARAMETER", policy.ReasonFormat, 0},
}

// checkGoogleReason checks a classification.
func checkGoogleReason(t *testing.T, got, want policy.Reason) {
	t.Helper()
	if got != want {
		t.Errorf("classified %s, want %s", got, want)
	}
}

func TestGeminiErrorsClassify(t *testing.T) {
	for _, c := range googleErrors {
		t.Run(c.name, func(t *testing.T) {
			fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Status: c.status, Body: c.body}}}})
			var got []seen
			_, err := provider.Complete(context.Background(), geminiRequest(fp, provider.TextTurn("hi"), &got))
			var e *provider.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is not a *provider.Error", err)
			}
			if e.Status != c.status || e.Type != c.typ || e.Code != c.code || e.Stream != "" || e.Message == "" || strings.HasPrefix(e.Message, "{") {
				t.Errorf("%+v", e)
			}
			if e.Retry.After != c.after || e.Retry.HasAfter != (c.after != 0) {
				t.Errorf("retry %+v, want after %v", e.Retry, c.after)
			}
			if n := len(fp.Calls()); n != 1 {
				t.Errorf("%d calls: the SDK retried", n)
			}
			checkGoogleReason(t, googleFailure(e), c.reason)
			if strings.Contains(err.Error(), secret) || strings.Contains(e.BodyPreview, secret) || strings.Contains(e.Detail, secret) {
				t.Errorf("the key leaks: %+v", e)
			}
		})
	}
}

func TestGeminiErrorObjectsInTheStreamClassify(t *testing.T) {
	for _, c := range googleErrors {
		t.Run(c.name, func(t *testing.T) {
			var obj struct {
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(c.body), &obj); err != nil {
				t.Fatal(err)
			}
			fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "so far it went", StreamError: obj.Error, StreamErrorAfterChunks: intp(2)}}}})
			var got []seen
			_, err := provider.Complete(context.Background(), geminiRequest(fp, provider.TextTurn("hi"), &got))
			var e *provider.Error
			if !errors.As(err, &e) || e.Stream != provider.FaultInBandError || e.Status != 0 || e.Type != c.typ || e.Code != c.code || e.PartialText != "so far " {
				t.Fatalf("%+v", err)
			}
			// Without a status the code carries the meaning, as the status did.
			checkGoogleReason(t, googleFailure(e), c.reason)
		})
	}
}

func TestGeminiPrefill(t *testing.T) {
	const fox = "The quick brown fox jumps over the lazy dog."
	for _, c := range []struct {
		name, continuation, want string
		last                     string
	}{
		{"a final model turn", provider.ContinuePrefill, " fox jumps over the lazy dog.",
			`{"role": "model", "parts": [{"text": "The quick brown"}]}`},
		{"followed by an instruction", provider.ContinueInstruction, fox,
			`{"role": "user", "parts": [{"text": "Continue your previous answer exactly where it stopped. Do not repeat any of it, and do not add any preamble."}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: fox, Prefill: "honour"}}}})
			turn := provider.TextTurn("say the pangram")
			turn.Params.ResponseFormat = &provider.ResponseFormat{Type: provider.FormatJSONObject}
			var got []seen
			req := geminiRequest(fp, turn, &got)
			req.Prefill, req.Continuation = "The quick brown ", c.continuation
			resp, err := provider.Complete(context.Background(), req)
			if err != nil || resp.Answer.Text != c.want {
				t.Fatalf("%+v %v, want %q", resp.Answer, err, c.want)
			}
			contents := sentBody(t, fp, 1)["contents"].([]any)
			sameJSON(t, contents[len(contents)-1], c.last)
			if cfg := sentBody(t, fp, 1)["generationConfig"].(map[string]any); cfg["responseMimeType"] != nil {
				t.Errorf("a JSON format with a prefill: %v", cfg)
			}
		})
	}
	// A model that refuses a final model turn says so in Google's words: format.
	fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: fox, Prefill: "reject"}}}})
	var got []seen
	req := geminiRequest(fp, provider.TextTurn("say the pangram"), &got)
	req.Prefill = "The quick "
	_, err := provider.Complete(context.Background(), req)
	var e *provider.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Type != "INVALID_ARGUMENT" || googleFailure(e) != policy.ReasonFormat || fp.Calls()[0].Prefill != "rejected" {
		t.Errorf("%+v", err)
	}
}

func TestAGeminiConversationStartsWithAUserTurn(t *testing.T) {
	fp := start(t, nil)
	turn := provider.Turn{Messages: []provider.Message{system("be brief"), assistant("Hello! How can I help?"), user("hi"), user("are you there?")}}
	var got []seen
	if _, err := provider.Complete(context.Background(), geminiRequest(fp, turn, &got)); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, sentBody(t, fp, 1)["contents"], `[
		{"role": "user", "parts": [{"text": "(The conversation begins.)"}]},
		{"role": "model", "parts": [{"text": "Hello! How can I help?"}]},
		{"role": "user", "parts": [{"text": "hi"}, {"text": "are you there?"}]}]`)
}

func TestGeminiSendsTheProvidersHeadersAndQuery(t *testing.T) {
	var header http.Header
	var query, path string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header, query, path = r.Header.Clone(), r.URL.RawQuery, r.URL.Path
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ok\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n"))
	}))
	t.Cleanup(s.Close)
	req := wireRequest(provider.APIGoogleGemini, s.URL+"/gateway", provider.TextTurn("hi"))
	req.Model, req.APIVersion = "gemini-2.5-flash", "v1alpha"
	req.Headers, req.Query = map[string]string{"X-Org": "acme"}, map[string]string{"route": "eu"}
	if resp, err := provider.Complete(context.Background(), req); err != nil || resp.Answer.Text != "ok" {
		t.Fatalf("%+v %v", resp, err)
	}
	if header.Get("X-Org") != "acme" || header.Get("x-goog-api-key") != secret || header.Get("Authorization") != "" ||
		path != "/gateway/v1alpha/models/gemini-2.5-flash:streamGenerateContent" || query != "alt=sse&route=eu" {
		t.Errorf("path %s query %s headers %v", path, query, header)
	}
}

// A streamed 1,000-token answer through the Gemini adapter, as BenchmarkStream1000Tokens does for
// the others: overhead-ns/chunk is what the adapter adds to a plain read of the stream.
func BenchmarkGeminiStream1000Tokens(b *testing.B) {
	fp := benchFake(b)
	req := provider.Request{Provider: "google", API: provider.APIGoogleGemini, Model: "m", BaseURL: fp.URL() + "/p/google",
		Credential: provider.Credential{Key: "sk-bench"}, Turn: provider.TextTurn("go")}
	var chunk struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	benchStream(b, req, fp.URL()+"/p/google/v1beta/models/m:streamGenerateContent?alt=sse&key=sk-bench",
		`{"contents":[{"role":"user","parts":[{"text":"go"}]}]}`, &chunk)
}
