package policy

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Attempt results.
const (
	ResultSucceeded = "succeeded"
	ResultFailed    = "failed"
	ResultSkipped   = "skipped"
	ResultSwitched  = "switched"
)

// Attempt is one (candidate, profile) a reply tried or skipped.
type Attempt struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Profile  string `json:"profile,omitempty"`
	Result   string `json:"result"`
	Reason   Reason `json:"reason,omitempty"`
	Status   int    `json:"status,omitempty"`
	Code     string `json:"code,omitempty"`
	// Error is the provider's error message (or the skip text), never a secret.
	Error string `json:"error,omitempty"`
	// Probe and Retries are present on every tried attempt.
	Probe   *bool `json:"probe,omitempty"`
	Retries *int  `json:"retries,omitempty"`
	// Continues: the attempt continued an answer another attempt's stream had begun.
	Continues bool      `json:"continues,omitempty"`
	At        time.Time `json:"at,omitzero"`
	// Spend is what the attempt's calls consumed (its same-candidate retries included), and cost
	// where the model is priced; absent when nothing was reported.
	Spend *Spend `json:"spend,omitempty"`
}

// Ref is the attempt's provider/model.
func (a Attempt) Ref() ModelRef { return ModelRef{Provider: a.Provider, Model: a.Model} }

func (a Attempt) unsuccessful() bool { return a.Result == ResultFailed || a.Result == ResultSkipped }

// summaryErrorMax is how much of a provider's error the summary keeps (119 runes and "…").
const summaryErrorMax = 120

// FailureSummary is the exhaustion message: `All models failed (N): p/m: <error> (<reason>) | …`.
func FailureSummary(attempts []Attempt, image bool) string {
	var parts []string
	for _, a := range attempts {
		if !a.unsuccessful() {
			continue
		}
		reason := a.Reason.String()
		if a.Reason == ReasonNone {
			reason = "unknown"
		}
		parts = append(parts, fmt.Sprintf("%s: %s (%s)", a.Ref(), summaryText(a.Error, summaryErrorMax), reason))
	}
	label := "models"
	if image {
		label = "image models"
	}
	return fmt.Sprintf("All %s failed (%d): %s", label, len(parts), strings.Join(parts, " | "))
}

