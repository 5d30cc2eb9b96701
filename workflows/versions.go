package workflows

// Changes to what a reply decides. A change to a workflow's decisions that a running reply could
// replay differently goes behind workflow.GetVersion(ctx, <id>, workflow.DefaultVersion, 1), and
// its ID is declared below, saying what it changed and which history in testdata/ exercises it:
// TestEveryChangeHasAHistory fails for a declared ID that no recorded history took, and for a
// history that took an ID not declared here. A change is retired (its old branch, its entry and
// the histories recorded before it, together) once no reply that predates it can still run.
//
// A decision on data only a newer first step records needs no gate: the daily budget check
// (issue 28) reads ReplyState.Budgets, which histories recorded before budgets do not hold, so they
// replay as they ran; reply-budget-exceeded.json replays a run it refused.
//
// (The gates of the first development cycle, lean-history, skip-cache, switch-restart and
// infra-retry, were retired with the histories recorded before them.)
const (
	// changeContinuationCheck (issue 26): a cut answer is continued as each model can be asked
	// (its catalog's continuation), a model that cannot is skipped (no_continuation), a refused
	// prefill is asked again to restart, a continuation that does not repeat what the caller
	// holds ends the reply (ContinuationMismatchError), and a reply no candidate can finish ends
	// as StreamInterruptedError naming the cut. Taken when a reply first continues a cut answer.
	// History: reply-continuation.json.
	changeContinuationCheck = "continuation-check"

	// changeProbeOneCall (issue 26): a probe of a cooling route is one call, never retried in
	// place (the retries were the very calls the cooldown spares: three per probe of a dead
	// primary). Taken when a probe fails in a way an ordinary call retries. History:
	// reply-probe-one-call.json.
	changeProbeOneCall = "probe-one-call"

	// changeRollbackFailedWrite (issue 29): a fallback write that failed is rolled back like one
	// that succeeded, since it may have landed (the chaos run found sessions left on a fallback
	// after a database restart and after cancelled replies). Taken when a fallback write fails.
	// History: reply-write-failed.json.
	changeRollbackFailedWrite = "rollback-failed-write"
)

// changeIDs lists every change ID above.
var changeIDs = []string{changeContinuationCheck, changeProbeOneCall, changeRollbackFailedWrite}
