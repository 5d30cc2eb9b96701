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
