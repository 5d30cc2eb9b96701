package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

func mustConfig(t testing.TB, src string) *policy.Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const openClawConfig = `// an OpenClaw config, JSON5
{
  gateway: { port: 18789 },            // not ours: ignored
  agents: {
    defaults: {
      model: { primary: "openai/gpt-5", fallbacks: ["anthropic/claude-sonnet-4-5", 'openrouter/meta-llama/llama-3.3-70b',] },
      imageModel: "openai/gpt-image-1",
      models: { "openai/gpt-5": { alias: "gpt" } },
      heartbeat: { every: "30m", message: "tick" },
    },
    list: [
      { id: "main" },
      { id: "ops", model: "anthropic/claude-opus-4" },
      { id: "research", model: { primary: "openai/o3", fallbacks: [] } },
      { id: "writer", model: { fallbacks: ["google/gemini-2.5-pro"] }, heartbeat: { every: "1h", model: "openai/gpt-5-mini" } },
    ],
  },
  auth: {
    profiles: {
      "openai:me@example.com": { provider: "openai", mode: "oauth", email: "me@example.com" },
      "openai:api-key-backup": { provider: "openai", mode: "api_key" },
    },
    order: { openai: ["openai:me@example.com", "openai:api-key-backup"] },
    cooldowns: { billingBackoffHours: 2, billingBackoffHoursByProvider: { Anthropic: 1 }, overloadedProfileRotations: 2, overloadedBackoffMs: 250 },
  },
  models: { providers: { ollama: { baseUrl: "http://127.0.0.1:11434/v1", api: "openai-completions" },
                         corp: { baseUrl: "https://llm.corp.example/v1", tokenUrl: "https://sso.corp.example/token", clientId: "baton" } } },
}`

func TestParseConfigReadsOpenClawShape(t *testing.T) {
	cfg, err := ParseConfig([]byte(openClawConfig))
	if err != nil {
		t.Fatal(err)
	}
	wantModel := policy.ModelSelection{
		Primary: policy.ModelRef{Provider: "openai", Model: "gpt-5"},
		Fallbacks: []policy.ModelRef{{Provider: "anthropic", Model: "claude-sonnet-4-5"},
			{Provider: "openrouter", Model: "meta-llama/llama-3.3-70b"}},
		HasFallbacks: true,
	}
	if !reflect.DeepEqual(cfg.Model, wantModel) {
		t.Errorf("model = %+v", cfg.Model)
	}
	if cfg.ImageModel.Primary != (policy.ModelRef{Provider: "openai", Model: "gpt-image-1"}) || cfg.ImageModel.HasFallbacks {
		t.Errorf("imageModel = %+v", cfg.ImageModel)
	}
	if len(cfg.Agents) != 4 {
		t.Fatalf("agents = %+v", cfg.Agents)
	}
	if ops, _ := cfg.Agent("ops"); ops.Model.Primary.Model != "claude-opus-4" || ops.Model.HasFallbacks {
		t.Errorf("ops = %+v", ops.Model)
	}
	if r, _ := cfg.Agent("research"); !r.Model.HasFallbacks || len(r.Model.Fallbacks) != 0 {
		t.Errorf("research fallbacks: [] must be explicit and strict: %+v", r.Model)
	}
	if w, _ := cfg.Agent("writer"); !w.Model.Primary.IsZero() || w.Heartbeat.Every != time.Hour || w.Heartbeat.Model.Model != "gpt-5-mini" {
		t.Errorf("writer = %+v %+v", w.Model, w.Heartbeat)
	}
	if cfg.Heartbeat == nil || cfg.Heartbeat.Every != 30*time.Minute || cfg.Heartbeat.Message != "tick" {
		t.Errorf("heartbeat = %+v", cfg.Heartbeat)
	}
	if len(cfg.Profiles) != 2 || cfg.Profiles[0].ID != "openai:me@example.com" || cfg.Profiles[0].Mode != "oauth" {
		t.Errorf("profiles (in file order) = %+v", cfg.Profiles)
	}
	if got := cfg.AuthOrder["openai"]; len(got) != 2 || got[1] != "openai:api-key-backup" {
		t.Errorf("order = %v", got)
	}
	c := cfg.Cooldowns
	if c.BillingBackoff != 2*time.Hour || c.BillingBackoffFor("anthropic") != time.Hour || c.BillingBackoffFor("openai") != 2*time.Hour ||
		c.OverloadedProfileRotations != 2 || c.OverloadedBackoff != 250*time.Millisecond ||
		c.RateLimitedProfileRotations != 1 || c.BillingMax != 24*time.Hour || c.FailureWindow != 24*time.Hour {
		t.Errorf("cooldowns = %+v", c)
	}
	if p := cfg.Providers["corp"]; p.TokenURL != "https://sso.corp.example/token" || p.ClientID != "baton" {
		t.Errorf("corp provider = %+v", p)
	}
	if p := cfg.Providers["ollama"]; p.BaseURL != "http://127.0.0.1:11434/v1" || p.API != "openai-completions" {
		t.Errorf("providers = %+v", cfg.Providers)
	}
	if len(cfg.Allowlist) != 1 {
		t.Errorf("allowlist = %v", cfg.Allowlist)
	}
}

