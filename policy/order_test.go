package policy

import (
	"strings"
	"testing"
	"time"
)

func ids(ps []OrderedProfile) string {
	var out []string
	for _, p := range ps {
		s := p.ID
		if !p.Available {
			s += "(cooling)"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestOrderProfiles(t *testing.T) {
	now := t0.Add(time.Hour)
	used := func(d time.Duration) ProfileStats { return ProfileStats{LastUsed: t0.Add(d)} }
	cooling := func(until time.Duration) ProfileStats {
		return ProfileStats{CooldownUntil: now.Add(until), CooldownReason: ReasonOverloaded, ErrorCount: 1}
	}
	stored := []StoredProfile{
		{ID: "openai:key-1", Provider: "openai", Type: TypeAPIKey, Stats: used(10 * time.Minute)},
		{ID: "openai:me@example.com", Provider: "openai", Type: TypeOAuth, Stats: used(20 * time.Minute)},
		{ID: "openai:key-2", Provider: "openai", Type: TypeAPIKey, Stats: used(5 * time.Minute)},
		{ID: "openai:key-3", Provider: "openai", Type: TypeAPIKey},
		{ID: "anthropic:default", Provider: "anthropic", Type: TypeAPIKey},
	}
	withStats := func(id string, s ProfileStats) []StoredProfile {
		out := append([]StoredProfile(nil), stored...)
		for i := range out {
			if out[i].ID == id {
				out[i].Stats = s
			}
		}
		return out
	}
	cfgOrder := mustConfig(t, `{auth: {order: {openai: ["openai:key-2", "openai:me@example.com", "openai:missing"]}}}`)
	cfgProfiles := mustConfig(t, `{auth: {profiles: {"openai:key-3": {provider: "openai", mode: "api_key"}, "openai:key-1": {provider: "openai", mode: "api_key"}}}}`)
	cfgMismatch := mustConfig(t, `{auth: {profiles: {"openai:key-1": {provider: "openai", mode: "oauth"}}}}`)

	cases := []struct {
		name string
		in   OrderInput
		want string
	}{
		{"OAuth before API keys, then lastUsed oldest first (never used first)",
			OrderInput{Profiles: stored},
			"openai:me@example.com openai:key-3 openai:key-2 openai:key-1"},
		{"ties on type and lastUsed keep the stored order",
			OrderInput{Profiles: []StoredProfile{{ID: "openai:b", Provider: "openai", Type: TypeAPIKey}, {ID: "openai:a", Provider: "openai", Type: TypeAPIKey}}},
			"openai:b openai:a"},
		{"profiles in cooldown go last, soonest expiry first",
			OrderInput{Profiles: withStats("openai:me@example.com", cooling(10*time.Minute))},
			"openai:key-3 openai:key-2 openai:key-1 openai:me@example.com(cooling)"},
		{"auth.order is kept as given and names missing from the store are dropped",
			OrderInput{Config: cfgOrder, Profiles: stored},
			"openai:key-2 openai:me@example.com"},
		{"a stored order override wins over auth.order",
			OrderInput{Config: cfgOrder, StoredOrder: []string{"openai:key-1", "openai:key-2"}, Profiles: stored},
			"openai:key-1 openai:key-2"},
		{"an explicit order whose profiles are all gone falls back to the stored profiles",
			OrderInput{StoredOrder: []string{"openai:gone"}, Profiles: stored},
			"openai:me@example.com openai:key-3 openai:key-2 openai:key-1"},
		{"configured auth.profiles for the provider come before other stored ones",
			OrderInput{Config: cfgProfiles, Profiles: stored},
			"openai:key-3 openai:key-1"},
		{"a configured mode that does not match the stored type is not eligible",
			OrderInput{Config: cfgMismatch, Profiles: stored},
			"openai:me@example.com openai:key-3 openai:key-2"},
		{"the session pin goes first while available",
			OrderInput{Profiles: stored, Pin: "openai:key-1"},
			"openai:key-1 openai:me@example.com openai:key-3 openai:key-2"},
		{"a pin in cooldown does not go first",
			OrderInput{Profiles: withStats("openai:key-1", cooling(time.Minute)), Pin: "openai:key-1"},
			"openai:me@example.com openai:key-3 openai:key-2 openai:key-1(cooling)"},
		{"a user pin is strict, even in cooldown",
			OrderInput{Profiles: withStats("openai:key-1", cooling(time.Minute)), Pin: "openai:key-1", UserPin: true},
			"openai:key-1(cooling)"},
		{"a cooldown scoped to another model does not count",
			OrderInput{Model: "gpt-5", Profiles: withStats("openai:me@example.com", ProfileStats{CooldownUntil: now.Add(time.Minute), CooldownModel: "o3", CooldownReason: ReasonRateLimit})},
			"openai:me@example.com openai:key-3 openai:key-2 openai:key-1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Provider, c.in.Now = "openai", now
			if got := ids(OrderProfiles(c.in)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}
