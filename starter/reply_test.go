package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/testsuite/fakeprovider"
)

func TestReplyPrintsTheNoticeAndTheAnswer(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-cli-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-cli-b"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 402, Body: `{"error":{"message":"Payment Required"}}`}}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "answered"}}},
		})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	code, stdout, stderr := baton(t, "reply", "--address", srv.HostPort(), "--task-queue", tq, "--session", "cli", "hello", "there")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "↪️ Model Fallback: anthropic/claude (selected openai/gpt-5; billing)\nanswered\n" {
		t.Errorf("stdout %q", stdout)
	}
	// /status shows the selected model, the active fallback and why.
	code, stdout, _ = baton(t, "session", "status", "cli", "--store", w.StoreURL)
	if code != 0 || !strings.Contains(stdout, "active:   anthropic/claude (fallback since") || !strings.Contains(stdout, "; billing;") ||
		!strings.Contains(stdout, "profile:  anthropic:default (auto pin)") {
		t.Errorf("session status: %s", stdout)
	}
	code, _, stderr = baton(t, "reply", "--address", srv.HostPort(), "--task-queue", tq, "--model", "openai/gpt-5", "strict")
	if code != exitFailure || !strings.Contains(stderr, "FallbackSummaryError: All models failed (1): openai/gpt-5: Payment Required (billing)") {
		t.Errorf("a strict one-off model that fails: exit %d, %s", code, stderr)
	}
	if code, _, stderr = baton(t, "reply"); code != exitUsage || !strings.Contains(stderr, "want a message") {
		t.Errorf("no message: %d %s", code, stderr)
	}
}

func TestSessionModelSwitchesARunningReply(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-sw-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-sw-b"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{DelayMs: 1500, Status: 500, Body: `{"error":{"message":"boom"}}`}}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "from the switch"}}},
		})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	run, err := srv.Client().ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName,
		policy.ReplyRequest{Agent: "main", Session: "live", Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(w.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	code, _, stderr := baton(t, "session", "model", "live", "anthropic/claude", "--store", w.StoreURL, "--address", srv.HostPort(), "--task-queue", tq)
	if code != 0 || !strings.Contains(stderr, "switch sent to the running reply "+run.GetID()) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res policy.ReplyResult
	if err := run.Get(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Text != "from the switch" || len(res.Attempts) < 2 || res.Attempts[len(res.Attempts)-2].Result != policy.ResultSwitched {
		t.Errorf("result %q, attempts %+v", res.Text, res.Attempts)
	}
}
