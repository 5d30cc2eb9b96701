package testsuite_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
)

const threeModelConfig = `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["google/gemini", "anthropic/claude-sonnet-4-5"]}}}}`

// startSlowReply starts a reply whose primary answers 429 after a delay, and waits until the
// fake provider has the call in hand.
func startSlowReply(t *testing.T, session string) (*testsuite.World, client.Client, client.WorkflowRun) {
	t.Helper()
	creds := append(threeKeys[:len(threeKeys):len(threeKeys)], threeKeys[0])
	creds[len(creds)-1].ID, creds[len(creds)-1].Provider, creds[len(creds)-1].Key = "google:a", "google", "g-key-0000"
	w := testsuite.NewWorld(t, threeModelConfig, creds, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{DelayMs: 1500, Status: 401,
			Body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "switched and answered"}}},
	})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	run, err := c.ExecuteWorkflow(context.Background(), workflows.ReplyStartOptions("", tq, "main", session), workflows.ReplyWorkflowName,
		workflows.ReplyRequest{Agent: "main", Session: session, Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(w.Fake.Calls()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reply never called the provider")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return w, c, run
}

func switchTo(t *testing.T, c client.Client, run client.WorkflowRun, model string) error {
	t.Helper()
	h, err := c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
		UpdateName: workflows.SwitchModelUpdate, Args: []any{workflows.SwitchModel{Model: model}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return err
	}
	return h.Get(context.Background(), nil)
}

func TestALiveSwitchToALaterCandidateJumpsThere(t *testing.T) {
	w, c, run := startSlowReply(t, "sw1")
	// While the first attempt is in flight, the status query names it.
	v, err := c.QueryWorkflow(context.Background(), run.GetID(), run.GetRunID(), workflows.StatusQuery)
	if err != nil {
		t.Fatal(err)
	}
	var st workflows.Status
	if err := v.Get(&st); err != nil || st.Candidate != "openai/gpt-5" || st.Profile != "openai:a" {
		t.Errorf("status %+v %v", st, err)
	}
	if _, err := w.Store.SetUserModel(context.Background(), "sw1", "main", policy.ModelRef{Provider: "anthropic", Model: "claude-sonnet-4-5"}, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := switchTo(t, c, run, "anthropic/claude-sonnet-4-5"); err != nil {
		t.Fatal(err)
	}
	if err := switchTo(t, c, run, "not-a-ref"); err == nil {
		t.Error("the validator let a bad model through")
	}
	var res policy.ReplyResult
	if err := run.Get(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	recordHistory(t, c, run, "reply-live-switch")
	got := describe(res.Attempts)
	want := []string{"openai/gpt-5 openai:a failed auth 401 retries=0", "anthropic/claude-sonnet-4-5  switched  0",
		"anthropic/claude-sonnet-4-5 anthropic:default succeeded  0 retries=0"}
	if len(got) != len(want) {
		t.Fatalf("attempts %q, want %q (google jumped over, with no record)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("attempt %d: %q, want %q", i, got[i], want[i])
		}
	}
	if res.Text != "switched and answered" {
		t.Errorf("text %q", res.Text)
	}
	// The user's choice stands: the reply wrote no fallback override over it.
	if sess, _ := w.Store.GetSession(context.Background(), "sw1"); sess.Model.ModelOverrideSource != policy.SourceUser || sess.LiveModelSwitchPending {
		t.Errorf("session %+v pending=%v", sess.Model, sess.LiveModelSwitchPending)
	}
}

func TestALiveSwitchOutsideTheChainStartsTheReplyOverWithIt(t *testing.T) {
	w, c, run := startSlowReply(t, "sw2")
	firstRun := c.GetWorkflow(context.Background(), run.GetID(), run.GetRunID())
	if _, err := w.Store.SetUserModel(context.Background(), "sw2", "main", policy.ModelRef{Provider: "anthropic", Model: "claude-opus-4"}, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := switchTo(t, c, run, "anthropic/claude-opus-4"); err != nil {
		t.Fatal(err)
	}
	// The run continues as new with the user's selection; the caller's wait follows it.
	var res policy.ReplyResult
	if err := run.Get(context.Background(), &res); err != nil {
		t.Fatalf("got %v", err)
	}
	if res.Text != "switched and answered" || res.Served.Model != "claude-opus-4" {
		t.Errorf("served %+v: %q", res.Served, res.Text)
	}
	// The result joins both runs' attempts: the first run's, its switch, then the new run's.
	if n := len(res.Attempts); n < 3 || res.Attempts[0].Model != "gpt-5" || res.Attempts[n-2].Result != policy.ResultSwitched ||
		res.Attempts[n-1].Model != "claude-opus-4" || res.Attempts[n-1].Result != policy.ResultSucceeded {
		t.Errorf("attempts %+v: want both runs' joined", res.Attempts)
	}
	recordHistory(t, c, firstRun, "reply-live-switch-restart")
	hist, err := testsuite.FetchHistory(context.Background(), c, firstRun.GetID(), firstRun.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	if last := hist.Events[len(hist.Events)-1]; last.GetWorkflowExecutionContinuedAsNewEventAttributes() == nil {
		t.Errorf("the first run ended with %v, want a continue-as-new", last.EventType)
	}
}
