package policy

import (
	"encoding/json"
	"time"
)

// What a reply's rules read and return: the state a reply starts from, what an attempt did, what
// a turn writes, the result. The records that carry them between the workflow and its activities
// (with their transport: task queues, stream keys, the turn itself) are workflows/contract.go's.

// Ask is what a reply asks for, as the rules read it: the agent and session, the selection (an
// explicit model, a chain the caller fixed, a heartbeat's model, the image chain) and what the
// turn holds.
type Ask struct {
	Agent   string
	Session string
	// Model is a one-off explicit provider/model: strict.
	Model      string
	FixedChain *FixedChain
	Heartbeat  *HeartbeatRun
	Image      bool
	// CarriesImages: the turn holds an image, so text-only candidates are skipped (and the image
	// chain serves it when no candidate of the chain accepts images).
	CarriesImages bool
}

// HeartbeatRun marks a heartbeat reply; Model is its own model, if any.
type HeartbeatRun struct {
	Model string `json:"model,omitempty"`
}

// ReplyState is what a reply loads before it decides anything: never a secret.
type ReplyState struct {
	Config   *Config         `json:"config"`
	Session  SessionModel    `json:"session"`
	Notice   NoticeState     `json:"notice"`
	Reprobed time.Time       `json:"reprobed,omitzero"` // last re-probe of the auto override's origin
	Profiles []StoredProfile `json:"profiles"`
	// AuthAgent is whose auth store the reply uses: the agent's own, or main's when it has none
	// (an agent inherits the main agent's credentials).
	AuthAgent string `json:"authAgent,omitempty"`
	// SkipMarks are the session's skip-cache marks.
	SkipMarks []SkipMark          `json:"skipMarks,omitempty"`
	Orders    map[string][]string `json:"orders,omitempty"`
	// Limits from the worker's environment.
	RetryMaxWait      time.Duration `json:"retryMaxWait"`
	SkipTTL           time.Duration `json:"skipTTL"`
	FirstTokenTimeout time.Duration `json:"firstTokenTimeout"`
	IdleTimeout       time.Duration `json:"idleTimeout"`
	// ResponseTimeout bounds the wait for a provider's response headers (0: the provider layer's default).
	ResponseTimeout time.Duration `json:"responseTimeout,omitempty"`
	// ReasoningFirstTokenTimeout is the first-token default of a request that asks for reasoning
	// or a reasoning model; AttemptTimeout bounds a whole attempt (0: no bound). Config.Deadlines
	// reads them with the model's catalog entry.
	ReasoningFirstTokenTimeout time.Duration `json:"reasoningFirstTokenTimeout,omitempty"`
	AttemptTimeout             time.Duration `json:"attemptTimeout,omitempty"`
	// InfraRetries bounds how often an attempt whose worker was lost is run again in place
	// (BATON_INFRA_RETRIES; 0: DefaultInfraRetries).
	InfraRetries int `json:"infraRetries,omitempty"`
	// Budgets are the daily budgets that apply to the reply (its cron job's, its agent's) with
	// what was spent against them today: over one, the reply does not start (OverBudget).
	Budgets []BudgetCheck `json:"budgets,omitempty"`
}

// DefaultInfraRetries is how often a lost worker's attempt is run again before the reply fails.
const DefaultInfraRetries = 3

// WillRetry reports whether a reply calls the same route again after this outcome (the
// same-candidate retry of AfterFailure, which does not depend on jitter). It does not know a
// probe: a probe's failure it expects retried, the reply records itself.
func WillRetry(out AttemptOutcome, retriesSoFar int, maxWait time.Duration) bool {
	if out.OK {
		return false
	}
	retry, _, _ := sameCandidateRetry(retryState{Status: out.Status, Net: NetErrorKind(out.Net), StreamFault: out.StreamFault != "",
		Hint: out.Hint, RetriesSoFar: retriesSoFar, MaxWait: maxWait})
	return retry
}

