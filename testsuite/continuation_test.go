package testsuite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
)

// A reply whose stream is cut after part of the answer reached its live caller continues it on the
// fallback, checked against what the caller holds (workflows: changeContinuationCheck; recorded as
// reply-continuation.json). The fallback honours the prefill, so it writes the kept-back word
// again and goes on; a fallback that answers something else ends the reply, naming the cut.
func TestACutAnswerIsContinuedUnderTheCheck(t *testing.T) {
	const whole = "The quick brown fox jumps over the lazy dog."
	three := 3
	for _, c := range []struct {
		name     string
		config   string
		fallback fakeprovider.Response
		record   string
		want     string // the error type a reply that cannot finish ends with
	}{
		{"the fallback honours the prefill", twoModelConfig, fakeprovider.Response{Text: whole, Prefill: "honour"}, "reply-continuation", ""},
		{"the fallback answers something else", twoModelConfig, fakeprovider.Response{Text: "Lorem ipsum dolor sit amet."}, "", policy.ErrContinuationMismatch},
		{"the fallback cannot continue (continuation: none)", `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude-sonnet-4-5"]}}},
			models: {providers: {anthropic: {models: [{id: "claude-sonnet-4-5", continuation: "none"}]}}}}`, fakeprovider.Response{Text: whole}, "", policy.ErrStreamInterrupted},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := testsuite.NewWorld(t, c.config, threeKeys, []fakeprovider.Rule{
				{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: whole, CutAfterChunks: &three}}},
				{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{c.fallback}},
			})
			hub := live.NewHub()
			w.Acts.Streams = hub
			cl := testsuite.Client(t)
			tq := testsuite.TaskQueue(t)
			testsuite.StartWorker(t, cl, tq, w.Acts)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			stream := hub.Open(ctx, "caller")
			defer stream.Close()
			run, err := workflows.StartReply(ctx, cl, tq, workflows.ReplyRequest{Agent: "main", Message: "a pangram", StreamKey: "caller", NoJitter: true})
			if err != nil {
				t.Fatal(err)
			}
			var res policy.ReplyResult
			err = run.Get(ctx, &res)
			var held strings.Builder
			for _, d := range stream.Take() {
				held.WriteString(d.Text)
			}
			if c.record != "" {
				if err != nil || res.Text != whole || held.String() != whole {
					t.Fatalf("result %q (%v), the caller holds %q: want the whole answer once", res.Text, err, held.String())
				}
				if len(res.Attempts) != 2 || !res.Attempts[1].Continues || res.Served.Provider != "anthropic" {
					t.Errorf("attempts %+v", res.Attempts)
				}
				// Billed: the continuation's 8 chunks (" brown fox jumps over the lazy dog.", a word
				// each) and the cut stream's 16 characters, about 4 tokens.
				if res.Output != 8+4 {
					t.Errorf("output tokens %d, want both candidates' (12)", res.Output)
				}
				calls := w.Fake.Calls()
				if last := calls[len(calls)-1]; last.Prefill != "honoured" {
					t.Errorf("the fallback's call: %+v", last)
				}
				recordHistory(t, cl, run, c.record)
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "the stream of openai/gpt-5 failed after") {
				t.Errorf("want %s naming the cut, got %v", c.want, err)
			}
			if c.want == policy.ErrStreamInterrupted {
				for _, call := range w.Fake.Calls() {
					if call.Provider == "anthropic" {
						t.Errorf("a model that cannot continue was asked to: %+v", call)
					}
				}
			}
			if held.String() != "The quick brown " {
				t.Errorf("the caller holds %q: nothing of another answer may reach it", held.String())
			}
		})
	}
}
