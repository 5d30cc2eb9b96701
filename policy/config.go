// Package policy is baton's failover rules as pure functions: the config model, error
// classification, the candidate chain, profile order, cooldown arithmetic, per-candidate decisions,
// failure summaries and notices. No I/O, no clock (time is a parameter), no Temporal.
package policy

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
)

// ModelRef names a model as provider/model. The model part may itself contain '/'
// (openrouter/anthropic/claude-sonnet-4-5).
type ModelRef struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// String is the provider/model form.
func (r ModelRef) String() string { return r.Provider + "/" + r.Model }

// IsZero reports an unset ref.
func (r ModelRef) IsZero() bool { return r.Provider == "" && r.Model == "" }

// ParseModelRef reads provider/model.
func ParseModelRef(s string) (ModelRef, error) {
	trimmed := strings.TrimSpace(s)
	provider, model, ok := strings.Cut(trimmed, "/")
	switch {
	case trimmed == "":
		return ModelRef{}, errors.New("empty model ref (want provider/model)")
	case !ok:
		return ModelRef{}, fmt.Errorf("%q is not provider/model", s)
	case provider == "":
		return ModelRef{}, fmt.Errorf("%q has no provider", s)
	case model == "" || strings.HasSuffix(model, "/"):
		return ModelRef{}, fmt.Errorf("%q has no model", s)
	case strings.ContainsAny(trimmed, " \t\n"):
		return ModelRef{}, fmt.Errorf("%q contains white space", s)
	}
	return ModelRef{Provider: NormalizeProvider(provider), Model: model}, nil
}

// NormalizeProvider lower-cases a provider id, as OpenClaw compares them.
func NormalizeProvider(p string) string { return strings.ToLower(strings.TrimSpace(p)) }

// ModelSelection is a `model` setting: a string, or {primary, fallbacks}.
type ModelSelection struct {
	Primary   ModelRef   `json:"primary"`
	Fallbacks []ModelRef `json:"fallbacks"`
	// HasFallbacks is true when `fallbacks` was given, even as []: that makes a chain strict.
	HasFallbacks bool `json:"hasFallbacks"`
}

// Heartbeat is a periodic run of an agent (agents.defaults.heartbeat or agents.list[].heartbeat).
type Heartbeat struct {
	Every   time.Duration `json:"every"`
	Model   ModelRef      `json:"model"` // zero: no heartbeat model of its own
	Message string        `json:"message"`
}

// Agent is one entry of agents.list.
type Agent struct {
	ID        string          `json:"id"`
	Model     *ModelSelection `json:"model,omitempty"`
	Heartbeat *Heartbeat      `json:"heartbeat,omitempty"`
}

// ProfileConfig is auth.profiles.<id>: metadata and routing, never secrets.
type ProfileConfig struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Mode     string `json:"mode"`
	Email    string `json:"email,omitempty"`
}

// Cooldowns are auth.cooldowns.*, with the seeds' defaults.
type Cooldowns struct {
	BillingBackoff              time.Duration            `json:"billingBackoff"`
	BillingBackoffByProvider    map[string]time.Duration `json:"billingBackoffByProvider,omitempty"`
	BillingMax                  time.Duration            `json:"billingMax"`
	FailureWindow               time.Duration            `json:"failureWindow"`
	OverloadedProfileRotations  int                      `json:"overloadedProfileRotations"`
	OverloadedBackoff           time.Duration            `json:"overloadedBackoff"`
	RateLimitedProfileRotations int                      `json:"rateLimitedProfileRotations"`
	AuthPermanentBackoff        time.Duration            `json:"authPermanentBackoff"`
	AuthPermanentMax            time.Duration            `json:"authPermanentMax"`
	// AllowFormatRetry (auth.cooldowns.allowFormatRetry, off by default) lets one format failure
	// per reply advance to the next candidate instead of ending the reply: OpenClaw's opt-in
	// allowFormatRetry, for a model that refuses what a sibling would take.
	AllowFormatRetry bool `json:"allowFormatRetry,omitempty"`
}

