package testsuite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/registry"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

const twoModelConfig = `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude-sonnet-4-5"]}}}}`

var threeKeys = []store.Credential{
	{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-test-a-0000"},
	{ID: "openai:b", Provider: "openai", Type: "api_key", Key: "sk-test-b-0000"},
	{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-test-ant-0000"},
}

func rateLimited() fakeprovider.Response {
	return fakeprovider.Response{Status: 429, Headers: map[string]string{"retry-after": "0"},
		Body: `{"error":{"message":"Rate limit reached for gpt-5 in organization org-x on requests per min (RPM)","type":"requests","code":"rate_limit_exceeded"}}`}
}

func reply(t *testing.T, c client.Client, tq string, req workflows.ReplyRequest) (client.WorkflowRun, policy.ReplyResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req.NoJitter = true
	run, err := c.ExecuteWorkflow(ctx, workflows.ReplyStartOptions("", tq, req.Agent, req.Session), workflows.ReplyWorkflowName, req)
	if err != nil {
		t.Fatal(err)
	}
	var res policy.ReplyResult
	err = run.Get(ctx, &res)
	return run, res, err
}

func TestReplyRotatesFallsBackAndSticksOnTheRealServer(t *testing.T) {
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5"}, Respond: []fakeprovider.Response{rateLimited()}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "an answer from the fallback"}}},
	})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)

	run, res, err := reply(t, c, tq, workflows.ReplyRequest{Agent: "main", Session: "s1", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "an answer from the fallback" || res.Served != (policy.Served{Provider: "anthropic", Model: "claude-sonnet-4-5", Profile: "anthropic:default"}) {
		t.Errorf("served %+v: %q", res.Served, res.Text)
	}
	want := []string{"openai/gpt-5 openai:a failed rate_limit 429 retries=2", "openai/gpt-5 openai:b failed rate_limit 429 retries=2",
		"anthropic/claude-sonnet-4-5 anthropic:default succeeded  0 retries=0"}
	if got := describe(res.Attempts); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("attempts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Notices) != 1 || res.Notices[0] != "↪️ Model Fallback: anthropic/claude-sonnet-4-5 (selected openai/gpt-5; rate limit (+1 more attempts))" {
		t.Errorf("notices %q", res.Notices)
	}
	if calls := w.Fake.Calls(); len(calls) != 7 {
		t.Errorf("%d provider calls, want 3 + 3 + 1", len(calls))
	}
	sess, _ := w.Store.GetSession(context.Background(), "s1")
	if m := sess.Model; m.ProviderOverride != "anthropic" || m.ModelOverrideSource != "auto" || m.AuthProfileOverride != "anthropic:default" ||
		m.AuthProfileOverrideSource != "auto" || m.ModelOverrideFallbackOriginModel != "gpt-5" {
		t.Errorf("session %+v", m)
	}
	st, _ := w.Store.Stats(context.Background(), "main", "openai:a")
	if st.CooldownModel != "gpt-5" || st.CooldownReason != policy.ReasonRateLimit || st.ErrorCount != 1 {
		t.Errorf("openai:a stats %+v", st)
	}

	// The recorded history replays, and carries no key.
	hist, err := testsuite.FetchHistory(context.Background(), c, run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	replayer := worker.NewWorkflowReplayer()
	registry.RegisterWorkflows(replayer)
	if err := replayer.ReplayWorkflowHistory(nil, hist); err != nil {
		t.Errorf("replay: %v", err)
	}
	for _, k := range threeKeys {
		if testsuite.HistoryHolds(hist, k.Key) {
			t.Errorf("the history holds the key of %s", k.ID)
		}
	}
	recordHistory(t, c, run, "reply-rate-limit-fallback")

	// The next turn sticks to the fallback: one attempt, no notice.
	run, res, err = reply(t, c, tq, workflows.ReplyRequest{Agent: "main", Session: "s1", Message: "again"})
	if err != nil {
		t.Fatal(err)
	}
	recordHistory(t, c, run, "reply-sticky")
	if res.Served.Provider != "anthropic" || len(res.Attempts) != 1 || len(res.Notices) != 0 {
		t.Errorf("sticky turn: %+v %v %q", res.Served, describe(res.Attempts), res.Notices)
	}
}

func TestAnExhaustedChainFailsWithTheSummary(t *testing.T) {
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{rateLimited()}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Status: 529,
			Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}}},
	})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	run, _, err := reply(t, c, tq, workflows.ReplyRequest{Agent: "main", Session: "s2", Message: "hi"})
	recordHistory(t, c, run, "reply-exhausted")
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != policy.ErrFallbackSummary || appErr.NonRetryable() == false {
		t.Fatalf("got %v", err)
	}
	if !strings.HasPrefix(appErr.Error(), "All models failed (3): openai/gpt-5: Rate limit reached") || !strings.Contains(appErr.Error(), "anthropic/claude-sonnet-4-5: Overloaded (overloaded)") {
		t.Errorf("summary %q", appErr.Error())
	}
	var e policy.Exhaustion
	if err := appErr.Details(&e); err != nil || len(e.Attempts) != 3 || e.SoonestCooldownExpiry == nil || e.Reason != policy.ReasonOverloaded {
		t.Errorf("details %+v %v", e, err)
	}
	// The failed fallback's override was rolled back.
	if sess, _ := w.Store.GetSession(context.Background(), "s2"); sess.Model.ModelOverride != "" {
		t.Errorf("session after a failed fallback: %+v", sess.Model)
	}
}

