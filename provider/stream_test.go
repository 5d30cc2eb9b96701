package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/provider"
)

// Live streaming: deltas as they come, the text so far on a failure, prefills, and the clocks.

// seen is a delta and the number of chunks received when it was handed out.
type seen struct {
	provider.Delta
	chunks int
}

func (s seen) String() string {
	switch {
	case s.ToolCall != nil:
		return "call " + s.ToolCall.ID + " " + s.ToolCall.Name + " " + s.ToolCall.Arguments
	case s.Reasoning != "":
		return "reasoning " + s.Reasoning
	case s.ReasoningPart != nil:
		return "thinking block " + s.ReasoningPart.Text + " signed " + s.ReasoningPart.Signature
	}
	return "text " + s.Text
}

// stream runs a request against a scripted SSE server of the API's wire, recording every delta.
func stream(t *testing.T, api, sse string, turn provider.Turn, prefill string) (provider.Response, []seen, map[string]any, error) {
	t.Helper()
	return streamWith(t, api, sse, turn, func(r *provider.Request) { r.Prefill = prefill })
}

// streamWith is stream with the request set as the test needs.
func streamWith(t *testing.T, api, sse string, turn provider.Turn, set func(*provider.Request)) (provider.Response, []seen, map[string]any, error) {
	t.Helper()
	s := serve(t, sse)
	req := wireRequest(api, s.URL, turn)
	set(&req)
	var got []seen
	chunks := 0
	req.OnChunk = func() { chunks++ }
	req.OnDelta = func(d provider.Delta) {
		n := 0
		for _, set := range []bool{d.Text != "", d.Reasoning != "", d.ToolCall != nil, d.ReasoningPart != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			t.Errorf("a delta with %d fields set: %+v", n, d)
		}
		got = append(got, seen{d, chunks})
	}
	resp, err := provider.Complete(context.Background(), req)
	return resp, got, s.sent(t), err
}

func wireRequest(api, url string, turn provider.Turn) provider.Request {
	if api == provider.APIOpenAICompletions {
		url += "/v1"
	}
	return provider.Request{Provider: "p", Model: "m", API: api, BaseURL: url, Turn: turn,
		Credential:      provider.Credential{Type: "api_key", Key: secret},
		ResponseTimeout: 2 * time.Second, FirstTokenTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second}
}

// consistent checks that the deltas add up to the answer: the same text, reasoning and calls.
func consistent(t *testing.T, a provider.Answer, got []seen) {
	t.Helper()
	var text, reasoning strings.Builder
	var calls []provider.ToolCall
	for _, d := range got {
		text.WriteString(d.Text)
		reasoning.WriteString(d.Reasoning)
		if d.ToolCall != nil {
			calls = append(calls, *d.ToolCall)
		}
	}
	var want strings.Builder
	for _, r := range a.Reasoning {
		want.WriteString(r.Text)
	}
	if text.String() != a.Text || reasoning.String() != want.String() || !reflect.DeepEqual(calls, a.ToolCalls) {
		t.Errorf("the deltas (text %q, reasoning %q, calls %+v) are not the answer %+v", text.String(), reasoning.String(), calls, a)
	}
}

func describe(got []seen) []string {
	var out []string
	for _, d := range got {
		out = append(out, d.String())
	}
	return out
}