// DefaultCooldowns are the seeds' numbers.
func DefaultCooldowns() Cooldowns {
	return Cooldowns{
		BillingBackoff:              5 * time.Hour,
		BillingMax:                  24 * time.Hour,
		FailureWindow:               24 * time.Hour,
		OverloadedProfileRotations:  1,
		OverloadedBackoff:           0,
		RateLimitedProfileRotations: 1,
		AuthPermanentBackoff:        10 * time.Minute,
		AuthPermanentMax:            60 * time.Minute,
	}
}

// BillingBackoffFor is the billing base for a provider, by-provider setting first.
func (c Cooldowns) BillingBackoffFor(provider string) time.Duration {
	if d, ok := c.BillingBackoffByProvider[NormalizeProvider(provider)]; ok {
		return d
	}
	return c.BillingBackoff
}

// ProviderConfig is models.providers.<id>: where an OpenAI-compatible (or other) API lives.
type ProviderConfig struct {
	ID      string `json:"id"`
	BaseURL string `json:"baseUrl,omitempty"`
	API     string `json:"api,omitempty"`
	// TokenURL and ClientID (baton's keys) let expired OAuth credentials of this provider be
	// refreshed with their refresh token.
	TokenURL string `json:"tokenUrl,omitempty"`
	ClientID string `json:"clientId,omitempty"`
	// Models is the provider's catalog (models.providers.<id>.models[]), as far as baton reads it.
	Models []ModelSpec `json:"models,omitempty"`
}

// ModelSpec is one catalog entry: the model's id and the inputs it accepts ("text", "image").
type ModelSpec struct {
	ID    string   `json:"id"`
	Input []string `json:"input,omitempty"`
	// FirstTokenTimeout (firstTokenTimeoutMs, baton's key) replaces BATON_FIRST_TOKEN_TIMEOUT_MS
	// for this model: a slow-thinking model may be given longer than a fast one.
	FirstTokenTimeout time.Duration `json:"firstTokenTimeout,omitempty"`
}

// FirstTokenTimeout is a model's first-token timeout: its catalog entry's, else def.
func (c *Config) FirstTokenTimeout(ref ModelRef, def time.Duration) time.Duration {
	for _, m := range c.Providers[ref.Provider].Models {
		if m.ID == ref.Model && m.FirstTokenTimeout > 0 {
			return m.FirstTokenTimeout
		}
	}
	return def
}

// AcceptsImages reports whether a model may be sent images: a catalog entry whose input list
// lacks "image" marks it text-only; a model without an entry (or without an input list) is
// assumed to accept them, as OpenClaw assumes.
func (c *Config) AcceptsImages(ref ModelRef) bool {
	for _, m := range c.Providers[ref.Provider].Models {
		if m.ID == ref.Model && len(m.Input) > 0 {
			return slices.Contains(m.Input, "image")
		}
	}
	return true
}

// Config is the part of an OpenClaw config that failover reads.
type Config struct {
	Model      ModelSelection `json:"model"`
	ImageModel ModelSelection `json:"imageModel"`
	Heartbeat  *Heartbeat     `json:"heartbeat,omitempty"`
	Allowlist  []ModelRef     `json:"allowlist,omitempty"` // agents.defaults.models: never filters fallbacks
	Agents     []Agent        `json:"agents,omitempty"`
	Profiles   []ProfileConfig
	AuthOrder  map[string][]string
	Cooldowns  Cooldowns
	// Streaming is streaming.* (baton's keys): what a stream cut after content reached the caller does.
	Streaming Streaming `json:"streaming,omitzero"`
	Providers map[string]ProviderConfig
	// CronJobs are cron.jobs[] (baton's key): jobs the worker keeps as schedules.
	CronJobs []CronJob `json:"cronJobs,omitempty"`
	// refs are the model refs the config names, and where (for Unreachable).
	refs []refAt
}

// CronJob is one cron.jobs[] entry.
type CronJob struct {
	ID      string      `json:"id"`
	Cron    string      `json:"cron"`
	TZ      string      `json:"tz,omitempty"`
	Agent   string      `json:"agent"`
	Session string      `json:"session,omitempty"`
	Message string      `json:"message"`
	Payload CronPayload `json:"payload"`
	// WaitForCooldown is payload.waitForCooldown: the durable wait of `baton reply --wait` (a
	// duration, or milliseconds). Kept beside the payload, not in it: CronPayload travels in
	// workflow inputs, and the wait has its own field there (ReplyRequest.WaitForCooldown).
	WaitForCooldown time.Duration `json:"waitForCooldown,omitempty"`
}

