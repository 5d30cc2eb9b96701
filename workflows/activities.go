package workflows

import (
	"time"

	"github.com/batonhq/baton/policy"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Registered names of the reply's activities. They are part of every recorded history: never
// rename them.
const (
	LoadReplyActivity        = "LoadReply"
	AttemptActivity          = "Attempt"
	RecordOutcomeActivity    = "RecordOutcome"
	ClaimProbeActivity       = "ClaimProbe"
	WriteFallbackActivity    = "WriteFallback"
	RollbackFallbackActivity = "RollbackFallback"
	EndTurnActivity          = "EndTurn"
	MarkSkipActivity         = "MarkSkip"
)

// Activity is an activity's registered name typed by its input and output. The workflow calls
// an activity only through one (Run, RunLocal) and registry binds each implementation through
// one (Bind): a call or an implementation with arguments of another type does not compile, and
// this package still imports nothing that does I/O.
type Activity[In, Out any] struct{ Name string }

// Done is the output of an activity that returns nothing but its error.
type Done struct{}

// The reply's activities.
var (
	LoadReply        = Activity[ReplyRequest, policy.ReplyState]{LoadReplyActivity}
	Attempt          = Activity[AttemptRequest, policy.AttemptOutcome]{AttemptActivity}
	RecordOutcome    = Activity[OutcomeRecord, policy.ProfileStats]{RecordOutcomeActivity}
	ClaimProbe       = Activity[ProbeClaim, bool]{ClaimProbeActivity}
	WriteFallback    = Activity[SessionWrite, bool]{WriteFallbackActivity}
	RollbackFallback = Activity[SessionRollback, Done]{RollbackFallbackActivity}
	EndTurn          = Activity[policy.TurnEnd, Done]{EndTurnActivity}
	MarkSkip         = Activity[SkipMarkRequest, Done]{MarkSkipActivity}
)

// Run calls the activity with the context's activity options.
func (a Activity[In, Out]) Run(ctx workflow.Context, in In) (Out, error) {
	var out Out
	err := workflow.ExecuteActivity(ctx, a.Name, in).Get(ctx, &out)
	return out, err
}

// RunLocal calls the activity as a local activity with the context's local activity options.
func (a Activity[In, Out]) RunLocal(ctx workflow.Context, in In) (Out, error) {
	var out Out
	err := workflow.ExecuteLocalActivity(ctx, a.Name, in).Get(ctx, &out)
	return out, err
}

// storeStep is the options of the reply's store steps: local activities (a marker event each,
// no round trip through the server), retried briefly; a missing store is not retried.
func storeStep(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{"NoStore"}},
	})
}

// undoStep is the options of a rollback, the step that keeps a failed reply from leaving its
// fallback on the session: it outlasts a store that restarts (the brief retries of storeStep
// gave up within ~3 s while a PostgreSQL restart took 10) and only then is logged as failed.
func undoStep(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumInterval: 5 * time.Second,
			NonRetryableErrorTypes: []string{"NoStore"}},
	})
}