func TestOnDeltaHandsOutTheAnswerAsItStreams(t *testing.T) {
	cases := []struct {
		api, sse string
		want     []string
		at       []int // the chunk count at each delta: handed out as soon as parsed
	}{
		{provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think"}}]}`,
			`{"choices":[{"index":0,"delta":{"reasoning_content":"ing"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"lo"}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{\"b\""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":2}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}`),
			[]string{"reasoning think", "reasoning ing", "text Hel", "text lo", `call call_a f {"a":1}`, `call call_b g {"b":2}`},
			[]int{1, 2, 3, 4, 8, 10}},
		{provider.APIAnthropicMessages, anthropicStream(
			`{"type":"message_start","message":{"usage":{"input_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"ing"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Hel"}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"lo"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{}}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1}"}}`,
			`{"type":"content_block_stop","index":2}`,
			`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_b","name":"g","input":{"b":2}}}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
			`{"type":"message_stop"}`),
			[]string{"reasoning think", "reasoning ing", "thinking block thinking signed s", "text Hel", "text lo", `call toolu_a f {"a":1}`, `call toolu_b g {"b":2}`},
			[]int{3, 4, 6, 7, 8, 13, 16}},
	}
	for _, c := range cases {
		t.Run(c.api, func(t *testing.T) {
			resp, got, _, err := stream(t, c.api, c.sse, provider.TextTurn("go"), "")
			if err != nil {
				t.Fatal(err)
			}
			if d := describe(got); !reflect.DeepEqual(d, c.want) {
				t.Errorf("deltas\n%q\nwant\n%q", d, c.want)
			}
			var at []int
			for _, d := range got {
				at = append(at, d.chunks)
			}
			if !reflect.DeepEqual(at, c.at) {
				t.Errorf("handed out at chunks %v, want %v", at, c.at)
			}
			consistent(t, resp.Answer, got)
		})
	}
}

func TestOnDeltaAgreesWithTheAnswerOnOddStreams(t *testing.T) {
	// The interleaved and looser OpenAI streams of turn_test.go, and Anthropic's emulated JSON
	// format: whatever the shape, each call goes out once, whole, and the deltas are the answer.
	format := provider.TextTurn("1+1?")
	format.Params.ResponseFormat = &provider.ResponseFormat{Type: provider.FormatJSONObject}
	cases := []struct {
		name, api, sse string
		turn           provider.Turn
		calls          int
	}{
		{"openai interleaved", provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"weather","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"clock","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), provider.TextTurn("go"), 2},
		{"openai looser", provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"n\":1}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":5,"function":{"name":"h"}}]}}]}`,
			`{"choices":[{"delta":{"content":"done"},"finish_reason":"stop"}]}`), provider.TextTurn("go"), 3},
		{"openai [DONE] without a finish reason", provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}`), provider.TextTurn("go"), 1},
		{"anthropic emulated JSON", provider.APIAnthropicMessages, anthropicStream(
			`{"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"json_output","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"answer\""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":": 2}"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
			`{"type":"message_stop"}`), format, 0},
		{"anthropic emulated JSON never called", provider.APIAnthropicMessages, anthropicText, format, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, got, _, err := stream(t, c.api, c.sse, c.turn, "")
			if err != nil {
				t.Fatal(err)
			}
			consistent(t, resp.Answer, got)
			if len(resp.Answer.ToolCalls) != c.calls {
				t.Errorf("%d calls: %+v", len(resp.Answer.ToolCalls), resp.Answer)
			}
			if strings.HasPrefix(c.name, "anthropic") && len(got) != 1 {
				t.Errorf("the emulated JSON format's text goes out as one delta: %q", describe(got))
			}
		})
	}
}

func TestAStreamCutMidCallHandsOutNothingOfTheCall(t *testing.T) {
	cut := func(sse string, keep int) string { // the first keep events, no terminator
		return strings.Join(strings.SplitAfter(sse, "\n\n")[:keep], "")
	}
	cases := []struct {
		name, api, sse string
		text           string
		calls          int
	}{
		{"openai, in the first call", provider.APIOpenAICompletions, cut(openAIStream(
			`{"choices":[{"index":0,"delta":{"content":"Let me see."}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a"}}]}}]}`), 2),
			"Let me see.", 0},
		{"openai, in the second call", provider.APIOpenAICompletions, cut(openAIStream(
			`{"choices":[{"index":0,"delta":{"content":"Two."}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"d","function":{"name":"g","arguments":"{\"b"}}]}}]}`), 3),
			"Two.", 1},
		{"anthropic, in the call", provider.APIAnthropicMessages, cut(anthropicStream(
			`{"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me see."}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"c","name":"f","input":{}}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}`), 6),
			"Let me see.", 0},
		{"anthropic, after a call", provider.APIAnthropicMessages, cut(anthropicStream(
			`{"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c","name":"f","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"d","name":"g","input":{}}}`), 5),
			"", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got, _, err := stream(t, c.api, c.sse, provider.TextTurn("go"), "")
			var e *provider.Error
			if !errors.As(err, &e) || e.Stream != provider.FaultCut || !e.Partial {
				t.Fatalf("%v", err)
			}
			if e.PartialText != c.text || e.PartialToolCalls != c.calls {
				t.Errorf("PartialText %q, PartialToolCalls %d; want %q, %d", e.PartialText, e.PartialToolCalls, c.text, c.calls)
			}
			calls := 0
			for _, d := range got {
				if d.ToolCall != nil {
					calls++
					if !json.Valid([]byte(d.ToolCall.Arguments)) {
						t.Errorf("half a call handed out: %+v", d.ToolCall)
					}
				}
			}
			if calls != c.calls {
				t.Errorf("%d calls handed out: %q", calls, describe(got))
			}
			if strings.Contains(err.Error(), c.text) && c.text != "" {
				t.Errorf("the partial text is not part of Error(): %v", err)
			}
		})
	}
}

