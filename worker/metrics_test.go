package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/sethvargo/go-envconfig"
)

func TestMain(m *testing.M) { testsuite.Main(m) }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The worker's metrics listener answers /healthz at once and /readyz once Temporal and the store
// answer; /metrics shows each profile's state, a manual disable and a model-scoped cooldown too.
func TestWorkerServesHealthReadinessAndProfileStates(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "baton.db")
	st, err := store.Open(context.Background(), url, store.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"openai:a", "openai:b", "openai:c"} {
		if err := st.PutCredential(ctx, "main", store.Credential{ID: id, Provider: "openai", Type: policy.TypeAPIKey, Key: "sk-wm-" + id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DisableProfile(ctx, "main", "openai:a", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordOutcome(ctx, "main", "openai:b", func(s policy.ProfileStats) policy.ProfileStats {
		s.CooldownUntil, s.CooldownModel = time.Now().Add(time.Hour), "gpt-5"
		return s
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	srv := testsuite.SharedServer(t)
	listen, _ := lab.FreeHostPort()
	interrupt := make(chan any, 1)
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(nil, envconfig.MapLookuper(map[string]string{"TEMPORAL_ADDRESS": srv.HostPort(), "BATON_STORE": url,
			"BATON_METRICS_LISTEN": listen, "BATON_TASK_QUEUE": testsuite.TaskQueue(t), "LOG_LEVEL": "error"}), &stderr, interrupt)
	}()
	base := "http://" + listen
	var code int
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if code, body = get(t, base+"/readyz"); code == http.StatusOK {
			break
		}
	}
	if code != http.StatusOK || !strings.Contains(body, "temporal: ok") || !strings.Contains(body, "store: ok") {
		t.Fatalf("/readyz: %d %s (stderr %s)", code, body, stderr.String())
	}
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{
		`baton_profile_state{agent="main",model="",profile="openai:a",provider="openai",state="manual"} 1`,
		`baton_profile_state{agent="main",model="gpt-5",profile="openai:b",provider="openai",state="cooldown"} 1`,
		`baton_profile_state{agent="main",model="",profile="openai:c",provider="openai",state="available"} 1`,
		"temporal_request{", // the SDK's, through the same registry
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	interrupt <- struct{}{}
	if c := <-done; c != 0 {
		t.Errorf("exit %d: %s", c, stderr.String())
	}
}

// A worker started before its server serves /healthz, says in /readyz that Temporal is not
// reached yet, and stops cleanly when interrupted while it waits.
func TestWorkerWaitingForItsServerIsAliveButNotReady(t *testing.T) {
	addr, _ := lab.FreeHostPort()
	listen, _ := lab.FreeHostPort()
	interrupt := make(chan any, 1)
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(nil, envconfig.MapLookuper(map[string]string{"TEMPORAL_ADDRESS": addr, "BATON_STORE": "sqlite://" + filepath.Join(t.TempDir(), "b.db"),
			"BATON_METRICS_LISTEN": listen, "BATON_CONNECT_TIMEOUT": "60s", "LOG_LEVEL": "error"}), &stderr, interrupt)
	}()
	var code int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && code != http.StatusOK; time.Sleep(50 * time.Millisecond) {
		code, _ = get(t, "http://"+listen+"/healthz")
	}
	if code != http.StatusOK {
		t.Fatalf("/healthz: %d", code)
	}
	if code, body := get(t, "http://"+listen+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "temporal: not connected yet") || !strings.Contains(body, "store: ok") {
		t.Errorf("/readyz while waiting: %d %s", code, body)
	}
	select {
	case c := <-done:
		t.Fatalf("the worker gave up at once (exit %d): %s", c, stderr.String())
	case <-time.After(time.Second):
	}
	interrupt <- struct{}{}
	select {
	case c := <-done:
		if c != 0 {
			t.Errorf("exit %d after an interrupt while waiting: %s", c, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("an interrupt did not stop the wait")
	}
}
