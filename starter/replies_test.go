package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/ui"
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

// The table's spend columns: a priced reply's tokens and cost, an unpriced one's tokens, and "-"
// where the ledger has nothing (or no store was read).
func TestRepliesTableShowsTheSpend(t *testing.T) {
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	rows := []replyRow{
		{WorkflowID: "reply-main-1", Status: "completed", Start: start, Agent: "main",
			Spend: &policy.Spend{Input: 2010, Output: 250, CachedInput: 800, Cost: 0.0095, Priced: true}},
		{WorkflowID: "reply-main-2", Status: "completed", Start: start, Agent: "main", Spend: &policy.Spend{Input: 12, Output: 3}},
		{WorkflowID: "reply-main-3", Status: "failed", Start: start, Agent: "main"},
	}
	var out strings.Builder
	printReplies(&out, rows)
	lines := strings.Split(out.String(), "\n")
	if len(lines) != 5 || spendCells(lines[0]) != "TOKENS|COST" {
		t.Fatalf("replies:\n%s", out.String())
	}
	for i, want := range []string{"2,010 in (800 cached) / 250 out|$0.0095", "12 in / 3 out|unpriced", "-|-"} {
		if got := spendCells(lines[1+i]); got != want {
			t.Errorf("%s: %q, want %q", rows[i].WorkflowID, got, want)
		}
	}
	data, _ := json.Marshal(rows)
	if strings.Count(string(data), `"spend"`) != 2 || !strings.Contains(string(data), `"spend":{"inputTokens":2010,"outputTokens":250,"cachedInputTokens":800,"cost":0.0095,"priced":true}`) {
		t.Errorf("json: %s", data)
	}
}

// End to end: replies run on a priced and an unpriced model record their calls in the ledger;
// `baton replies` reads it for its TOKENS and COST (and --json's spend), and `baton explain` the
// attempt records the reply's history keeps. A store that is not there shows no spend and fails
// nothing.
func TestRepliesAndExplainShowWhatRepliesSpent(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}},
		models: {providers: {anthropic: {models: [{id: "claude", cost: {input: 3, output: 15, cacheRead: 0.3}}]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-spend-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-spend-b"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5"}, Respond: []fakeprovider.Response{{Status: 404, Body: `{"error":{"message":"The model does not exist"}}`}}},
			{Respond: []fakeprovider.Response{{Text: "ok", Usage: &fakeprovider.Usage{Input: 1200, Output: 150, Cached: 800}}}}})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	conn := []string{"--address", srv.HostPort(), "--task-queue", tq}
	// Replies without a session: each has its own workflow id, which the ledger files it under.
	start := func(args ...string) string {
		code, out, stderr := baton(t, append(append([]string{"reply", "--json"}, conn...), append(args, "hi")...)...)
		var res struct{ WorkflowID string }
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.WorkflowID == "" {
			t.Fatalf("reply %v: %d %s %s", args, code, out, stderr)
		}
		return res.WorkflowID
	}
	priced, unpriced := start(), start("--model", "openai/gpt-4o")

	// 800 cached at $0.30, 400 at $3 and 150 out at $15 per million: $0.00369.
	code, out, stderr := baton(t, append([]string{"explain", priced}, conn...)...)
	if code != 0 {
		t.Fatal(stderr)
	}
	if lines := strings.Split(out, "\n"); len(lines) < 4 || spendCells(lines[2]) != "-|-" || spendCells(lines[3]) != "1,200 in (800 cached) / 150 out|$0.0037" ||
		!strings.Contains(out, "\nspent: 1,200 in (800 cached) / 150 out tokens, $0.0037\n") {
		t.Errorf("explain %s:\n%s", priced, out)
	}
	code, out, stderr = baton(t, append([]string{"explain", unpriced}, conn...)...)
	if code != 0 {
		t.Fatal(stderr)
	}
	if lines := strings.Split(out, "\n"); len(lines) < 3 || spendCells(lines[2]) != "1,200 in (800 cached) / 150 out|-" ||
		!strings.Contains(out, "\nspent: 1,200 in (800 cached) / 150 out tokens, unpriced\n") || strings.Contains(out, "$") {
		t.Errorf("explain %s:\n%s", unpriced, out)
	}

	byID := map[string]replyRow{}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		code, out, stderr := baton(t, append([]string{"replies", "--since", "10m", "--limit", "1000", "--json", "--store", w.StoreURL}, conn...)...)
		if code != 0 {
			t.Fatalf("replies: %s", stderr)
		}
		var rows []replyRow
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			byID[r.WorkflowID] = r
		}
		if byID[priced].Status == "completed" && byID[unpriced].Status == "completed" || time.Now().After(deadline) {
			break
		}
	}
	if sp := byID[priced].Spend; sp == nil || sp.Input != 1200 || sp.Output != 150 || sp.CachedInput != 800 || !sp.Priced || ui.FormatCost(sp.Cost) != "$0.0037" {
		t.Errorf("replies --json, the priced reply: %+v", byID[priced])
	}
	if sp := byID[unpriced].Spend; sp == nil || sp.Input != 1200 || sp.Priced || sp.Cost != 0 {
		t.Errorf("replies --json, the unpriced reply: %+v", byID[unpriced])
	}
	code, out, stderr = baton(t, append([]string{"replies", "--since", "10m", "--limit", "1000", "--store", w.StoreURL}, conn...)...)
	if code != 0 || stderr != "" {
		t.Fatalf("replies: %d %s", code, stderr)
	}
	for id, want := range map[string]string{priced: "1,200 in (800 cached) / 150 out|$0.0037", unpriced: "1,200 in (800 cached) / 150 out|unpriced"} {
		if got := spendCells(lineWith(out, id)); got != want {
			t.Errorf("replies, %s: %q, want %q\n%s", id, got, want, out)
		}
	}

	missing := filepath.Join(t.TempDir(), "nowhere.db")
	code, out, stderr = baton(t, append([]string{"replies", "--since", "10m", "--limit", "1000", "--store", "sqlite://" + missing}, conn...)...)
	if code != 0 || spendCells(lineWith(out, priced)) != "-|-" || !strings.Contains(stderr, "does not exist") {
		t.Errorf("replies with a store that is not there: %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("replies created the store it was pointed at")
	}
	code, out, _ = baton(t, append([]string{"replies", "--since", "10m", "--limit", "1000", "--json", "--store", "sqlite://" + missing}, conn...)...)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) == 0 {
		t.Fatalf("replies --json without a store: %d %v %s", code, err, out)
	}
	for _, r := range rows {
		if _, ok := r["spend"]; ok {
			t.Errorf("a spend without a store: %v", r)
		}
	}
}

// lineWith is the line of out that holds s.
func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
