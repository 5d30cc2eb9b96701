package testsuite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/dial"
	"github.com/batonhq/baton/internal/logging"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/registry"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc"
)

// The Temporal server restarts (on its database file) while a reply waits on a slow provider:
// the worker reconnects and the reply completes.
func TestAReplySurvivesAServerRestart(t *testing.T) {
	testsuite.NeedsServer(t)
	hostPort, err := lab.FreeHostPort()
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "temporal.db")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := lab.StartServer(ctx, lab.ServerOptions{HostPort: hostPort, DBFilename: db, LogDir: testsuite.LogDir()})
	if err != nil {
		t.Fatal(err)
	}
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{DelayMs: 4000, Text: "slow but sure"}}},
	})
	// A client of its own, which outlives the first server process.
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tq := testsuite.TaskQueue(t)
	wk := worker.New(c, tq, worker.Options{})
	registry.Register(wk, w.Acts)
	if err := wk.Start(); err != nil {
		t.Fatal(err)
	}
	defer wk.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName,
		workflows.ReplyRequest{Agent: "main", Session: "restart", Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(w.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("stopping the server: %v", err)
	}
	srv, err = lab.StartServer(ctx, lab.ServerOptions{HostPort: hostPort, DBFilename: db, LogDir: testsuite.LogDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var res policy.ReplyResult
	if err := c.GetWorkflow(ctx, run.GetID(), run.GetRunID()).Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Text != "slow but sure" {
		t.Errorf("result %+v", res)
	}
	// This server's histories are not on the shared one that Main scans.
	leaks, n, err := testsuite.ScanHistories(ctx, srv, testsuite.Secrets())
	if err != nil || n == 0 {
		t.Errorf("scanned %d histories: %v", n, err)
	}
	for _, l := range leaks {
		t.Error(l)
	}
	t.Logf("provider calls: %d", len(w.Fake.Calls()))
}

func discardLogger() log.Logger { return logging.Discard }

// The server goes away for 15 s while the provider answers: the worker cannot report the answer,
// the attempt is run again when the server is back, and it returns the outcome its first run kept
// instead of buying the answer twice; no fallback, strict or not.
func TestAnAnswerIsNeverBoughtTwice(t *testing.T) {
	testsuite.NeedsServer(t)
	for name, req := range map[string]workflows.ReplyRequest{
		"chain":             {Agent: "main", Session: "away", Message: "hi", NoJitter: true},
		"fallbacks: [] job": {Agent: "main", Session: "away", Message: "hi", NoJitter: true, FixedChain: &policy.FixedChain{Model: policy.ModelRef{Provider: "openai", Model: "gpt-5"}, HasFallbacks: true, Fallbacks: []policy.ModelRef{}}},
	} {
		t.Run(name, func(t *testing.T) { serverAwayWhileAnswering(t, req) })
	}
}

func serverAwayWhileAnswering(t *testing.T, req workflows.ReplyRequest) {
	hostPort, err := lab.FreeHostPort()
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "temporal.db")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := lab.StartServer(ctx, lab.ServerOptions{HostPort: hostPort, DBFilename: db, LogDir: testsuite.LogDir()})
	if err != nil {
		t.Fatal(err)
	}
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{DelayMs: 2000, Text: "paid for once"}}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "a second purchase"}}},
	})
	// As baton-worker's node does: the attempt reports at once while the connection is open, and
	// waits for the server once it is gone.
	link := &dial.Link{}
	opts := client.Options{HostPort: hostPort, Logger: discardLogger()}
	opts.ConnectionOptions.DialOptions = []grpc.DialOption{link.DialOption()}
	c, err := client.Dial(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w.Acts.ServerUp = link.Up
	tq := testsuite.TaskQueue(t)
	wk := worker.New(c, tq, registry.WorkerOptions(0))
	registry.Register(wk, w.Acts)
	if err := wk.Start(); err != nil {
		t.Fatal(err)
	}
	defer wk.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName, req)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(w.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	if err := srv.Stop(); err != nil { // while the provider is answering
		t.Fatalf("stopping the server: %v", err)
	}
	time.Sleep(15 * time.Second)
	srv, err = lab.StartServer(ctx, lab.ServerOptions{HostPort: hostPort, DBFilename: db, LogDir: testsuite.LogDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var res policy.ReplyResult
	if err := c.GetWorkflow(ctx, run.GetID(), run.GetRunID()).Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Text != "paid for once" || len(res.Attempts) != 1 {
		t.Errorf("result %q after %q", res.Text, describe(res.Attempts))
	}
	if calls := w.Fake.Calls(); len(calls) != 1 {
		t.Errorf("%d provider calls, want exactly one", len(calls))
	}
}
