package testsuite

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton/activities"
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