func TestAFailedStreamKeepsTheTextHandedOut(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog"
	faults := map[string]fakeprovider.Response{
		"cut":       {Text: text, CutAfterChunks: intp(4)},
		"stall":     {Text: text, StallAfterChunks: intp(4), StallMs: 3000},
		"malformed": {Text: text, MalformedChunk: intp(4)},
	}
	for _, p := range []string{"openai", "anthropic"} {
		for name, r := range faults {
			t.Run(p+"/"+name, func(t *testing.T) {
				fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{r}}})
				req := request(fp, p)
				var handed strings.Builder
				req.OnDelta = func(d provider.Delta) { handed.WriteString(d.Text) }
				_, err := provider.Complete(context.Background(), req)
				var e *provider.Error
				if !errors.As(err, &e) || !e.Partial {
					t.Fatalf("%v", err)
				}
				if e.PartialText == "" || e.PartialText != handed.String() || !strings.HasPrefix(text, e.PartialText) || e.PartialText == text {
					t.Errorf("PartialText %q, handed out %q", e.PartialText, handed.String())
				}
				if b, _ := json.Marshal(e); strings.Contains(string(b), e.PartialText) {
					t.Errorf("PartialText is not serialised: %s", b)
				}
			})
		}
	}
}

func TestPrefillContinuesTheAnswer(t *testing.T) {
	if got := provider.PrefillSent("The answer is \n\t"); got != "The answer is" {
		t.Errorf("PrefillSent %q", got)
	}
	thinking := provider.TextTurn("what is 6×7?")
	thinking.Params.ThinkingBudget = ptr(int64(2048))
	thinking.Params.ResponseFormat = &provider.ResponseFormat{Type: provider.FormatJSONObject}

	t.Run("anthropic: a final assistant message, without thinking or a forced tool", func(t *testing.T) {
		resp, _, body, err := stream(t, provider.APIAnthropicMessages, anthropicText, thinking, "The answer is \n")
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["messages"], `[{"role": "user", "content": [{"type": "text", "text": "what is 6×7?"}]},
			{"role": "assistant", "content": [{"type": "text", "text": "The answer is"}]}]`)
		if body["thinking"] != nil || body["tools"] != nil || body["tool_choice"] != nil {
			t.Errorf("thinking %v, tools %v, tool_choice %v", body["thinking"], body["tools"], body["tool_choice"])
		}
		if sys, _ := body["system"].([]any); len(sys) != 1 || !strings.Contains(sys[0].(map[string]any)["text"].(string), "JSON") {
			t.Errorf("the JSON format as an instruction: %v", body["system"])
		}
		if resp.Answer.Text != "ok" {
			t.Errorf("the answer is the continuation only: %q", resp.Answer.Text)
		}
	})
	t.Run("anthropic: onto the turn's own final assistant message", func(t *testing.T) {
		turn := provider.Turn{Messages: []provider.Message{user("list three"), assistant("Sure: ")}}
		_, _, body, err := stream(t, provider.APIAnthropicMessages, anthropicText, turn, " one, two, ")
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["messages"], `[{"role": "user", "content": [{"type": "text", "text": "list three"}]},
			{"role": "assistant", "content": [{"type": "text", "text": "Sure: one, two,"}]}]`)
	})
	t.Run("openai: the answer so far as the final assistant message", func(t *testing.T) {
		_, _, body, err := stream(t, provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"index":0,"delta":{"content":" 42."},"finish_reason":"stop"}]}`), thinking, "The answer is \n")
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["messages"], `[{"role": "user", "content": "what is 6×7?"}, {"role": "assistant", "content": "The answer is"}]`)
	})
	t.Run("openai: with prefix: true for the servers that want it", func(t *testing.T) {
		_, _, body, err := streamWith(t, provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"index":0,"delta":{"content":" 42."},"finish_reason":"stop"}]}`), thinking, func(r *provider.Request) {
			r.Prefill, r.PrefillPrefix = "The answer is", true
		})
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["messages"], `[{"role": "user", "content": "what is 6×7?"}, {"role": "assistant", "content": "The answer is", "prefix": true}]`)
	})
	t.Run("openai: the answer so far, and a request to continue", func(t *testing.T) {
		resp, _, body, err := streamWith(t, provider.APIOpenAICompletions, openAIStream(
			`{"choices":[{"index":0,"delta":{"content":" 42."},"finish_reason":"stop"}]}`), thinking, func(r *provider.Request) {
			r.Prefill, r.Continuation = "The answer is \n", provider.ContinueInstruction
		})
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, body["messages"], `[{"role": "user", "content": "what is 6×7?"},
			{"role": "assistant", "content": "The answer is"},
			{"role": "user", "content": "Continue your previous answer exactly where it stopped. Do not repeat any of it, and do not add any preamble."}]`)
		if body["response_format"] != nil || body["reasoning_effort"] != "low" {
			t.Errorf("response_format %v, reasoning_effort %v", body["response_format"], body["reasoning_effort"])
		}
		if resp.Answer.Text != " 42." {
			t.Errorf("the answer is the continuation only: %q", resp.Answer.Text)
		}
	})
	t.Run("a prefill of whitespace only sends none", func(t *testing.T) {
		for _, w := range wires {
			_, _, body, err := stream(t, w.api, w.textStream, provider.TextTurn("hi"), " \n")
			if err != nil || len(body["messages"].([]any)) != 1 {
				t.Errorf("%s: %v %v", w.api, body["messages"], err)
			}
		}
	})
}

