package provider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// The Bedrock Converse adapter against the fake provider's /model/{id}/converse-stream, and
// against raw event streams for what the fake does not script.

const (
	bedrockModel    = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	bedrockRegion   = "eu-west-3"
	awsKeyID        = "AKIAFAKEBEDROCK00001"
	awsSecret       = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	awsSession      = "IQoJb3JpZ2luX2VjEFakeSessionTokenForTheTests0123456789"
	bedrockAPIKey   = "ABSKQmVkcm9ja0FQSUtleS1mYWtl0123456789"
	bedrockProfile  = "p:aws"
	bedrockKeyOwner = "p:key"
)

func bedrockStart(t *testing.T, rules []fakeprovider.Rule) *fakeprovider.Server {
	t.Helper()
	fp := start(t, rules)
	fp.AddCredential(awsKeyID, bedrockProfile)
	fp.AddCredential(bedrockAPIKey, bedrockKeyOwner)
	return fp
}

// sentRequest records the requests as they left for the wire (after signing).
type sentRequest struct {
	mu   sync.Mutex
	reqs []*http.Request
	body [][]byte
}

func (s *sentRequest) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = readAll(r)
	}
	s.mu.Lock()
	s.reqs, s.body = append(s.reqs, r.Clone(r.Context())), append(s.body, body)
	s.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	r.Body.Close()
	r.Body = nopBody{bytes.NewReader(b.Bytes())}
	return b.Bytes(), err
}

type nopBody struct{ *bytes.Reader }

func (nopBody) Close() error { return nil }

func (s *sentRequest) last(t *testing.T) *http.Request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("no request went out")
	}
	return s.reqs[len(s.reqs)-1]
}

// bedrockRequest is a Bedrock call to the fake, signed with an AWS key pair, recording every
// delta in got.
func bedrockRequest(fp *fakeprovider.Server, turn provider.Turn, got *[]seen) provider.Request {
	chunks := 0
	base := ""
	if fp != nil {
		base = fp.BedrockBaseURL("bedrock")
	}
	return provider.Request{
		Provider: "bedrock", API: provider.APIBedrockConverse, Model: bedrockModel, BaseURL: base,
		Region: bedrockRegion, Turn: turn,
		Credential:      provider.Credential{Type: provider.CredentialAWSKeys, AccessKeyID: awsKeyID, SecretAccessKey: awsSecret, SessionToken: awsSession},
		ResponseTimeout: 500 * time.Millisecond, FirstTokenTimeout: 500 * time.Millisecond, IdleTimeout: 300 * time.Millisecond,
		OnChunk: func() { chunks++ },
		OnDelta: func(d provider.Delta) { *got = append(*got, seen{d, chunks}) },
	}
}

// bedrockReason is the reason a policy would give e, mapped as activities.FailureOf maps it.
func bedrockReason(e *provider.Error) policy.Reason {
	return policy.AttemptReason(policy.Failure{Provider: "bedrock", Status: e.Status, Code: e.Code, Type: e.Type, Message: e.Message,
		Wrapped: e.Wrapped, Detail: e.Detail, Body: e.BodyPreview, Page: e.Page, DetailPage: e.DetailPage,
		Net: policy.NetErrorKind(e.Net), Stream: policy.StreamFault(e.Stream)})
}

// noSecret fails when a secret of the test credentials shows in the error.
func noSecret(t *testing.T, err error) {
	t.Helper()
	var e *provider.Error
	if !errors.As(err, &e) {
		return
	}
	for _, s := range []string{awsSecret, awsSession, bedrockAPIKey} {
		for _, field := range []string{err.Error(), e.Message, e.BodyPreview, e.Detail, e.Wrapped} {
			if strings.Contains(field, s) {
				t.Errorf("a secret leaks into the error: %q", field)
			}
		}
	}
}

func TestBedrockStreamsATextAnswer(t *testing.T) {
	fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "an answer in five words",
		Usage: &fakeprovider.Usage{Input: 120, Output: 5, Cached: 100}}}}})
	var got []seen
	resp, err := provider.Complete(context.Background(), bedrockRequest(fp, provider.TextTurn("hi"), &got))
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Answer
	// OpenAI's meaning: Input counts the cached input too.
	if a.Text != "an answer in five words" || a.FinishReason != provider.FinishStop || a.Usage != (provider.Usage{Input: 120, Output: 5, CachedInput: 100}) {
		t.Errorf("%+v", a)
	}
	if d := describe(got); !slices.Equal(d, []string{"text an ", "text answer ", "text in ", "text five ", "text words"}) {
		t.Errorf("deltas %q", d)
	}
	for i := 1; i < len(got); i++ {
		if got[i].chunks <= got[i-1].chunks {
			t.Errorf("delta %d handed out at chunk %d, after %d", i, got[i].chunks, got[i-1].chunks)
		}
	}
	// messageStart, 5 deltas, contentBlockStop, messageStop, metadata.
	if resp.Chunks != 9 {
		t.Errorf("%d chunks", resp.Chunks)
	}
	consistent(t, a, got)
	calls := fp.Calls()
	if c := calls[0]; c.Model != bedrockModel || c.Provider != "bedrock" || c.Profile != bedrockProfile || !c.Stream {
		t.Errorf("call %+v", c)
	}
	sameJSON(t, sentBody(t, fp, 1), `{"messages": [{"role": "user", "content": [{"text": "hi"}]}]}`)
}

