package policy

import "time"

// Override sources, as the session stores them.
const (
	SourceAuto    = "auto"
	SourceUser    = "user"
	SourceDefault = "default"
)

// SessionModel holds the session fields failover reads and writes: the six override fields of
// the seeds, the origin of an auto override, and when it was written.
type SessionModel struct {
	ProviderOverride                    string    `json:"providerOverride,omitempty"`
	ModelOverride                       string    `json:"modelOverride,omitempty"`
	ModelOverrideSource                 string    `json:"modelOverrideSource,omitempty"`
	AuthProfileOverride                 string    `json:"authProfileOverride,omitempty"`
	AuthProfileOverrideSource           string    `json:"authProfileOverrideSource,omitempty"`
	AuthProfileOverrideCompactionCount  *int      `json:"authProfileOverrideCompactionCount,omitempty"`
	ModelOverrideFallbackOriginProvider string    `json:"modelOverrideFallbackOriginProvider,omitempty"`
	ModelOverrideFallbackOriginModel    string    `json:"modelOverrideFallbackOriginModel,omitempty"`
	ModelOverrideUpdatedAt              time.Time `json:"modelOverrideUpdatedAt,omitzero"`
	CompactionCount                     int       `json:"compactionCount,omitempty"`
}

// Override returns the session's model override, if any.
func (s SessionModel) Override() (ModelRef, bool) {
	if s.ModelOverride == "" {
		return ModelRef{}, false
	}
	provider := s.ProviderOverride
	if provider == "" {
		// Old entries keep "provider/model" in modelOverride alone.
		if r, err := ParseModelRef(s.ModelOverride); err == nil {
			return r, true
		}
	}
	return ModelRef{Provider: NormalizeProvider(provider), Model: s.ModelOverride}, provider != ""
}

// Origin is the model that was selected when an auto override was written.
func (s SessionModel) Origin() (ModelRef, bool) {
	if s.ModelOverrideFallbackOriginProvider == "" || s.ModelOverrideFallbackOriginModel == "" {
		return ModelRef{}, false
	}
	return ModelRef{Provider: NormalizeProvider(s.ModelOverrideFallbackOriginProvider), Model: s.ModelOverrideFallbackOriginModel}, true
}

// EffectiveOverrideSource is the source that decides policy: an override without a source is a
// user's (an old explicit choice must not silently become fallback), unless it carries the
// provenance of an automatic fallback (both origin fields).
func (s SessionModel) EffectiveOverrideSource() string {
	if _, ok := s.Override(); !ok {
		return ""
	}
	switch s.ModelOverrideSource {
	case SourceAuto, SourceUser, SourceDefault:
		return s.ModelOverrideSource
	}
	if _, ok := s.Origin(); ok {
		return SourceAuto
	}
	return SourceUser
}

// ProfilePin is the session's pinned auth profile for provider, if it still holds: a user pin
// always; an auto pin until compaction moves on.
func (s SessionModel) ProfilePin(provider string) (id string, user bool, ok bool) {
	if s.AuthProfileOverride == "" || ProviderOfProfile(s.AuthProfileOverride) != NormalizeProvider(provider) {
		return "", false, false
	}
	if s.AuthProfileOverrideSource == SourceUser || s.AuthProfileOverrideSource == "user-link" {
		return s.AuthProfileOverride, true, true
	}
	if s.AuthProfileOverrideCompactionCount != nil && *s.AuthProfileOverrideCompactionCount != s.CompactionCount {
		return "", false, false // compaction since the pin: pick again
	}
	return s.AuthProfileOverride, false, true
}

// ProviderOfProfile is the provider part of a provider:name profile id.
func ProviderOfProfile(id string) string {
	for i := 0; i < len(id); i++ {
		if id[i] == ':' {
			return NormalizeProvider(id[:i])
		}
	}
	return ""
}

// FallbackWrite is what a reply writes to the session before a fallback attempt: the override
// fields, source auto, and the origin (the model selected when the fallback started).
func FallbackWrite(prev SessionModel, target ModelRef, origin ModelRef, profile string, now time.Time) SessionModel {
	next := prev
	next.ProviderOverride = target.Provider
	next.ModelOverride = target.Model
	next.ModelOverrideSource = SourceAuto
	next.AuthProfileOverride = profile
	next.AuthProfileOverrideSource = ""
	if profile != "" {
		next.AuthProfileOverrideSource = SourceAuto
	}
	next.AuthProfileOverrideCompactionCount = nil
	if profile != "" {
		c := prev.CompactionCount
		next.AuthProfileOverrideCompactionCount = &c
	}
	// An override that already came from a fallback keeps its first origin.
	if _, ok := prev.Origin(); !ok || prev.EffectiveOverrideSource() != SourceAuto {
		next.ModelOverrideFallbackOriginProvider = origin.Provider
		next.ModelOverrideFallbackOriginModel = origin.Model
	}
	next.ModelOverrideUpdatedAt = now
	return next
}