func TestContextOverflowStopsTheReply(t *testing.T) {
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 400,
			Body: `{"error":{"message":"This model's maximum context length is 128000 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`}}},
	})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	run, _, err := reply(t, c, tq, workflows.ReplyRequest{Agent: "main", Session: "s3", Message: "a very long prompt"})
	recordHistory(t, c, run, "reply-context-overflow")
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != policy.ErrContextOverflow {
		t.Fatalf("got %v", err)
	}
	if calls := w.Fake.Calls(); len(calls) != 1 {
		t.Errorf("context overflow must not rotate or fall back: %d calls", len(calls))
	}
	if st, _ := w.Store.Stats(context.Background(), "main", "openai:a"); !st.IsZero() {
		t.Errorf("context overflow touched the profile: %+v", st)
	}
}

func describe(attempts []policy.Attempt) []string {
	var out []string
	for _, a := range attempts {
		s := a.Provider + "/" + a.Model + " " + a.Profile + " " + a.Result + " " + string(a.Reason) + " " + strconv.Itoa(a.Status)
		if a.Retries != nil {
			s += " retries=" + strconv.Itoa(*a.Retries)
		}
		out = append(out, s)
	}
	return out
}

// recordHistory, with BATON_RECORD=1, writes a run's history to workflows/testdata/NAME.json,
// where the replay test keeps it from breaking; it also checks that the history holds no key.
func recordHistory(t *testing.T, c client.Client, run client.WorkflowRun, name string) {
	t.Helper()
	hist, err := testsuite.FetchHistory(context.Background(), c, run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range testsuite.Secrets() {
		if testsuite.HistoryHolds(hist, sec) {
			t.Errorf("the history of %s holds a key", name)
		}
	}
	if os.Getenv("BATON_RECORD") == "" {
		return
	}
	if err := os.WriteFile(filepath.Join("..", "workflows", "testdata", name+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two replies on one session run one after the other (its lane), under one workflow ID: the
// second call to the provider comes after the first reply has answered, not beside it.
func TestASessionRunsOneTurnAtATime(t *testing.T) {
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{DelayMs: 600, Text: "first"}, {Text: "second"}}},
	})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type turn struct {
		run client.WorkflowRun
		res policy.ReplyResult
		end time.Time
		err error
	}
	turns := make([]turn, 2)
	done := make(chan int)
	for i := range turns {
		go func() {
			run, err := workflows.StartReply(ctx, c, tq, workflows.ReplyRequest{Agent: "main", Session: "lane", Message: "hi", NoJitter: true})
			if err == nil {
				err = run.Get(ctx, &turns[i].res)
			}
			turns[i].run, turns[i].end, turns[i].err = run, time.Now(), err
			done <- i
		}()
	}
	first := <-done
	<-done
	for _, tr := range turns {
		if tr.err != nil {
			t.Fatal(tr.err)
		}
	}
	calls := w.Fake.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < 600*time.Millisecond {
		t.Errorf("the second turn called the provider %v after the first: the turns overlapped", gap)
	}
	if calls[1].At.Before(turns[first].end.Add(-50 * time.Millisecond)) {
		t.Errorf("the second turn's call (%v) came before the first turn ended (%v)", calls[1].At, turns[first].end)
	}
	if turns[first].res.Text != "first" || turns[1-first].res.Text != "second" {
		t.Errorf("answers %q, %q", turns[first].res.Text, turns[1-first].res.Text)
	}
	lane := workflows.LaneID("main", "lane")
	if turns[0].run.GetID() != lane || turns[1].run.GetID() != lane || turns[0].run.GetRunID() == turns[1].run.GetRunID() {
		t.Errorf("runs %s/%s and %s/%s, want two runs of %s", turns[0].run.GetID(), turns[0].run.GetRunID(),
			turns[1].run.GetID(), turns[1].run.GetRunID(), lane)
	}
}
