package provider_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/provider"
)

// The clocks that depend on the model: the whole-attempt bound, the throughput floor, and a
// first token that is reasoning. Bounds, not benchmarks: each case only asserts the fault and
// that it came well before the stream would have ended.

// sseWire writes one wire's events, piece by piece.
type sseWire struct{ api string }

func (w sseWire) frame(event, data string) string {
	if w.api == provider.APIAnthropicMessages {
		return fmt.Sprintf("event: %s\ndata: %s\n\n", event, data)
	}
	return "data: " + data + "\n\n"
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// head opens the answer (Anthropic's message_start; nothing on OpenAI's wire).
func (w sseWire) head() string {
	if w.api == provider.APIAnthropicMessages {
		return w.frame("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":1}}}`)
	}
	return ""
}

func (w sseWire) reasoning(s string) string {
	if w.api == provider.APIAnthropicMessages {
		return w.frame("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":`+quote(s)+`}}`)
	}
	return w.frame("", `{"choices":[{"index":0,"delta":{"reasoning_content":`+quote(s)+`}}]}`)
}

func (w sseWire) text(s string) string {
	if w.api == provider.APIAnthropicMessages {
		return w.frame("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":`+quote(s)+`}}`)
	}
	return w.frame("", `{"choices":[{"index":0,"delta":{"content":`+quote(s)+`}}]}`)
}

func (w sseWire) toolStart() string {
	if w.api == provider.APIAnthropicMessages {
		return w.frame("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{}}}`)
	}
	return w.frame("", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]}}]}`)
}

func (w sseWire) toolArgs(s string) string {
	if w.api == provider.APIAnthropicMessages {
		return w.frame("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":`+quote(s)+`}}`)
	}
	return w.frame("", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+quote(s)+`}}]}}]}`)
}