// AttemptOutcome is what one call did, classified where it happened so that the history keeps
// the reason each decision was made on.
type AttemptOutcome struct {
	OK bool `json:"ok"`
	Answer

	Reason Reason `json:"reason,omitempty"`
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`
	// Error is the provider's message (else a body preview), key material masked.
	Error string `json:"error,omitempty"`
	// Hint is what the failure said about when to come back (read at the workflow's time).
	Hint RetryHint `json:"hint,omitzero"`
	// StreamFault: the stream had started; such failures are not retried on the same route.
	StreamFault string `json:"streamFault,omitempty"`
	Net         string `json:"net,omitempty"`
	// Partial is the text a failed stream had sent, Delivered whether any of this attempt's
	// content reached a live caller, ToolCallsDelivered how many complete tool calls did.
	Partial            string `json:"partial,omitempty"`
	Delivered          bool   `json:"delivered,omitempty"`
	ToolCallsDelivered int    `json:"toolCallsDelivered,omitempty"`
	// Continuing a cut answer: Mismatch, the continuation's opening did not repeat what the
	// caller holds (a different answer: nothing of it went out); PrefillRejected, the model
	// refused the prefill (a capability, not a fault: nothing is recorded against the profile).
	Mismatch        bool `json:"mismatch,omitempty"`
	PrefillRejected bool `json:"prefillRejected,omitempty"`
	// Billed is what a failed stream's provider reported (or, for its output, what its text
	// suggests) before it failed: the caller of a continued answer was billed for it too.
	BilledInput  int64 `json:"billedInput,omitempty"`
	BilledOutput int64 `json:"billedOutput,omitempty"`
	// Spend is what this call consumed (a success's usage, a failure's billed tokens), priced at
	// the catalog's price when the call was made.
	Spend *Spend `json:"spend,omitempty"`

	// Recorded is the profile's usage stats after the attempt recorded its final outcome itself;
	// nil when it did not, and the reply records it.
	Recorded *ProfileStats `json:"recorded,omitempty"`
	// TurnEnded: the attempt wrote OnSuccess.
	TurnEnded bool `json:"turnEnded,omitempty"`
}

// TurnEnd is what a finished turn writes to the session.
type TurnEnd struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	// Notice is the new notice state; nil leaves it (cron and heartbeat keep none).
	Notice *NoticeState `json:"notice,omitempty"`
	// FallbackReason is why the reply ended on a fallback ("" when it did not).
	FallbackReason string `json:"fallbackReason,omitempty"`
	// Pin makes Profile the session's auto profile pin (not over a user's pin).
	Pin      bool   `json:"pin,omitempty"`
	Provider string `json:"provider,omitempty"`
	Profile  string `json:"profile,omitempty"`
	// ClearAuto clears an auto override (its origin answered, or a heartbeat found it stale).
	ClearAuto bool `json:"clearAuto,omitempty"`
	// Reprobed records that this turn re-probed the origin.
	Reprobed bool      `json:"reprobed,omitempty"`
	At       time.Time `json:"at"`
}

// ReplyResult is a reply's answer.
type ReplyResult struct {
	Answer
	Served   Served    `json:"served"`
	Attempts []Attempt `json:"attempts"`
	Notices  []string  `json:"notices"`
	// Spend is what every attempt of the reply consumed together (TotalSpend).
	Spend *Spend `json:"spend,omitempty"`
}

// Answer is what an answer carries, alike in an attempt's outcome and in the reply's result.
type Answer struct {
	Text string `json:"text"`
	// ToolCalls and Reasoning are the answer's tool calls and reasoning parts (provider.ToolCall,
	// provider.Part) as JSON, carried opaquely: the workflow never reads inside them, only hands
	// them on from the outcome to the result; a front door decodes them
	// (provider.EncodeAnswerContent, DecodeAnswerContent).
	ToolCalls    json.RawMessage `json:"toolCalls,omitempty"`
	Reasoning    json.RawMessage `json:"reasoning,omitempty"`
	FinishReason string          `json:"finishReason,omitempty"`
	Input        int64           `json:"inputTokens"`
	Output       int64           `json:"outputTokens"`
	CachedInput  int64           `json:"cachedInputTokens,omitempty"`
	// ReasoningOutput is the part of Output spent reasoning, where the provider says.
	ReasoningOutput int64 `json:"reasoningOutputTokens,omitempty"`
	// CacheWriteInput is the part of Input written to the prompt cache, where the provider says.
	CacheWriteInput int64 `json:"cacheWriteInputTokens,omitempty"`
}

// Served names the candidate and profile that answered.
type Served struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Profile  string `json:"profile"`
}

// Error types a reply ends with.
const (
	ErrFallbackSummary = "FallbackSummaryError"
	ErrContextOverflow = "ContextOverflowError"
	ErrFormat          = "FormatError"
	ErrAborted         = "AbortedError"
	// ErrStreamInterrupted ends a reply whose stream failed after the caller saw part of it
	// (streaming.midStream "error", or a tool call already delivered).
	ErrStreamInterrupted = "StreamInterruptedError"
	// ErrContinuationMismatch ends a reply whose continuation of a cut answer did not repeat what
	// the caller holds: the next candidate answered something else, and none of it was sent.
	ErrContinuationMismatch = "ContinuationMismatchError"
	// ErrWorkersLost ends a reply whose attempts kept losing their worker: baton's infrastructure
	// failed, not the models.
	ErrWorkersLost = "WorkersLostError"
	// ErrWorkerShutdown is an attempt ended by its worker stopping (an infrastructure fault).
	ErrWorkerShutdown = "WorkerShutdown"
)

// SkipMark remembers, for a session, a fallback candidate whose profile just failed auth: it is
// skipped with Reason until Until.
type SkipMark struct {
	Model   string    `json:"model"` // provider/model
	Profile string    `json:"profile"`
	Reason  Reason    `json:"reason"`
	Until   time.Time `json:"until"`
}

// SkipMarkFor returns the reason a live mark skips (model, profile) at now, or ReasonNone.
func SkipMarkFor(marks []SkipMark, model ModelRef, profile string, now time.Time) Reason {
	for _, m := range marks {
		if m.Model == model.String() && m.Profile == profile && now.Before(m.Until) {
			return m.Reason
		}
	}
	return ReasonNone
}
