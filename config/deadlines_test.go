package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

// A catalog entry's bounds: OpenClaw's reasoning flag and baton's attemptTimeoutMs,
// minTokensPerSecond and throughputGraceMs, beside firstTokenTimeoutMs.
func TestParseConfigReadsTheCatalogsDeadlines(t *testing.T) {
	cfg := mustConfig(t, `{models: {providers: {openai: {models: [
	  {id: "gpt-fast", attemptTimeoutMs: 30000, minTokensPerSecond: 12.5, throughputGraceMs: 4000},
	  {id: "o-think", reasoning: true, firstTokenTimeoutMs: 90000},
	  {id: "plain", reasoning: false, contextWindow: 128000},
	]}}}}`)
	got := cfg.Providers["openai"].Models
	want := []policy.ModelSpec{
		{ID: "gpt-fast", AttemptTimeout: 30 * time.Second, MinTokensPerSecond: 12.5, ThroughputGrace: 4 * time.Second},
		{ID: "o-think", Reasoning: true, FirstTokenTimeout: 90 * time.Second},
		{ID: "plain"},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Reasoning != want[i].Reasoning || got[i].FirstTokenTimeout != want[i].FirstTokenTimeout ||
			got[i].AttemptTimeout != want[i].AttemptTimeout || got[i].MinTokensPerSecond != want[i].MinTokensPerSecond ||
			got[i].ThroughputGrace != want[i].ThroughputGrace {
			t.Errorf("models[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	def := policy.DeadlineDefaults{FirstToken: 10 * time.Second, ReasoningFirstToken: 60 * time.Second}
	if d := cfg.Deadlines(policy.ModelRef{Provider: "openai", Model: "gpt-fast"}, false, def); d.Attempt != 30*time.Second || d.MinTokensPerSecond != 12.5 {
		t.Errorf("deadlines %+v", d)
	}

	for src, want := range map[string]string{
		`{models: {providers: {p: {models: [{id: "m", attemptTimeoutMs: 0}]}}}}`:                          "models.providers.p.models[0].attemptTimeoutMs: 0 is not a positive number",
		`{models: {providers: {p: {models: [{id: "m", attemptTimeoutMs: "30s"}]}}}}`:                      "models.providers.p.models[0].attemptTimeoutMs: is a string, want a number",
		`{models: {providers: {p: {models: [{id: "m", reasoning: "yes"}]}}}}`:                             "models.providers.p.models[0].reasoning: is a string, want a boolean",
		`{models: {providers: {p: {models: [{id: "m", minTokensPerSecond: -1}]}}}}`:                       "models.providers.p.models[0].minTokensPerSecond: -1 is not a positive number of tokens a second",
		`{models: {providers: {p: {models: [{id: "m", throughputGraceMs: 5000}]}}}}`:                      "models.providers.p.models[0].throughputGraceMs: is the grace of a throughput floor: set minTokensPerSecond too",
		`{models: {providers: {p: {models: [{id: "m", minTokensPerSecond: 5, throughputGraceMs: -5}]}}}}`: "models.providers.p.models[0].throughputGraceMs: -5 is not a positive number",
	} {
		path, msg, _ := strings.Cut(want, ": ")
		_, err := ParseConfig([]byte(src))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Path != path || ce.Msg != msg {
			t.Errorf("%s: %v, want %s: %s", src, err, path, msg)
		}
	}
}
