package policy

import (
	"strings"
	"testing"
	"time"
)

func TestWhereAReplyStarts(t *testing.T) {
	cfg := mustConfig(t, `{
	  agents: { defaults: { model: { primary: "openai/gpt-5", fallbacks: ["anthropic/claude"] },
	                        imageModel: { primary: "google/gemini-vision" } } },
	  models: { providers: { openai: { models: [{ id: "gpt-5", input: ["text"] }] },
	                         anthropic: { models: [{ id: "claude", input: ["text"] }] } } },
	}`)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	onFallback := SessionModel{ProviderOverride: "anthropic", ModelOverride: "claude", ModelOverrideSource: SourceAuto,
		ModelOverrideFallbackOriginProvider: "openai", ModelOverrideFallbackOriginModel: "gpt-5", ModelOverrideUpdatedAt: now.Add(-time.Minute)}
	staleFallback := onFallback
	staleFallback.ModelOverrideFallbackOriginProvider, staleFallback.ModelOverrideFallbackOriginModel = "google", "gemini"
	for _, tc := range []struct {
		name       string
		req        Ask
		session    SessionModel
		reprobed   time.Time
		chain      string
		source     string
		clearStale bool
		err        string
	}{
		{"a session reply on the configured default walks primary then fallbacks",
			Ask{Agent: "main", Session: "s"}, SessionModel{}, time.Time{}, "openai/gpt-5 anthropic/claude", SelectConfiguredDefault, false, ""},
		{"a session reply on an auto override stays on it",
			Ask{Agent: "main", Session: "s"}, onFallback, now, "anthropic/claude openai/gpt-5", SelectAutoOverride, false, ""},
		{"an override written 5 minutes ago re-probes its origin first",
			Ask{Agent: "main", Session: "s"}, func() SessionModel { s := onFallback; s.ModelOverrideUpdatedAt = now.Add(-5 * time.Minute); return s }(),
			time.Time{}, "openai/gpt-5 anthropic/claude", SelectReprobe, false, ""},
		{"a reply without a session reads no override",
			Ask{Agent: "main"}, onFallback, time.Time{}, "openai/gpt-5 anthropic/claude", SelectConfiguredDefault, false, ""},
		{"an explicit model is strict and is never re-probed over",
			Ask{Agent: "main", Session: "s", Model: "anthropic/claude"}, onFallback, time.Time{}, "anthropic/claude", SelectExplicit, false, ""},
		{"a bad explicit model names the field",
			Ask{Agent: "main", Model: "gpt-5"}, SessionModel{}, time.Time{}, "", "", false, "model: "},
		{"a bad heartbeat model names the field",
			Ask{Agent: "main", Session: "s", Heartbeat: &HeartbeatRun{Model: "nope"}}, SessionModel{}, time.Time{}, "", "", false, "heartbeat model: "},
		{"a heartbeat without its own model clears an auto override whose origin is not the primary",
			Ask{Agent: "main", Session: "s", Heartbeat: &HeartbeatRun{}}, staleFallback, now, "openai/gpt-5 anthropic/claude", SelectConfiguredDefault, true, ""},
		{"a turn with images that no candidate takes goes to the image chain",
			Ask{Agent: "main", Session: "s", CarriesImages: true}, onFallback, now, "google/gemini-vision", SelectImage, false, ""},
	} {
		plan, err := PlanReply(cfg, tc.req, tc.session, tc.reprobed, now)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one starting %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := refs(plan.Chain); got != tc.chain || plan.Chain.Source != tc.source {
			t.Errorf("%s: chain %q (%s), want %q (%s)", tc.name, got, plan.Chain.Source, tc.chain, tc.source)
		}
		if plan.ClearStale != tc.clearStale {
			t.Errorf("%s: clearStale %v", tc.name, plan.ClearStale)
		}
		if tc.clearStale && plan.Session.EffectiveOverrideSource() == SourceAuto {
			t.Errorf("%s: the stale auto override is still on the session: %+v", tc.name, plan.Session)
		}
	}
}
