package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonhq/baton/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// throughput starts InFlight session replies at once and waits for all of them: their rate, and
// raw inflight_p50_ms, inflight_p99_ms.
func (b *bench) throughput(ctx context.Context) (float64, error) {
	b.progress("throughput: %d replies in flight at once", b.opts.InFlight)
	stamp := time.Now().UnixNano()
	rps, lat, err := b.load(ctx, "inflight", func(i int) (client.StartWorkflowOptions, string, []any) {
		session := fmt.Sprintf("bench-load-%d", i)
		return workflows.ReplyStartOptions(fmt.Sprintf("bench-load-%d-%d", i, stamp), taskQueue, agentHappy, session),
			workflows.ReplyWorkflowName, []any{workflows.ReplyRequest{Agent: agentHappy, Session: session, Message: "hello"}}
	})
	if err != nil {
		return 0, err
	}
	b.raw["inflight_p50_ms"], b.raw["inflight_p99_ms"] = p(lat, 50), p(lat, 99)
	return rps, nil
}

// The engine floors: the cheapest workflows a reply could be, each run by a worker in the bench
// process on its own task queue, only for its phase, and started as the replies are. The
// local-activity floor (start, one no-op local activity, complete: one workflow task) is the
// engine's absolute limit. The regular-activity floor (start, one no-op activity, complete: two
// workflow tasks around it) has a reply's shape: a reply's attempt is a regular activity so that a
// long stream stays cancellable and switchable, so this floor is the fair one for baton's own cost.
const floorActivityName = "BenchFloorNoop"

type engineFloor struct {
	kind      string // raw's prefix: KIND_p50_ms, KIND_wall_ms, …
	idPrefix  string // of its workflow IDs
	what      string // for the progress line
	taskQueue string
	name      string // its workflow type
	workflow  func(workflow.Context) error
}

var (
	localFloor = engineFloor{kind: "floor", idPrefix: "bench-floor", what: "one no-op local activity",
		taskQueue: "baton-bench-floor", name: "BenchFloor", workflow: floorWorkflow}
	regularFloor = engineFloor{kind: "floor_regular", idPrefix: "bench-floor-regular", what: "one no-op regular activity",
		taskQueue: "baton-bench-floor-regular", name: "BenchFloorRegular", workflow: floorRegularWorkflow}
)

func floorWorkflow(ctx workflow.Context) error {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteLocalActivity(ctx, floorActivityName).Get(ctx, nil)
}

// floorRegularWorkflow schedules its activity on the workflow's task queue, as a reply schedules
// its attempt, so the worker that completes the workflow task starts it eagerly, as baton-worker does.
func floorRegularWorkflow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteActivity(ctx, floorActivityName).Get(ctx, nil)
}

func floorNoop(context.Context) error { return nil }

// floor starts InFlight workflows of f at once, as throughput starts the replies, and waits for
// all of them: their rate, and raw KIND_p50_ms, KIND_p99_ms. Its worker runs only for this phase.
func (b *bench) floor(ctx context.Context, f engineFloor) (float64, error) {
	b.progress("engine floor: %d workflows of %s in flight at once (a worker in this process)", b.opts.InFlight, f.what)
	w := worker.New(b.c, f.taskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(f.workflow, workflow.RegisterOptions{Name: f.name})
	w.RegisterActivityWithOptions(floorNoop, activity.RegisterOptions{Name: floorActivityName})
	if err := w.Start(); err != nil {
		return 0, fmt.Errorf("starting the %s worker: %w", f.kind, err)
	}
	defer w.Stop()
	// Warm up as the replies were: the first workflow pays for the task queue and the worker's
	// first polls.
	run, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("%s-warm-%d", f.idPrefix, time.Now().UnixNano()),
		TaskQueue: f.taskQueue}, f.name)
	if err == nil {
		err = run.Get(ctx, nil)
	}
	if err != nil {
		return 0, fmt.Errorf("a %s workflow: %w", f.kind, err)
	}
	stamp := time.Now().UnixNano()
	rps, lat, err := b.load(ctx, f.kind, func(i int) (client.StartWorkflowOptions, string, []any) {
		return client.StartWorkflowOptions{ID: fmt.Sprintf("%s-%d-%d", f.idPrefix, i, stamp), TaskQueue: f.taskQueue}, f.name, nil
	})
	if err != nil {
		return 0, err
	}
	b.raw[f.kind+"_p50_ms"], b.raw[f.kind+"_p99_ms"] = p(lat, 50), p(lat, 99)
	return rps, nil
}

// load starts InFlight workflows at once (start gives the i-th one's options, type and arguments),
// each under its own ID, and waits for all of them: their rate (completed ÷ wall time) and each
// one's time from its first start call to its completion, in ms. raw gets KIND_wall_ms and
// KIND_retried_starts.
func (b *bench) load(ctx context.Context, kind string, start func(i int) (client.StartWorkflowOptions, string, []any)) (float64, []float64, error) {
	n := b.opts.InFlight
	lat := make([]float64, n)
	errs := make([]error, n)
	var retried atomic.Int64
	var wg sync.WaitGroup
	cpu := b.cpuTimes()
	begin := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts, workflowType, args := start(i)
			t := time.Now()
			run, err := b.startUnderLoad(ctx, &retried, opts, workflowType, args...)
			if err == nil {
				err = run.Get(ctx, nil)
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", opts.ID, err)
				return
			}
			lat[i] = ms(time.Since(t))
		}()
	}
	wg.Wait()
	wall := time.Since(begin)
	if err := errors.Join(errs...); err != nil {
		return 0, nil, err
	}
	b.raw[kind+"_wall_ms"] = ms(wall)
	b.raw[kind+"_retried_starts"] = float64(retried.Load())
	for proc, t := range b.cpuTimes() {
		if t0, ok := cpu[proc]; ok {
			b.raw[kind+"_"+proc+"_cpu_ms_per_wf"] = ms(t-t0) / float64(n)
		}
	}
	return float64(n) / wall.Seconds(), lat, nil
}

// startUnderLoad starts a workflow as a careful client does under load: a start that timed out
// or was turned away is sent again with the same workflow ID (so it never starts twice), and one
// the server already took is joined. The time spent waiting counts in the workflow's latency.
func (b *bench) startUnderLoad(ctx context.Context, retried *atomic.Int64, opts client.StartWorkflowOptions, workflowType string, args ...any) (client.WorkflowRun, error) {
	// A start sent again after the first one's workflow already ended must not run it twice.
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	for {
		run, err := b.c.ExecuteWorkflow(ctx, opts, workflowType, args...)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		var deadline *serviceerror.DeadlineExceeded
		var unavailable *serviceerror.Unavailable
		var exhausted *serviceerror.ResourceExhausted
		switch {
		case err == nil:
			return run, nil
		case errors.As(err, &started):
			return b.c.GetWorkflow(ctx, opts.ID, ""), nil
		case ctx.Err() != nil:
			return nil, err
		case errors.As(err, &deadline) || errors.As(err, &unavailable) || errors.As(err, &exhausted) ||
			errors.Is(err, context.DeadlineExceeded):
			retried.Add(1)
			continue
		default:
			return nil, err
		}
	}
}
