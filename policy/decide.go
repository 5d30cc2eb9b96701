package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Per-candidate actions.
const (
	ActionAttempt = "attempt" // a profile is available
	ActionProbe   = "probe"   // every profile is unavailable, but this one is tried anyway
	ActionSkip    = "skip"
)

// Probe timing (DESIGN.md "Probing").
const (
	ProbeMargin   = 2 * time.Minute  // a primary is probed when its soonest expiry is this close
	ProbeThrottle = 30 * time.Second // at most one cooldown probe per provider per this interval
)

// CandidateState is what the per-candidate decision depends on.
type CandidateState struct {
	Candidate ModelRef
	Index     int // position in the chain; 0 is the requested (primary) candidate
	ChainLen  int
	// Profiles in order (OrderProfiles), with their stats.
	Profiles []OrderedProfile
	// TransientProbeUsed: this reply already spent its transient probe on this provider.
	TransientProbeUsed bool
	// SkipCached is a skip-cache mark for this candidate in this session (ReasonNone: none).
	SkipCached Reason
}

// CandidateDecision says what to do with a candidate.
type CandidateDecision struct {
	Action  string `json:"action"`
	Profile string `json:"profile,omitempty"` // the profile to try first, or the one named by a skip
	Reason  Reason `json:"reason,omitempty"`  // why the candidate is unavailable (probe, skip)
	// SkipText is the summary's text for a skip.
	SkipText string `json:"skipText,omitempty"`
	// SetsThrottle: a cooldown probe marks the provider's probe time.
	SetsThrottle bool `json:"setsThrottle,omitempty"`
	// TransientProbe: this probe uses the reply's one transient probe for the provider.
	TransientProbe bool `json:"transientProbe,omitempty"`
	// Soonest is when the candidate first becomes usable (zero: unknown or now).
	Soonest time.Time `json:"soonest,omitzero"`
}

// Transient reports reasons whose cooldown a sibling may probe through.
func Transient(r Reason) bool {
	switch r {
	case ReasonRateLimit, ReasonOverloaded, ReasonTimeout, ReasonEmptyResponse, ReasonNoErrorDetails, ReasonUnclassified:
		return true
	}
	return false
}

// DecideCandidate decides attempt, probe or skip for one candidate at now.
func DecideCandidate(cs CandidateState, now time.Time) CandidateDecision {
	provider := cs.Candidate.Provider
	primary := cs.Index == 0
	if cs.SkipCached != ReasonNone && !primary {
		return CandidateDecision{Action: ActionSkip, Reason: cs.SkipCached, Profile: first(cs.Profiles),
			SkipText: fmt.Sprintf("recent %s failure in this session", cs.SkipCached)}
	}
	if len(cs.Profiles) == 0 {
		return CandidateDecision{Action: ActionSkip, Reason: ReasonAuth,
			SkipText: fmt.Sprintf("Provider %s has no auth profile (skipping all models)", provider)}
	}
	for _, p := range cs.Profiles {
		if p.Available {
			return CandidateDecision{Action: ActionAttempt, Profile: p.ID}
		}
	}

	stat := func(i int) *ProfileStats {
		if cs.Profiles[i].Stats == nil {
			return &ProfileStats{}
		}
		return cs.Profiles[i].Stats
	}
	reason := unavailableReason(len(cs.Profiles), stat, provider, cs.Candidate.Model, now)
	if reason == ReasonNone {
		reason = ReasonUnclassified
	}
	soonest := soonestExpiry(len(cs.Profiles), stat, provider, cs.Candidate.Model, now)
	d := CandidateDecision{Action: ActionSkip, Reason: reason, Profile: cs.Profiles[0].ID, Soonest: soonest,
		SkipText: fmt.Sprintf("Provider %s is in cooldown", provider)}
	if reason == ReasonAuth || reason == ReasonAuthPermanent {
		// Persistent auth failures skip the whole provider; they are never probed.
		d.SkipText = fmt.Sprintf("Provider %s has %s issue (skipping all models)", provider, reason)
		return d
	}
	// A probe claims the provider's probe slot (ProbeSlotOpen, across replies); AfterClaim says
	// what a refused claim leaves.
	nearExpiry := soonest.IsZero() || !now.Before(soonest.Add(-ProbeMargin))
	switch {
	case primary && cs.ChainLen == 1:
		// A strict chain has nothing else to try: it probes whenever the throttle allows.
		d.Action, d.SetsThrottle = ActionProbe, true
	case primary:
		if nearExpiry {
			d.Action, d.SetsThrottle = ActionProbe, true
		}
	case Transient(reason) && !cs.TransientProbeUsed:
		d.Action, d.SetsThrottle, d.TransientProbe = ActionProbe, true, true
	case Transient(reason):
		d.SkipText = fmt.Sprintf("Provider %s is in cooldown (probe already attempted this run)", provider)
	}
	return d
}

