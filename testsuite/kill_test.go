package testsuite_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/testsuite/fakeprovider"
	"github.com/batonhq/baton/workflows"
)

// startWorkerProcess runs bin/baton-worker against the test's server, store and config.
func startWorkerProcess(t *testing.T, env []string) *exec.Cmd {
	t.Helper()
	root, err := testsuite.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "baton-worker")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s missing: run `make build` first", bin)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	logFile, err := os.CreateTemp(testsuite.LogDir(), "worker-*.log") // scanned for credentials by Main
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd
}

// A worker killed with SIGKILL in the middle of an attempt: a new worker takes the reply over,
// the lost attempt ends as a timeout (its heartbeat stops), and the reply completes on the next
// candidate. Nothing is written twice.
func TestAReplySurvivesAKilledWorker(t *testing.T) {
	creds := []store.Credential{
		{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-kill-a"},
		{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-kill-b"},
		{ID: "google:a", Provider: "google", Type: "api_key", Key: "sk-kill-c"},
	}
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude", "google/gemini"]}}}}`, creds,
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided"}}`}}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{DelayMs: 60000, Text: "too late"}}},
			{Match: fakeprovider.Match{Provider: "google"}, Respond: []fakeprovider.Response{{Text: "after the crash"}}},
		})
	cfgFile := filepath.Join(t.TempDir(), "openclaw.json5")
	if err := os.WriteFile(cfgFile, []byte(`{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude", "google/gemini"]}}},
		models: `+testsuite.ModelsConfig(w.Config.Get())+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	env := []string{"TEMPORAL_ADDRESS=" + srv.HostPort(), "BATON_TASK_QUEUE=" + tq, "BATON_STORE=" + w.StoreURL, "BATON_CONFIG=" + cfgFile,
		"BATON_FIRST_TOKEN_TIMEOUT_MS=2000", "BATON_IDLE_TIMEOUT_MS=2000", "LOG_LEVEL=info"}
	first := startWorkerProcess(t, env)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := srv.Client().ExecuteWorkflow(ctx, workflows.ReplyStartOptions("", tq, "main", "crash"), workflows.ReplyWorkflowName,
		policy.ReplyRequest{Agent: "main", Session: "crash", Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	waitCall := func(provider string) {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			for _, c := range w.Fake.Calls() {
				if c.Provider == provider {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no call to %s", provider)
			}
		}
	}
	waitCall("anthropic")
	// The fallback override was written before the anthropic attempt began.
	if sess, _ := w.Store.GetSession(ctx, "crash"); sess.Model.ProviderOverride != "anthropic" {
		t.Fatalf("before the kill: %+v", sess.Model)
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL, mid-attempt
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()
	startWorkerProcess(t, env)

	var res policy.ReplyResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	recordHistory(t, srv.Client(), run, "reply-worker-killed")
	if res.Text != "after the crash" || res.Served.Provider != "google" {
		t.Errorf("served %+v %q", res.Served, res.Text)
	}
	got := describe(res.Attempts)
	if len(got) != 3 || !strings.HasPrefix(got[1], "anthropic/claude anthropic:default failed timeout") {
		t.Errorf("attempts %q", got)
	}
	n := 0
	for _, c := range w.Fake.Calls() {
		if c.Provider == "anthropic" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d anthropic calls: the lost attempt must not be repeated", n)
	}
	sess, _ := w.Store.GetSession(ctx, "crash")
	if sess.Model.ProviderOverride != "google" || sess.Model.ModelOverrideSource != "auto" || sess.Model.ModelOverrideFallbackOriginModel != "gpt-5" {
		t.Errorf("session after the crash: %+v", sess.Model)
	}
	// Written once each: the anthropic override, its rollback, the google override, the turn's end.
	if sess.Version != 4 {
		t.Errorf("session version %d, want 4 writes", sess.Version)
	}
}
