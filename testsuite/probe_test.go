package testsuite_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
)

// A probe of a cooling primary is one call (workflows: changeProbeOneCall; recorded as
// reply-probe-one-call.json): the first reply retries the dead primary in place, as an SDK would,
// and cools it down; the next reply probes it once and goes on to the fallback on the same key.
func TestAProbeIsOneCall(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["openai/gpt-5-mini"]}}}}`,
		[]store.Credential{{ID: "openai:one", Provider: "openai", Type: "api_key", Key: "sk-probe-one"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Model: "gpt-5"}, Respond: []fakeprovider.Response{{Status: 503}}},
			{Match: fakeprovider.Match{Model: "gpt-5-mini"}, Respond: []fakeprovider.Response{{Text: "from the fallback"}}},
		})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	primaryCalls := func() int {
		n := 0
		for _, call := range w.Fake.Calls() {
			if call.Model == "gpt-5" {
				n++
			}
		}
		return n
	}
	var runs []*policy.ReplyResult
	for i := range 2 {
		run, err := workflows.StartReply(ctx, c, tq, workflows.ReplyRequest{Agent: "main", Message: "hi", NoJitter: true})
		if err != nil {
			t.Fatal(err)
		}
		var res policy.ReplyResult
		if err := run.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, &res)
		if i == 1 {
			recordHistory(t, c, run, "reply-probe-one-call")
		}
	}
	if n := primaryCalls(); n != 3+1 {
		t.Errorf("%d calls to the dead primary, want 3 (the first reply's, retried in place) and 1 (the probe)", n)
	}
	probe := runs[1].Attempts[0]
	if probe.Model != "gpt-5" || probe.Probe == nil || !*probe.Probe || probe.Retries == nil || *probe.Retries != 0 || runs[1].Text != "from the fallback" {
		t.Errorf("the second reply: %+v, %q", runs[1].Attempts, runs[1].Text)
	}
}
