package policy

import (
	"strings"
	"testing"
	"time"
)

func mustConfig(t testing.TB, src string) *Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func refs(ch Chain) string {
	var parts []string
	for _, c := range ch.Candidates {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, " ")
}

func TestBuildChainFollowsTheSelectionSourcePolicy(t *testing.T) {
	cfg := mustConfig(t, `{
	  agents: {
	    defaults: { model: { primary: "openai/gpt-5", fallbacks: ["anthropic/claude", "google/gemini"] },
	                imageModel: { primary: "openai/gpt-image", fallbacks: ["google/imagen"] } },
	    list: [
	      { id: "main" },
	      { id: "strict-string", model: "anthropic/opus" },
	      { id: "strict-object", model: { primary: "anthropic/opus" } },
	      { id: "explicit-empty", model: { primary: "anthropic/opus", fallbacks: [] } },
	      { id: "own-fallbacks", model: { primary: "anthropic/opus", fallbacks: ["openai/gpt-5-mini"] } },
	      { id: "only-fallbacks", model: { fallbacks: ["openai/gpt-5-mini"] } },
	    ] } }`)
	cases := []struct {
		name      string
		req       ChainRequest
		want      string
		source    string
		requested string
	}{
		{"the configured default primary uses the configured fallbacks",
			ChainRequest{Agent: "main"}, "openai/gpt-5 anthropic/claude google/gemini", SelectConfiguredDefault, "openai/gpt-5"},
		{"an agent primary given as a string is strict",
			ChainRequest{Agent: "strict-string"}, "anthropic/opus", SelectAgentPrimary, "anthropic/opus"},
		{"an agent primary object without fallbacks is strict",
			ChainRequest{Agent: "strict-object"}, "anthropic/opus", SelectAgentPrimary, ""},
		{"fallbacks: [] makes an agent explicitly strict",
			ChainRequest{Agent: "explicit-empty"}, "anthropic/opus", SelectAgentPrimary, ""},
		{"an agent's own fallbacks replace the defaults'",
			ChainRequest{Agent: "own-fallbacks"}, "anthropic/opus openai/gpt-5-mini", SelectAgentPrimary, ""},
		{"an agent with only fallbacks inherits the default primary",
			ChainRequest{Agent: "only-fallbacks"}, "openai/gpt-5 openai/gpt-5-mini", SelectAgentPrimary, ""},
		{"a user session override is strict",
			ChainRequest{Agent: "main", Session: &SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: "user"}},
			"google/gemini", SelectUserOverride, ""},
		{"a legacy override without a source is a user override",
			ChainRequest{Agent: "main", Session: &SessionModel{ProviderOverride: "google", ModelOverride: "gemini"}},
			"google/gemini", SelectUserOverride, ""},
		{"a legacy override with fallback provenance is auto",
			ChainRequest{Agent: "main", Session: &SessionModel{ProviderOverride: "anthropic", ModelOverride: "claude",
				ModelOverrideFallbackOriginProvider: "openai", ModelOverrideFallbackOriginModel: "gpt-5"}},
			"anthropic/claude google/gemini openai/gpt-5", SelectAutoOverride, "openai/gpt-5"},
		{"an auto override keeps moving along the chain and settles back on the primary",
			ChainRequest{Agent: "main", Session: &SessionModel{ProviderOverride: "anthropic", ModelOverride: "claude", ModelOverrideSource: "auto",
				ModelOverrideFallbackOriginProvider: "openai", ModelOverrideFallbackOriginModel: "gpt-5"}},
			"anthropic/claude google/gemini openai/gpt-5", SelectAutoOverride, "openai/gpt-5"},
		{"a re-probe tries the origin first",
			ChainRequest{Agent: "main", Reprobe: true, Session: &SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: "auto",
				ModelOverrideFallbackOriginProvider: "openai", ModelOverrideFallbackOriginModel: "gpt-5"}},
			"openai/gpt-5 anthropic/claude google/gemini", SelectReprobe, "openai/gpt-5"},
		{"a session override of source default follows the configured policy",
			ChainRequest{Agent: "main", Session: &SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: "default"}},
			"openai/gpt-5 anthropic/claude google/gemini", SelectConfiguredDefault, ""},
		{"a cron payload.model is a job primary with the configured fallbacks",
			ChainRequest{Agent: "main", FixedChain: &FixedChain{Model: ModelRef{"google", "gemini"}}},
			"google/gemini anthropic/claude openai/gpt-5", SelectCron, "google/gemini"},
		{"cron payload.fallbacks replace them",
			ChainRequest{Agent: "main", FixedChain: &FixedChain{Model: ModelRef{"google", "gemini"}, Fallbacks: []ModelRef{{"openai", "gpt-5-mini"}}, HasFallbacks: true}},
			"google/gemini openai/gpt-5-mini", SelectCron, ""},
		{"cron payload.fallbacks: [] is strict",
			ChainRequest{Agent: "main", FixedChain: &FixedChain{Model: ModelRef{"google", "gemini"}, HasFallbacks: true}},
			"google/gemini", SelectCron, ""},
		{"cron for an agent uses its own fallbacks and its primary",
			ChainRequest{Agent: "own-fallbacks", FixedChain: &FixedChain{Model: ModelRef{"google", "gemini"}}},
			"google/gemini openai/gpt-5-mini anthropic/opus", SelectCron, ""},
		{"a cron job wins over a user's session override",
			ChainRequest{Agent: "main", FixedChain: &FixedChain{Model: ModelRef{"google", "gemini"}, HasFallbacks: true},
				Session: &SessionModel{ProviderOverride: "openai", ModelOverride: "gpt-5", ModelOverrideSource: "user"}},
			"google/gemini", SelectCron, ""},
		{"a one-off explicit model is strict",
			ChainRequest{Agent: "main", Explicit: ModelRef{"anthropic", "claude"}}, "anthropic/claude", SelectExplicit, ""},
		{"a heartbeat with its own model",
			ChainRequest{Agent: "main", Heartbeat: &ModelRef{"openai", "gpt-5-mini"}},
			"openai/gpt-5-mini anthropic/claude google/gemini openai/gpt-5", SelectHeartbeat, ""},
		{"a heartbeat without its own model follows the session",
			ChainRequest{Agent: "main", Heartbeat: &ModelRef{}}, "openai/gpt-5 anthropic/claude google/gemini", SelectConfiguredDefault, ""},
		{"the image chain: imageModel and its fallbacks, no primary appended, no session",
			ChainRequest{Agent: "main", Image: true, Session: &SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: "user"}},
			"openai/gpt-image google/imagen", SelectImage, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := BuildChain(cfg, c.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := refs(ch); got != c.want || ch.Source != c.source {
				t.Errorf("chain %q [%s], want %q [%s]", got, ch.Source, c.want, c.source)
			}
			if c.requested != "" && ch.Requested.String() != c.requested {
				t.Errorf("requested %s, want %s", ch.Requested, c.requested)
			}
		})
	}
}

