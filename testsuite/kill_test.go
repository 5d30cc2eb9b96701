package testsuite_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
)

// startProcess runs one of the built binaries (bin/<name>) with the test's environment added,
// its output in a log file that Main scans for credentials. It is killed when the test ends.
func startProcess(t *testing.T, name string, env []string, args ...string) (*exec.Cmd, *os.File) {
	t.Helper()
	root, err := lab.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s missing: run `make build` first", bin)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	logFile, err := os.CreateTemp(testsuite.LogDir(), name+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd, logFile
}

// startWorkerProcess runs bin/baton-worker against the test's server, store and config.
func startWorkerProcess(t *testing.T, env []string) *exec.Cmd {
	t.Helper()
	cmd, _ := startProcess(t, "baton-worker", env)
	return cmd
}

// A worker killed with SIGKILL in the middle of a streamed answer, on a strict reply (a one-off
// model, and a job with fallbacks: []): a new worker runs the same attempt again on the same
// candidate within seconds, continuing from the answer's checkpoint instead of buying it again;
// the key's usage stats and the session are untouched, as nothing was the provider's fault.
func TestAKilledWorkerIsNotTheProvidersFault(t *testing.T) {
	for name, req := range map[string]workflows.ReplyRequest{
		"one-off model":     {Agent: "main", Session: "crash", Message: "hi", Model: "anthropic/claude", NoJitter: true},
		"fallbacks: [] job": {Agent: "main", Session: "crash", Message: "hi", NoJitter: true, FixedChain: &policy.FixedChain{Model: policy.ModelRef{Provider: "anthropic", Model: "claude"}, HasFallbacks: true, Fallbacks: []policy.ModelRef{}}},
	} {
		t.Run(name, func(t *testing.T) { killMidStream(t, req, name == "one-off model") })
	}
}