// DefaultConfig is what an empty config file means.
func DefaultConfig() *Config {
	return &Config{Cooldowns: DefaultCooldowns(), AuthOrder: map[string][]string{}, Providers: map[string]ProviderConfig{}}
}

// Agent returns agents.list[] by id.
func (c *Config) Agent(id string) (Agent, bool) {
	for _, a := range c.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return Agent{}, false
}

// ConfigError names the key path (and, from a file, the line and column) of a bad value.
type ConfigError struct {
	Path      string
	Line, Col int
	Msg       string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d, column %d): %s", e.Path, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// ParseConfig reads an OpenClaw-shaped JSON5 config. Keys baton does not use are ignored; a bad
// value of a key it uses is a *ConfigError, a syntax error a *SyntaxError.
func ParseConfig(src []byte) (*Config, error) {
	root, err := parseJSON5(string(src))
	if err != nil {
		return nil, err
	}
	d := &configDecoder{}
	cfg := d.decode(root)
	if d.err != nil {
		return nil, d.err
	}
	cfg.refs = d.refs
	return cfg, nil
}

type configDecoder struct {
	err  error          // the first problem
	all  []*ConfigError // every problem
	refs []refAt        // every model ref, where it is named
}

func (d *configDecoder) fail(path string, v *jsonValue, format string, args ...any) {
	e := &ConfigError{Path: path, Msg: fmt.Sprintf(format, args...)}
	if v != nil {
		e.Line, e.Col = v.line, v.col
	}
	d.all = append(d.all, e)
	if d.err == nil {
		d.err = e
	}
}

func (d *configDecoder) want(path string, v *jsonValue, kind jsonKind) bool {
	if v == nil {
		return false
	}
	if v.kind != kind {
		d.fail(path, v, "is %s, want %s", v.kind, kind)
		return false
	}
	return true
}