func TestAFullTurnGoesOutOnTheBedrockWire(t *testing.T) {
	fp := bedrockStart(t, nil)
	var got []seen
	if _, err := provider.Complete(context.Background(), bedrockRequest(fp, fullTurn(), &got)); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(png)
	// System and developer text as system blocks, the cache mark as a cache point after its block;
	// the image by URL dropped (Converse fetches none); the thinking block first; the ids as
	// Converse takes them; the tool results and the next user text in one user message; a 1.5
	// temperature clamped to Converse's 1; auto left unsaid.
	sameJSON(t, sentBody(t, fp, 1), strings.ReplaceAll(`{
		"system": [{"text": "be brief"}, {"cachePoint": {"type": "default"}}, {"text": "use metric units"}],
		"messages": [
			{"role": "user", "content": [
				{"text": "what is this, and the weather?"},
				{"image": {"format": "png", "source": {"bytes": "PNG"}}}]},
			{"role": "assistant", "content": [
				{"reasoningContent": {"reasoningText": {"text": "they want weather", "signature": "sig=="}}},
				{"text": "Let me check."},
				{"toolUse": {"toolUseId": "call_1_a", "name": "weather", "input": {"city": "Paris"}}},
				{"toolUse": {"toolUseId": "call_2", "name": "clock", "input": {}}}]},
			{"role": "user", "content": [
				{"toolResult": {"toolUseId": "call_1_a", "content": [{"text": "18 C"}, {"image": {"format": "png", "source": {"bytes": "PNG"}}}]}},
				{"toolResult": {"toolUseId": "call_2", "content": [{"text": "boom"}], "status": "error"}},
				{"text": "thanks; and tomorrow?"}]}],
		"toolConfig": {"tools": [
			{"toolSpec": {"name": "weather", "description": "the weather in a city",
				"inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}},
			{"cachePoint": {"type": "default"}},
			{"toolSpec": {"name": "clock", "inputSchema": {"json": {"type": "object"}}}}]},
		"inferenceConfig": {"maxTokens": 500, "temperature": 1, "topP": 0.9, "stopSequences": ["END"]}}`, `"PNG"`, `"`+b64+`"`))
	if fp.Calls()[0].Tools != 2 {
		t.Errorf("the fake counted %d tools", fp.Calls()[0].Tools)
	}
}

func TestBedrockToolCallsStreamInPiecesAndGoOutWhole(t *testing.T) {
	weather := fakeprovider.ToolCall{ID: "tooluse_weather_1", Name: "get_weather", Arguments: `{"city":"Paris","units":"metric"}`}
	fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{
		{Text: "Let me look.", ToolCalls: []fakeprovider.ToolCall{weather, {Name: "get_time"}}}, {Text: "18 C in Paris"}}}})
	turn := provider.Turn{Messages: []provider.Message{user("weather in Paris?")},
		Tools:      []provider.Tool{{Name: "get_weather", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}, {Name: "get_time"}},
		ToolChoice: &provider.ToolChoice{Type: provider.ToolChoiceRequired}}
	var got []seen
	resp, err := provider.Complete(context.Background(), bedrockRequest(fp, turn, &got))
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.ToolCall{{ID: "tooluse_weather_1", Name: "get_weather", Arguments: weather.Arguments}, {ID: "tooluse_fake_2", Name: "get_time", Arguments: "{}"}}
	if a := resp.Answer; !slices.Equal(a.ToolCalls, want) || a.FinishReason != provider.FinishToolCalls || a.Text != "Let me look." {
		t.Fatalf("%+v", a)
	}
	// Each call once, whole, after its last piece: messageStart, the text's 3 chunks and its stop,
	// the first call's start and its 5 pieces of 8 bytes.
	if d := describe(got); !slices.Equal(d, []string{"text Let ", "text me ", "text look.", `call tooluse_weather_1 get_weather {"city":"Paris","units":"metric"}`,
		"call tooluse_fake_2 get_time {}"}) || got[3].chunks < 1+3+1+1+5 {
		t.Errorf("deltas %q at %v", d, got)
	}
	consistent(t, resp.Answer, got)
	sameJSON(t, sentBody(t, fp, 1)["toolConfig"].(map[string]any)["toolChoice"], `{"any": {}}`)

	// The next turn: the calls and their results, by the same ids.
	turn.Messages = append(turn.Messages, assistant("Let me look.", call(want[0].ID, want[0].Name, want[0].Arguments), call(want[1].ID, want[1].Name, "{}")),
		tool(result(want[0].ID, "18 C"), result(want[1].ID, "noon")))
	turn.ToolChoice = &provider.ToolChoice{Type: provider.ToolChoiceNamed, Name: "get_time"}
	got = nil
	if resp, err = provider.Complete(context.Background(), bedrockRequest(fp, turn, &got)); err != nil || resp.Answer.Text != "18 C in Paris" {
		t.Fatalf("%+v %v", resp, err)
	}
	body := sentBody(t, fp, 2)
	sameJSON(t, body["messages"].([]any)[1:], `[
		{"role": "assistant", "content": [{"text": "Let me look."},
			{"toolUse": {"toolUseId": "tooluse_weather_1", "name": "get_weather", "input": {"city": "Paris", "units": "metric"}}},
			{"toolUse": {"toolUseId": "tooluse_fake_2", "name": "get_time", "input": {}}}]},
		{"role": "user", "content": [
			{"toolResult": {"toolUseId": "tooluse_weather_1", "content": [{"text": "18 C"}]}},
			{"toolResult": {"toolUseId": "tooluse_fake_2", "content": [{"text": "noon"}]}}]}]`)
	sameJSON(t, body["toolConfig"].(map[string]any)["toolChoice"], `{"tool": {"name": "get_time"}}`)
}

