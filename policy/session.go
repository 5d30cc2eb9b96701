package policy

import (
	"fmt"
	"time"
)

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
	next := prev.withPin(profile, SourceAuto)
	next.ProviderOverride = target.Provider
	next.ModelOverride = target.Model
	next.ModelOverrideSource = SourceAuto
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

// fallbackOwned is the one list of the fields a fallback owns: it writes them, compares them
// before writing, and restores them when the fallback fails. They are the six override fields of
// the seeds, the origin, and when the override was written; the compaction count is the session's.
var fallbackOwned = []struct {
	name  string                    // the field's JSON name
	field func(m *SessionModel) any // the field in m: *string, **int or *time.Time
}{
	{"providerOverride", func(m *SessionModel) any { return &m.ProviderOverride }},
	{"modelOverride", func(m *SessionModel) any { return &m.ModelOverride }},
	{"modelOverrideSource", func(m *SessionModel) any { return &m.ModelOverrideSource }},
	{"authProfileOverride", func(m *SessionModel) any { return &m.AuthProfileOverride }},
	{"authProfileOverrideSource", func(m *SessionModel) any { return &m.AuthProfileOverrideSource }},
	{"authProfileOverrideCompactionCount", func(m *SessionModel) any { return &m.AuthProfileOverrideCompactionCount }},
	{"modelOverrideFallbackOriginProvider", func(m *SessionModel) any { return &m.ModelOverrideFallbackOriginProvider }},
	{"modelOverrideFallbackOriginModel", func(m *SessionModel) any { return &m.ModelOverrideFallbackOriginModel }},
	{"modelOverrideUpdatedAt", func(m *SessionModel) any { return &m.ModelOverrideUpdatedAt }},
}

// sameField reports whether two fields of fallbackOwned hold the same value.
func sameField(a, b any) bool {
	switch x := a.(type) {
	case *string:
		return *x == *b.(*string)
	case **int:
		return intPtrEqual(*x, *b.(**int))
	case *time.Time:
		return x.Equal(*b.(*time.Time))
	}
	panic(fmt.Sprintf("fallbackOwned: a field of type %T", a))
}

// setField copies a field of fallbackOwned from src to dst.
func setField(dst, src any) {
	switch x := dst.(type) {
	case *string:
		*x = *src.(*string)
	case **int:
		*x = copyInt(*src.(**int))
	case *time.Time:
		*x = *src.(*time.Time)
	default:
		panic(fmt.Sprintf("fallbackOwned: a field of type %T", dst))
	}
}

// SameFallbackOwned reports whether a and b hold the same value in every field a fallback owns:
// the compare of the session's compare-and-set.
func SameFallbackOwned(a, b SessionModel) bool {
	for _, f := range fallbackOwned {
		if !sameField(f.field(&a), f.field(&b)) {
			return false
		}
	}
	return true
}

// SameFallbackWrite reports whether a and b are the same fallback write but for when it was made:
// what a reply's write finds when it runs again in a later workflow task, after the task that
// ran it first was lost with its record (a Temporal node or its database went away as it
// completed). A session's replies run one at a time, so no other reply writes it meanwhile.
func SameFallbackWrite(a, b SessionModel) bool {
	a.ModelOverrideUpdatedAt = b.ModelOverrideUpdatedAt
	return SameFallbackOwned(a, b)
}

// WithFallbackOwned is s with the fields a fallback owns taken from next: the set of the
// session's compare-and-set (everything else, like the compaction count, stays the session's).
func WithFallbackOwned(s, next SessionModel) SessionModel {
	for _, f := range fallbackOwned {
		setField(f.field(&s), f.field(&next))
	}
	return s
}

// NarrowRollback restores each field the fallback wrote to its value before, but only where the
// session still holds what the fallback wrote: a concurrent /model is never clobbered.
func NarrowRollback(current, before, written SessionModel) SessionModel {
	out := current
	for _, f := range fallbackOwned {
		if sameField(f.field(&current), f.field(&written)) {
			setField(f.field(&out), f.field(&before))
		}
	}
	return out
}

func intPtrEqual(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// withPin pins profile on the session as source's, stamped with the compaction count it was set
// at (a later compaction makes an auto pin stale); "" removes the pin.
func (s SessionModel) withPin(profile, source string) SessionModel {
	if profile == "" {
		s.AuthProfileOverride, s.AuthProfileOverrideSource, s.AuthProfileOverrideCompactionCount = "", "", nil
		return s
	}
	c := s.CompactionCount
	s.AuthProfileOverride, s.AuthProfileOverrideSource, s.AuthProfileOverrideCompactionCount = profile, source, &c
	return s
}

// UserChoice is a user's /model (also the model picker, sessions.patch and a live switch): an
// exact choice of ref, source user, no fallback origin, written at now. A profile given (of ref's
// provider) is pinned as the user's; without one, a pin for ref's provider stays and a pin for
// another provider goes. A zero ref is the user clearing the override (back to the configured
// default); the pin then stays.
func UserChoice(s SessionModel, ref ModelRef, profile string, now time.Time) SessionModel {
	s.ProviderOverride, s.ModelOverride, s.ModelOverrideSource = ref.Provider, ref.Model, SourceUser
	if ref.IsZero() {
		s.ModelOverrideSource = ""
	}
	s.ModelOverrideFallbackOriginProvider, s.ModelOverrideFallbackOriginModel = "", ""
	s.ModelOverrideUpdatedAt = now
	switch {
	case profile != "" && CheckUserChoice(ref, profile) == nil:
		s = s.withPin(profile, SourceUser)
	case !ref.IsZero() && s.AuthProfileOverride != "" && ProviderOfProfile(s.AuthProfileOverride) != ref.Provider:
		s = s.withPin("", "")
	}
	return s
}

// CheckUserChoice names what is wrong with a user's choice of ref with profile: a profile of
// another provider than ref's.
func CheckUserChoice(ref ModelRef, profile string) error {
	if profile != "" && !ref.IsZero() && ProviderOfProfile(profile) != ref.Provider {
		return fmt.Errorf("profile %q is not a %s profile", profile, ref.Provider)
	}
	return nil
}

// UserPin is sessions.patch's authProfileOverride without a model: profile pinned as the user's
// ("" removes the pin).
func UserPin(s SessionModel, profile string) SessionModel {
	return s.withPin(profile, SourceUser)
}

// AutoPin pins the profile that served a turn as the session's auto pin, unless the user pinned
// one for that provider.
func AutoPin(s SessionModel, provider, profile string) SessionModel {
	if profile == "" {
		return s
	}
	if _, user, ok := s.ProfilePin(provider); ok && user {
		return s
	}
	return s.withPin(profile, SourceAuto)
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
		s = s.withPin("", "")
	}
	return s
}

// Reset is the model half of /new and /reset (SessionState.Reset is the whole): auto model
// overrides go, the profile pin (auto or user) goes, the compaction count restarts; a user's
// model override stays.
func Reset(s SessionModel) SessionModel {
	s = ClearAuto(s).withPin("", "")
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