func (d *configDecoder) decode(root *jsonValue) *Config {
	cfg := DefaultConfig()
	if !d.want("(top level)", root, jsonObject) {
		return cfg
	}
	agents := root.get("agents")
	if d.want("agents", agents, jsonObject) {
		defaults := agents.get("defaults")
		if d.want("agents.defaults", defaults, jsonObject) {
			if m := d.selection("agents.defaults.model", defaults.get("model")); m != nil {
				cfg.Model = *m
			}
			if m := d.selection("agents.defaults.imageModel", defaults.get("imageModel")); m != nil {
				cfg.ImageModel = *m
			}
			cfg.Heartbeat = d.heartbeat("agents.defaults.heartbeat", defaults.get("heartbeat"))
			cfg.Allowlist = d.allowlist("agents.defaults.models", defaults.get("models"))
		}
		list := agents.get("list")
		if d.want("agents.list", list, jsonArray) {
			seen := map[string]bool{}
			for i, el := range list.arr {
				path := fmt.Sprintf("agents.list[%d]", i)
				if !d.want(path, el, jsonObject) {
					continue
				}
				id := d.str(path+".id", el.get("id"))
				if strings.TrimSpace(id) == "" {
					d.fail(path+".id", orValue(el.get("id"), el), "missing or empty")
				} else if seen[id] {
					d.fail(path+".id", el.get("id"), "duplicate agent id %q", id)
				}
				seen[id] = true
				cfg.Agents = append(cfg.Agents, Agent{
					ID:        id,
					Model:     d.selection(path+".model", el.get("model")),
					Heartbeat: d.heartbeat(path+".heartbeat", el.get("heartbeat")),
				})
			}
		}
	}
	if st := root.get("streaming"); st != nil && d.want("streaming", st, jsonObject) {
		if v := st.get("midStream"); v != nil {
			cfg.Streaming.MidStream = d.str("streaming.midStream", v)
			if m := cfg.Streaming.MidStream; m != MidStreamContinue && m != MidStreamError {
				d.fail("streaming.midStream", v, "%q is not %q or %q", m, MidStreamContinue, MidStreamError)
			}
		}
	}
	auth := root.get("auth")
	if d.want("auth", auth, jsonObject) {
		d.profiles(cfg, auth.get("profiles"))
		d.order(cfg, auth.get("order"))
		d.cooldowns(&cfg.Cooldowns, auth.get("cooldowns"))
	}
	if cron := root.get("cron"); d.want("cron", cron, jsonObject) {
		if jobs := cron.get("jobs"); d.want("cron.jobs", jobs, jsonArray) {
			seen := map[string]bool{}
			for i, el := range jobs.arr {
				path := fmt.Sprintf("cron.jobs[%d]", i)
				if !d.want(path, el, jsonObject) {
					continue
				}
				job := CronJob{ID: d.str(path+".id", el.get("id")), Cron: d.str(path+".cron", el.get("cron")), Agent: "main"}
				if job.ID == "" || strings.ContainsAny(job.ID, " /") {
					d.fail(path+".id", orValue(el.get("id"), el), "missing, or not a plain id")
				} else if seen[job.ID] {
					d.fail(path+".id", el.get("id"), "duplicate job id %q", job.ID)
				}
				seen[job.ID] = true
				if n := len(strings.Fields(job.Cron)); !strings.HasPrefix(job.Cron, "@") && (n < 5 || n > 7) {
					d.fail(path+".cron", orValue(el.get("cron"), el), "%q is not a cron expression (minute hour day month weekday)", job.Cron)
				}
				if v := el.get("tz"); v != nil {
					job.TZ = d.str(path+".tz", v)
				}
				if v := el.get("agent"); v != nil {
					job.Agent = d.str(path+".agent", v)
				}
				if v := el.get("session"); v != nil {
					job.Session = d.str(path+".session", v)
				}
				job.Message = d.str(path+".message", el.get("message"))
				if job.Message == "" {
					d.fail(path+".message", orValue(el.get("message"), el), "missing")
				}
				if p := el.get("payload"); d.want(path+".payload", p, jsonObject) {
					if m := p.get("model"); m != nil {
						job.Payload.Model = d.ref(path+".payload.model", m)
					}
					if w := p.get("waitForCooldown"); w != nil {
						job.WaitForCooldown = d.duration(path+".payload.waitForCooldown", w)
					}
					if f := p.get("fallbacks"); f != nil && d.want(path+".payload.fallbacks", f, jsonArray) {
						job.Payload.HasFallbacks, job.Payload.Fallbacks = true, []ModelRef{}
						for k, fe := range f.arr {
							job.Payload.Fallbacks = append(job.Payload.Fallbacks, d.ref(fmt.Sprintf("%s.payload.fallbacks[%d]", path, k), fe))
						}
					}
				}
				cfg.CronJobs = append(cfg.CronJobs, job)
			}
		}
	}
	models := root.get("models")
	if d.want("models", models, jsonObject) {
		providers := models.get("providers")
		if d.want("models.providers", providers, jsonObject) {
			for _, m := range providers.obj {
				path := "models.providers." + m.key
				if !d.want(path, m.value, jsonObject) {
					continue
				}
				id := NormalizeProvider(m.key)
				if id == "" || strings.Contains(id, "/") {
					d.fail(path, m.value, "%q is not a provider id", m.key)
				}
				pc := ProviderConfig{ID: id, BaseURL: d.str(path+".baseUrl", m.value.get("baseUrl")), API: d.str(path+".api", m.value.get("api")),
					TokenURL: d.str(path+".tokenUrl", m.value.get("tokenUrl")), ClientID: d.str(path+".clientId", m.value.get("clientId"))}
				switch pc.API {
				case "", "openai-completions", "openai-responses", "anthropic-messages":
				default:
					// An API baton cannot speak is a config mistake, not an outage to discover.
					d.fail(path+".api", m.value.get("api"), "%q is not an API baton speaks (openai-completions, anthropic-messages)", pc.API)
				}
				for key, v := range map[string]string{"baseUrl": pc.BaseURL, "tokenUrl": pc.TokenURL} {
					if v == "" {
						continue
					}
					if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
						d.fail(path+"."+key, m.value.get(key), "%q is not an http(s) URL", v)
					}
				}
				if list := m.value.get("models"); list != nil && d.want(path+".models", list, jsonArray) {
					for k, el := range list.arr {
						mp := fmt.Sprintf("%s.models[%d]", path, k)
						if !d.want(mp, el, jsonObject) {
							continue
						}
						spec := ModelSpec{ID: d.str(mp+".id", el.get("id"))}
						if spec.ID == "" && el.get("id") != nil && el.get("id").kind == jsonString {
							d.fail(mp+".id", el.get("id"), "empty")
						}
						if in := el.get("input"); in != nil && d.want(mp+".input", in, jsonArray) {
							for n, iv := range in.arr {
								kind := d.str(fmt.Sprintf("%s.input[%d]", mp, n), iv)
								if kind != "" && kind != "text" && kind != "image" {
									d.fail(fmt.Sprintf("%s.input[%d]", mp, n), iv, "%q is not text or image", kind)
								}
								spec.Input = append(spec.Input, kind)
							}
						}
						if v := el.get("firstTokenTimeoutMs"); v != nil {
							spec.FirstTokenTimeout = d.positive(mp+".firstTokenTimeoutMs", v, time.Millisecond)
						}
						pc.Models = append(pc.Models, spec)
					}
				}
				cfg.Providers[id] = pc
			}
		}
	}
	return cfg
}