func (w sseWire) finish(tools bool) string {
	if w.api == provider.APIAnthropicMessages {
		reason, stop := "end_turn", ""
		if tools {
			reason, stop = "tool_use", w.frame("content_block_stop", `{"type":"content_block_stop","index":2}`)
		}
		return stop + w.frame("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+reason+`"},"usage":{"output_tokens":9}}`) +
			w.frame("message_stop", `{"type":"message_stop"}`)
	}
	reason := "stop"
	if tools {
		reason = "tool_calls"
	}
	return w.frame("", `{"choices":[{"index":0,"delta":{},"finish_reason":"`+reason+`"}]}`) + "data: [DONE]\n\n"
}

// step is what a scripted stream does next: wait, then write.
type step struct {
	wait  time.Duration
	write string
}

// play serves the steps after the response headers (sent at once unless the first step waits
// with nothing to write).
func play(t *testing.T, steps []step) string {
	t.Helper()
	return script(t, func(rw http.ResponseWriter, flush func(), pause func(time.Duration) bool) {
		if len(steps) > 0 && steps[0].write == "" {
			if !pause(steps[0].wait) {
				return
			}
			steps = steps[1:]
		}
		headers(rw, flush)
		for _, s := range steps {
			if s.wait > 0 && !pause(s.wait) {
				return
			}
			_, _ = io.WriteString(rw, s.write)
			flush()
		}
	})
}

// pieces are n steps of write, every gap.
func pieces(n int, gap time.Duration, write func(i int) string) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = step{gap, write(i)}
	}
	return out
}

func steps(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestTheAttemptBound(t *testing.T) {
	t.Parallel() // mostly waiting on clocks
	for _, api := range []string{provider.APIOpenAICompletions, provider.APIAnthropicMessages} {
		w := sseWire{api}
		t.Run(api+"/a stream that keeps coming but outlasts the bound fails as attempt_timeout", func(t *testing.T) {
			// 30 words 100 ms apart (3 s), each well within the idle timeout.
			url := play(t, steps([]step{{0, w.head()}}, pieces(30, 100*time.Millisecond, func(int) string { return w.text("word ") }),
				[]step{{0, w.finish(false)}}))
			var handed strings.Builder
			_, e, took := timed(t, api, url, func(r *provider.Request) {
				r.AttemptTimeout, r.IdleTimeout, r.FirstTokenTimeout = 500*time.Millisecond, 2*time.Second, 2*time.Second
				r.OnDelta = func(d provider.Delta) { handed.WriteString(d.Text) }
			})
			if e == nil || e.Stream != provider.FaultAttemptTimeout || !e.Partial || took < 500*time.Millisecond || took > 2500*time.Millisecond {
				t.Fatalf("%+v after %v", e, took)
			}
			if e.PartialText == "" || e.PartialText != handed.String() || !strings.Contains(e.Error(), "attempt timeout") {
				t.Errorf("PartialText %q, handed out %q, error %v", e.PartialText, handed.String(), e)
			}
		})
		t.Run(api+"/the bound runs from the request, before the headers", func(t *testing.T) {
			url := play(t, []step{{3 * time.Second, ""}, {0, w.head() + w.text("late") + w.finish(false)}})
			_, e, took := timed(t, api, url, func(r *provider.Request) {
				r.AttemptTimeout, r.ResponseTimeout = 300*time.Millisecond, 2*time.Second
			})
			if e == nil || e.Stream != provider.FaultAttemptTimeout || e.Partial || took > 1500*time.Millisecond {
				t.Errorf("%+v after %v", e, took)
			}
		})
		t.Run(api+"/an attempt within its bound answers", func(t *testing.T) {
			url := play(t, steps([]step{{0, w.head()}}, pieces(3, 50*time.Millisecond, func(int) string { return w.text("ok ") }),
				[]step{{0, w.finish(false)}}))
			resp, e, _ := timed(t, api, url, func(r *provider.Request) { r.AttemptTimeout = 5 * time.Second })
			if e != nil || resp.Answer.Text != "ok ok ok " {
				t.Errorf("%+v %v", resp, e)
			}
		})
	}
}

func TestTheThroughputFloor(t *testing.T) {
	// Mostly waiting on clocks: beside the other clock tests.
	t.Parallel()
	long := strings.Repeat("x", 200) // 50 estimated tokens a piece
	for _, api := range []string{provider.APIOpenAICompletions, provider.APIAnthropicMessages} {
		w := sseWire{api}
		floor := func(r *provider.Request) {
			// 20 tokens/s judged after 300 ms; the idle and first-token clocks out of the way.
			r.MinTokensPerSecond, r.ThroughputGrace = 20, 300*time.Millisecond
			r.FirstTokenTimeout, r.IdleTimeout = 3*time.Second, 3*time.Second
		}
		t.Run(api+"/a stream that crawls fails as too_slow", func(t *testing.T) {
			t.Parallel() // each plays its own server; the clocks are long beside a busy machine
			// 4 bytes (about a token) every 100 ms: about 10 tokens/s for 4 s.
			url := play(t, steps([]step{{0, w.head()}}, pieces(40, 100*time.Millisecond, func(int) string { return w.text("abc ") }),
				[]step{{0, w.finish(false)}}))
			_, e, took := timed(t, api, url, floor)
			if e == nil || e.Stream != provider.FaultSlow || !e.Partial || e.PartialText == "" || took > 3*time.Second {
				t.Errorf("%+v after %v", e, took)
			}
		})
		t.Run(api+"/a brisk stream answers", func(t *testing.T) {
			t.Parallel() // each plays its own server; the clocks are long beside a busy machine
			url := play(t, steps([]step{{0, w.head()}}, pieces(10, 100*time.Millisecond, func(int) string { return w.text(long) }),
				[]step{{0, w.finish(false)}}))
			resp, e, _ := timed(t, api, url, floor)
			if e != nil || len(resp.Answer.Text) != 10*len(long) {
				t.Errorf("%d bytes, %v", len(resp.Answer.Text), e)
			}
		})
		t.Run(api+"/reasoning counts", func(t *testing.T) {
			t.Parallel() // each plays its own server; the clocks are long beside a busy machine
			url := play(t, steps([]step{{0, w.head()}}, pieces(10, 100*time.Millisecond, func(int) string { return w.reasoning(long) }),
				[]step{{0, w.text("done") + w.finish(false)}}))
			resp, e, _ := timed(t, api, url, floor)
			if e != nil || resp.Answer.Text != "done" {
				t.Errorf("%+v %v", resp, e)
			}
		})
		t.Run(api+"/a tool call's arguments count as they stream", func(t *testing.T) {
			t.Parallel() // each plays its own server; the clocks are long beside a busy machine
			args := pieces(10, 100*time.Millisecond, func(int) string { return w.toolArgs(long) })
			url := play(t, steps([]step{{0, w.head() + w.toolStart() + w.toolArgs(`{"s":"`)}}, args,
				[]step{{0, w.toolArgs(`"}`) + w.finish(true)}}))
			resp, e, _ := timed(t, api, url, floor)
			if e != nil || len(resp.Answer.ToolCalls) != 1 {
				t.Errorf("%+v %v", resp, e)
			}
		})
		t.Run(api+"/the floor's clock starts at the answer's first piece, not at the headers", func(t *testing.T) {
			t.Parallel() // each plays its own server; the clocks are long beside a busy machine
			// A second of thinking in silence (Anthropic: after message_start), then a brisk answer.
			url := play(t, steps([]step{{0, w.head()}, {time.Second, ""}}, pieces(5, 50*time.Millisecond, func(int) string { return w.text(long) }),
				[]step{{0, w.finish(false)}}))
			resp, e, _ := timed(t, api, url, floor)
			if e != nil || len(resp.Answer.Text) != 5*len(long) {
				t.Errorf("%d bytes, %v", len(resp.Answer.Text), e)
			}
		})
		t.Run(api+"/no floor, no judgement", func(t *testing.T) {
			t.Parallel() // each plays its own server; the clocks are long beside a busy machine
			url := play(t, steps([]step{{0, w.head()}}, pieces(8, 100*time.Millisecond, func(int) string { return w.text("a") }),
				[]step{{0, w.finish(false)}}))
			resp, e, _ := timed(t, api, url, func(r *provider.Request) { r.ThroughputGrace = time.Millisecond })
			if e != nil || resp.Answer.Text != "aaaaaaaa" {
				t.Errorf("%+v %v", resp, e)
			}
		})
	}
}