func TestParseConfigCronJobs(t *testing.T) {
	cfg := mustConfig(t, `{cron: {jobs: [
	  {id: "digest", cron: "0 9 * * *", tz: "Europe/Berlin", message: "daily digest", payload: {model: "openai/gpt-5", fallbacks: []}},
	  {id: "weekly", cron: "@weekly", agent: "ops", session: "ops-main", message: "weekly"},
	]}}`)
	if len(cfg.CronJobs) != 2 {
		t.Fatalf("%+v", cfg.CronJobs)
	}
	d, w := cfg.CronJobs[0], cfg.CronJobs[1]
	if d.ID != "digest" || d.TZ != "Europe/Berlin" || d.Agent != "main" || d.Payload.Model.String() != "openai/gpt-5" || !d.Payload.HasFallbacks || len(d.Payload.Fallbacks) != 0 {
		t.Errorf("digest %+v", d)
	}
	if w.Agent != "ops" || w.Session != "ops-main" || w.Payload.HasFallbacks || !w.Payload.Model.IsZero() {
		t.Errorf("weekly %+v", w)
	}
}

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Cooldowns, policy.DefaultCooldowns()) || !cfg.Model.Primary.IsZero() {
		t.Errorf("got %+v", cfg)
	}
	cfg, err = ParseConfig([]byte(`{auth: {cooldowns: {allowFormatRetry: true}}}`))
	if err != nil || !cfg.Cooldowns.AllowFormatRetry {
		t.Errorf("auth.cooldowns.allowFormatRetry: %+v, %v", cfg.Cooldowns, err)
	}
	cfg, err = ParseConfig([]byte(`{agents: {defaults: {model: "openai/gpt-5"}}}`))
	if err != nil || cfg.Model.Primary.String() != "openai/gpt-5" || cfg.Model.HasFallbacks {
		t.Errorf("a string model: %+v, %v", cfg.Model, err)
	}
}

