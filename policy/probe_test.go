package policy

import (
	"testing"
	"time"
)

// Whether a call is a probe is read from the stats the reply decided on: a profile cooling down
// for the call's model could only have been chosen by a probe.
func TestProbeCall(t *testing.T) {
	now := t0.Add(time.Hour)
	stored := func(s ProfileStats) []StoredProfile {
		return []StoredProfile{{ID: "openai:default", Provider: "openai", Type: TypeAPIKey, Stats: s}}
	}
	cooling := func(model string, r Reason) ProfileStats {
		return ProfileStats{CooldownUntil: now.Add(time.Minute), CooldownReason: r, CooldownModel: model, ErrorCount: 1}
	}
	for _, c := range []struct {
		name     string
		profiles []StoredProfile
		model    string
		probe    bool
	}{
		{"a profile without a window is an ordinary route", stored(ProfileStats{}), "gpt-5", false},
		{"a window scoped to the model makes the call a probe", stored(cooling("gpt-5", ReasonTimeout)), "gpt-5", true},
		{"a window scoped to another model leaves a sibling ordinary", stored(cooling("gpt-5", ReasonTimeout)), "gpt-5-mini", false},
		{"a whole-profile window makes any model's call a probe", stored(cooling("", ReasonOverloaded)), "gpt-5-mini", true},
		{"a window that has ended is ordinary again",
			stored(ProfileStats{CooldownUntil: now, CooldownReason: ReasonTimeout, CooldownModel: "gpt-5"}), "gpt-5", false},
		{"a disable makes the call a probe", stored(ProfileStats{DisabledUntil: now.Add(time.Hour), DisabledReason: ReasonBilling}), "gpt-5", true},
		{"a provider that manages its own limits never cools down",
			[]StoredProfile{{ID: "openai:default", Provider: "openrouter", Stats: cooling("", ReasonOverloaded)}}, "gpt-5", false},
		{"an unknown profile is an ordinary route", nil, "gpt-5", false},
	} {
		provider := "openai"
		if len(c.profiles) > 0 {
			provider = c.profiles[0].Provider
		}
		if got := probeCall(c.profiles, "openai:default", provider, c.model, now); got != c.probe {
			t.Errorf("%s: probe %v", c.name, got)
		}
	}
}
