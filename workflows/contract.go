package workflows

import (
	"encoding/json"
	"time"

	"github.com/batonhq/baton/policy"
)

// The reply's contract: the records its workflow and activities pass each other, beside the
// typed activity names (activities.go). Plain data, never a secret. What the rules read of them
// is policy's (policy.Ask, policy.AttemptOutcome, policy.ReplyState, policy.TurnEnd).

// ReplyRequest is what starts a reply.
type ReplyRequest struct {
	Agent   string `json:"agent"`
	Session string `json:"session,omitempty"`
	Message string `json:"message"`
	// Turn, when given, is the whole model turn (conversation, tools, parameters); Message is then
	// ignored. A large turn lives in the store instead, named by TurnRef (never both). It is the
	// provider layer's turn (provider.Turn) as JSON, carried opaquely: the workflow never reads
	// inside it, only passes it to the attempt.
	Turn    json.RawMessage `json:"turn,omitempty"`
	TurnRef string          `json:"turnRef,omitempty"`
	// CarriesImages: the turn holds an image, so text-only candidates are skipped (and the image
	// chain serves it when no candidate of the chain accepts images).
	CarriesImages bool `json:"carriesImages,omitempty"`
	// Reasoning: the turn asks for reasoning (a reasoning effort or a thinking budget), so its
	// attempts get the reasoning first-token default (Config.Deadlines).
	Reasoning bool `json:"reasoning,omitempty"`
	// Model is a one-off explicit provider/model: strict.
	Model string `json:"model,omitempty"`
	// FixedChain is a chain the caller fixed (a cron job's payload, an HTTP request's model and
	// fallbacks). Its JSON name predates it: recorded histories carry "cron".
	FixedChain *policy.FixedChain   `json:"cron,omitempty"`
	Heartbeat  *policy.HeartbeatRun `json:"heartbeat,omitempty"`
	Image      bool                 `json:"image,omitempty"`
	// StreamQueue is the task queue of the front door holding the caller (serve, baton reply):
	// attempts run there, so that the answer's deltas reach the caller in memory as the provider
	// sends them. The shared queue takes over when nothing polls it. StreamKey names the caller's
	// stream there.
	StreamQueue string `json:"streamQueue,omitempty"`
	StreamKey   string `json:"streamKey,omitempty"`
	// LogKey names the reply's event log in the store (a Responses reply a caller may leave and
	// resume): every attempt writes what reaches the caller there, in batches, before the caller
	// gets it, so any front door can send it again. "": none.
	LogKey string `json:"logKey,omitempty"`
	// Restarts counts the times a user's /model started this reply over (continue-as-new).
	Restarts int `json:"restarts,omitempty"`
	// Earlier are the attempts of the runs a /model restart ended: the result joins them before
	// this run's own (policy decisions read only this run's).
	Earlier []policy.Attempt `json:"earlier,omitempty"`
	// NoJitter makes backoffs exact (simulate).
	NoJitter bool `json:"noJitter,omitempty"`
	// Job is the cron job that started the reply ("" for none), and JobBudget its daily budget:
	// what the reply spends counts against both, and against its agent's.
	Job       string         `json:"job,omitempty"`
	JobBudget *policy.Budget `json:"jobBudget,omitempty"`
	// WaitForCooldown lets an exhausted reply sleep (a durable timer) until the soonest
	// cooldown expires and try the chain again, for up to this long in all. Zero: fail at once.
	WaitForCooldown time.Duration `json:"waitForCooldown,omitempty"`
}

// Ask is the request as the rules read it.
func (r ReplyRequest) Ask() policy.Ask {
	return policy.Ask{Agent: r.Agent, Session: r.Session, Model: r.Model, FixedChain: r.FixedChain, Heartbeat: r.Heartbeat,
		Image: r.Image, CarriesImages: r.CarriesImages}
}