func TestParseConfigNamesTheBadKey(t *testing.T) {
	cases := []struct {
		src, path, msg string
		line           int
	}{
		{`{agents: {defaults: {model: {primary: "gpt-5"}}}}`, "agents.defaults.model.primary", `"gpt-5" is not provider/model`, 1},
		{"{agents: {defaults: {model: {\n fallbacks: [\"openai/gpt-5\", \"/x\"]}}}}", "agents.defaults.model.fallbacks[1]", "has no provider", 2},
		{`{agents: {defaults: {model: 5}}}`, "agents.defaults.model", "is a number", 1},
		{`{agents: {list: [{model: "a/b"}]}}`, "agents.list[0].id", "missing or empty", 1},
		{`{agents: {list: [{id: "a"}, {id: "a"}]}}`, "agents.list[1].id", `duplicate agent id "a"`, 1},
		{`{auth: {cooldowns: {billingBackoffHours: -1}}}`, "auth.cooldowns.billingBackoffHours", "not a positive number", 1},
		{`{auth: {cooldowns: {billingBackoffHours: "5"}}}`, "auth.cooldowns.billingBackoffHours", "is a string, want a number", 1},
		{`{auth: {cooldowns: {rateLimitedProfileRotations: 1.5}}}`, "auth.cooldowns.rateLimitedProfileRotations", "whole number", 1},
		{`{auth: {cooldowns: {billingBackoffHours: 30}}}`, "auth.cooldowns.billingMaxHours", "less than billingBackoffHours", 0},
		{`{auth: {cooldowns: {allowFormatRetry: "yes"}}}`, "auth.cooldowns.allowFormatRetry", "is a string, want a bool", 1},
		{`{auth: {profiles: {"openai:a": {mode: "password"}}}}`, "auth.profiles.openai:a.mode", `"password" is not one of`, 1},
		{`{auth: {order: {openai: "openai:a"}}}`, "auth.order.openai", "is a string, want an array", 1},
		{`{models: {providers: {ollama: {baseUrl: "localhost:11434"}}}}`, "models.providers.ollama.baseUrl", "not an http(s) URL", 1},
		{`{models: {providers: {corp: {tokenUrl: "sso"}}}}`, "models.providers.corp.tokenUrl", "not an http(s) URL", 1},
		{`{agents: {defaults: {heartbeat: {every: "often"}}}}`, "agents.defaults.heartbeat.every", "not a positive duration", 1},
		{`{cron: {jobs: [{id: "a", cron: "0 9 * *", message: "m"}]}}`, "cron.jobs[0].cron", "not a cron expression", 1},
		{`{cron: {jobs: [{id: "a", cron: "0 9 * * *"}]}}`, "cron.jobs[0].message", "missing", 1},
		{`{cron: {jobs: [{id: "a", cron: "0 9 * * *", message: "m"}, {id: "a", cron: "@daily", message: "m"}]}}`, "cron.jobs[1].id", "duplicate", 1},
		{`{cron: {jobs: [{id: "a", cron: "@daily", message: "m", payload: {model: "gpt"}}]}}`, "cron.jobs[0].payload.model", "not provider/model", 1},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.src))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: got %v, want a ConfigError", c.src, err)
			continue
		}
		if ce.Path != c.path || !strings.Contains(ce.Msg, c.msg) || (c.line != 0 && ce.Line != c.line) {
			t.Errorf("%s: got %v (line %d), want %s: …%s… at line %d", c.src, err, ce.Line, c.path, c.msg, c.line)
		}
	}
}

func TestParseConfigSyntaxErrorsGiveLineAndColumn(t *testing.T) {
	cases := []struct {
		src       string
		line, col int
		msg       string
	}{
		{"{\n  agents: {\n    defaults: { model: \"a/b\" \n  }\n", 5, 1, "expected ',' or '}'"},
		{"{a: 1,, }", 1, 7, "expected a key"},
		{"{a: 'unterminated}", 1, 5, "unterminated string"},
		{"{a: 1} x", 1, 8, "after the end"},
		{"/* open", 1, 1, "unterminated /* comment"},
		{"{a: 1, a: 2}", 1, 8, `duplicate key "a"`},
		{"{a: 01}", 1, 5, "bad number"},
		{"", 1, 1, "unexpected end of input"},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.src))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != c.line || se.Col != c.col || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: got %v, want line %d column %d: …%s…", c.src, err, c.line, c.col, c.msg)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(openClawConfig)
	f.Add(`{a: [1, {b: 'c'}], "d": 0x10}`)
	f.Add("{\"\\u")
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := ParseConfig([]byte(src))
		if err == nil && cfg == nil {
			t.Fatal("nil config without an error")
		}
	})
}

func TestAnUnknownAPIIsAConfigMistake(t *testing.T) {
	_, err := ParseConfig([]byte("{\n  models: {providers: {corp: {baseUrl: \"https://llm.corp/v1\",\n    api: \"gemini-rest\"}}}}"))
	if err == nil || !strings.Contains(err.Error(), "models.providers.corp.api") || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("got %v, want the key and its line", err)
	}
	if _, err := ParseConfig([]byte(`{models: {providers: {a: {api: "anthropic-messages"}, o: {api: "openai-completions"}}}}`)); err != nil {
		t.Error(err)
	}
}

