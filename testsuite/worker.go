package testsuite

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/node"
	"github.com/batonhq/baton/registry"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

var queueSeq atomic.Int64

// TaskQueue returns a task queue name unique to this test run, so tests sharing a server never
// pick up each other's tasks.
func TaskQueue(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("%s-%d-%d", name, time.Now().UnixNano(), queueSeq.Add(1))
}

// StartWorker runs a worker with every baton workflow and activity registered, as baton-worker
// does, on taskQueue until the test ends. register, when given, adds test-only code.
func StartWorker(t testing.TB, c client.Client, taskQueue string, acts *activities.Activities, register ...func(worker.Registry)) worker.Worker {
	t.Helper()
	if acts == nil {
		acts = &activities.Activities{Identity: "test-worker"}
	}
	w := worker.New(c, taskQueue, registry.WorkerOptions(0))
	registry.Register(w, acts)
	for _, r := range register {
		r(w)
	}
	if err := w.Start(); err != nil {
		t.Fatalf("starting worker on %s: %v", taskQueue, err)
	}
	t.Cleanup(w.Stop)
	return w
}

// StartServeWorkers starts what `baton serve` runs for w on the shared server: a front door's
// worker for its callers' live attempts (with w's store, config and limits), and a worker of a
// task queue of the test's own whose attempts reach the door's callers too. It returns the queue
// and the door.
func StartServeWorkers(t testing.TB, w *World) (taskQueue string, door *node.Door) {
	t.Helper()
	srv := SharedServer(t)
	taskQueue = TaskQueue(t)
	n := &node.Node{Store: w.Store, Config: w.Config, Limits: w.Acts.Limits}
	door, err := n.Door(srv.Client(), taskQueue)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Stop)
	// As serve's: an attempt of its caller that the shared worker runs hands its answer over too.
	acts := *w.Acts
	acts.Streams = door.Hub
	StartWorker(t, srv.Client(), taskQueue, &acts)
	return taskQueue, door
}
