// Package workflows holds baton's deterministic workflow code. Activities are called by their
// registered names, so this package depends on the SDK and policy only.
package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Registered names. They are part of every recorded history: never rename them.
const (
	PingWorkflowName = "Ping"
	PingActivityName = "Ping"
)

// Ping is the ping activity: it answers with the worker's identity.
var Ping = Activity[string, string]{PingActivityName}

// PingInput asks a worker to answer.
type PingInput struct {
	Message string `json:"message"`
}

// PingResult says which worker answered and when (workflow time).
type PingResult struct {
	Message string    `json:"message"`
	Worker  string    `json:"worker"`
	At      time.Time `json:"at"`
}

// PingWorkflow proves that a worker polls the task queue and runs activities: `baton ping` and
// `make demo` use it before anything else.
func PingWorkflow(ctx workflow.Context, in PingInput) (PingResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		// A worker that is up answers at once; retrying hides nothing worth hiding.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	worker, err := Ping.Run(ctx, in.Message)
	if err != nil {
		return PingResult{}, err
	}
	return PingResult{Message: in.Message, Worker: worker, At: workflow.Now(ctx)}, nil
}