// Streamed reasoning is the model at work: it stops the first-token clock (OpenAI-compatible
// reasoning_content and OpenRouter's reasoning, Anthropic's thinking_delta), and a silence after
// it is a stall, not a first-token timeout.
func TestReasoningIsAFirstToken(t *testing.T) {
	t.Parallel() // mostly waiting on clocks
	openRouter := sseWire{provider.APIOpenAICompletions}.frame("", `{"choices":[{"index":0,"delta":{"role":"assistant","reasoning":"hmm"}}]}`)
	cases := []struct {
		name, api, first string
	}{
		{"openai reasoning_content", provider.APIOpenAICompletions, sseWire{provider.APIOpenAICompletions}.reasoning("hmm")},
		{"openrouter reasoning", provider.APIOpenAICompletions, openRouter},
		{"anthropic thinking_delta", provider.APIAnthropicMessages, sseWire{provider.APIAnthropicMessages}.head() +
			sseWire{provider.APIAnthropicMessages}.reasoning("hmm")},
	}
	for _, c := range cases {
		w := sseWire{c.api}
		t.Run(c.name+"/thinking past the first-token timeout answers", func(t *testing.T) {
			t.Parallel() // each plays its own server; the clocks are long beside a busy machine
			// The first-token timeout is 500 ms; the answer's text comes 1.2 s after the reasoning.
			url := play(t, []step{{0, c.first}, {1200 * time.Millisecond, w.text("42") + w.finish(false)}})
			var reasoning strings.Builder
			resp, e, _ := timed(t, c.api, url, func(r *provider.Request) {
				r.FirstTokenTimeout, r.IdleTimeout = 500*time.Millisecond, 3*time.Second
				r.OnDelta = func(d provider.Delta) { reasoning.WriteString(d.Reasoning) }
			})
			if e != nil || resp.Answer.Text != "42" || reasoning.String() != "hmm" {
				t.Errorf("%+v %v, reasoning %q", resp, e, reasoning.String())
			}
		})
		t.Run(c.name+"/a silence after reasoning is a stall", func(t *testing.T) {
			t.Parallel() // each plays its own server; the clocks are long beside a busy machine
			url := play(t, []step{{0, c.first}, {3 * time.Second, w.text("late") + w.finish(false)}})
			_, e, took := timed(t, c.api, url, func(r *provider.Request) {
				r.FirstTokenTimeout, r.IdleTimeout = 2*time.Second, 400*time.Millisecond
			})
			if e == nil || e.Stream != provider.FaultStall || !e.Partial || took > 1500*time.Millisecond {
				t.Errorf("%+v after %v", e, took)
			}
		})
	}
}

func TestATurnAsksForReasoning(t *testing.T) {
	budget := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		params provider.Params
		want   bool
	}{
		{provider.Params{}, false},
		{provider.Params{ReasoningEffort: "low"}, true},
		{provider.Params{ReasoningEffort: "minimal"}, true},
		{provider.Params{ReasoningEffort: "none"}, false},
		{provider.Params{ThinkingBudget: budget(2048)}, true},
		{provider.Params{ThinkingBudget: budget(0)}, false},
	} {
		turn := provider.TextTurn("hi")
		turn.Params = c.params
		if got := turn.AsksReasoning(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.params, got, c.want)
		}
	}
}
