package policy

import "time"

// ProfileStats is one auth profile's usage record (usageStats.<id>).
type ProfileStats struct {
	LastUsed       time.Time      `json:"lastUsed,omitzero"`
	ErrorCount     int            `json:"errorCount,omitempty"`
	FailureCounts  map[Reason]int `json:"failureCounts,omitempty"`
	LastFailureAt  time.Time      `json:"lastFailureAt,omitzero"`
	CooldownUntil  time.Time      `json:"cooldownUntil,omitzero"`
	CooldownReason Reason         `json:"cooldownReason,omitempty"`
	CooldownModel  string         `json:"cooldownModel,omitempty"`
	// CooldownFromModel is the model whose failure began a profile-wide cooldown: a success of
	// another model narrows the window back to it (RecordSuccess).
	CooldownFromModel string    `json:"cooldownFromModel,omitempty"`
	DisabledUntil     time.Time `json:"disabledUntil,omitzero"`
	DisabledReason    Reason    `json:"disabledReason,omitempty"`
	// BlockedUntil is a provider-reported usage reset; BlockedModel scopes it to one model.
	BlockedUntil time.Time `json:"blockedUntil,omitzero"`
	BlockedModel string    `json:"blockedModel,omitempty"`
	LastProbeAt  time.Time `json:"lastProbeAt,omitzero"`
}

// IsZero reports a profile with no stat at all.
func (s ProfileStats) IsZero() bool {
	return s.LastUsed.IsZero() && s.ErrorCount == 0 && len(s.FailureCounts) == 0 && s.LastFailureAt.IsZero() &&
		s.CooldownUntil.IsZero() && s.DisabledUntil.IsZero() && s.BlockedUntil.IsZero() && s.LastProbeAt.IsZero()
}

func (s ProfileStats) clone() ProfileStats {
	if s.FailureCounts != nil {
		fc := make(map[Reason]int, len(s.FailureCounts))
		for k, v := range s.FailureCounts {
			fc[k] = v
		}
		s.FailureCounts = fc
	}
	return s
}

// Providers that manage their own limits: their profiles never get cooldowns.
func managesOwnCooldowns(provider string) bool {
	switch NormalizeProvider(provider) {
	case "openrouter", "kilocode":
		return true
	}
	return false
}

// TouchesStats reports whether a failure of this reason is recorded against the profile:
// context overflow, format and no-signal failures are the request's fault, not the key's.
func TouchesStats(r Reason) bool {
	switch r {
	case ReasonNone, ReasonContextOverflow, ReasonFormat:
		return false
	}
	return true
}

// ModelScoped reports the reasons whose cooldown covers one model only, so a sibling model on
// the same profile stays usable.
func ModelScoped(r Reason) bool {
	return r == ReasonRateLimit || r == ReasonTimeout || r == ReasonModelNotFound
}

// opensDisable reports the reasons that disable a profile rather than cool it down.
func opensDisable(r Reason) bool { return r == ReasonBilling || r == ReasonAuthPermanent }

// CooldownStep is the ladder: 1 min, 5 min, 25 min, then 1 h, for the nth error.
func CooldownStep(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	step := time.Minute
	for i := 1; i < n && step < time.Hour; i++ {
		step *= 5
	}
	return min(step, time.Hour)
}

// DisableStep is base·2^(n-1), capped.
func DisableStep(base, maxStep time.Duration, n int) time.Duration {
	if n < 1 {
		n = 1
	}
	step := base
	for i := 1; i < n && step < maxStep; i++ {
		step *= 2
	}
	return min(step, maxStep)
}

// active reports a window that has not yet expired: now >= until means expired.
func active(until, now time.Time) bool { return !until.IsZero() && now.Before(until) }

// coversModel reports whether a cooldown scoped to scope (empty: the whole profile) covers model.
func coversModel(scope, model string) bool { return scope == "" || scope == model }

// UnusableUntil is when a profile becomes usable for model: the latest active window relevant to
// that model, or zero when it is usable now.
func UnusableUntil(s ProfileStats, provider, model string, now time.Time) time.Time {
	return unusableUntil(&s, provider, model, now)
}

func unusableUntil(s *ProfileStats, provider, model string, now time.Time) time.Time {
	if managesOwnCooldowns(provider) {
		return time.Time{}
	}
	var until time.Time
	if active(s.DisabledUntil, now) {
		until = s.DisabledUntil
	}
	if active(s.BlockedUntil, now) && coversModel(s.BlockedModel, model) && s.BlockedUntil.After(until) {
		until = s.BlockedUntil
	}
	if active(s.CooldownUntil, now) && coversModel(s.CooldownModel, model) && s.CooldownUntil.After(until) {
		until = s.CooldownUntil
	}
	return until
}

// Available reports a profile usable for model at now.
func Available(s ProfileStats, provider, model string, now time.Time) bool {
	return UnusableUntil(s, provider, model, now).IsZero()
}

// Outcome is what one attempt did, for RecordFailure.
type Outcome struct {
	Reason   Reason
	Model    string
	Provider string
	// Hint carries a Retry-After that was too long to wait (the window ends no earlier) and a
	// provider-reported usage reset (blockedUntil).
	Hint RetryHint
}

// RecordFailure applies a failure to a profile's stats at now, following the counting rule of
// DESIGN.md: one outage climbs the ladder once, however many replies saw it.
func RecordFailure(s ProfileStats, o Outcome, cd Cooldowns, now time.Time) ProfileStats {
	if !TouchesStats(o.Reason) || managesOwnCooldowns(o.Provider) {
		return s
	}
	s = s.clone()
	if !o.Hint.ResetAt.IsZero() && o.Hint.ResetAt.After(now) {
		// A provider told us when the limit resets: that is the window, exactly.
		if !active(s.BlockedUntil, now) || o.Hint.ResetAt.After(s.BlockedUntil) {
			s.BlockedUntil = o.Hint.ResetAt
		}
		s.BlockedModel = ""
		if ModelScoped(o.Reason) {
			s.BlockedModel = o.Model
		}
		s.LastFailureAt = now
		return s
	}

	disable := opensDisable(o.Reason)
	if disable && active(s.DisabledUntil, now) {
		return s // a retry inside a disable never extends it
	}
	widen := false
	if !disable && active(s.CooldownUntil, now) {
		if coversModel(s.CooldownModel, o.Model) {
			return s // the same outage, seen again
		}
		widen = true // another model fails too: the cooldown now covers the profile
	}

	// Counters restart after failureWindow without a failure. Stats with no lastFailureAt (an
	// imported record) count as recent.
	if !s.LastFailureAt.IsZero() && now.Sub(s.LastFailureAt) >= cd.FailureWindow {
		s.ErrorCount = 0
		s.FailureCounts = nil
	}
	s.ErrorCount++
	if s.FailureCounts == nil {
		s.FailureCounts = map[Reason]int{}
	}
	s.FailureCounts[o.Reason]++
	s.LastFailureAt = now

	if disable {
		base, maxStep := cd.BillingBackoffFor(o.Provider), cd.BillingMax
		if o.Reason == ReasonAuthPermanent {
			base, maxStep = cd.AuthPermanentBackoff, cd.AuthPermanentMax
		}
		s.DisabledUntil = now.Add(DisableStep(base, maxStep, s.FailureCounts[o.Reason]))
		s.DisabledReason = o.Reason
		return s
	}

	until := now.Add(CooldownStep(s.ErrorCount))
	if o.Hint.HasAfter && now.Add(o.Hint.After).After(until) {
		until = now.Add(o.Hint.After) // a Retry-After too long to wait still bounds the window
	}
	if widen {
		if s.CooldownUntil.After(until) {
			until = s.CooldownUntil
		}
		// The window began with the model it was scoped to; it stays that model's if this one recovers.
		s.CooldownFromModel, s.CooldownModel = s.CooldownModel, ""
	} else {
		s.CooldownModel, s.CooldownFromModel = "", ""
		if ModelScoped(o.Reason) {
			s.CooldownModel = o.Model
		} else {
			s.CooldownFromModel = o.Model
		}
	}
	s.CooldownUntil = until
	s.CooldownReason = o.Reason
	return s
}

// RecordSuccess applies a success on model at now: lastUsed is set, errorCount and every window
// that covers this model are cleared; a window scoped to another model stays, with errorCount.
// A success narrows, it does not erase, what another model proved: a profile-wide cooldown that
// began with another model's failure becomes that model's window, so the profile is usable again
// for this model while the failed one is not retried before its window ends.
func RecordSuccess(s ProfileStats, model string, now time.Time) ProfileStats {
	s = s.clone()
	s.LastUsed = now
	if active(s.CooldownUntil, now) && s.CooldownModel == "" && s.CooldownFromModel != "" && s.CooldownFromModel != model {
		s.CooldownModel, s.CooldownFromModel = s.CooldownFromModel, ""
	}
	otherModelWindow := active(s.CooldownUntil, now) && s.CooldownModel != "" && s.CooldownModel != model
	if !otherModelWindow {
		s.CooldownUntil, s.CooldownReason, s.CooldownModel, s.CooldownFromModel = time.Time{}, "", "", ""
		s.ErrorCount = 0
		s.FailureCounts = nil
	}
	s.DisabledUntil, s.DisabledReason = time.Time{}, ""
	if coversModel(s.BlockedModel, model) {
		s.BlockedUntil, s.BlockedModel = time.Time{}, ""
	}
	return s
}

// ClearCooldown is the manual `auth clear-cooldown`: every window and counter goes; lastUsed and
// lastFailureAt stay.
func ClearCooldown(s ProfileStats) ProfileStats {
	return ProfileStats{LastUsed: s.LastUsed, LastFailureAt: s.LastFailureAt, LastProbeAt: s.LastProbeAt}
}

// unavailablePriority breaks ties between reasons, most telling first.
var unavailablePriority = [...]Reason{ReasonAuthPermanent, ReasonAuth, ReasonSessionExpired, ReasonBilling, ReasonFormat,
	ReasonModelNotFound, ReasonOverloaded, ReasonTimeout, ReasonRateLimit, ReasonEmptyResponse, ReasonNoErrorDetails, ReasonUnclassified}

// UnavailableReason says why a set of profiles is unavailable for model: an active disable,
// block or cooldown counts 1000, other recorded failures their count; ties go to the more telling
// reason. ReasonNone when nothing is active.
func UnavailableReason(stats []ProfileStats, provider, model string, now time.Time) Reason {
	return unavailableReason(len(stats), func(i int) *ProfileStats { return &stats[i] }, provider, model, now)
}

func unavailableReason(n int, stat func(int) *ProfileStats, provider, model string, now time.Time) Reason {
	if managesOwnCooldowns(provider) {
		return ReasonNone
	}
	var score [len(unavailablePriority)]int
	add := func(r Reason, n int) {
		for i, p := range unavailablePriority {
			if p == r {
				score[i] += n
			}
		}
	}
	anyActive := false
	for i := 0; i < n; i++ {
		s := stat(i)
		switch {
		case active(s.DisabledUntil, now):
			add(s.DisabledReason, 1000)
			anyActive = true
		case active(s.BlockedUntil, now) && coversModel(s.BlockedModel, model):
			add(ReasonRateLimit, 1000)
			anyActive = true
		case active(s.CooldownUntil, now) && coversModel(s.CooldownModel, model) && s.CooldownReason != "":
			add(s.CooldownReason, 1000)
			anyActive = true
		default:
			// Indexed by the priority list, not by ranging the map: the same in any order.
			for k, r := range unavailablePriority {
				score[k] += s.FailureCounts[r]
			}
		}
	}
	if !anyActive {
		return ReasonNone
	}
	best, bestScore := ReasonNone, 0
	for i, r := range unavailablePriority {
		if score[i] > bestScore {
			best, bestScore = r, score[i]
		}
	}
	if best == ReasonNone {
		return ReasonUnclassified
	}
	return best
}

// SoonestExpiry is when the first of these profiles becomes usable for model: the minimum over
// profiles of the latest window relevant to that model; zero when none has a window.
func SoonestExpiry(stats []ProfileStats, provider, model string, now time.Time) time.Time {
	return soonestExpiry(len(stats), func(i int) *ProfileStats { return &stats[i] }, provider, model, now)
}

func soonestExpiry(n int, stat func(int) *ProfileStats, provider, model string, now time.Time) time.Time {
	var soonest time.Time
	for i := 0; i < n; i++ {
		until := unusableUntil(stat(i), provider, model, now)
		if until.IsZero() {
			continue
		}
		if soonest.IsZero() || until.Before(soonest) {
			soonest = until
		}
	}
	return soonest
}

// SoonestBack is when the soonest candidate of chain may be usable again, from the stats of the
// profiles of each candidate's provider (zero: none is cooling down).
func SoonestBack(chain Chain, profiles []StoredProfile, now time.Time) time.Time {
	var soonest time.Time
	for _, cand := range chain.Candidates {
		var stats []ProfileStats
		for _, p := range profiles {
			if NormalizeProvider(p.Provider) == cand.Provider {
				stats = append(stats, p.Stats)
			}
		}
		soonest = EarliestOf(soonest, SoonestExpiry(stats, cand.Provider, cand.Model, now))
	}
	return soonest
}
