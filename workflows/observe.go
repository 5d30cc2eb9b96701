package workflows

import (
	"github.com/batonhq/baton/policy"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// What a reply shows outside its history: search attributes, metrics, decision log lines.

// Search attributes a reply upserts, so an operator can find every reply that failed over. The
// namespace must have them registered (the dev server does; see README for a real cluster).
var (
	saAgent          = temporal.NewSearchAttributeKeyKeyword("BatonAgent")
	saSession        = temporal.NewSearchAttributeKeyKeyword("BatonSession")
	saFinalModel     = temporal.NewSearchAttributeKeyKeyword("BatonFinalModel")
	saFailoverReason = temporal.NewSearchAttributeKeyKeyword("BatonFailoverReason")
	saAttempts       = temporal.NewSearchAttributeKeyInt64("BatonAttempts")
	saUsedFallback   = temporal.NewSearchAttributeKeyBool("BatonUsedFallback")
)

// observe records the reply's latency and outcome (the SDK's metrics handler is replay-safe).
func (r *reply) observe(ctx workflow.Context, outcome string, usedFallback bool) {
	m := workflow.GetMetricsHandler(ctx)
	m.WithTags(map[string]string{"outcome": outcome}).Timer("baton_reply_latency").Record(workflow.Now(ctx).Sub(r.started))
	if usedFallback {
		m.Counter("baton_fallbacks_total").Inc(1)
	}
}

// log writes one model_fallback_decision record through the replay-safe logger.
func (r *reply) log(ctx workflow.Context, decision string, i int, a policy.Attempt, profiles int, previous *policy.Attempt, step string) {
	rec := policy.NewDecisionRecord(policy.DecisionInput{Decision: decision, Chain: r.chain, Index: i,
		AttemptNo: len(r.attempts), Attempt: a, Previous: previous, ProfileCount: profiles, Step: step})
	workflow.GetLogger(ctx).Info(rec.ConsoleMessage(), "event", rec.Event, "decision", rec.Decision,
		"requestedProvider", rec.RequestedProvider, "requestedModel", rec.RequestedModel,
		"candidateProvider", rec.CandidateProvider, "candidateModel", rec.CandidateModel, "profile", rec.Profile,
		"attempt", rec.Attempt, "total", rec.Total, "reason", rec.Reason, "status", rec.Status,
		"nextCandidateProvider", rec.NextCandidateProvider, "nextCandidateModel", rec.NextCandidateModel,
		"fallbackStepType", rec.FallbackStepType, "fallbackStepFromModel", rec.FallbackStepFromModel,
		"fallbackStepToModel", rec.FallbackStepToModel, "fallbackStepFromFailureReason", rec.FallbackStepFromFailureReason,
		"fallbackStepChainPosition", rec.FallbackStepChainPosition, "fallbackStepFinalOutcome", rec.FallbackStepFinalOutcome)
}
