package policy

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

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

// ParseRetryHint reads retry-after-ms, Retry-After (seconds or an HTTP date) and a usage-limit
// reset time (a Codex-style body with resets_at / resets_in_seconds, or Anthropic's unified reset
// header). Header names are case-insensitive.
func ParseRetryHint(headers map[string]string, body string, now time.Time) RetryHint {
	var h RetryHint
	get := func(name string) string {
		for k, v := range headers {
			if strings.EqualFold(k, name) {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if ms := get("retry-after-ms"); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f >= 0 && !math.IsInf(f, 0) {
			h.After, h.HasAfter = floatDuration(f, time.Millisecond), true
		}
	}
	if ra := get("retry-after"); ra != "" && !h.HasAfter {
		if f, err := strconv.ParseFloat(ra, 64); err == nil && f >= 0 && !math.IsInf(f, 0) {
			h.After, h.HasAfter = floatDuration(f, time.Second), true
		} else if t, ok := parseHTTPDate(ra); ok {
			h.After, h.HasAfter = clampHint(max(t.Sub(now), 0)), true
		}
	}
	if reset := get("anthropic-ratelimit-unified-reset"); reset != "" {
		if sec, err := strconv.ParseInt(reset, 10, 64); err == nil && sec > 0 {
			h.ResetAt = boundedReset(time.Unix(sec, 0).UTC(), now)
		}
	}
	if at, ok := usageResetFromBody(body, now); ok {
		h.ResetAt = at
	}
	return h
}

func clampHint(d time.Duration) time.Duration { return min(max(d, 0), maxHint) }

// floatDuration converts n units to a duration within [0, maxHint] without overflowing.
func floatDuration(n float64, unit time.Duration) time.Duration {
	if f := n * float64(unit); f < float64(maxHint) {
		return clampHint(time.Duration(f))
	}
	return maxHint
}

func boundedReset(t, now time.Time) time.Time {
	if t.Before(now) {
		return time.Time{}
	}
	if t.Sub(now) > maxHint {
		return now.Add(maxHint)
	}
	return t
}

// usageResetFromBody reads {"error":{"resets_at":epochSeconds}} or {"error":{"resets_in_seconds":N}}.
func usageResetFromBody(body string, now time.Time) (time.Time, bool) {
	body = strings.TrimSpace(body)
	if !strings.HasPrefix(body, "{") || !strings.Contains(body, "resets_") {
		return time.Time{}, false
	}
	type resets struct {
		ResetsAt        *float64 `json:"resets_at"`
		ResetsInSeconds *float64 `json:"resets_in_seconds"`
	}
	var outer struct {
		resets
		Error *resets `json:"error"`
	}
	if json.Unmarshal([]byte(body), &outer) != nil {
		return time.Time{}, false
	}
	r := outer.resets
	if outer.Error != nil {
		r = *outer.Error
	}
	switch {
	case r.ResetsAt != nil && *r.ResetsAt > 0 && *r.ResetsAt < 1e11:
		t := boundedReset(time.Unix(int64(*r.ResetsAt), 0).UTC(), now)
		return t, !t.IsZero()
	case r.ResetsInSeconds != nil && *r.ResetsInSeconds > 0 && !math.IsInf(*r.ResetsInSeconds, 0):
		return now.Add(floatDuration(*r.ResetsInSeconds, time.Second)), true
	}
	return time.Time{}, false
}

// parseHTTPDate reads the three date forms HTTP allows (RFC 9110 §5.6.7).
func parseHTTPDate(s string) (time.Time, bool) {
	for _, layout := range []string{"Mon, 02 Jan 2006 15:04:05 GMT", "Monday, 02-Jan-06 15:04:05 GMT", "Mon Jan _2 15:04:05 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
