package workflows_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/logging"
	"github.com/batonhq/baton/registry"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdktestsuite "go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

var record = flag.Bool("record", false, "rewrite workflows/testdata from runs on the real dev server")

func TestMain(m *testing.M) { testsuite.Main(m) }

func TestPingReturnsTheAnsweringWorker(t *testing.T) {
	env := newTestEnv()
	env.RegisterWorkflowWithOptions(workflows.PingWorkflow, workflowName(workflows.PingWorkflowName))
	env.RegisterActivityWithOptions(func(_ context.Context, msg string) (string, error) { return "w1@" + msg, nil },
		activity.RegisterOptions{Name: workflows.PingActivityName})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	env.SetStartTime(start)

	env.ExecuteWorkflow(workflows.PingWorkflowName, workflows.PingInput{Message: "ping"})
	var res workflows.PingResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Worker != "w1@ping" || res.Message != "ping" || !res.At.Equal(start) {
		t.Errorf("got %+v", res)
	}
}

func TestPingFailsWhenTheActivityFails(t *testing.T) {
	env := newTestEnv()
	env.RegisterWorkflowWithOptions(workflows.PingWorkflow, workflowName(workflows.PingWorkflowName))
	calls := 0
	env.RegisterActivityWithOptions(func(context.Context, string) (string, error) { calls++; return "", errors.New("down") },
		activity.RegisterOptions{Name: workflows.PingActivityName})
	env.ExecuteWorkflow(workflows.PingWorkflowName, workflows.PingInput{Message: "ping"})
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("ping succeeded with a failing activity")
	}
	if calls != 1 {
		t.Errorf("activity called %d times; ping must not retry", calls)
	}
}

func newTestEnv() *sdktestsuite.TestWorkflowEnvironment {
	var s sdktestsuite.WorkflowTestSuite
	s.SetLogger(logging.Discard)
	return s.NewTestWorkflowEnvironment()
}

// TestRecordedHistoriesReplay replays every history a real server recorded into testdata/: a
// change to what a workflow decides fails here before it breaks a running reply. (Histories are
// recorded with -record here and BATON_RECORD=1 in testsuite.)
func TestRecordedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("recorded histories: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			replayer := worker.NewWorkflowReplayer()
			registry.RegisterWorkflows(replayer)
			if err := replayer.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPingOnTheDevServer runs a ping through a real server and worker and replays what it
// recorded; with -record it also rewrites testdata/ping.json.
func TestPingOnTheDevServer(t *testing.T) {
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "ping-" + tq, TaskQueue: tq},
		workflows.PingWorkflowName, workflows.PingInput{Message: "ping"})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.PingResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Worker != "test-worker" {
		t.Errorf("worker %q, want test-worker", res.Worker)
	}
	hist, err := testsuite.FetchHistory(ctx, c, run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	replayer := worker.NewWorkflowReplayer()
	registry.RegisterWorkflows(replayer)
	if err := replayer.ReplayWorkflowHistory(nil, hist); err != nil {
		t.Fatalf("replaying the history just recorded: %v", err)
	}
	if *record {
		data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "ping.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
