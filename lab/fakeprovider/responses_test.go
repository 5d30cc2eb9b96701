package fakeprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

func responsesParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: "gpt-5",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather in Zürich?")},
		Tools: []responses.ToolUnionParam{
			{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Strict: openai.Bool(false)}},
			{OfFunction: &responses.FunctionToolParam{Name: "get_time", Strict: openai.Bool(false)}},
		},
	}
}

// checkResponse checks what the SDK made of the scripted answer: a reasoning item, the text, two
// calls, usage with cached and reasoning tokens.
func checkResponse(t *testing.T, r responses.Response) {
	t.Helper()
	if r.Status != "completed" || r.OutputText() != "let me check" || len(r.Output) != 4 {
		t.Fatalf("status %q text %q output %+v", r.Status, r.OutputText(), r.Output)
	}
	if it := r.Output[0].AsReasoning(); it.ID != reasoningItemID || it.EncryptedContent != "sig-abc" ||
		len(it.Summary) != 1 || it.Summary[0].Text != "the user wants weather" {
		t.Errorf("reasoning item %+v", it)
	}
	for i, want := range []ToolCall{toolCalls[0], {ID: "call_time_2", Name: "get_time", Arguments: "{}"}} {
		fc := r.Output[2+i].AsFunctionCall()
		if fc.CallID != want.ID || fc.Name != want.Name || fc.Arguments != want.Arguments || fc.ID != fmt.Sprintf("fc_fake_%d", i+1) {
			t.Errorf("call %d: %+v", i, fc)
		}
	}
	if u := r.Usage; u.InputTokens != 100 || u.OutputTokens != 20 || u.InputTokensDetails.CachedTokens != 64 || u.OutputTokensDetails.ReasoningTokens != 4 {
		t.Errorf("usage %+v", u)
	}
}

func TestResponsesReachTheSDK(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
			fp := startFake(t, []Rule{{Respond: []Response{{Thinking: "the user wants weather", Signature: "sig-abc", Text: "let me check",
				ToolCalls: toolCalls, Usage: &Usage{Input: 100, Output: 20, Cached: 64}}}}})
			client := openAIClient(fp)
			if !stream {
				r, err := client.Responses.New(context.Background(), responsesParams())
				if err != nil {
					t.Fatal(err)
				}
				checkResponse(t, *r)
			} else {
				s := client.Responses.NewStreaming(context.Background(), responsesParams())
				var text, reasoning strings.Builder
				args := map[string]string{}
				var last responses.ResponseStreamEventUnion
				n := int64(0)
				for ; s.Next(); n++ {
					ev := s.Current()
					if ev.SequenceNumber != n {
						t.Errorf("event %d (%s) has sequence_number %d", n, ev.Type, ev.SequenceNumber)
					}
					switch ev.Type {
					case "response.output_text.delta":
						text.WriteString(ev.Delta)
					case "response.reasoning_summary_text.delta":
						reasoning.WriteString(ev.Delta)
					case "response.function_call_arguments.delta":
						args[ev.ItemID] += ev.Delta
					}
					last = ev
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				if text.String() != "let me check" || reasoning.String() != "the user wants weather" ||
					args["fc_fake_1"] != toolCalls[0].Arguments || args["fc_fake_2"] != "{}" {
					t.Errorf("deltas: text %q reasoning %q args %q", text.String(), reasoning.String(), args)
				}
				if last.Type != "response.completed" {
					t.Fatalf("the stream ends with %s", last.Type)
				}
				checkResponse(t, last.Response)
			}
			calls := fp.Calls()
			if len(calls) != 1 || calls[0].Provider != "openai" || calls[0].Outcome != "tool calls" || calls[0].Tools != 2 || calls[0].Stream != stream {
				t.Errorf("calls %+v", calls)
			}
			var body struct {
				Input string `json:"input"`
			}
			if err := json.Unmarshal(calls[0].Body, &body); err != nil || body.Input != "weather in Zürich?" {
				t.Errorf("recorded body %s: %v", calls[0].Body, err)
			}
		})
	}
}

// sseEvent is one event of a raw stream: its name and its data.
type sseEvent struct {
	name string
	data map[string]any
}

func (e sseEvent) String() string { return e.name }