// script serves a handler that may pause; a pause ends early when the client goes away.
func script(t *testing.T, h func(w http.ResponseWriter, flush func(), pause func(time.Duration) bool)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		pause := func(d time.Duration) bool {
			select {
			case <-time.After(d):
				return true
			case <-r.Context().Done():
				return false
			}
		}
		h(w, w.(http.Flusher).Flush, pause)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func headers(w http.ResponseWriter, flush func()) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flush()
}

// timed runs a request against a scripted server and returns the error and how long it took.
func timed(t *testing.T, api, url string, set func(*provider.Request)) (provider.Response, *provider.Error, time.Duration) {
	t.Helper()
	req := wireRequest(api, url, provider.TextTurn("hi"))
	set(&req)
	t0 := time.Now()
	resp, err := provider.Complete(context.Background(), req)
	took := time.Since(t0)
	var e *provider.Error
	if err != nil && !errors.As(err, &e) {
		t.Fatalf("not a *provider.Error: %v", err)
	}
	return resp, e, took
}

func TestTheClocks(t *testing.T) {
	t.Parallel() // mostly waiting on clocks, each on servers of its own
	for _, w := range wires {
		t.Run(w.api+"/no headers within the response timeout", func(t *testing.T) {
			url := script(t, func(rw http.ResponseWriter, flush func(), pause func(time.Duration) bool) {
				if pause(3 * time.Second) {
					headers(rw, flush)
					_, _ = io.WriteString(rw, w.textStream)
				}
			})
			_, e, took := timed(t, w.api, url, func(r *provider.Request) {
				r.ResponseTimeout, r.FirstTokenTimeout = 200*time.Millisecond, 5*time.Second
			})
			if e == nil || e.Stream != provider.FaultResponseTimeout || e.Net != "timeout" || e.Partial || took < 200*time.Millisecond || took > time.Second {
				t.Errorf("%+v after %v", e, took)
			}
		})
		t.Run(w.api+"/the response clock stops at the headers", func(t *testing.T) {
			url := script(t, func(rw http.ResponseWriter, flush func(), pause func(time.Duration) bool) {
				headers(rw, flush)
				if pause(400 * time.Millisecond) {
					_, _ = io.WriteString(rw, w.textStream)
				}
			})
			resp, e, _ := timed(t, w.api, url, func(r *provider.Request) {
				r.ResponseTimeout, r.FirstTokenTimeout = 200*time.Millisecond, 2*time.Second
			})
			if e != nil || resp.Answer.Text != "ok" {
				t.Errorf("%+v %v", resp, e)
			}
		})
		t.Run(w.api+"/the first-token clock runs from the headers", func(t *testing.T) {
			url := script(t, func(rw http.ResponseWriter, flush func(), pause func(time.Duration) bool) {
				if pause(200 * time.Millisecond) {
					headers(rw, flush)
					pause(3 * time.Second)
				}
			})
			_, e, took := timed(t, w.api, url, func(r *provider.Request) {
				r.ResponseTimeout, r.FirstTokenTimeout = 400*time.Millisecond, 300*time.Millisecond
			})
			// From the request it would have fired at 300 ms; from the headers, at 500 ms or later.
			if e == nil || e.Stream != provider.FaultFirstToken || e.Partial || took < 500*time.Millisecond || took > 1500*time.Millisecond {
				t.Errorf("%+v after %v", e, took)
			}
		})
	}
}

