package main

import (
	"strings"
	"testing"

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