// readEvents reads a raw Responses stream, checking that each event is named for its type and
// numbered in order.
func readEvents(t *testing.T, raw string) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, frame := range strings.Split(strings.TrimSpace(raw), "\n\n") {
		name, data, ok := strings.Cut(frame, "\n")
		name, _ = strings.CutPrefix(name, "event: ")
		data, _ = strings.CutPrefix(data, "data: ")
		var ev map[string]any
		if !ok || json.Unmarshal([]byte(data), &ev) != nil {
			t.Fatalf("frame %q", frame)
		}
		if ev["type"] != name || ev["sequence_number"] != float64(len(out)) {
			t.Errorf("event %d: named %q, data %s", len(out), name, data)
		}
		out = append(out, sseEvent{name, ev})
	}
	return out
}

func TestResponsesStreamsEndAsScripted(t *testing.T) {
	rateLimit := json.RawMessage(`{"code":"rate_limit_exceeded","message":"Rate limit reached"}`)
	overloaded := json.RawMessage(`{"type":"overloaded_error","message":"Overloaded"}`)
	cases := []struct {
		name   string
		resp   Response
		events string // the names after response.created and response.in_progress, joined
		check  func(t *testing.T, last map[string]any)
	}{
		{name: "completed", resp: Response{Text: "a b", Finish: "stop"},
			events: "response.output_item.added response.content_part.added response.output_text.delta response.output_text.delta " +
				"response.output_text.done response.content_part.done response.output_item.done response.completed",
			check: func(t *testing.T, last map[string]any) {
				r := last["response"].(map[string]any)
				if r["status"] != "completed" || r["usage"].(map[string]any)["output_tokens"] != 2.0 {
					t.Errorf("%v", r)
				}
			}},
		{name: "cut after a text delta", resp: Response{Text: "a b", CutAfterChunks: intp(1)},
			events: "response.output_item.added response.content_part.added response.output_text.delta"},
		{name: "cut after a call opened", resp: Response{ToolCalls: toolCalls[1:], CutAfterChunks: intp(1)},
			events: "response.output_item.added"},
		{name: "an error event first", resp: Response{Text: "a b", StreamError: rateLimit},
			events: "error",
			check: func(t *testing.T, last map[string]any) {
				if last["code"] != "rate_limit_exceeded" || last["message"] != "Rate limit reached" {
					t.Errorf("%v", last)
				}
			}},
		{name: "an error event mid-answer, its type as the code", resp: Response{Text: "a b", StreamError: overloaded, StreamErrorAfterChunks: intp(1)},
			events: "response.output_item.added response.content_part.added response.output_text.delta error",
			check: func(t *testing.T, last map[string]any) {
				if last["code"] != "overloaded_error" || last["message"] != "Overloaded" {
					t.Errorf("%v", last)
				}
			}},
		{name: "response.failed mid-answer", resp: Response{Text: "a b", Finish: "failed", StreamError: rateLimit, StreamErrorAfterChunks: intp(1)},
			events: "response.output_item.added response.content_part.added response.output_text.delta response.failed",
			check: func(t *testing.T, last map[string]any) {
				r := last["response"].(map[string]any)
				if r["status"] != "failed" || r["error"].(map[string]any)["code"] != "rate_limit_exceeded" {
					t.Errorf("%v", r)
				}
			}},
		{name: "response.failed at the end, a server error", resp: Response{ToolCalls: toolCalls[1:], Finish: "failed"},
			events: "response.output_item.added response.function_call_arguments.delta response.function_call_arguments.done " +
				"response.output_item.done response.failed",
			check: func(t *testing.T, last map[string]any) {
				r := last["response"].(map[string]any)
				if r["error"].(map[string]any)["code"] != "server_error" || len(r["output"].([]any)) != 1 {
					t.Errorf("%v", r)
				}
			}},
		{name: "incomplete at the length limit", resp: Response{Text: "a", Finish: "length"},
			events: "response.output_item.added response.content_part.added response.output_text.delta response.output_text.done " +
				"response.content_part.done response.output_item.done response.incomplete",
			check: func(t *testing.T, last map[string]any) {
				r := last["response"].(map[string]any)
				if r["status"] != "incomplete" || r["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" {
					t.Errorf("%v", r)
				}
			}},
		{name: "a reasoning item before the text", resp: Response{Thinking: "hm", Text: "a"},
			events: "response.output_item.added response.reasoning_summary_part.added response.reasoning_summary_text.delta " +
				"response.reasoning_summary_text.done response.reasoning_summary_part.done response.output_item.done " +
				"response.output_item.added response.content_part.added response.output_text.delta response.output_text.done " +
				"response.content_part.done response.output_item.done response.completed",
			check: func(t *testing.T, last map[string]any) {
				r := last["response"].(map[string]any)
				item := r["output"].([]any)[0].(map[string]any)
				if item["type"] != "reasoning" || item["encrypted_content"] == "" ||
					r["usage"].(map[string]any)["output_tokens_details"].(map[string]any)["reasoning_tokens"] != 1.0 {
					t.Errorf("%v", r)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := startFake(t, []Rule{{Respond: []Response{c.resp}}})
			resp, data := post(t, fp.BaseURL("openai", false)+"/responses", `{"model":"m","stream":true,"input":"hi"}`, nil)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %s", resp.StatusCode, data)
			}
			events := readEvents(t, data)
			if len(events) < 2 || events[0].name != "response.created" || events[1].name != "response.in_progress" {
				t.Fatalf("events %v", events)
			}
			if got := fmt.Sprint(events[2:]); got != "["+c.events+"]" {
				t.Errorf("events %s\nwant [%s]", got, c.events)
			}
			if c.check != nil {
				c.check(t, events[len(events)-1].data)
			}
		})
	}
}

func TestResponsesWholeAnswersStatusesAndEcho(t *testing.T) {
	fp := startFake(t, []Rule{{Respond: []Response{
		{Status: 429, Body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
		{Text: "a", Finish: "failed", StreamError: json.RawMessage(`{"code":"server_error","message":"boom"}`)},
		{Echo: true},
	}}})
	url := fp.BaseURL("openai", false) + "/responses"
	if resp, data := post(t, url, `{"model":"m","input":"hi"}`, nil); resp.StatusCode != 429 || !strings.Contains(data, "rate_limit_exceeded") {
		t.Errorf("%d %s", resp.StatusCode, data)
	}
	_, data := post(t, url, `{"model":"m","input":"hi"}`, nil)
	var failed struct {
		Status string
		Error  struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(data), &failed); err != nil || failed.Status != "failed" || failed.Error.Code != "server_error" || failed.Error.Message != "boom" {
		t.Errorf("%s: %v", data, err)
	}
	input := `[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]`
	_, data = post(t, url, `{"model":"m","input":`+input+`}`, nil)
	var echo responses.Response
	if err := json.Unmarshal([]byte(data), &echo); err != nil || echo.OutputText() != input {
		t.Errorf("echo %s: %v", data, err)
	}
	if calls := fp.Calls(); len(calls) != 3 || calls[2].Outcome != "echo" {
		t.Errorf("calls %+v", calls)
	}
}

func TestResponsesPrefillIsAFinalAssistantMessage(t *testing.T) {
	const (
		question  = `{"role":"user","content":"say the pangram"}`
		soFar     = `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The quick "},{"type":"output_text","text":"brown"}]}`
		notPrefix = `{"role":"assistant","content":"The slow brown"}`
		goOn      = `{"type":"message","role":"user","content":[{"type":"input_text","text":"Continue."}]}`
	)
	for _, tc := range []struct {
		name, prefill string
		input         []string
		want, record  string
		rejected      bool
	}{
		{"honoured", "honour", []string{question, soFar}, " fox jumps over the lazy dog.", "honoured", false},
		{"not a prefix of Text", "honour", []string{question, notPrefix}, foxText, "ignored", false},
		{"an instruction is not followed", "honour", []string{question, soFar, goOn}, foxText, "", false},
		{"ignored", "", []string{question, soFar}, foxText, "ignored", false},
		{"rejected", "reject", []string{question, soFar}, "", "rejected", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := startFake(t, []Rule{{Respond: []Response{{Text: foxText, Prefill: tc.prefill}}}})
			resp, data := post(t, fp.BaseURL("openai", false)+"/responses", `{"model":"m","input":[`+strings.Join(tc.input, ",")+`]}`, nil)
			if calls := fp.Calls(); len(calls) != 1 || calls[0].Prefill != tc.record {
				t.Errorf("calls %+v, want prefill %q", calls, tc.record)
			}
			if tc.rejected {
				if resp.StatusCode != 400 || data != PrefillRejectionOpenAI {
					t.Errorf("%d %s", resp.StatusCode, data)
				}
				return
			}
			var r responses.Response
			if err := json.Unmarshal([]byte(data), &r); err != nil || r.OutputText() != tc.want {
				t.Errorf("%s: %v, want %q", data, err, tc.want)
			}
		})
	}
}

func intp(n int) *int { return &n }