func first(ps []OrderedProfile) string {
	if len(ps) == 0 {
		return ""
	}
	return ps[0].ID
}

// KeepsTransientSlot reports probe failures that do not spend the reply's transient probe: they
// say nothing about whether the cooldown is over.
func KeepsTransientSlot(r Reason) bool {
	switch r {
	case ReasonModelNotFound, ReasonFormat, ReasonAuth, ReasonAuthPermanent, ReasonSessionExpired:
		return true
	}
	return false
}

// Steps after a failed attempt.
const (
	StepRotate  = "rotate"  // the next profile of the same candidate
	StepAdvance = "advance" // the next candidate of the chain
	StepStop    = "stop"    // the reply ends
)

// FailureState is what the step after a failure depends on.
type FailureState struct {
	Reason Reason
	// Rotations already made inside this candidate, by reason.
	Rotations map[Reason]int
	// NextProfile is the next untried available profile of this candidate ("" if none).
	NextProfile string
	UserPinned  bool
	Probe       bool
	// FormatRetryUsed: this reply already advanced past a format failure (UsedFormatRetry).
	FormatRetryUsed bool
	// HasNextCandidate: a candidate follows this one in the chain (false, the zero value, keeps a
	// format failure terminal).
	HasNextCandidate bool
}

// NextStep decides rotate, advance or stop after a failure. wait is a pause before rotating
// (overloadedBackoffMs).
func NextStep(fs FailureState, cd Cooldowns) (step string, wait time.Duration) {
	switch fs.Reason {
	case ReasonContextOverflow:
		return StepStop, 0
	case ReasonFormat:
		// The same payload fails the same way on every key: never rotate. With the opt-in, the
		// next model gets one chance per reply; with nothing after this one, the stop is truer.
		if cd.AllowFormatRetry && !fs.FormatRetryUsed && fs.HasNextCandidate {
			return StepAdvance, 0
		}
		return StepStop, 0
	}
	if fs.NextProfile == "" || fs.UserPinned || fs.Probe {
		return StepAdvance, 0
	}
	switch fs.Reason {
	case ReasonRateLimit:
		if fs.Rotations[ReasonRateLimit] < cd.RateLimitedProfileRotations {
			return StepRotate, 0
		}
	case ReasonOverloaded:
		if fs.Rotations[ReasonOverloaded] < cd.OverloadedProfileRotations {
			return StepRotate, cd.OverloadedBackoff
		}
	case ReasonAuth, ReasonBilling, ReasonAuthPermanent:
		return StepRotate, 0 // each remaining profile gets its chance
	}
	return StepAdvance, 0
}

// UsedFormatRetry reports whether a reply whose earlier attempts are these already spent its
// format retry: a format failure that did not end the reply.
func UsedFormatRetry(earlier []Attempt) bool {
	for _, a := range earlier {
		if a.Result == ResultFailed && a.Reason == ReasonFormat {
			return true
		}
	}
	return false
}

// Same-candidate retries stand in for the SDK-internal retries of the seeds.
const (
	MaxSameCandidateRetries = 2
	RetryBaseBackoff        = 500 * time.Millisecond
	DefaultRetryMaxWait     = 60 * time.Second
)

// RetryState describes a failed call for SameCandidateRetry.
type RetryState struct {
	Status int
	Net    NetErrorKind
	// StreamFault: the stream started and then failed (cut, stall, first-token timeout, in-band
	// error, malformed chunk). Those are not retried on the same route.
	StreamFault  bool
	Hint         RetryHint
	RetriesSoFar int
	MaxWait      time.Duration
	// Jitter in [0,1) spreads backoffs; simulate passes 0.
	Jitter float64
	// Probe: the call went to a route that cools down for its model (ProbeCall). A probe is one
	// call: it asks whether the outage is over, and retries in place would be the very calls the
	// cooldown spares (one probe per throttle window).
	Probe bool
}