// CanWriteFallback reports whether a fallback may write the session: never over a user's choice.
func CanWriteFallback(s SessionModel) bool {
	src := s.EffectiveOverrideSource()
	return src != SourceUser
}

// NarrowRollback restores each field the fallback wrote to its value before, but only where the
// session still holds what the fallback wrote: a concurrent /model is never clobbered.
func NarrowRollback(current, before, written SessionModel) SessionModel {
	out := current
	restore := func(cur *string, prev, wrote string) {
		if *cur == wrote {
			*cur = prev
		}
	}
	restore(&out.ProviderOverride, before.ProviderOverride, written.ProviderOverride)
	restore(&out.ModelOverride, before.ModelOverride, written.ModelOverride)
	restore(&out.ModelOverrideSource, before.ModelOverrideSource, written.ModelOverrideSource)
	restore(&out.AuthProfileOverride, before.AuthProfileOverride, written.AuthProfileOverride)
	restore(&out.AuthProfileOverrideSource, before.AuthProfileOverrideSource, written.AuthProfileOverrideSource)
	restore(&out.ModelOverrideFallbackOriginProvider, before.ModelOverrideFallbackOriginProvider, written.ModelOverrideFallbackOriginProvider)
	restore(&out.ModelOverrideFallbackOriginModel, before.ModelOverrideFallbackOriginModel, written.ModelOverrideFallbackOriginModel)
	if intPtrEqual(out.AuthProfileOverrideCompactionCount, written.AuthProfileOverrideCompactionCount) {
		out.AuthProfileOverrideCompactionCount = before.AuthProfileOverrideCompactionCount
	}
	if out.ModelOverrideUpdatedAt.Equal(written.ModelOverrideUpdatedAt) {
		out.ModelOverrideUpdatedAt = before.ModelOverrideUpdatedAt
	}
	return out
}

func intPtrEqual(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ClearAuto removes an auto model override (and its origin and auto profile pin): on recovery of
// the origin, /new, /reset, sessions.reset and stale heartbeats. User overrides stay.
func ClearAuto(s SessionModel) SessionModel {
	if s.EffectiveOverrideSource() == SourceAuto {
		s.ProviderOverride, s.ModelOverride, s.ModelOverrideSource = "", "", ""
		s.ModelOverrideUpdatedAt = time.Time{}
	}
	if s.EffectiveOverrideSource() != SourceAuto {
		s.ModelOverrideFallbackOriginProvider, s.ModelOverrideFallbackOriginModel = "", ""
	}
	if s.AuthProfileOverrideSource == SourceAuto {
		s.AuthProfileOverride, s.AuthProfileOverrideSource, s.AuthProfileOverrideCompactionCount = "", "", nil
	}
	return s
}

// Reset is /new and /reset: auto model overrides go, the profile pin (auto or user) goes, the
// compaction count restarts; a user's model override stays.
func Reset(s SessionModel) SessionModel {
	s = ClearAuto(s)
	s.AuthProfileOverride, s.AuthProfileOverrideSource, s.AuthProfileOverrideCompactionCount = "", "", nil
	s.CompactionCount = 0
	return s
}

// ReprobeInterval is how often the origin of an auto override is tried again.
const ReprobeInterval = 5 * time.Minute

// ReprobeDue reports whether this turn, starting at now, re-probes the origin model first: the
// session is on an auto override and 5 minutes or more have passed since it was written or last
// re-probed (lastProbe, zero if never).
func ReprobeDue(s SessionModel, lastProbe, now time.Time) (ModelRef, bool) {
	if s.EffectiveOverrideSource() != SourceAuto {
		return ModelRef{}, false
	}
	origin, ok := s.Origin()
	if !ok {
		return ModelRef{}, false
	}
	if over, _ := s.Override(); over == origin {
		return ModelRef{}, false
	}
	since := s.ModelOverrideUpdatedAt
	if lastProbe.After(since) {
		since = lastProbe
	}
	return origin, !now.Before(since.Add(ReprobeInterval))
}

// HeartbeatIsStale reports whether a heartbeat run without its own model clears the session's
// auto override: its origin differs from the agent's current primary (with no origin: the
// override itself differs from it).
func HeartbeatIsStale(s SessionModel, primary ModelRef) bool {
	if s.EffectiveOverrideSource() != SourceAuto {
		return false
	}
	if origin, ok := s.Origin(); ok {
		return origin != primary
	}
	over, _ := s.Override()
	return over != primary
}