func orValue(v, fallback *jsonValue) *jsonValue {
	if v != nil {
		return v
	}
	return fallback
}

func (d *configDecoder) str(path string, v *jsonValue) string {
	if !d.want(path, v, jsonString) {
		return ""
	}
	return v.str
}

func (d *configDecoder) ref(path string, v *jsonValue) ModelRef {
	if !d.want(path, v, jsonString) {
		return ModelRef{}
	}
	r, err := ParseModelRef(v.str)
	if err != nil {
		d.fail(path, v, "%v", err)
		return r
	}
	d.refs = append(d.refs, refAt{ref: r, at: ConfigError{Path: path, Line: v.line, Col: v.col}})
	return r
}

// refAt is a model ref and where the config names it.
type refAt struct {
	ref ModelRef
	at  ConfigError
}

// CheckConfig reads a config and returns every problem in it (not only the first), each with its
// key and line: bad values, and model refs whose provider has neither a models.providers entry
// nor a stored profile (hasProfile, nil: not checked), which would be discovered as an outage.
func CheckConfig(src []byte, hasProfile func(provider string) bool) (*Config, []error) {
	root, err := parseJSON5(string(src))
	if err != nil {
		return nil, []error{err}
	}
	d := &configDecoder{}
	cfg := d.decode(root)
	var out []error
	for _, e := range d.all {
		out = append(out, e)
	}
	if hasProfile != nil {
		for _, e := range unreachable(cfg, d.refs, hasProfile) {
			out = append(out, e)
		}
	}
	if len(out) > 0 {
		return nil, out
	}
	cfg.refs = d.refs
	return cfg, nil
}

// Unreachable names the model refs of a parsed config whose provider has neither a
// models.providers entry nor a stored profile.
func (c *Config) Unreachable(hasProfile func(provider string) bool) []*ConfigError {
	return unreachable(c, c.refs, hasProfile)
}

func unreachable(cfg *Config, refs []refAt, hasProfile func(string) bool) []*ConfigError {
	var out []*ConfigError
	for _, r := range refs {
		if _, ok := cfg.Providers[r.ref.Provider]; ok || hasProfile(r.ref.Provider) {
			continue
		}
		e := r.at
		e.Msg = fmt.Sprintf("%s: provider %q has no models.providers entry and no stored profile (baton auth add --provider %s)", r.ref, r.ref.Provider, r.ref.Provider)
		out = append(out, &e)
	}
	return out
}

