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
	r.RegisterWorkflowWithOptions(workflows.PingWorkflow, workflow.RegisterOptions{Name: workflows.PingWorkflowName})
	r.RegisterActivityWithOptions(a.Ping, activity.RegisterOptions{Name: workflows.PingActivityName})
}

// RegisterWorkflows adds the workflows only, for replaying histories.
func RegisterWorkflows(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.PingWorkflow, workflow.RegisterOptions{Name: workflows.PingWorkflowName})
}
