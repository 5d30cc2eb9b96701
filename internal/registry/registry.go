// Package registry wires workflows to their activities under stable names. The worker, the
// test suite and `baton simulate` all register through it, so they run exactly the same code.
package registry

import (
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