func TestBuildChainWithoutAnyModelSaysSo(t *testing.T) {
	if _, err := BuildChain(DefaultConfig(), ChainRequest{Agent: "main"}); err != ErrNoModel {
		t.Errorf("got %v", err)
	}
}

func TestSessionOverridesFallbackWriteAndNarrowRollback(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before := SessionModel{CompactionCount: 2}
	written := FallbackWrite(before, ModelRef{"anthropic", "claude"}, ModelRef{"openai", "gpt-5"}, "anthropic:default", now)
	if written.ModelOverrideSource != SourceAuto || written.ProviderOverride != "anthropic" || written.ModelOverride != "claude" ||
		written.ModelOverrideFallbackOriginProvider != "openai" || written.AuthProfileOverrideSource != SourceAuto ||
		*written.AuthProfileOverrideCompactionCount != 2 || !written.ModelOverrideUpdatedAt.Equal(now) {
		t.Fatalf("written %+v", written)
	}
	// The fallback failed and nobody touched the session: everything it wrote goes.
	if got := NarrowRollback(written, before, written); got.ModelOverride != "" || got.ModelOverrideSource != "" ||
		got.AuthProfileOverride != "" || got.AuthProfileOverrideCompactionCount != nil || !got.ModelOverrideUpdatedAt.IsZero() {
		t.Errorf("rollback left %+v", got)
	}
	// A user's /model landed meanwhile: only the fields still holding what the fallback wrote go back.
	concurrent := written
	concurrent.ProviderOverride, concurrent.ModelOverride, concurrent.ModelOverrideSource = "google", "gemini", SourceUser
	got := NarrowRollback(concurrent, before, written)
	if got.ProviderOverride != "google" || got.ModelOverride != "gemini" || got.ModelOverrideSource != SourceUser {
		t.Errorf("rollback clobbered the user's choice: %+v", got)
	}
	if got.AuthProfileOverride != "" {
		t.Errorf("the pin the fallback wrote should have gone: %+v", got)
	}
	if CanWriteFallback(SessionModel{ProviderOverride: "google", ModelOverride: "gemini"}) {
		t.Error("a fallback may not write over a legacy (user) override")
	}
}