func killMidStream(t *testing.T, req workflows.ReplyRequest, record bool) {
	creds := []store.Credential{
		{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-kill-a"},
		{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-kill-b"},
	}
	const answer = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
	config := `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`
	w := testsuite.NewWorld(t, config, creds, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{
			{Text: answer, ChunkDelayMs: 400}, // 16 words over 6 s: killed after a checkpoint
			{Text: answer, Prefill: "honour"}, // continues the checkpoint, its kept-back word first
		}},
	})
	cfgFile := filepath.Join(t.TempDir(), "openclaw.json5")
	if err := os.WriteFile(cfgFile, []byte(strings.TrimSuffix(config, "}")+`, models: `+lab.ModelsConfig(w.Config.Get())+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	env := []string{"TEMPORAL_ADDRESS=" + srv.HostPort(), "BATON_TASK_QUEUE=" + tq, "BATON_STORE=" + w.StoreURL, "BATON_CONFIG=" + cfgFile, "LOG_LEVEL=info"}
	first := startWorkerProcess(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	before, _ := w.Store.GetSession(ctx, "crash")
	run, err := srv.Client().ExecuteWorkflow(ctx, workflows.ReplyStartOptions("", tq, "main", "crash"), workflows.ReplyWorkflowName, req)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(w.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	time.Sleep(3 * time.Second)                  // past the first checkpoint (every 2 s)
	if err := first.Process.Kill(); err != nil { // SIGKILL, mid-stream
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()
	killed := time.Now()
	startWorkerProcess(t, env)

	var res policy.ReplyResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(killed); took > 20*time.Second {
		t.Errorf("the reply answered %v after the kill, want within 20 s", took)
	}
	if record {
		recordHistory(t, srv.Client(), run, "reply-worker-lost")
	}
	if res.Served.Provider != "anthropic" || len(res.Attempts) != 1 || res.Attempts[0].Result != policy.ResultSucceeded {
		t.Errorf("served %+v after %q: the same candidate, one attempt", res.Served, describe(res.Attempts))
	}
	calls := w.Fake.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d provider calls, want the cut one and its continuation", len(calls))
	}
	var second struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	_ = json.Unmarshal(calls[1].Body, &second)
	last := second.Messages[len(second.Messages)-1]
	if last.Role != "assistant" || !strings.Contains(string(last.Content), "one two three") {
		t.Errorf("the run again asked for the whole answer again: %s", calls[1].Body)
	}
	if res.Text != answer || calls[1].Prefill != "honoured" {
		t.Errorf("answer %q (the second call's prefill %q): the checkpoint and its continuation, the answer once", res.Text, calls[1].Prefill)
	}
	for _, p := range mustProfiles(t, w) {
		if p.Stats.ErrorCount != 0 || !p.Stats.CooldownUntil.IsZero() || !p.Stats.DisabledUntil.IsZero() {
			t.Errorf("%s was blamed for a lost worker: %+v", p.ID, p.Stats)
		}
	}
	// The session keeps its model: no fallback written (the turn's end pins the profile that
	// served, as every answered turn does).
	after, _ := w.Store.GetSession(ctx, "crash")
	b, a := before.Model, after.Model
	if a.ProviderOverride != b.ProviderOverride || a.ModelOverride != b.ModelOverride || a.ModelOverrideSource != b.ModelOverrideSource ||
		a.ModelOverrideFallbackOriginModel != b.ModelOverrideFallbackOriginModel || after.FallbackReason != "" {
		t.Errorf("the session moved: %+v -> %+v (%s)", b, a, after.FallbackReason)
	}
}

func mustProfiles(t *testing.T, w *testsuite.World) []store.Profile {
	t.Helper()
	ps, err := w.Store.ListProfiles(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// startServeProcess runs bin/baton serve against the test's server, store and config, and waits
// until it is ready. It returns the process and its base URL.
func startServeProcess(t *testing.T, env []string) (*exec.Cmd, string) {
	t.Helper()
	listen, err := lab.FreeHostPort()
	if err != nil {
		t.Fatal(err)
	}
	cmd, logFile := startProcess(t, "baton", env, "serve", "--listen", listen)
	base := "http://" + listen
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, base
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logFile.Name())
			t.Fatalf("baton serve not ready in 30 s:\n%s", b)
		}
	}
}

// serve runs replies too (eager start on its own worker of the shared queue). Killed with
// SIGKILL in the middle of an answer it was making, its reply is taken over by a worker: the
// same candidate, continued from the answer's checkpoint, the key not blamed.
func TestAKilledServeLeavesItsReplyToTheWorkers(t *testing.T) {
	creds := []store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-kill-serve"}}
	const answer = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
	config := `{agents: {defaults: {model: {primary: "openai/gpt-5"}}}}`
	w := testsuite.NewWorld(t, config, creds, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{
			{Text: answer, ChunkDelayMs: 400}, // 16 words over 6 s: serve is killed after a checkpoint
			{Text: answer},                    // OpenAI restarts: its repetition of the checkpoint is dropped
		}},
	})
	cfgFile := filepath.Join(t.TempDir(), "openclaw.json5")
	if err := os.WriteFile(cfgFile, []byte(strings.TrimSuffix(config, "}")+`, models: `+lab.ModelsConfig(w.Config.Get())+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	env := []string{"TEMPORAL_ADDRESS=" + srv.HostPort(), "BATON_TASK_QUEUE=" + tq, "BATON_STORE=" + w.StoreURL, "BATON_CONFIG=" + cfgFile, "LOG_LEVEL=info"}
	serve, base := startServeProcess(t, env)
	go func() { // the caller: its connection dies with serve
		resp, err := http.Post(base+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"agent:main","user":"serve-crash","messages":[{"role":"user","content":"hi"}]}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); len(w.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	// Only serve polls the queue so far: the reply and its attempt run there.
	time.Sleep(3 * time.Second) // past the first checkpoint (every 2 s)
	if err := serve.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = serve.Process.Wait()
	killed := time.Now()
	startWorkerProcess(t, env)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res policy.ReplyResult
	if err := srv.Client().GetWorkflow(ctx, workflows.LaneID("main", "serve-crash"), "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(killed); took > 30*time.Second {
		t.Errorf("the reply answered %v after serve was killed, want within 30 s", took)
	}
	if len(res.Attempts) != 1 || res.Attempts[0].Result != policy.ResultSucceeded || len(w.Fake.Calls()) != 2 {
		t.Errorf("%q with %d provider calls: one attempt, cut and continued", describe(res.Attempts), len(w.Fake.Calls()))
	}
	if res.Text != answer {
		t.Errorf("answer %q: the checkpoint and its continuation, the answer once", res.Text)
	}
	for _, p := range mustProfiles(t, w) {
		if p.Stats.ErrorCount != 0 || !p.Stats.CooldownUntil.IsZero() {
			t.Errorf("%s was blamed for a lost serve: %+v", p.ID, p.Stats)
		}
	}
}

// sseEvents reads a stream's events whole ("event: …\ndata: …"), and the last sequence number.
func sseEvents(t *testing.T, body io.Reader, stopAfter func(event string) bool) ([]string, int64) {
	t.Helper()
	var events []string
	last := int64(-1)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur []string
	for sc.Scan() {
		line := sc.Text()
		if line != "" {
			if !strings.HasPrefix(line, ":") { // keep-alives are not events
				cur = append(cur, line)
			}
			continue
		}
		if len(cur) == 0 {
			continue
		}
		ev := strings.Join(cur, "\n")
		cur = nil
		events = append(events, ev)
		var seq struct {
			N int64 `json:"sequence_number"`
		}
		if _, data, ok := strings.Cut(ev, "data: "); ok && json.Unmarshal([]byte(data), &seq) == nil {
			last = seq.N
		}
		if stopAfter != nil && stopAfter(ev) {
			break
		}
	}
	return events, last
}

// A background response's front door killed with SIGKILL mid-answer: its caller resumes through
// another serve process from the last event it saw, and ends with exactly the events of an
// uninterrupted run; the provider was called once (the reply ran on a worker), nobody blamed.
func TestABackgroundResponseOutlivesItsServe(t *testing.T) {
	creds := []store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-kill-resp"}}
	const answer = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
	config := `{agents: {defaults: {model: {primary: "openai/gpt-5"}}}}`
	w := testsuite.NewWorld(t, config, creds, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: answer, ChunkDelayMs: 250}}},
	})
	cfgFile := filepath.Join(t.TempDir(), "openclaw.json5")
	if err := os.WriteFile(cfgFile, []byte(strings.TrimSuffix(config, "}")+`, models: `+lab.ModelsConfig(w.Config.Get())+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testsuite.SharedServer(t)
	env := []string{"TEMPORAL_ADDRESS=" + srv.HostPort(), "BATON_TASK_QUEUE=" + testsuite.TaskQueue(t), "BATON_STORE=" + w.StoreURL,
		"BATON_CONFIG=" + cfgFile, "LOG_LEVEL=info", "BATON_SERVE_SHARED_WORKER=false"}
	startWorkerProcess(t, env)
	doorA, baseA := startServeProcess(t, env)
	_, baseB := startServeProcess(t, env)

	resp, err := http.Post(baseA+"/v1/responses", "application/json", strings.NewReader(`{"model":"openai/gpt-5","input":"count","background":true,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	deltas := 0
	seen, last := sseEvents(t, resp.Body, func(ev string) bool {
		if strings.HasPrefix(ev, "event: response.output_text.delta") {
			deltas++
		}
		return deltas == 4
	})
	var id struct {
		Response struct{ ID string } `json:"response"`
	}
	if _, data, _ := strings.Cut(seen[0], "data: "); json.Unmarshal([]byte(data), &id) != nil || id.Response.ID == "" {
		t.Fatalf("no response id in %q", seen[0])
	}
	if err := doorA.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = doorA.Process.Wait()
	resp.Body.Close()

	resumed, err := http.Get(fmt.Sprintf("%s/v1/responses/%s?stream=true&starting_after=%d", baseB, id.Response.ID, last))
	if err != nil {
		t.Fatal(err)
	}
	rest, _ := sseEvents(t, resumed.Body, nil)
	resumed.Body.Close()
	whole, err := http.Get(fmt.Sprintf("%s/v1/responses/%s?stream=true", baseB, id.Response.ID))
	if err != nil {
		t.Fatal(err)
	}
	uninterrupted, _ := sseEvents(t, whole.Body, nil)
	whole.Body.Close()
	if got := append(seen, rest...); strings.Join(got, "\n\n") != strings.Join(uninterrupted, "\n\n") {
		t.Errorf("the caller ended with %d events (%d before the kill), an uninterrupted run has %d:\n%s\n---\n%s",
			len(got), len(seen), len(uninterrupted), strings.Join(got, "\n"), strings.Join(uninterrupted, "\n"))
	}
	if !strings.HasPrefix(uninterrupted[len(uninterrupted)-1], "event: response.completed") {
		t.Errorf("the run ended with %s", uninterrupted[len(uninterrupted)-1])
	}
	if n := len(w.Fake.Calls()); n != 1 {
		t.Errorf("%d provider calls, want 1", n)
	}
	for _, p := range mustProfiles(t, w) {
		if p.Stats.ErrorCount != 0 || !p.Stats.CooldownUntil.IsZero() {
			t.Errorf("%s was blamed for a lost serve: %+v", p.ID, p.Stats)
		}
	}
}

// Answer first, then a crash: serve hands the caller its whole answer, then dies before the
// reply's bookkeeping (its recording of the outcome is held back by a lock on the profile's row,
// on PostgreSQL). The reply finishes the bookkeeping once, on a worker, from the kept answer:
// one provider call, the key credited and not blamed.
func TestACrashBetweenTheAnswerAndTheBookkeepingCostsNothing(t *testing.T) {
	url := testsuite.FreshPostgres(t)
	creds := []store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-kill-book"}}
	config := `{agents: {defaults: {model: {primary: "openai/gpt-5"}}}}`
	w := testsuite.NewWorldOn(t, url, config, creds, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "the whole answer, first"}}}})
	cfgFile := filepath.Join(t.TempDir(), "openclaw.json5")
	if err := os.WriteFile(cfgFile, []byte(strings.TrimSuffix(config, "}")+`, models: `+lab.ModelsConfig(w.Config.Get())+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testsuite.SharedServer(t)
	env := []string{"TEMPORAL_ADDRESS=" + srv.HostPort(), "BATON_TASK_QUEUE=" + testsuite.TaskQueue(t), "BATON_STORE=" + url,
		"BATON_CONFIG=" + cfgFile, "LOG_LEVEL=info", "BATON_SERVE_SHARED_WORKER=false"}
	startWorkerProcess(t, env)
	door, base := startServeProcess(t, env)

	// Hold the profile's usage-stats row: the attempt's own recording waits on it.
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `INSERT INTO auth_stats (agent, profile_id, stats_json) VALUES ('main', 'openai:a', '') ON CONFLICT (agent, profile_id) DO NOTHING`); err != nil {
		t.Fatal(err)
	}
	lock, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.ExecContext(ctx, `SELECT stats_json FROM auth_stats WHERE agent = 'main' AND profile_id = 'openai:a' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	resp, err := http.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"openai/gpt-5","user":"book","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "data: [DONE]") || !strings.Contains(string(body), "first") {
		t.Fatalf("the caller got %s", body)
	}
	// The caller holds the whole answer; the attempt still waits to record it.
	if err := door.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = door.Process.Wait()
	released := time.Now()
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}

	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var res policy.ReplyResult
	if err := srv.Client().GetWorkflow(wctx, resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id")).Get(wctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Text != "the whole answer, first" || len(res.Attempts) != 1 || res.Attempts[0].Result != policy.ResultSucceeded {
		t.Errorf("the reply ended %q after %q", res.Text, describe(res.Attempts))
	}
	if n := len(w.Fake.Calls()); n != 1 {
		t.Errorf("%d provider calls, want 1: the kept answer is not bought again", n)
	}
	for _, p := range mustProfiles(t, w) {
		if p.Stats.ErrorCount != 0 || !p.Stats.CooldownUntil.IsZero() || p.Stats.LastUsed.Before(released.Add(-time.Second)) {
			t.Errorf("%s after the crash: %+v (released at %s): credited once, after it, and not blamed", p.ID, p.Stats, released.Format(time.StampMilli))
		}
	}
}
