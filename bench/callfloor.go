package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/batonhq/baton/provider"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// The latency floors: the call a happy reply's attempt makes, made by the cheapest workflow of a
// reply's shape (start, one regular activity that makes the call, complete) from a worker in the
// bench process, on its own task queue. What the engine alone adds to a call on this machine and
// server, without any of baton's work (no state loaded, nothing kept or recorded): the floor the
// latency ratios stand on.
const (
	callFloorQueue    = "baton-bench-floor-call"
	callFloorWorkflow = "BenchFloorCall"
	callFloorActivity = "BenchFloorCallActivity"
)

// callFloor runs the floor's activity: the direct call, then word to whoever waits for the
// answer of its workflow (the answer-first floor).
type callFloor struct {
	b        *bench
	answered sync.Map // workflow ID → chan struct{}
}

func (f *callFloor) call(ctx context.Context) error {
	req, err := f.b.directRequest(ctx, "alpha", profileHappy, "hello")
	if err != nil {
		return err
	}
	if _, err := provider.Complete(ctx, req); err != nil {
		return err
	}
	if ch, ok := f.answered.LoadAndDelete(activity.GetInfo(ctx).WorkflowExecution.ID); ok {
		close(ch.(chan struct{}))
	}
	return nil
}

func callFloorWorkflowFunc(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	return workflow.ExecuteActivity(ctx, callFloorActivity).Get(ctx, nil)
}

// callFloors times, interleaved with the direct call, Samples floor workflows of each path:
// started by a client through matching and timed to their completion (happy_ratio's path: raw
// floor_call_p50_ms), and started eagerly by the worker's own client and timed to the moment the
// call returns (serve's path with answer first: raw floor_answer_first_p50_ms); raw
// floor_call_direct_p50_ms is the direct call's p50 beside them.
func (b *bench) callFloors(ctx context.Context) error {
	b.progress("latency floors: %d direct calls, and the same call made by a one-activity workflow, started through matching and eagerly", b.opts.Samples)
	f := &callFloor{b: b}
	w := worker.New(b.c, callFloorQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(callFloorWorkflowFunc, workflow.RegisterOptions{Name: callFloorWorkflow})
	w.RegisterActivityWithOptions(f.call, activity.RegisterOptions{Name: callFloorActivity})
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting the latency floor's worker: %w", err)
	}
	defer w.Stop()
	stamp := time.Now().UnixNano()
	seq := 0
	run := func(eager bool) (time.Duration, error) {
		seq++
		id := fmt.Sprintf("bench-floor-call-%d-%d", seq, stamp)
		ch := make(chan struct{})
		if eager {
			f.answered.Store(id, ch)
		}
		start := time.Now()
		r, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: callFloorQueue, EnableEagerStart: eager}, callFloorWorkflow)
		if err != nil {
			return 0, fmt.Errorf("starting a latency floor workflow: %w", err)
		}
		var took time.Duration
		if eager {
			select {
			case <-ch:
				took = time.Since(start)
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		if err := r.Get(ctx, nil); err != nil {
			return 0, fmt.Errorf("a latency floor workflow: %w", err)
		}
		if !eager {
			took = time.Since(start)
		}
		return took, nil
	}
	for range 3 { // warm-up: the task queue, the worker's first polls
		if _, err := run(false); err != nil {
			return err
		}
	}
	var direct, viaMatching, answerFirst []float64
	for range b.opts.Samples {
		d, err := b.direct(ctx, "alpha", profileHappy)
		if err != nil {
			return err
		}
		m, err := run(false)
		if err != nil {
			return err
		}
		e, err := run(true)
		if err != nil {
			return err
		}
		direct, viaMatching, answerFirst = append(direct, ms(d)), append(viaMatching, ms(m)), append(answerFirst, ms(e))
	}
	b.raw["floor_call_direct_p50_ms"], b.raw["floor_call_p50_ms"], b.raw["floor_answer_first_p50_ms"] = p(direct, 50), p(viaMatching, 50), p(answerFirst, 50)
	return nil
}
