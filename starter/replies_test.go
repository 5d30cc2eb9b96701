package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
)

// `baton replies` finds replies by baton's search attributes; `baton session list` shows the
// session the failover moved.
func TestRepliesAndSessionList(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-rep-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-rep-b"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 404, Body: `{"error":{"message":"The model does not exist"}}`}}},
			{Respond: []fakeprovider.Response{{Text: "ok"}}}})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	conn := []string{"--address", srv.HostPort(), "--task-queue", tq}
	fell := "rep-fell-" + tq[len(tq)-6:]
	direct := "rep-direct-" + tq[len(tq)-6:]
	if code, _, stderr := baton(t, append([]string{"reply", "--session", fell}, append(conn, "hi")...)...); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := baton(t, append([]string{"reply", "--session", direct, "--model", "anthropic/claude"}, append(conn, "hi")...)...); code != 0 {
		t.Fatal(stderr)
	}
	var rows []replyRow
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		code, out, stderr := baton(t, append([]string{"replies", "--session", fell, "--failed-over", "--since", "10m", "--json"}, conn...)...)
		if code != 0 {
			t.Fatalf("replies: %s", stderr)
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 && rows[0].Status == "completed" && rows[0].FinalModel != "" || time.Now().After(deadline) {
			break
		}
	}
	if len(rows) != 1 || rows[0].WorkflowID != "reply/main/"+fell || !rows[0].UsedFallback || rows[0].FinalModel != "anthropic/claude" ||
		rows[0].FailoverReason != "model_not_found" || rows[0].Agent != "main" {
		t.Errorf("failed-over replies of %s: %+v", fell, rows)
	}
	// The direct reply did not fail over: --failed-over leaves it out, the plain listing has it.
	_, out, _ := baton(t, append([]string{"replies", "--session", direct, "--failed-over", "--json"}, conn...)...)
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("a reply that did not fail over listed as failed over: %s", out)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		_, out, _ = baton(t, append([]string{"replies", "--session", direct}, conn...)...)
		if strings.Contains(out, "reply/main/"+direct) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(out, "reply/main/"+direct) || !strings.Contains(out, "STARTED") {
		t.Errorf("replies table: %s", out)
	}
	if code, _, stderr := baton(t, append([]string{"replies", "--limit", "0"}, conn...)...); code != exitUsage || !strings.Contains(stderr, "--limit") {
		t.Errorf("--limit 0: %d %s", code, stderr)
	}
	if q := repliesQuery("o'brien", "", true, false, time.Hour, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)); q !=
		"WorkflowType = 'Reply' AND BatonAgent = 'o''brien' AND BatonUsedFallback = true AND StartTime > '2026-01-01T11:00:00Z'" {
		t.Errorf("query: %s", q)
	}

	code, out, stderr := baton(t, "session", "list", "--fallback", "--store", w.StoreURL)
	if code != 0 || !strings.Contains(out, fell) || strings.Contains(out, direct) || !strings.Contains(out, "anthropic/claude") || !strings.Contains(out, "openai/gpt-5") {
		t.Errorf("session list --fallback: %d\n%s%s", code, out, stderr)
	}
	code, out, _ = baton(t, "session", "list", "--json", "--store", w.StoreURL)
	var sessions []store.Session
	if err := json.Unmarshal([]byte(out), &sessions); err != nil || code != 0 || len(sessions) < 1 {
		t.Errorf("session list --json: %v %s", err, out)
	}
}
