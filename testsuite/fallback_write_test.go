package testsuite_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	enumspb "go.temporal.io/api/enums/v1"

	_ "modernc.org/sqlite" // database/sql driver "sqlite": the test spoils the session's row
)

// A fallback write that fails is rolled back all the same, since it may have landed (workflows:
// changeRollbackFailedWrite; recorded as reply-write-failed.json). The session's row is spoilt
// while the primary is called, so that every write and rollback of it fails: the reply ends on the
// error without calling the fallback, its history holding the change's marker and the rollback.
func TestAFailedFallbackWriteIsRolledBack(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:w", Provider: "openai", Type: "api_key", Key: "sk-write-o"},
			{ID: "anthropic:w", Provider: "anthropic", Type: "api_key", Key: "sk-write-a"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "never"}}},
		})
	db, err := sql.Open("sqlite", strings.TrimPrefix(w.StoreURL, "sqlite://")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w.Fake.BeforeRespond = func(c fakeprovider.Call) {
		if c.Provider == "openai" {
			if _, err := db.Exec(`INSERT INTO sessions (key, agent, data_json, version, updated_at_ms) VALUES ('spoilt', 'main', 'not json', 1, 0)`); err != nil {
				t.Error(err)
			}
		}
	}
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := workflows.StartReply(ctx, c, tq, workflows.ReplyRequest{Agent: "main", Session: "spoilt", Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err == nil {
		t.Fatal("the reply answered on a session it could not write")
	}
	for _, call := range w.Fake.Calls() {
		if call.Provider == "anthropic" {
			t.Error("the fallback was called though its write failed")
		}
	}
	hist, err := testsuite.FetchHistory(ctx, c, run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	var version, rollback bool
	for _, e := range hist.GetEvents() {
		if e.GetEventType() != enumspb.EVENT_TYPE_MARKER_RECORDED {
			continue
		}
		details := e.GetMarkerRecordedEventAttributes().GetDetails()
		for _, p := range details {
			for _, pl := range p.GetPayloads() {
				version = version || strings.Contains(string(pl.GetData()), "rollback-failed-write")
				rollback = rollback || strings.Contains(string(pl.GetData()), workflows.RollbackFallbackActivity)
			}
		}
	}
	if !version || !rollback {
		t.Errorf("the history holds the change's marker: %v, the rollback: %v", version, rollback)
	}
	recordHistory(t, c, run, "reply-write-failed")
}
