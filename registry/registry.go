// Package registry wires workflows to their activities under stable names. The worker, the
// test suite and `baton simulate` all register through it, so they run exactly the same code.
package registry

import (
	"context"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register adds every baton workflow and activity to r. Each activity is bound through its
// typed name: an implementation whose arguments or result differ from the name's does not compile.
func Register(r worker.Registry, a *activities.Activities) {
	RegisterWorkflows(r)
	bind(r, workflows.Ping, a.Ping)
	bind(r, workflows.LoadReply, a.LoadReply)
	bind(r, workflows.Attempt, a.Attempt)
	bind(r, workflows.RecordOutcome, a.RecordOutcome)
	bind(r, workflows.ClaimProbe, a.ClaimProbe)
	bind(r, workflows.WriteFallback, a.WriteFallback)
	bind(r, workflows.RollbackFallback, done(a.RollbackFallback))
	bind(r, workflows.EndTurn, done(a.EndTurn))
	bind(r, workflows.MarkSkip, done(a.MarkSkip))
}

// bind registers fn under the activity's name, if its type is the one the name says.
func bind[In, Out any](r worker.ActivityRegistry, a workflows.Activity[In, Out], fn func(context.Context, In) (Out, error)) {
	r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: a.Name})
}

// done adapts an activity that returns only its error.
func done[In any](fn func(context.Context, In) error) func(context.Context, In) (workflows.Done, error) {
	return func(ctx context.Context, in In) (workflows.Done, error) { return workflows.Done{}, fn(ctx, in) }
}

// RegisterWorkflows adds the workflows only, for replaying histories.
func RegisterWorkflows(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.PingWorkflow, workflow.RegisterOptions{Name: workflows.PingWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.ReplyWorkflow, workflow.RegisterOptions{Name: workflows.ReplyWorkflowName})
}

// WorkerOptions are every baton worker's options: the shared worker's, and a front door's own. A
// cancelled reply's attempt hears of it on its next heartbeat, which the SDK may send every
// activities.HeartbeatEvery.
func WorkerOptions(stopTimeout time.Duration) worker.Options {
	return worker.Options{WorkerStopTimeout: stopTimeout, MaxHeartbeatThrottleInterval: activities.HeartbeatEvery}
}

// RegisterAttempts adds the attempt activity alone: a front door (serve, baton reply) runs the
// attempts of the callers it holds, so that their deltas reach them in memory.
func RegisterAttempts(r worker.ActivityRegistry, a *activities.Activities) {
	bind(r, workflows.Attempt, a.Attempt)
}