func TestCheckConfigNamesEveryProblemWithItsLine(t *testing.T) {
	src := "{\n  agents: {defaults: {model: {primary: \"openai/gpt-5\",\n    fallbacks: [\"xai/grok-4\", \"anthropic/claude\"]}}},\n" +
		"  models: {providers: {anthropic: {api: \"anthropic-messages\"}, corp: {api: \"soap\"}}},\n" +
		"  auth: {cooldowns: {billingBackoffHours: -1}},\n}"
	hasProfile := func(p string) bool { return p == "openai" }
	_, errs := CheckConfig([]byte(src), hasProfile)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"models.providers.corp.api (line 4", "auth.cooldowns.billingBackoffHours (line 5",
		`agents.defaults.model.fallbacks[0] (line 3, column 17): xai/grok-4: provider "xai" has no models.providers entry and no stored profile`} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "anthropic/claude") || strings.Contains(all, "openai/gpt-5") {
		t.Errorf("a provider with an entry or a profile is fine:\n%s", all)
	}
	cfg, err := ParseConfig([]byte(`{agents: {defaults: {model: "xai/grok-4"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if u := Unreachable(cfg, func(string) bool { return false }); len(u) != 1 || u[0].Path != "agents.defaults.model" {
		t.Errorf("Unreachable: %v", u)
	}
}

func TestTheCloudsSettingsAndWhatTheyLack(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{models: {providers: {
		bedrock: {api: "bedrock-converse", region: "us-east-1", headers: {"X-Route": "a"}, query: {tenant: "t"},
			models: [{id: "anthropic.claude-sonnet-4-5-20250929-v1:0", cost: {input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75}}]},
		vertex: {api: "vertex-ai", region: "us-east5", project: "acme-ai"},
		azure: {api: "azure-openai", baseUrl: "https://acme.openai.azure.com", apiVersion: "2025-04-01-preview",
			models: [{id: "gpt-4o", deployment: "prod-4o"}]}}},
		agents: {list: [{id: "main", budget: {perDay: 20}}]},
		cron: {jobs: [{id: "digest", cron: "0 9 * * *", message: "m", budget: {perDay: 2.5}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Providers["bedrock"]
	if b.Region != "us-east-1" || b.Headers["X-Route"] != "a" || b.Query["tenant"] != "t" ||
		*b.Models[0].Cost != (policy.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}) {
		t.Errorf("bedrock %+v", b)
	}
	if v := cfg.Providers["vertex"]; v.Region != "us-east5" || v.Project != "acme-ai" {
		t.Errorf("vertex %+v", v)
	}
	if a := cfg.Providers["azure"]; a.APIVersion != "2025-04-01-preview" || a.Models[0].Deployment != "prod-4o" {
		t.Errorf("azure %+v", a)
	}
	if cfg.Agents[0].Budget.PerDay != 20 || cfg.CronJobs[0].Budget.PerDay != 2.5 {
		t.Errorf("budgets %+v %+v", cfg.Agents[0].Budget, cfg.CronJobs[0].Budget)
	}

	for _, c := range []struct{ src, key, line string }{
		{"{models: {providers: {\n bedrock: {api: \"bedrock-converse\"}}}}", "models.providers.bedrock.region", "line 2"},
		{"{models: {providers: {\n\n vertex: {api: \"vertex-ai\", project: \"p\"}}}}", "models.providers.vertex.region", "line 3"},
		{"{models: {providers: {\n azure: {api: \"azure-openai\"}}}}", "models.providers.azure.baseUrl", "line 2"},
		{"{models: {providers: {p: {headers: {\n Authorization: \"Bearer sk-1\"}}}}}", "models.providers.p.headers.Authorization", "line 1"},
		{"{models: {providers: {p: {models: [{id: \"m\", cost: {\n input: -1}}]}}}}", "models.providers.p.models[0].cost.input", "line 2"},
		{"{models: {providers: {p: {models: [{id: \"m\", cost: {\n inputs: 1}}]}}}}", "models.providers.p.models[0].cost.inputs", "line 2"},
		{"{cron: {jobs: [{id: \"d\", cron: \"0 9 * * *\", message: \"m\",\n budget: {}}]}}", "cron.jobs[0].budget.perDay", "line 2"},
		{"{agents: {list: [{id: \"a\", budget: {\n perDay: \"ten\"}}]}}", "agents.list[0].budget.perDay", "line 2"},
	} {
		_, err := ParseConfig([]byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), c.line) {
			t.Errorf("%s: got %v, want %s at %s", c.src, err, c.key, c.line)
		}
	}
}