func TestBedrockReasoning(t *testing.T) {
	fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Thinking: "the user wants weather", Signature: "sig-abc",
		Text: "Sunny.", Usage: &fakeprovider.Usage{Input: 30, Output: 20}}}}})
	turn := provider.TextTurn("weather?")
	turn.Params.ReasoningEffort = "low"
	turn.Params.Temperature = ptr(0.3)
	var got []seen
	resp, err := provider.Complete(context.Background(), bedrockRequest(fp, turn, &got))
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Answer
	part := provider.Part{Type: provider.PartReasoning, Text: "the user wants weather", Signature: "sig-abc"}
	if len(a.Reasoning) != 1 || !reflectEqual(a.Reasoning[0], part) || a.Text != "Sunny." {
		t.Fatalf("%+v", a)
	}
	if d := describe(got); !slices.Equal(d, []string{"reasoning the ", "reasoning user ", "reasoning wants ", "reasoning weather",
		"thinking block the user wants weather signed sig-abc", "text Sunny."}) {
		t.Errorf("deltas %q", d)
	}
	consistent(t, a, got)
	// Claude's thinking in additionalModelRequestFields, a maximum above the budget (the default
	// 4096 is), and no temperature (Claude refuses one with thinking).
	body := sentBody(t, fp, 1)
	sameJSON(t, body["additionalModelRequestFields"], `{"thinking": {"type": "enabled", "budget_tokens": 2048}}`)
	sameJSON(t, body["inferenceConfig"], `{"maxTokens": 4096}`)

	// The part goes back to Claude, first in its message; another model gets neither it nor thinking.
	next := provider.Turn{Messages: []provider.Message{user("weather?"), assistant(part, "Sunny."), user("and tomorrow?")}}
	next.Params.ThinkingBudget = ptr(int64(8000))
	got = nil
	if _, err := provider.Complete(context.Background(), bedrockRequest(fp, next, &got)); err != nil {
		t.Fatal(err)
	}
	body = sentBody(t, fp, 2)
	sameJSON(t, body["messages"].([]any)[1], `{"role": "assistant", "content": [
		{"reasoningContent": {"reasoningText": {"text": "the user wants weather", "signature": "sig-abc"}}}, {"text": "Sunny."}]}`)
	sameJSON(t, body["additionalModelRequestFields"], `{"thinking": {"type": "enabled", "budget_tokens": 8000}}`)
	sameJSON(t, body["inferenceConfig"], `{"maxTokens": 12096}`) // the default room for the answer, beyond the budget
	nova := bedrockRequest(fp, next, &got)
	nova.Model = "amazon.nova-pro-v1:0"
	if _, err := provider.Complete(context.Background(), nova); err != nil {
		t.Fatal(err)
	}
	body = sentBody(t, fp, 3)
	sameJSON(t, body["messages"].([]any)[1], `{"role": "assistant", "content": [{"text": "Sunny."}]}`)
	if body["additionalModelRequestFields"] != nil || body["inferenceConfig"] != nil {
		t.Errorf("Claude's thinking went to Nova: %v", body)
	}
}

func TestBedrockJSONFormatIsAForcedTool(t *testing.T) {
	fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{ToolCalls: []fakeprovider.ToolCall{
		{Name: "forecast", Arguments: `{"c":18}`}}}}}})
	turn := provider.TextTurn("forecast?")
	turn.Params.ResponseFormat = &provider.ResponseFormat{Type: provider.FormatJSONSchema, Name: "forecast",
		Schema: json.RawMessage(`{"type":"object","properties":{"c":{"type":"number","maximum":12345678901234567890}}}`)}
	var got []seen
	resp, err := provider.Complete(context.Background(), bedrockRequest(fp, turn, &got))
	if err != nil {
		t.Fatal(err)
	}
	if a := resp.Answer; a.Text != `{"c":18}` || len(a.ToolCalls) != 0 || a.FinishReason != provider.FinishStop {
		t.Errorf("%+v", a)
	}
	if d := describe(got); !slices.Equal(d, []string{`text {"c":18}`}) {
		t.Errorf("deltas %q", d)
	}
	// The schema goes as it came, its numbers to the digit.
	calls := fp.Calls()
	if !strings.Contains(string(calls[0].Body), `"maximum":12345678901234567890`) {
		t.Errorf("the schema's number changed: %s", calls[0].Body)
	}
	sameJSON(t, sentBody(t, fp, 1)["toolConfig"], `{"tools": [{"toolSpec": {"name": "forecast",
		"description": "Give your answer as this tool's input: JSON matching its schema.",
		"inputSchema": {"json": {"type": "object", "properties": {"c": {"type": "number", "maximum": 12345678901234567890}}}}}}],
		"toolChoice": {"tool": {"name": "forecast"}}}`)
}