// AttemptRequest is one call: one candidate with one profile.
type AttemptRequest struct {
	Agent    string `json:"agent"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Profile  string `json:"profile"`
	Message  string `json:"message"`
	// Turn or TurnRef, when given, replaces Message with a whole turn (Turn: provider.Turn as JSON,
	// opaque to the workflow, which never reads inside it).
	Turn    json.RawMessage `json:"turn,omitempty"`
	TurnRef string          `json:"turnRef,omitempty"`
	// ReplyAgent is the reply's agent when Agent (whose profiles) is another (AuthAgent), and Job
	// the cron job that started the reply: what the call spends counts against their budgets.
	ReplyAgent string `json:"replyAgent,omitempty"`
	Job        string `json:"job,omitempty"`
	// Key is the attempt's identity: the same across runs of it after a lost worker, so that the
	// outcome (or the checkpoint) the first run kept is not bought again.
	Key string `json:"key,omitempty"`
	// StreamKey names the caller's live stream (ReplyRequest.StreamKey); Prefill is the answer
	// the caller already holds, which this attempt continues.
	StreamKey string `json:"streamKey,omitempty"`
	Prefill   string `json:"prefill,omitempty"`
	// LogKey is the reply's event log (ReplyRequest.LogKey).
	LogKey string `json:"logKey,omitempty"`
	// Continuation is how this model is asked to continue Prefill (ContinuePrefill,
	// ContinueRestart, ContinueInstruction; "" is ContinueInstruction, as replies recorded before
	// it asked); PrefillPrefix adds "prefix": true for the servers that want it.
	Continuation  string `json:"continuation,omitempty"`
	PrefillPrefix bool   `json:"prefillPrefix,omitempty"`
	// Now is the workflow's clock, for credential expiry.
	Now               time.Time     `json:"now"`
	FirstTokenTimeout time.Duration `json:"firstTokenTimeout"`
	IdleTimeout       time.Duration `json:"idleTimeout"`
	ResponseTimeout   time.Duration `json:"responseTimeout,omitempty"`
	// AttemptTimeout bounds the whole call (0: none); MinTokensPerSecond and ThroughputGrace are
	// its throughput floor (0: none). The reply's Config.Deadlines for the candidate.
	AttemptTimeout     time.Duration `json:"attemptTimeout,omitempty"`
	MinTokensPerSecond float64       `json:"minTokensPerSecond,omitempty"`
	ThroughputGrace    time.Duration `json:"throughputGrace,omitempty"`
	// The attempt applies its final outcome to the profile's usage stats itself and, on success,
	// ends the turn with OnSuccess, so that the reply spends no history events on them. An outcome
	// the reply will retry in place (WillRetry) is not recorded: only the last failure of a route
	// counts against the profile.
	// What the caller's answer says of the reply when the attempt hands it over at once (answer
	// first): the reply's attempts before this one, why it last failed over ("": it did not),
	// and what the cut attempts it continues were billed.
	Before           int             `json:"before,omitempty"`
	FallbackReason   policy.Reason   `json:"fallbackReason,omitempty"`
	HeldBilledInput  int64           `json:"heldBilledInput,omitempty"`
	HeldBilledOutput int64           `json:"heldBilledOutput,omitempty"`
	Retries          int             `json:"retries,omitempty"`      // same-candidate retries before this call
	RetryMaxWait     time.Duration   `json:"retryMaxWait,omitempty"` // the reply's retry budget
	OnSuccess        *policy.TurnEnd `json:"onSuccess,omitempty"`
}

// OutcomeRecord applies one attempt's outcome to its profile's usage stats.
type OutcomeRecord struct {
	Agent    string           `json:"agent"`
	Profile  string           `json:"profile"`
	Provider string           `json:"provider"`
	Model    string           `json:"model"`
	OK       bool             `json:"ok"`
	Reason   policy.Reason    `json:"reason,omitempty"`
	Hint     policy.RetryHint `json:"hint,omitzero"`
	At       time.Time        `json:"at"`
}

// ProbeClaim asks for a provider's probe slot (policy.ProbeSlotOpen) at At.
type ProbeClaim struct {
	Agent    string    `json:"agent"`
	Provider string    `json:"provider"`
	At       time.Time `json:"at"`
}

// SessionWrite is a compare-and-set of the session's fallback-owned fields.
type SessionWrite struct {
	Session  string              `json:"session"`
	Agent    string              `json:"agent"`
	Expected policy.SessionModel `json:"expected"`
	Next     policy.SessionModel `json:"next"`
	At       time.Time           `json:"at"`
}

// SessionRollback undoes a failed fallback's write, field by field.
type SessionRollback struct {
	Session string              `json:"session"`
	Before  policy.SessionModel `json:"before"`
	Written policy.SessionModel `json:"written"`
	At      time.Time           `json:"at"`
}

// SkipMarkRequest marks the skip cache of a session.
type SkipMarkRequest struct {
	Session string          `json:"session"`
	Mark    policy.SkipMark `json:"mark"`
	At      time.Time       `json:"at"`
}