// selection reads a model setting: "p/m" or {primary, fallbacks}. nil when absent.
func (d *configDecoder) selection(path string, v *jsonValue) *ModelSelection {
	if v == nil {
		return nil
	}
	switch v.kind {
	case jsonString:
		return &ModelSelection{Primary: d.ref(path, v)}
	case jsonObject:
		sel := &ModelSelection{}
		if p := v.get("primary"); p != nil {
			sel.Primary = d.ref(path+".primary", p)
		}
		if f := v.get("fallbacks"); f != nil && d.want(path+".fallbacks", f, jsonArray) {
			sel.HasFallbacks = true
			sel.Fallbacks = []ModelRef{}
			for i, el := range f.arr {
				sel.Fallbacks = append(sel.Fallbacks, d.ref(fmt.Sprintf("%s.fallbacks[%d]", path, i), el))
			}
		}
		return sel
	default:
		d.fail(path, v, "is %s, want a provider/model string or {primary, fallbacks}", v.kind)
		return nil
	}
}

func (d *configDecoder) allowlist(path string, v *jsonValue) []ModelRef {
	if v == nil {
		return nil
	}
	var out []ModelRef
	switch v.kind {
	case jsonObject: // OpenClaw keys the allowlist by ref: {"openai/gpt-5": {alias: …}}
		for _, m := range v.obj {
			r, err := ParseModelRef(m.key)
			if err != nil {
				d.fail(path+"."+m.key, m.value, "%v", err)
			}
			out = append(out, r)
		}
	case jsonArray:
		for i, el := range v.arr {
			out = append(out, d.ref(fmt.Sprintf("%s[%d]", path, i), el))
		}
	default:
		d.fail(path, v, "is %s, want an object keyed by provider/model", v.kind)
	}
	return out
}

func (d *configDecoder) heartbeat(path string, v *jsonValue) *Heartbeat {
	if v == nil || !d.want(path, v, jsonObject) {
		return nil
	}
	hb := &Heartbeat{}
	if e := v.get("every"); e != nil {
		hb.Every = d.duration(path+".every", e)
	}
	if m := v.get("model"); m != nil {
		hb.Model = d.ref(path+".model", m)
	}
	if m := v.get("message"); m != nil {
		hb.Message = d.str(path+".message", m)
	}
	return hb
}

// duration reads "30m", "1h30m" or a number of milliseconds.
func (d *configDecoder) duration(path string, v *jsonValue) time.Duration {
	switch v.kind {
	case jsonString:
		dur, err := time.ParseDuration(strings.TrimSpace(v.str))
		if err != nil || dur <= 0 {
			d.fail(path, v, "%q is not a positive duration like 30m", v.str)
		}
		return dur
	case jsonNumber:
		if !finitePositive(v.num) {
			d.fail(path, v, "%v is not a positive number of milliseconds", v.num)
			return 0
		}
		return time.Duration(v.num * float64(time.Millisecond))
	default:
		d.fail(path, v, "is %s, want a duration like 30m", v.kind)
		return 0
	}
}

var profileModes = map[string]bool{"api_key": true, "oauth": true, "token": true, "aws-sdk": true}

func (d *configDecoder) profiles(cfg *Config, v *jsonValue) {
	if !d.want("auth.profiles", v, jsonObject) {
		return
	}
	for _, m := range v.obj {
		path := "auth.profiles." + m.key
		if !d.want(path, m.value, jsonObject) {
			continue
		}
		pc := ProfileConfig{ID: m.key}
		pc.Provider = NormalizeProvider(d.str(path+".provider", m.value.get("provider")))
		if m.value.get("provider") == nil {
			prefix, _, ok := strings.Cut(m.key, ":")
			if !ok || prefix == "" {
				d.fail(path+".provider", m.value, "missing, and the id is not provider:name")
			}
			pc.Provider = NormalizeProvider(prefix)
		}
		if mode := m.value.get("mode"); mode != nil {
			pc.Mode = d.str(path+".mode", mode)
			if d.err == nil && !profileModes[pc.Mode] {
				d.fail(path+".mode", mode, "%q is not one of api_key, oauth, token, aws-sdk", pc.Mode)
			}
		}
		if e := m.value.get("email"); e != nil {
			pc.Email = d.str(path+".email", e)
		}
		if !strings.Contains(m.key, ":") {
			d.fail(path, m.value, "profile id %q is not provider:name", m.key)
		}
		cfg.Profiles = append(cfg.Profiles, pc)
	}
}

