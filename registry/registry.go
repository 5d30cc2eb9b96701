// Package registry wires workflows to their activities under stable names. The worker, the
// test suite and `baton simulate` all register through it, so they run exactly the same code.
package registry

import (
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register adds every baton workflow and activity to r.
func Register(r worker.Registry, a *activities.Activities) {
	RegisterWorkflows(r)
	for name, fn := range map[string]any{
		workflows.PingActivityName:         a.Ping,
		workflows.LoadReplyActivity:        a.LoadReply,
		workflows.AttemptActivity:          a.Attempt,
		workflows.RecordOutcomeActivity:    a.RecordOutcome,
		workflows.ClaimProbeActivity:       a.ClaimProbe,
		workflows.WriteFallbackActivity:    a.WriteFallback,
		workflows.RollbackFallbackActivity: a.RollbackFallback,
		workflows.EndTurnActivity:          a.EndTurn,
		workflows.MarkSkipActivity:         a.MarkSkip,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
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
	r.RegisterActivityWithOptions(a.Attempt, activity.RegisterOptions{Name: workflows.AttemptActivity})
}
