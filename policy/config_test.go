package policy

import (
	"strings"
	"testing"
	"time"
)

// ParseConfig is config.ParseConfig, for policy's tests that write their configs in JSON5 (chain,
// order, content, bench). policy cannot import config, which imports policy; the external test
// file config_ext_test.go hands it over before any test runs.
var ParseConfig func(src []byte) (*Config, error)

func TestDefaultCooldownsAreTheSeeds(t *testing.T) {
	if d := DefaultCooldowns(); d.BillingBackoff != 5*time.Hour || d.BillingMax != 24*time.Hour ||
		d.AuthPermanentBackoff != 10*time.Minute || d.AuthPermanentMax != time.Hour || d.OverloadedBackoff != 0 {
		t.Errorf("defaults differ from the seeds: %+v", d)
	}
	if DefaultCooldowns().AllowFormatRetry {
		t.Error("format errors are terminal unless the config opts in")
	}
}

func TestParseModelRef(t *testing.T) {
	cases := []struct {
		in      string
		want    ModelRef
		wantErr bool
	}{
		{"openai/gpt-5", ModelRef{"openai", "gpt-5"}, false},
		{"OpenRouter/meta-llama/llama-3.3-70b", ModelRef{"openrouter", "meta-llama/llama-3.3-70b"}, false},
		{"gpt-5", ModelRef{}, true},
		{"/gpt-5", ModelRef{}, true},
		{"openai/", ModelRef{}, true},
		{"", ModelRef{}, true},
		{"open ai/gpt", ModelRef{}, true},
	}
	for _, c := range cases {
		got, err := ParseModelRef(c.in)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParseModelRef(%q) = %+v, %v", c.in, got, err)
		}
	}
}

func TestAReplyRecordsOnlyItsAgentsConfig(t *testing.T) {
	cfg := mustConfig(t, `{
	  agents: { defaults: { model: { primary: "openai/gpt-5", fallbacks: ["anthropic/claude"] } },
	            list: [{ id: "ops", model: "anthropic/claude" }, { id: "research", model: { primary: "google/gemini", fallbacks: [] } }] },
	}`)
	cfg.CronJobs = []CronJob{{ID: "nightly", Agent: "research", Cron: "0 3 * * *"}}
	for _, agent := range []string{"main", "ops", "research", "nobody"} {
		got := cfg.ForAgent(agent)
		if got.AgentPrimary(agent) != cfg.AgentPrimary(agent) || refsOf(got.AgentFallbacks(agent)) != refsOf(cfg.AgentFallbacks(agent)) {
			t.Errorf("%s: chain %v %v, want %v %v", agent, got.AgentPrimary(agent), got.AgentFallbacks(agent), cfg.AgentPrimary(agent), cfg.AgentFallbacks(agent))
		}
		if len(got.CronJobs) != 0 {
			t.Errorf("%s: the cron jobs are recorded", agent)
		}
		for _, a := range got.Agents {
			if a.ID != agent {
				t.Errorf("%s: agent %s is recorded too", agent, a.ID)
			}
		}
	}
	if len(cfg.Agents) != 2 || len(cfg.CronJobs) != 1 {
		t.Error("ForAgent changed the config it was asked of")
	}
	if (*Config)(nil).ForAgent("main") != nil {
		t.Error("nil is not nil")
	}
}

func refsOf(rs []ModelRef) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, " ")
}