func TestSessionResetReprobeAndHeartbeat(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	auto := SessionModel{ProviderOverride: "anthropic", ModelOverride: "claude", ModelOverrideSource: "auto",
		ModelOverrideFallbackOriginProvider: "openai", ModelOverrideFallbackOriginModel: "gpt-5",
		AuthProfileOverride: "anthropic:default", AuthProfileOverrideSource: "auto", ModelOverrideUpdatedAt: now, CompactionCount: 3}
	if r := Reset(auto); r.ModelOverride != "" || r.AuthProfileOverride != "" || r.CompactionCount != 0 || r.ModelOverrideFallbackOriginModel != "" {
		t.Errorf("reset left %+v", r)
	}
	user := SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: "user", AuthProfileOverride: "google:a", AuthProfileOverrideSource: "user"}
	if r := Reset(user); r.ModelOverride != "gemini" || r.AuthProfileOverride != "" {
		t.Errorf("reset must keep a user model override and drop the pin: %+v", r)
	}
	if _, due := ReprobeDue(auto, time.Time{}, now.Add(4*time.Minute+59*time.Second)); due {
		t.Error("re-probe before 5 minutes")
	}
	if origin, due := ReprobeDue(auto, time.Time{}, now.Add(5*time.Minute)); !due || origin.String() != "openai/gpt-5" {
		t.Error("no re-probe at 5 minutes")
	}
	if _, due := ReprobeDue(auto, now.Add(3*time.Minute), now.Add(6*time.Minute)); due {
		t.Error("a re-probe 3 minutes ago restarts the interval")
	}
	if _, due := ReprobeDue(user, time.Time{}, now.Add(time.Hour)); due {
		t.Error("a user override is never re-probed")
	}
	if HeartbeatIsStale(auto, ModelRef{"openai", "gpt-5"}) {
		t.Error("an auto override whose origin is the current primary is not stale")
	}
	if !HeartbeatIsStale(auto, ModelRef{"openai", "gpt-5.1"}) {
		t.Error("an auto override whose origin is no longer the primary is stale")
	}
	if c := ClearAuto(auto); c.ModelOverride != "" || c.AuthProfileOverride != "" {
		t.Errorf("clear auto left %+v", c)
	}
	two := 2
	pinned := SessionModel{AuthProfileOverride: "openai:a", AuthProfileOverrideSource: "auto", AuthProfileOverrideCompactionCount: &two, CompactionCount: 3}
	if _, _, ok := pinned.ProfilePin("openai"); ok {
		t.Error("an auto pin from before the last compaction is stale")
	}
	pinned.CompactionCount = 2
	if id, user, ok := pinned.ProfilePin("openai"); !ok || user || id != "openai:a" {
		t.Error("an auto pin holds until compaction")
	}
	if _, _, ok := pinned.ProfilePin("anthropic"); ok {
		t.Error("a pin applies to its own provider only")
	}
}

func TestATurnWithImagesSkipsTextOnlyModelsOrTakesTheImageChain(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{agents: {defaults: {model: {primary: "local/llama", fallbacks: ["openai/gpt-5"]}, imageModel: "openai/gpt-image"}},
	  models: {providers: {local: {baseUrl: "http://127.0.0.1:1/v1", models: [{id: "llama", input: ["text"]}, {id: "llava", input: ["text", "image"]}]},
	                       openai: {models: [{id: "gpt-3.5", input: ["text"]}, {id: "gpt-5"}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model string
		want  bool
	}{{"local/llama", false}, {"local/llava", true}, {"openai/gpt-3.5", false}, {"openai/gpt-5", true}, {"anthropic/claude", true}} {
		ref, _ := ParseModelRef(c.model)
		if got := cfg.AcceptsImages(ref); got != c.want {
			t.Errorf("%s accepts images: %v, want %v (catalog input lists decide; unlisted models are assumed to)", c.model, got, c.want)
		}
	}
	chain, _ := BuildChain(cfg, ChainRequest{Agent: "main"})
	if ImageRoute(cfg, chain) {
		t.Error("a chain with one image-capable candidate serves the turn itself")
	}
	textOnly, _ := BuildChain(cfg, ChainRequest{Agent: "main", Explicit: ModelRef{Provider: "local", Model: "llama"}})
	if !ImageRoute(cfg, textOnly) {
		t.Error("a chain of text-only candidates hands the turn to the image chain")
	}
	if _, err := ParseConfig([]byte(`{models: {providers: {local: {models: [{id: "x", input: ["text", "audio"]}]}}}}`)); err == nil ||
		!strings.Contains(err.Error(), "models.providers.local.models[0].input[1]") {
		t.Errorf("an unknown input kind is named: %v", err)
	}
}