func (d *configDecoder) order(cfg *Config, v *jsonValue) {
	if !d.want("auth.order", v, jsonObject) {
		return
	}
	for _, m := range v.obj {
		path := "auth.order." + m.key
		if !d.want(path, m.value, jsonArray) {
			continue
		}
		ids := []string{}
		for i, el := range m.value.arr {
			id := d.str(fmt.Sprintf("%s[%d]", path, i), el)
			if d.err == nil && strings.TrimSpace(id) == "" {
				d.fail(fmt.Sprintf("%s[%d]", path, i), el, "empty profile id")
			}
			ids = append(ids, id)
		}
		cfg.AuthOrder[NormalizeProvider(m.key)] = ids
	}
}

func (d *configDecoder) cooldowns(c *Cooldowns, v *jsonValue) {
	if !d.want("auth.cooldowns", v, jsonObject) {
		return
	}
	hours := func(key string, dst *time.Duration) {
		if n := v.get(key); n != nil {
			*dst = d.positive("auth.cooldowns."+key, n, time.Hour)
		}
	}
	minutes := func(key string, dst *time.Duration) {
		if n := v.get(key); n != nil {
			*dst = d.positive("auth.cooldowns."+key, n, time.Minute)
		}
	}
	count := func(key string, dst *int) {
		if n := v.get(key); n != nil && d.want("auth.cooldowns."+key, n, jsonNumber) {
			if n.num < 0 || n.num != math.Trunc(n.num) || n.num > 1000 {
				d.fail("auth.cooldowns."+key, n, "%v is not a whole number from 0 to 1000", n.num)
				return
			}
			*dst = int(n.num)
		}
	}
	hours("billingBackoffHours", &c.BillingBackoff)
	hours("billingMaxHours", &c.BillingMax)
	hours("failureWindowHours", &c.FailureWindow)
	minutes("authPermanentBackoffMinutes", &c.AuthPermanentBackoff)
	minutes("authPermanentMaxMinutes", &c.AuthPermanentMax)
	count("overloadedProfileRotations", &c.OverloadedProfileRotations)
	count("rateLimitedProfileRotations", &c.RateLimitedProfileRotations)
	if b := v.get("allowFormatRetry"); b != nil && d.want("auth.cooldowns.allowFormatRetry", b, jsonBool) {
		c.AllowFormatRetry = b.b
	}
	if n := v.get("overloadedBackoffMs"); n != nil && d.want("auth.cooldowns.overloadedBackoffMs", n, jsonNumber) {
		if n.num < 0 || math.IsNaN(n.num) || math.IsInf(n.num, 0) || n.num > float64(time.Hour/time.Millisecond) {
			d.fail("auth.cooldowns.overloadedBackoffMs", n, "%v is not a number of milliseconds from 0 to 3600000", n.num)
		} else {
			c.OverloadedBackoff = time.Duration(n.num * float64(time.Millisecond))
		}
	}
	if by := v.get("billingBackoffHoursByProvider"); by != nil && d.want("auth.cooldowns.billingBackoffHoursByProvider", by, jsonObject) {
		c.BillingBackoffByProvider = map[string]time.Duration{}
		for _, m := range by.obj {
			c.BillingBackoffByProvider[NormalizeProvider(m.key)] = d.positive("auth.cooldowns.billingBackoffHoursByProvider."+m.key, m.value, time.Hour)
		}
	}
	if d.err == nil && c.BillingMax < c.BillingBackoff {
		d.fail("auth.cooldowns.billingMaxHours", v.get("billingMaxHours"), "is less than billingBackoffHours")
	}
	if d.err == nil && c.AuthPermanentMax < c.AuthPermanentBackoff {
		d.fail("auth.cooldowns.authPermanentMaxMinutes", v.get("authPermanentMaxMinutes"), "is less than authPermanentBackoffMinutes")
	}
}

// positive reads a positive finite number of unit (hours, minutes) up to ten years.
func (d *configDecoder) positive(path string, v *jsonValue, unit time.Duration) time.Duration {
	if !d.want(path, v, jsonNumber) {
		return 0
	}
	if !finitePositive(v.num) || v.num*float64(unit) > float64(10*365*24*time.Hour) {
		d.fail(path, v, "%v is not a positive number", v.num)
		return 0
	}
	return time.Duration(v.num * float64(unit))
}

func finitePositive(f float64) bool { return f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }
