package policy

import "time"

// RetryHint is what a failed answer says about when to come back.
type RetryHint struct {
	// After is the Retry-After / retry-after-ms wait; HasAfter tells a given 0 from none.
	After    time.Duration `json:"after,omitempty"`
	HasAfter bool          `json:"hasAfter,omitempty"`
	// ResetAt is a provider-reported usage-limit reset (it sets blockedUntil exactly).
	ResetAt time.Time `json:"resetAt,omitempty"`
}

// maxHint caps hints so that a hostile header cannot overflow time arithmetic.
const maxHint = 30 * 24 * time.Hour

// RetryInfo is what a failed answer said about when to come back, as it said it: the provider
// layer reads it from the headers and the body (provider.RetryInfo, the same shape), without a
// clock; RetryHintAt reads it at a time.
type RetryInfo struct {
	// After is retry-after-ms, else Retry-After in seconds (HasAfter: one was given, 0 included);
	// AfterDate is a Retry-After given as an HTTP date instead.
	After     time.Duration `json:"after,omitempty"`
	HasAfter  bool          `json:"hasAfter,omitempty"`
	AfterDate time.Time     `json:"afterDate,omitzero"`
	// HeaderResetAt is Anthropic's unified usage-limit reset header; BodyResetAt and BodyResetIn
	// are a usage-limit body's resets_at and (when it gives no valid resets_at) resets_in_seconds.
	HeaderResetAt time.Time     `json:"headerResetAt,omitzero"`
	BodyResetAt   time.Time     `json:"bodyResetAt,omitzero"`
	BodyResetIn   time.Duration `json:"bodyResetIn,omitempty"`
}

// RetryHintAt is what a failure said about when to come back, read at now: the wait (capped at
// maxHint; a date in the past waits nothing) and a usage-limit reset (bounded by maxHint; one in
// the past is none). A body's reset speaks over the header's.
func RetryHintAt(r RetryInfo, now time.Time) RetryHint {
	var h RetryHint
	switch {
	case r.HasAfter:
		h.After, h.HasAfter = clampHint(r.After), true
	case !r.AfterDate.IsZero():
		h.After, h.HasAfter = clampHint(max(r.AfterDate.Sub(now), 0)), true
	}
	if !r.HeaderResetAt.IsZero() {
		h.ResetAt = boundedReset(r.HeaderResetAt, now)
	}
	switch {
	case !r.BodyResetAt.IsZero():
		if t := boundedReset(r.BodyResetAt, now); !t.IsZero() {
			h.ResetAt = t
		}
	case r.BodyResetIn > 0:
		h.ResetAt = now.Add(clampHint(r.BodyResetIn))
	}
	return h
}

func clampHint(d time.Duration) time.Duration { return min(max(d, 0), maxHint) }

func boundedReset(t, now time.Time) time.Time {
	if t.Before(now) {
		return time.Time{}
	}
	if t.Sub(now) > maxHint {
		return now.Add(maxHint)
	}
	return t
}