func TestBedrockToolChoiceNoneAndToolsGone(t *testing.T) {
	fp := bedrockStart(t, nil)
	tools := []provider.Tool{{Name: "get_weather"}}
	none := &provider.ToolChoice{Type: provider.ToolChoiceNone}
	history := []provider.Message{user("weather?"), assistant(call("c1", "get_weather", `{}`)), tool(result("c1", "18 C")), user("thanks")}
	for i, c := range []struct {
		name string
		turn provider.Turn
		want string // the toolConfig sent, "" for none
	}{
		{"none, nothing to call back: the tools stay out", provider.Turn{Messages: []provider.Message{user("hi")}, Tools: tools, ToolChoice: none}, ""},
		{"none, with tool blocks: the tools stay, the choice goes",
			provider.Turn{Messages: history, Tools: tools, ToolChoice: none},
			`{"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]}`},
		{"no tools, with tool blocks: the tools named, not to call",
			provider.Turn{Messages: history},
			`{"tools": [{"toolSpec": {"name": "get_weather", "description": "Not available in this turn: do not call it.", "inputSchema": {"json": {"type": "object"}}}}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []seen
			if _, err := provider.Complete(context.Background(), bedrockRequest(fp, c.turn, &got)); err != nil {
				t.Fatal(err)
			}
			body := sentBody(t, fp, i+1)
			if c.want == "" {
				if body["toolConfig"] != nil {
					t.Errorf("tools sent: %v", body["toolConfig"])
				}
				return
			}
			sameJSON(t, body["toolConfig"], c.want)
		})
	}
}

func TestBedrockConversationStartsWithTheUser(t *testing.T) {
	fp := bedrockStart(t, nil)
	var got []seen
	turn := provider.Turn{Messages: []provider.Message{system("be brief"), assistant("Hello! How can I help?"), user("the time?")}}
	if _, err := provider.Complete(context.Background(), bedrockRequest(fp, turn, &got)); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, sentBody(t, fp, 1)["messages"], `[
		{"role": "user", "content": [{"text": "(start of the conversation)"}]},
		{"role": "assistant", "content": [{"text": "Hello! How can I help?"}]},
		{"role": "user", "content": [{"text": "the time?"}]}]`)
}

func TestBedrockFinishReasons(t *testing.T) {
	for _, c := range []struct{ stop, want string }{
		{"max_tokens", provider.FinishLength}, {"stop_sequence", provider.FinishStop},
		{"guardrail_intervened", provider.FinishContentFilter}, {"content_filtered", provider.FinishContentFilter},
	} {
		fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "a b", Finish: c.stop}}}})
		var got []seen
		resp, err := provider.Complete(context.Background(), bedrockRequest(fp, provider.TextTurn("hi"), &got))
		if err != nil || resp.Answer.FinishReason != c.want || resp.Answer.Text != "a b" {
			t.Errorf("%s: %+v %v", c.stop, resp.Answer, err)
		}
	}
}

func TestBedrockModelIDsArePathEscaped(t *testing.T) {
	fp := bedrockStart(t, nil)
	for _, model := range []string{"us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-5-20250929-v1:0"} {
		var got []seen
		req := bedrockRequest(fp, provider.TextTurn("hi"), &got)
		req.Model = model
		if _, err := provider.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if calls := fp.Calls(); calls[len(calls)-1].Model != model {
			t.Errorf("the fake read model %q, want %q", calls[len(calls)-1].Model, model)
		}
	}
}

func TestBedrockFaults(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog"
	cases := []struct {
		name  string
		resp  fakeprovider.Response
		check func(t *testing.T, e *provider.Error)
	}{
		{"a reset before headers", fakeprovider.Response{Reset: true}, func(t *testing.T, e *provider.Error) {
			if e.Status != 0 || e.Net != "reset" && e.Net != "eof" || bedrockReason(e) != policy.ReasonTimeout {
				t.Errorf("%+v", e)
			}
		}},
		{"no headers within the response timeout", fakeprovider.Response{DelayMs: 2000, Text: text}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultResponseTimeout || e.Partial {
				t.Errorf("%+v", e)
			}
		}},
		{"a cut", fakeprovider.Response{Text: text, CutAfterChunks: intp(3)}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultCut || !e.Partial || e.PartialText != "the quick brown " || !strings.Contains(e.Message, "no messageStop") ||
				bedrockReason(e) != policy.ReasonTimeout {
				t.Errorf("%+v", e)
			}
		}},
		{"a cut after every chunk, before messageStop", fakeprovider.Response{Text: "a b", CutAfterChunks: intp(2)}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultCut || e.PartialText != "a b" {
				t.Errorf("%+v", e)
			}
		}},
		{"a cut mid-call hands out nothing of it", fakeprovider.Response{ToolCalls: []fakeprovider.ToolCall{{Name: "f", Arguments: `{"a":"bcdefghijk"}`}}, CutAfterChunks: intp(2)},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultCut || e.PartialToolCalls != 0 {
					t.Errorf("%+v", e)
				}
			}},
		{"a stall", fakeprovider.Response{Text: text, StallAfterChunks: intp(2), StallMs: 3000}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultStall || !e.Partial || e.PartialText != "the quick " {
				t.Errorf("%+v", e)
			}
		}},
		{"a malformed frame", fakeprovider.Response{Text: text, MalformedChunk: intp(2)}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultMalformed || e.PartialText != "the " || bedrockReason(e) != policy.ReasonTimeout {
				t.Errorf("%+v", e)
			}
		}},
		{"a 200 with nothing", fakeprovider.Response{Empty: true}, func(t *testing.T, e *provider.Error) {
			if e.Stream != provider.FaultEmpty || bedrockReason(e) != policy.ReasonEmptyResponse {
				t.Errorf("%+v", e)
			}
		}},
		{"an exception first", fakeprovider.Response{Text: text, StreamError: json.RawMessage(`{"__type":"ThrottlingException","message":"Too many requests, please wait before trying again."}`)},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultInBandError || e.Type != "ThrottlingException" || e.PartialText != "" || bedrockReason(e) != policy.ReasonRateLimit {
					t.Errorf("%+v", e)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{c.resp}}})
			var got []seen
			resp, err := provider.Complete(context.Background(), bedrockRequest(fp, provider.TextTurn("hi"), &got))
			var e *provider.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %+v, %v; want a *provider.Error", resp, err)
			}
			if resp.Answer.Text != "" {
				t.Errorf("partial text returned: %q", resp.Answer.Text)
			}
			c.check(t, e)
			noSecret(t, err)
		})
	}
}

// Bedrock's exceptions mid-answer, as exception frames: each is an in-band error that keeps what
// was handed out, classified by its name.
func TestBedrockInBandExceptions(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog"
	for _, c := range []struct {
		err, typ, code string
		reason         policy.Reason
	}{
		{`{"__type":"ThrottlingException","message":"Too many tokens, please wait before trying again."}`, "ThrottlingException", "THROTTLINGEXCEPTION", policy.ReasonRateLimit},
		{`{"__type":"com.amazon.bedrock#ServiceUnavailableException","message":"Bedrock is unable to process your request."}`, "ServiceUnavailableException", "OVERLOADED", policy.ReasonOverloaded},
		{`{"__type":"InternalServerException","message":"The system encountered an unexpected error during processing. Try your request again."}`, "InternalServerException", "SERVER_ERROR", policy.ReasonTimeout},
		{`{"__type":"ModelStreamErrorException","message":"The model stream failed.","originalStatusCode":500,"originalMessage":"Internal server error"}`, "ModelStreamErrorException", "SERVER_ERROR", policy.ReasonTimeout},
		// The model's own 529, relayed: the model is overloaded.
		{`{"__type":"ModelStreamErrorException","message":"The model stream failed.","originalStatusCode":529,"originalMessage":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}`, "ModelStreamErrorException", "OVERLOADED", policy.ReasonOverloaded},
		{`{"__type":"ValidationException","message":"The model returned the following errors: prompt is too long: 210000 tokens > 200000 maximum"}`, "ValidationException", "CONTEXT_LENGTH_EXCEEDED", policy.ReasonContextOverflow},
		{`{"__type":"ValidationException","message":"The model returned the following errors: messages.1.content: a text block must not be empty"}`, "ValidationException", "UNKNOWN_PARAMETER", policy.ReasonFormat},
	} {
		t.Run(c.typ+" "+c.code, func(t *testing.T) {
			fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: text, StreamError: json.RawMessage(c.err), StreamErrorAfterChunks: intp(3)}}}})
			var got []seen
			resp, err := provider.Complete(context.Background(), bedrockRequest(fp, provider.TextTurn("hi"), &got))
			var e *provider.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %+v, %v; want a *provider.Error", resp, err)
			}
			var want struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal([]byte(c.err), &want)
			if e.Stream != provider.FaultInBandError || e.Status != 0 || e.Type != c.typ || e.Code != c.code || e.Message != want.Message ||
				!e.Partial || e.PartialText != "the quick brown " {
				t.Errorf("%+v (partial text %q)", e, e.PartialText)
			}
			if r := bedrockReason(e); r != c.reason {
				t.Errorf("classified %s, want %s", r, c.reason)
			}
		})
	}
}

// Bedrock's HTTP errors, as Bedrock sends them: the exception named in x-amzn-ErrorType (or in the
// body's __type), the words in {"message": …}.
func TestBedrockErrorShapes(t *testing.T) {
	header := func(name string) map[string]string {
		return map[string]string{"x-amzn-ErrorType": name + ":http://internal.amazon.com/coral/com.amazon.bedrock/"}
	}
	msg := func(s string) string { return `{"message":"` + s + `"}` }
	for _, c := range []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		typ     string
		code    string
		reason  policy.Reason
	}{
		{"throttled", 429, header("ThrottlingException"), msg("Too many requests, please wait before trying again."), "ThrottlingException", "THROTTLINGEXCEPTION", policy.ReasonRateLimit},
		{"throttled, with Retry-After", 429, map[string]string{"x-amzn-ErrorType": "ThrottlingException", "Retry-After": "7"}, msg("Too many tokens, please wait before trying again."),
			"ThrottlingException", "THROTTLINGEXCEPTION", policy.ReasonRateLimit},
		{"a quota, on a 400", 400, header("ServiceQuotaExceededException"), msg("Your request exceeded the service quota for your account. You can view your service quotas at https://docs.aws.amazon.com/servicequotas/latest/userguide/gs-request-quota.html"),
			"ServiceQuotaExceededException", "RESOURCE_EXHAUSTED", policy.ReasonRateLimit},
		{"a quota, on a 429", 429, header("ServiceQuotaExceededException"), msg("Your request exceeded the service quota for your account."),
			"ServiceQuotaExceededException", "RESOURCE_EXHAUSTED", policy.ReasonRateLimit},
		// A busy model, in the seeds' words, though a 429.
		{"a model not ready", 429, header("ModelNotReadyException"), msg("Model is not ready for inference. Wait and try your request again. Refer to https://docs.aws.amazon.com/bedrock/latest/userguide/invoke-imported-model.html#handle-model-not-ready-exception."),
			"ModelNotReadyException", "OVERLOADED", policy.ReasonOverloaded},
		{"unavailable", 503, header("ServiceUnavailableException"), msg("Bedrock is unable to process your request."), "ServiceUnavailableException", "OVERLOADED", policy.ReasonOverloaded},
		{"unavailable, too many requests", 503, header("ServiceUnavailableException"), msg("Too many requests, please wait before trying again."), "ServiceUnavailableException", "OVERLOADED", policy.ReasonRateLimit},
		{"a server error", 500, header("InternalServerException"), msg("The system encountered an unexpected error during processing. Try your request again."),
			"InternalServerException", "SERVER_ERROR", policy.ReasonTimeout},
		{"a model timeout", 408, header("ModelTimeoutException"), msg("Model has timed out in processing the request. Try your request again."), "ModelTimeoutException", "SERVER_ERROR", policy.ReasonTimeout},
		{"a model error", 424, header("ModelErrorException"), msg("The system encountered an unexpected error during processing. Try your request again."), "ModelErrorException", "SERVER_ERROR", policy.ReasonTimeout},
		{"no access to the model", 403, header("AccessDeniedException"), msg("You don't have access to the model with the specified model ID."), "AccessDeniedException", "INVALID_API_KEY", policy.ReasonAuth},
		{"an unknown key, named by __type only", 403, nil, `{"__type":"com.amazon.coral.service#UnrecognizedClientException","Message":"The security token included in the request is invalid."}`,
			"UnrecognizedClientException", "INVALID_API_KEY", policy.ReasonAuth},
		{"an expired session", 403, header("ExpiredTokenException"), msg("The security token included in the request is expired"), "ExpiredTokenException", "INVALID_API_KEY", policy.ReasonAuth},
		{"a wrong secret key", 403, header("InvalidSignatureException"), msg("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."),
			"InvalidSignatureException", "INVALID_API_KEY", policy.ReasonAuth},
		{"no such model", 404, header("ResourceNotFoundException"), msg("Model not found."), "ResourceNotFoundException", "MODEL_NOT_FOUND", policy.ReasonModelNotFound},
		{"an invalid model id", 400, header("ValidationException"), msg("The provided model identifier is invalid."), "ValidationException", "MODEL_NOT_FOUND", policy.ReasonModelNotFound},
		{"on demand not served", 400, header("ValidationException"), msg("Invocation of model ID anthropic.claude-sonnet-4-5-20250929-v1:0 with on-demand throughput isn’t supported. Retry your request with the ID or ARN of an inference profile that contains this model."),
			"ValidationException", "MODEL_NOT_FOUND", policy.ReasonModelNotFound},
		{"input too long", 400, header("ValidationException"), msg("Input is too long for requested model."), "ValidationException", "CONTEXT_LENGTH_EXCEEDED", policy.ReasonContextOverflow},
		{"too many input tokens", 400, header("ValidationException"), msg("Too many input tokens. Max input tokens: 8192, request input token count: 9001"), "ValidationException", "CONTEXT_LENGTH_EXCEEDED", policy.ReasonContextOverflow},
		{"prompt too long", 400, header("ValidationException"), msg("The model returned the following errors: prompt is too long: 210000 tokens > 200000 maximum"), "ValidationException", "CONTEXT_LENGTH_EXCEEDED", policy.ReasonContextOverflow},
		{"over the context limit", 400, header("ValidationException"), msg("The model returned the following errors: input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again"),
			"ValidationException", "CONTEXT_LENGTH_EXCEEDED", policy.ReasonContextOverflow},
		{"a malformed request", 400, header("ValidationException"), msg("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again."),
			"ValidationException", "UNKNOWN_PARAMETER", policy.ReasonFormat},
		{"a gateway's page", 502, nil, "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", "", "", policy.ReasonTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Status: c.status, Headers: c.headers, Body: c.body}}}})
			var got []seen
			resp, err := provider.Complete(context.Background(), bedrockRequest(fp, provider.TextTurn("hi"), &got))
			var e *provider.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %+v, %v; want a *provider.Error", resp, err)
			}
			var body struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal([]byte(c.body), &body)
			if e.Status != c.status || e.Type != c.typ || e.Code != c.code || e.Stream != "" || e.Partial || (body.Message != "" && e.Message != body.Message) {
				t.Errorf("%+v", e)
			}
			if r := bedrockReason(e); r != c.reason {
				t.Errorf("classified %s, want %s", r, c.reason)
			}
			if ra := c.headers["Retry-After"]; ra != "" && (e.Headers["retry-after"] != ra || !e.Retry.HasAfter || e.Retry.After != 7*time.Second) {
				t.Errorf("Retry-After lost: %+v", e)
			}
			// One call: the SDK does not retry (the workflow does).
			if n := len(fp.Calls()); n != 1 {
				t.Errorf("%d calls", n)
			}
		})
	}
}

func TestBedrockSignsWithSigV4AndKeepsTheSecret(t *testing.T) {
	// A gateway that echoes the credentials back: the secrets are masked in the error.
	echo := `{"message":"The security token included in the request is invalid: ` + awsSecret + ` ` + awsSession + `"}`
	fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "ok"}, {Status: 403, Body: echo,
		Headers: map[string]string{"x-amzn-ErrorType": "UnrecognizedClientException"}}}}})
	sent := &sentRequest{}
	var got []seen
	req := bedrockRequest(fp, provider.TextTurn("hi"), &got)
	req.HTTPClient = &http.Client{Transport: sent}
	req.Headers = map[string]string{"X-Gateway-Route": "eu-pool"}
	req.Query = map[string]string{"tenant": "acme"}
	if _, err := provider.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r := sent.last(t)
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+awsKeyID+"/") || !strings.Contains(auth, "/"+bedrockRegion+"/bedrock/aws4_request") {
		t.Errorf("Authorization %q", auth)
	}
	// The provider's header and query went, and under the signature.
	if r.Header.Get("X-Gateway-Route") != "eu-pool" || r.URL.Query().Get("tenant") != "acme" || !strings.Contains(auth, "x-gateway-route") {
		t.Errorf("headers %v, query %q", r.Header, r.URL.RawQuery)
	}
	if r.Header.Get("X-Amz-Security-Token") != awsSession || r.Header.Get("X-Amz-Date") == "" {
		t.Errorf("headers %v", r.Header)
	}
	if strings.Contains(auth, awsSecret) || strings.Contains(string(sent.body[0]), awsSecret) {
		t.Error("the secret access key went on the wire")
	}
	if c := fp.Calls()[0]; c.Profile != bedrockProfile {
		t.Errorf("the fake read profile %q", c.Profile)
	}

	_, err := provider.Complete(context.Background(), req)
	var e *provider.Error
	if !errors.As(err, &e) || e.Status != 403 || bedrockReason(e) != policy.ReasonAuth {
		t.Fatalf("%v", err)
	}
	noSecret(t, err)
}

func TestBedrockAPIKeyGoesAsABearer(t *testing.T) {
	fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "ok"},
		{Status: 403, Headers: map[string]string{"x-amzn-ErrorType": "AccessDeniedException"}, Body: `{"message":"Invalid API key: ` + bedrockAPIKey + `"}`}}}})
	sent := &sentRequest{}
	var got []seen
	req := bedrockRequest(fp, provider.TextTurn("hi"), &got)
	req.Credential = provider.Credential{Type: "api_key", Key: bedrockAPIKey}
	req.Region = "" // a base URL is enough for a bearer
	req.HTTPClient = &http.Client{Transport: sent}
	req.Headers = map[string]string{"X-Gateway-Route": "eu-pool"}
	if _, err := provider.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r := sent.last(t)
	if r.Header.Get("Authorization") != "Bearer "+bedrockAPIKey || r.Header.Get("X-Amz-Security-Token") != "" || r.Header.Get("X-Gateway-Route") != "eu-pool" {
		t.Errorf("headers %v", r.Header)
	}
	if c := fp.Calls()[0]; c.Profile != bedrockKeyOwner {
		t.Errorf("the fake read profile %q", c.Profile)
	}
	_, err := provider.Complete(context.Background(), req)
	var e *provider.Error
	if !errors.As(err, &e) || bedrockReason(e) != policy.ReasonAuth {
		t.Fatalf("%v", err)
	}
	noSecret(t, err)
}

// The ambient credential is the AWS default chain's: here, the environment's keys.
func TestBedrockAmbientCredentials(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	t.Setenv("AWS_PROFILE", "")
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	fp := bedrockStart(t, nil)

	// No credential anywhere in the chain: auth, and nothing sent.
	var got []seen
	req := bedrockRequest(fp, provider.TextTurn("hi"), &got)
	req.Credential, req.Region = provider.Credential{Type: provider.CredentialAmbient}, "ap-south-2"
	_, err := provider.Complete(context.Background(), req)
	var e *provider.Error
	if !errors.As(err, &e) || e.Code != "INVALID_API_KEY" || bedrockReason(e) != policy.ReasonAuth || len(fp.Calls()) != 0 {
		t.Fatalf("%v (%+v)", err, e)
	}

	// The environment's keys, and its region when the provider names none.
	t.Setenv("AWS_ACCESS_KEY_ID", awsKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsSecret)
	t.Setenv("AWS_REGION", "ca-west-1")
	sent := &sentRequest{}
	req.HTTPClient, req.Region = &http.Client{Transport: sent}, ""
	if _, err := provider.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if auth := sent.last(t).Header.Get("Authorization"); !strings.Contains(auth, "Credential="+awsKeyID+"/") || !strings.Contains(auth, "/ca-west-1/bedrock/") {
		t.Errorf("Authorization %q", auth)
	}

	// An API key in the environment does not displace a profile's own key pair.
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSKenvironment-token")
	keys := bedrockRequest(fp, provider.TextTurn("hi"), &got)
	keys.HTTPClient = &http.Client{Transport: sent}
	if _, err := provider.Complete(context.Background(), keys); err != nil {
		t.Fatal(err)
	}
	if auth := sent.last(t).Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+awsKeyID) {
		t.Errorf("Authorization %q", auth)
	}
}

func TestBedrockSettingsThatCannotCall(t *testing.T) {
	fp := bedrockStart(t, nil)
	var got []seen
	for _, c := range []struct {
		name   string
		set    func(*provider.Request)
		reason policy.Reason
	}{
		{"a key pair without its secret", func(r *provider.Request) { r.Credential.SecretAccessKey = "" }, policy.ReasonAuth},
		{"an API key without the key", func(r *provider.Request) { r.Credential = provider.Credential{Type: "api_key"} }, policy.ReasonAuth},
		{"no region to sign for", func(r *provider.Request) { r.Region = "" }, policy.ReasonNone},
		{"an OAuth credential", func(r *provider.Request) { r.Credential = provider.Credential{Type: "oauth", Access: "x"} }, policy.ReasonNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := bedrockRequest(fp, provider.TextTurn("hi"), &got)
			c.set(&req)
			_, err := provider.Complete(context.Background(), req)
			var e *provider.Error
			if !errors.As(err, &e) || e.Status != 0 || e.Net != "" || bedrockReason(e) != c.reason || !strings.HasPrefix(e.Message, "bedrock: ") {
				t.Errorf("%v (%+v)", err, e)
			}
		})
	}
	if n := len(fp.Calls()); n != 0 {
		t.Errorf("%d calls went out", n)
	}
}

func TestBedrockPrefill(t *testing.T) {
	const fox = "The quick brown fox jumps over the lazy dog."
	for _, c := range []struct {
		name, continuation, want, last string
	}{
		{"a final assistant message", provider.ContinuePrefill, " fox jumps over the lazy dog.",
			`{"role": "assistant", "content": [{"text": "The quick brown"}]}`},
		// The fake's model does not follow instructions: it answers from scratch.
		{"followed by an instruction", provider.ContinueInstruction, fox,
			`{"role": "user", "content": [{"text": "Continue your previous answer exactly where it stopped. Do not repeat any of it, and do not add any preamble."}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: fox, Prefill: "honour"}}}})
			var got []seen
			req := bedrockRequest(fp, provider.TextTurn("say the pangram"), &got)
			req.Prefill, req.Continuation = "The quick brown ", c.continuation
			resp, err := provider.Complete(context.Background(), req)
			if err != nil || resp.Answer.Text != c.want {
				t.Fatalf("%+v %v, want %q", resp.Answer, err, c.want)
			}
			msgs := sentBody(t, fp, 1)["messages"].([]any)
			sameJSON(t, msgs[len(msgs)-1], c.last)
		})
	}

	t.Run("rejected", func(t *testing.T) {
		fp := bedrockStart(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: fox, Prefill: "reject"}}}})
		var got []seen
		req := bedrockRequest(fp, provider.TextTurn("say the pangram"), &got)
		req.Prefill = "The quick brown "
		_, err := provider.Complete(context.Background(), req)
		var e *provider.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Type != "ValidationException" || !policy.IsPrefillRejection(e.Status, e.Message) ||
			bedrockReason(e) != policy.ReasonFormat || fp.Calls()[0].Prefill != "rejected" {
			t.Errorf("%+v", e)
		}
	})
}