// SameCandidateRetry decides whether to call the same candidate and profile again, and after
// how long: a 408, 409, 429, 5xx or a reset before any output, at most twice and never after a
// probe; Retry-After when given and within MaxWait (a longer one is not waited: the failure
// surfaces at once), else 0.5 s doubling with jitter.
func SameCandidateRetry(rs RetryState) (retry bool, wait time.Duration) {
	if rs.RetriesSoFar >= MaxSameCandidateRetries || rs.StreamFault || rs.Probe {
		return false, 0
	}
	retryable := rs.Status == 408 || rs.Status == 409 || rs.Status == 429 || (rs.Status >= 500 && rs.Status <= 599) ||
		(rs.Status == 0 && rs.Net == NetReset)
	if !retryable {
		return false, 0
	}
	maxWait := rs.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultRetryMaxWait
	}
	if rs.Hint.HasAfter {
		if rs.Hint.After > maxWait {
			return false, 0
		}
		return true, rs.Hint.After
	}
	backoff := RetryBaseBackoff << rs.RetriesSoFar
	jitter := min(max(rs.Jitter, 0), 1)
	return true, backoff + time.Duration(float64(backoff)*0.5*jitter)
}

// ProbeCall reports whether a call on profile for provider/model at now is a probe: the profile's
// usage stats, as the reply last loaded or recorded them, cool it down for that model, so only
// DecideCandidate's probe could have chosen it. A window that ended meanwhile makes the route an
// ordinary one again.
func ProbeCall(profiles []StoredProfile, profile, provider, model string, now time.Time) bool {
	for i := range profiles {
		if profiles[i].ID == profile {
			return !unusableUntil(&profiles[i].Stats, provider, model, now).IsZero()
		}
	}
	return false
}

// Skip cache TTL bounds (BATON_FALLBACK_SKIP_TTL_MS, seed 001's OPENCLAW_FALLBACK_SKIP_TTL_MS).
const (
	DefaultSkipTTL = 60 * time.Second
	MinSkipTTL     = time.Second
	MaxSkipTTL     = 10 * time.Minute
)

// ParseSkipTTL reads the skip cache TTL in milliseconds: a strict non-negative integer, clamped
// to 1 s..10 min, 0 turns the cache off, unset is 60 s. A bad value returns the default and an
// error saying why, for the caller to report.
func ParseSkipTTL(raw string, set bool) (time.Duration, error) {
	if !set {
		return DefaultSkipTTL, nil
	}
	raw = strings.TrimSpace(raw)
	n, err := strconv.ParseUint(raw, 10, 63)
	if err != nil || raw == "" || strings.HasPrefix(raw, "+") {
		return DefaultSkipTTL, fmt.Errorf("%q is not a whole number of milliseconds; using %v", raw, DefaultSkipTTL)
	}
	if n == 0 {
		return 0, nil
	}
	d := time.Duration(min(n, uint64(MaxSkipTTL/time.Millisecond))) * time.Millisecond
	return min(max(d, MinSkipTTL), MaxSkipTTL), nil
}

// MarksSkipCache reports a failure that marks the skip cache: a non-primary candidate failing
// with auth or auth_permanent inside a session.
func MarksSkipCache(index int, reason Reason, session string) bool {
	return index > 0 && session != "" && (reason == ReasonAuth || reason == ReasonAuthPermanent)
}

// LiveSwitch decides where a reply goes when the user switches model mid-reply: jump to the
// target when it is a later candidate (jump >= 0), else end so the caller restarts (restart).
func LiveSwitch(ch Chain, current int, target ModelRef) (jump int, restart bool) {
	if i := ch.Index(target); i > current {
		return i, false
	}
	return -1, true
}

// ProbeSlotOpen reports whether a provider last probed at last (zero: never) may be probed at
// now: at most one cooldown probe per provider per ProbeThrottle, across all replies. The store
// applies it inside the transaction that claims the slot.
func ProbeSlotOpen(last, now time.Time) bool {
	return last.IsZero() || now.Sub(last) >= ProbeThrottle
}

// AfterClaim is the decision once the probe slot was claimed or refused: only a primary's probe
// waits for the throttle (refused: the candidate is skipped); a transient sibling probe goes on
// and has merely set it.
func AfterClaim(d CandidateDecision, claimed bool) CandidateDecision {
	if d.Action == ActionProbe && d.SetsThrottle && !claimed && !d.TransientProbe {
		d.Action = ActionSkip
	}
	return d
}
