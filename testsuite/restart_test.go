package testsuite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
)

// A server restarted on its --db-filename keeps its workflows and serves at once (the previous
// run's cluster members are forgotten, not waited out).
func TestDevServerRestartsOnItsDatabaseFile(t *testing.T) {
	testsuite.NeedsServer(t)
	db := filepath.Join(t.TempDir(), "temporal.db")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ping := func(srv *testsuite.Server, id string) {
		tq := testsuite.TaskQueue(t)
		testsuite.StartWorker(t, srv.Client(), tq, nil)
		run, err := srv.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: tq}, workflows.PingWorkflowName, workflows.PingInput{Message: "ping"})
		if err != nil {
			t.Fatal(err)
		}
		callCtx, cancelCall := context.WithTimeout(ctx, 20*time.Second)
		defer cancelCall()
		if err := run.Get(callCtx, nil); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	first, err := lab.StartServer(ctx, lab.ServerOptions{DBFilename: db, LogDir: testsuite.LogDir()})
	if err != nil {
		t.Fatal(err)
	}
	ping(first, "before-restart")
	if err := first.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	second, err := lab.StartServer(ctx, lab.ServerOptions{DBFilename: db, LogDir: testsuite.LogDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	if _, err := second.Client().DescribeWorkflowExecution(ctx, "before-restart", ""); err != nil {
		t.Errorf("the first run's workflow is gone after the restart: %v", err)
	}
	ping(second, "after-restart")
}