func TestKeepAlivesAreLifeNotContent(t *testing.T) {
	t.Parallel() // mostly waiting on clocks, each on servers of its own
	keepAlives := map[string]string{
		provider.APIOpenAICompletions: ": OPENROUTER PROCESSING\n\n",
		provider.APIAnthropicMessages: "event: ping\ndata: {\"type\": \"ping\"}\n\n",
	}
	for _, w := range wires {
		t.Run(w.api+"/before content they do not hold off the first-token timeout", func(t *testing.T) {
			url := script(t, func(rw http.ResponseWriter, flush func(), pause func(time.Duration) bool) {
				headers(rw, flush)
				for range 40 {
					_, _ = io.WriteString(rw, keepAlives[w.api])
					flush()
					if !pause(50 * time.Millisecond) {
						return
					}
				}
			})
			chunks := 0
			_, e, took := timed(t, w.api, url, func(r *provider.Request) {
				r.FirstTokenTimeout, r.OnChunk = 300*time.Millisecond, func() { chunks++ }
			})
			if e == nil || e.Stream != provider.FaultFirstToken || e.Partial || chunks != 0 || took > 1500*time.Millisecond {
				t.Errorf("%+v after %v, %d chunks", e, took, chunks)
			}
		})
		for name, keepAlive := range map[string]string{"comments": ": keep-alive\n\n", "pings": keepAlives[provider.APIAnthropicMessages]} {
			if name == "pings" && w.api != provider.APIAnthropicMessages {
				continue
			}
			t.Run(w.api+"/after content, "+name+" prevent a stall", func(t *testing.T) {
				events := strings.SplitAfter(w.textStream, "\n\n")
				first := 1 // openai: the first chunk is content; anthropic: message_start, then the text
				if w.api == provider.APIAnthropicMessages {
					first = 3
				}
				url := script(t, func(rw http.ResponseWriter, flush func(), pause func(time.Duration) bool) {
					headers(rw, flush)
					_, _ = io.WriteString(rw, strings.Join(events[:first], ""))
					flush()
					for range 6 {
						if !pause(100 * time.Millisecond) {
							return
						}
						_, _ = io.WriteString(rw, keepAlive)
						flush()
					}
					_, _ = io.WriteString(rw, strings.Join(events[first:], ""))
				})
				resp, e, _ := timed(t, w.api, url, func(r *provider.Request) {
					r.FirstTokenTimeout, r.IdleTimeout = 300*time.Millisecond, 300*time.Millisecond
				})
				if e != nil || resp.Answer.Text != "ok" {
					t.Fatalf("%+v %v", resp, e)
				}
				if want := strings.Count(w.textStream, "data: {"); resp.Chunks != want {
					t.Errorf("%d chunks, want %d: keep-alives are not chunks", resp.Chunks, want)
				}
			})
		}
	}
}