// summaryText collapses white space and cuts to max runes, the last being "…".
func summaryText(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "error"
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// LastReason is the reason of the last unsuccessful attempt.
func LastReason(attempts []Attempt) Reason {
	for i := len(attempts) - 1; i >= 0; i-- {
		if attempts[i].unsuccessful() {
			return attempts[i].Reason
		}
	}
	return ReasonNone
}

// NoticeState is what the session remembers of the last notice: the selected and the active
// model. A change of reason alone is not a new notice.
type NoticeState struct {
	Selected string `json:"selected,omitempty"`
	Active   string `json:"active,omitempty"`
}

// Notices returns the user-visible notices for a reply that was asked for selected and answered
// from active, and the state to keep: one notice per state change, none on sticky turns.
func Notices(prev NoticeState, selected, active ModelRef, attempts []Attempt) ([]string, NoticeState) {
	if active != selected {
		next := NoticeState{Selected: selected.String(), Active: active.String()}
		if next == prev {
			return nil, next
		}
		return []string{fmt.Sprintf("↪️ Model Fallback: %s (selected %s; %s)", active, selected, noticeReason(attempts))}, next
	}
	if prev.Active != "" && prev.Active != prev.Selected {
		return []string{fmt.Sprintf("↪️ Model Fallback cleared: %s (was %s)", selected, prev.Active)}, NoticeState{}
	}
	return nil, NoticeState{}
}

// noticeReason is the first unsuccessful attempt's reason with spaces, and how many more failed
// before the winner.
func noticeReason(attempts []Attempt) string {
	var first Attempt
	n := 0
	for _, a := range attempts {
		if !a.unsuccessful() {
			continue
		}
		if n == 0 {
			first = a
		}
		n++
	}
	if n == 0 {
		return "selected model unavailable"
	}
	r := strings.ReplaceAll(first.Reason.String(), "_", " ")
	if first.Reason == ReasonNone {
		r = "unknown"
	}
	if n > 1 {
		r += fmt.Sprintf(" (+%d more attempts)", n-1)
	}
	return r
}

// Decisions of the model_fallback_decision record.
const (
	DecisionSkip      = "skip_candidate"
	DecisionProbe     = "probe_cooldown_candidate"
	DecisionFailed    = "candidate_failed"
	DecisionSucceeded = "candidate_succeeded"
)

// Final outcomes of a fallback step. A failure that ends the reply names its stop instead of a
// next candidate it never tried.
const (
	StepNextFallback    = "next_fallback"
	StepSucceeded       = "succeeded"
	StepChainExhausted  = "chain_exhausted"
	StepContextOverflow = "context_overflow"
	StepFormat          = "format"
	StepAborted         = "aborted"
)

// DecisionRecord is the model_fallback_decision log record with its fallbackStep* fields.
type DecisionRecord struct {
	Event                 string `json:"event"`
	Decision              string `json:"decision"`
	RequestedProvider     string `json:"requestedProvider"`
	RequestedModel        string `json:"requestedModel"`
	CandidateProvider     string `json:"candidateProvider"`
	CandidateModel        string `json:"candidateModel"`
	CandidateRouteOrigin  string `json:"candidateRouteOrigin,omitempty"`
	Profile               string `json:"profile,omitempty"`
	Attempt               int    `json:"attempt"`
	Total                 int    `json:"total"`
	Reason                string `json:"reason,omitempty"`
	Status                int    `json:"status,omitempty"`
	Code                  string `json:"code,omitempty"`
	ErrorPreview          string `json:"errorPreview,omitempty"`
	NextCandidateProvider string `json:"nextCandidateProvider,omitempty"`
	NextCandidateModel    string `json:"nextCandidateModel,omitempty"`
	IsPrimary             bool   `json:"isPrimary"`
	FallbackConfigured    bool   `json:"fallbackConfigured"`
	ProfileCount          int    `json:"profileCount,omitempty"`

	FallbackStepType              string `json:"fallbackStepType,omitempty"`
	FallbackStepFromModel         string `json:"fallbackStepFromModel,omitempty"`
	FallbackStepToModel           string `json:"fallbackStepToModel,omitempty"`
	FallbackStepFromFailureReason string `json:"fallbackStepFromFailureReason,omitempty"`
	FallbackStepFromFailureDetail string `json:"fallbackStepFromFailureDetail,omitempty"`
	FallbackStepChainPosition     int    `json:"fallbackStepChainPosition,omitempty"`
	FallbackStepFinalOutcome      string `json:"fallbackStepFinalOutcome,omitempty"`
}

// DecisionInput describes one decision of a reply.
type DecisionInput struct {
	Decision  string
	Chain     Chain
	Index     int // candidate position in the chain
	AttemptNo int // 1-based attempt number in the reply
	Attempt   Attempt
	// Previous is the last failed attempt before a success, linked to the winner.
	Previous     *Attempt
	ProfileCount int
	// Step is what the reply does after a failure (FailurePlan.DecisionStep; StepStop with no
	// reason for a user's abort). Empty: inferred from the reason, as if format retry were off.
	Step string
}

// stopOutcome is the final outcome of a failed attempt that ends the reply, "" when it does not.
func stopOutcome(step string, r Reason) string {
	if step == "" {
		// Context overflow and (by default) format always stop.
		if r == ReasonContextOverflow || r == ReasonFormat {
			step = StepStop
		}
	}
	if step != StepStop {
		return ""
	}
	switch r {
	case ReasonContextOverflow:
		return StepContextOverflow
	case ReasonFormat:
		return StepFormat
	}
	return StepAborted
}

// NewDecisionRecord builds the log record of one decision.
func NewDecisionRecord(in DecisionInput) DecisionRecord {
	cand := in.Chain.Candidates[in.Index]
	r := DecisionRecord{
		Event:                "model_fallback_decision",
		Decision:             in.Decision,
		RequestedProvider:    in.Chain.Requested.Provider,
		RequestedModel:       in.Chain.Requested.Model,
		CandidateProvider:    cand.Provider,
		CandidateModel:       cand.Model,
		CandidateRouteOrigin: cand.Origin,
		Profile:              in.Attempt.Profile,
		Attempt:              in.AttemptNo,
		Total:                len(in.Chain.Candidates),
		Status:               in.Attempt.Status,
		Code:                 in.Attempt.Code,
		ErrorPreview:         previewOf(in.Attempt.Error),
		IsPrimary:            in.Index == 0,
		FallbackConfigured:   len(in.Chain.Candidates) > 1,
		ProfileCount:         in.ProfileCount,
	}
	if in.Attempt.Reason != ReasonNone {
		r.Reason = string(in.Attempt.Reason)
	}
	stop := ""
	if in.Decision == DecisionFailed {
		stop = stopOutcome(in.Step, in.Attempt.Reason)
	}
	var next *Candidate
	if in.Index+1 < len(in.Chain.Candidates) && stop == "" {
		next = &in.Chain.Candidates[in.Index+1]
		r.NextCandidateProvider, r.NextCandidateModel = next.Provider, next.Model
	}
	switch in.Decision {
	case DecisionFailed, DecisionSkip:
		r.FallbackStepType = "fallback_step"
		r.FallbackStepFromModel = cand.String()
		r.FallbackStepFromFailureReason = r.Reason
		r.FallbackStepFromFailureDetail = r.ErrorPreview
		r.FallbackStepChainPosition = in.AttemptNo
		r.FallbackStepFinalOutcome = StepChainExhausted
		if stop != "" {
			r.FallbackStepFinalOutcome = stop
		} else if next != nil {
			r.FallbackStepToModel = next.String()
			r.FallbackStepFinalOutcome = StepNextFallback
		}
	case DecisionSucceeded:
		if in.Previous != nil {
			r.FallbackStepType = "fallback_step"
			r.FallbackStepFromModel = in.Previous.Ref().String()
			r.FallbackStepToModel = cand.String()
			r.FallbackStepFromFailureReason = string(in.Previous.Reason)
			r.FallbackStepFromFailureDetail = previewOf(in.Previous.Error)
			r.FallbackStepChainPosition = in.AttemptNo
			r.FallbackStepFinalOutcome = StepSucceeded
		}
	}
	return r
}

func previewOf(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return summaryText(s, summaryErrorMax)
}

// ConsoleMessage is the record's one-line form.
func (r DecisionRecord) ConsoleMessage() string {
	next := "none"
	if r.NextCandidateProvider != "" {
		next = r.NextCandidateProvider + "/" + r.NextCandidateModel
	}
	reason := r.Reason
	if reason == "" {
		reason = "none"
	}
	return fmt.Sprintf("model fallback decision: decision=%s requested=%s/%s candidate=%s/%s reason=%s next=%s",
		r.Decision, r.RequestedProvider, r.RequestedModel, r.CandidateProvider, r.CandidateModel, reason, next)
}

// Exhaustion is the failure of a reply whose chain ran out: the summary message, the reason of
// the last unsuccessful attempt, every attempt, and when the soonest candidate becomes usable.
type Exhaustion struct {
	Message               string     `json:"message"`
	Reason                Reason     `json:"reason,omitempty"`
	Attempts              []Attempt  `json:"attempts"`
	SoonestCooldownExpiry *time.Time `json:"soonestCooldownExpiry"`
}

// Exhausted builds the failure of an exhausted chain. soonest is the minimum over the tried and
// skipped candidates of CandidateExpiry (zero: none known).
func Exhausted(attempts []Attempt, image bool, soonest time.Time) Exhaustion {
	e := Exhaustion{Message: FailureSummary(attempts, image), Reason: LastReason(attempts), Attempts: attempts}
	if !soonest.IsZero() {
		e.SoonestCooldownExpiry = &soonest
	}
	return e
}

// AllRateLimited reports an exhaustion whose every failed or skipped attempt was rate-limited:
// a front door answers it with 429 and Retry-After, the whole seconds until the soonest candidate
// is back (at least 1), or 0 when no expiry is known (no Retry-After).
func (e Exhaustion) AllRateLimited(now time.Time) (limited bool, retryAfterSeconds int) {
	if len(e.Attempts) == 0 {
		return false, 0
	}
	for _, a := range e.Attempts {
		if a.unsuccessful() && a.Reason != ReasonRateLimit {
			return false, 0
		}
	}
	if e.SoonestCooldownExpiry != nil {
		retryAfterSeconds = max(1, int(math.Ceil(e.SoonestCooldownExpiry.Sub(now).Seconds())))
	}
	return true, retryAfterSeconds
}

// EarliestOf returns the earliest non-zero time, zero if none.
func EarliestOf(times ...time.Time) time.Time {
	var out time.Time
	for _, t := range times {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

// LastFailed is the last failed attempt of attempts (nil: none failed), which a success's
// decision record names as the step it recovered from.
func LastFailed(attempts []Attempt) *Attempt {
	for k := len(attempts) - 1; k >= 0; k-- {
		if attempts[k].Result == ResultFailed {
			return &attempts[k]
		}
	}
	return nil
}