// frame is one event-stream message of a raw Bedrock stream.
type frame struct {
	kind    string // event | exception
	name    string // the event or exception type
	payload string
}

func event(name, payload string) frame { return frame{"event", name, payload} }

// serveFrames answers every call with the frames, encoded as Bedrock encodes them.
func serveFrames(t *testing.T, frames ...frame) *httptest.Server {
	t.Helper()
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, f := range frames {
		typ := ":event-type"
		if f.kind == "exception" {
			typ = ":exception-type"
		}
		msg := eventstream.Message{Headers: eventstream.Headers{
			{Name: typ, Value: eventstream.StringValue(f.name)},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue(f.kind)},
		}, Payload: []byte(f.payload)}
		if err := enc.Encode(&b, msg); err != nil {
			t.Fatal(err)
		}
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(b.Bytes())
	}))
	t.Cleanup(s.Close)
	return s
}

func rawBedrock(t *testing.T, frames ...frame) (provider.Response, []seen, error) {
	t.Helper()
	s := serveFrames(t, frames...)
	var got []seen
	req := bedrockRequest(nil, provider.TextTurn("hi"), &got)
	req.BaseURL = s.URL
	resp, err := provider.Complete(context.Background(), req)
	return resp, got, err
}

func TestBedrockOddStreams(t *testing.T) {
	begin := event("messageStart", `{"role":"assistant"}`)
	text := func(i int, s string) frame {
		return event("contentBlockDelta", `{"contentBlockIndex":`+itoa(i)+`,"delta":{"text":`+quote(s)+`}}`)
	}
	stop := func(i int) frame { return event("contentBlockStop", `{"contentBlockIndex":`+itoa(i)+`}`) }
	end := func(reason string) frame { return event("messageStop", `{"stopReason":"`+reason+`"}`) }
	meta := event("metadata", `{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":1005,"cacheReadInputTokens":600,"cacheWriteInputTokens":400},"metrics":{"latencyMs":5}}`)
	toolStart := func(i int, id, name string) frame {
		return event("contentBlockStart", `{"contentBlockIndex":`+itoa(i)+`,"start":{"toolUse":{"toolUseId":"`+id+`","name":"`+name+`"}}}`)
	}
	toolInput := func(i int, s string) frame {
		return event("contentBlockDelta", `{"contentBlockIndex":`+itoa(i)+`,"delta":{"toolUse":{"input":`+quote(s)+`}}}`)
	}
	for _, c := range []struct {
		name   string
		frames []frame
		check  func(t *testing.T, a provider.Answer, got []seen, err error)
	}{
		{"usage with cache reads and writes", []frame{begin, text(0, "ok"), stop(0), end("end_turn"), meta},
			func(t *testing.T, a provider.Answer, _ []seen, err error) {
				if err != nil || a.Usage != (provider.Usage{Input: 1003, Output: 2, CachedInput: 600, CacheWrite: 400}) {
					t.Errorf("%+v %v", a, err)
				}
			}},
		{"no metadata after messageStop", []frame{begin, text(0, "ok"), stop(0), end("end_turn")},
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultCut || !strings.Contains(e.Message, "no metadata") || e.PartialText != "ok" {
					t.Errorf("%v", err)
				}
			}},
		{"redacted reasoning", []frame{begin,
			event("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"`+base64.StdEncoding.EncodeToString([]byte("opaque"))+`"}}}`),
			stop(0), text(1, "ok"), stop(1), end("end_turn"), meta},
			func(t *testing.T, a provider.Answer, got []seen, err error) {
				want := provider.Part{Type: provider.PartReasoning, Redacted: base64.StdEncoding.EncodeToString([]byte("opaque"))}
				if err != nil || len(a.Reasoning) != 1 || !reflectEqual(a.Reasoning[0], want) || got[0].ReasoningPart == nil || got[0].ReasoningPart.Redacted != want.Redacted {
					t.Errorf("%+v %v %v", a, got, err)
				}
			}},
		{"a call without its contentBlockStop goes out at messageStop", []frame{begin, toolStart(0, "t1", "f"), toolInput(0, `{"x"`), toolInput(0, `:1}`), end("tool_use"), meta},
			func(t *testing.T, a provider.Answer, got []seen, err error) {
				if d := describe(got); err != nil || !slices.Equal(d, []string{`call t1 f {"x":1}`}) || got[0].chunks != 5 || a.FinishReason != provider.FinishToolCalls {
					t.Errorf("%q %+v %v", d, a, err)
				}
			}},
		{"arguments after the call was handed out", []frame{begin, toolStart(0, "t1", "f"), toolInput(0, `{}`), stop(0), toolInput(0, `{"late":1}`), end("tool_use"), meta},
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultMalformed || e.PartialToolCalls != 1 {
					t.Errorf("%v", err)
				}
			}},
		{"an event type of the future is read past", []frame{begin, event("citationsDelta", `{"x":1}`), text(0, "ok"), stop(0), end("end_turn"), meta},
			func(t *testing.T, a provider.Answer, _ []seen, err error) {
				if err != nil || a.Text != "ok" {
					t.Errorf("%+v %v", a, err)
				}
			}},
		{"an exception the stream does not declare", []frame{begin, text(0, "so far"),
			{"exception", "accessDeniedException", `{"message":"You don't have access to the model with the specified model ID."}`}},
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Stream != provider.FaultInBandError || e.Type != "AccessDeniedException" || e.PartialText != "so far" || bedrockReason(e) != policy.ReasonAuth {
					t.Errorf("%+v", e)
				}
			}},
		{"a model stream error with the model's 429", []frame{begin,
			{"exception", "modelStreamErrorException", `{"message":"The model stream failed.","originalStatusCode":429,"originalMessage":"rate limited"}`}},
			func(t *testing.T, _ provider.Answer, _ []seen, err error) {
				var e *provider.Error
				if !errors.As(err, &e) || e.Code != "THROTTLINGEXCEPTION" || !strings.Contains(e.BodyPreview, "rate limited") || bedrockReason(e) != policy.ReasonRateLimit {
					t.Errorf("%+v", e)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, got, err := rawBedrock(t, c.frames...)
			c.check(t, resp.Answer, got, err)
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// A connection reset under the stream, mid-answer: a cut that keeps what was handed out.
func TestBedrockConnectionResetMidStream(t *testing.T) {
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, f := range []frame{event("messageStart", `{"role":"assistant"}`),
		event("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"so far"}}`)} {
		_ = enc.Encode(&b, eventstream.Message{Headers: eventstream.Headers{
			{Name: ":event-type", Value: eventstream.StringValue(f.name)},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("event")},
		}, Payload: []byte(f.payload)})
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(b.Bytes())
		w.(http.Flusher).Flush()
		time.Sleep(50 * time.Millisecond)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
		_ = conn.Close()
	}))
	t.Cleanup(s.Close)
	var got []seen
	req := bedrockRequest(nil, provider.TextTurn("hi"), &got)
	req.BaseURL = s.URL
	_, err := provider.Complete(context.Background(), req)
	var e *provider.Error
	if !errors.As(err, &e) || e.Stream != provider.FaultCut || !e.Partial || e.PartialText != "so far" || bedrockReason(e) != policy.ReasonTimeout {
		t.Errorf("%v (%+v)", err, e)
	}
}

// A streamed 1,000-token answer through the Bedrock adapter, as BenchmarkStream1000Tokens does for
// the others: the plain read decodes the same frames with the event-stream decoder and
// encoding/json, so overhead-ns/chunk is what the SDK's reader and the adapter add per chunk.
func BenchmarkBedrockStream1000Tokens(b *testing.B) {
	fp := benchFake(b)
	req := provider.Request{Provider: "bedrock", API: provider.APIBedrockConverse, Model: bedrockModel, BaseURL: fp.BedrockBaseURL("bedrock"),
		Region: bedrockRegion, Credential: provider.Credential{Type: provider.CredentialAWSKeys, AccessKeyID: awsKeyID, SecretAccessKey: awsSecret},
		Turn: provider.TextTurn("go")}
	var adapter, raw time.Duration
	chunks := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		resp, err := provider.Complete(context.Background(), req)
		adapter += time.Since(t0)
		if err != nil || len(resp.Answer.Text) != len(benchText) {
			b.Fatalf("%v (%d bytes)", err, len(resp.Answer.Text))
		}
		chunks += resp.Chunks
		t1 := time.Now()
		readFrames(b, fp.BedrockBaseURL("bedrock")+"/model/m/converse-stream")
		raw += time.Since(t1)
	}
	b.ReportMetric(float64(adapter.Nanoseconds())/float64(chunks), "ns/chunk")
	b.ReportMetric(float64((adapter-raw).Nanoseconds())/float64(chunks), "overhead-ns/chunk")
}

func readFrames(b *testing.B, url string) {
	r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"messages":[{"role":"user","content":[{"text":"go"}]}]}`))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+awsKeyID+"/20250101/"+bedrockRegion+"/bedrock/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	dec := eventstream.NewDecoder()
	var chunk struct {
		Delta struct {
			Text string `json:"text"`
		} `json:"delta"`
	}
	var buf []byte
	for {
		msg, err := dec.Decode(resp.Body, buf)
		if err != nil {
			return
		}
		_ = json.Unmarshal(msg.Payload, &chunk)
	}
}
