package config

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
)

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
func ParseConfig(src []byte) (*policy.Config, error) {
	root, err := parseJSON5(string(src))
	if err != nil {
		return nil, err
	}
	d := &configDecoder{}
	cfg := d.decode(root)
	if d.err != nil {
		return nil, d.err
	}
	cfg.RefSites = d.refs
	return cfg, nil
}

type configDecoder struct {
	err  error            // the first problem
	all  []*ConfigError   // every problem
	refs []policy.RefSite // every model ref, where it is named
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

func (d *configDecoder) decode(root *jsonValue) *policy.Config {
	cfg := policy.DefaultConfig()
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
				cfg.Agents = append(cfg.Agents, policy.Agent{
					ID:        id,
					Model:     d.selection(path+".model", el.get("model")),
					Heartbeat: d.heartbeat(path+".heartbeat", el.get("heartbeat")),
					Budget:    d.budget(path+".budget", el.get("budget")),
				})
			}
		}
	}
	if st := root.get("streaming"); st != nil && d.want("streaming", st, jsonObject) {
		if v := st.get("midStream"); v != nil {
			cfg.Streaming.MidStream = d.str("streaming.midStream", v)
			if m := cfg.Streaming.MidStream; m != policy.MidStreamContinue && m != policy.MidStreamError {
				d.fail("streaming.midStream", v, "%q is not %q or %q", m, policy.MidStreamContinue, policy.MidStreamError)
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
				job := policy.CronJob{ID: d.str(path+".id", el.get("id")), Cron: d.str(path+".cron", el.get("cron")), Agent: "main"}
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
				job.Budget = d.budget(path+".budget", el.get("budget"))
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
						job.Payload.HasFallbacks, job.Payload.Fallbacks = true, []policy.ModelRef{}
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
				id := policy.NormalizeProvider(m.key)
				if id == "" || strings.Contains(id, "/") {
					d.fail(path, m.value, "%q is not a provider id", m.key)
				}
				pc := policy.ProviderConfig{ID: id, BaseURL: d.str(path+".baseUrl", m.value.get("baseUrl")), API: d.str(path+".api", m.value.get("api")),
					TokenURL: d.str(path+".tokenUrl", m.value.get("tokenUrl")), ClientID: d.str(path+".clientId", m.value.get("clientId"))}
				if pc.API != "" && !slices.Contains(policy.APIs, pc.API) {
					// An API baton cannot speak is a config mistake, not an outage to discover.
					d.fail(path+".api", m.value.get("api"), "%q is not an API baton speaks (%s)", pc.API, strings.Join(policy.APIs, ", "))
				}
				d.cloud(&pc, path, m.value)
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
						spec := policy.ModelSpec{ID: d.str(mp+".id", el.get("id"))}
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
						d.deadlines(&spec, mp, el)
						spec.Cost = d.cost(mp+".cost", el.get("cost"))
						if v := el.get("deployment"); v != nil {
							spec.Deployment = d.str(mp+".deployment", v)
						}
						if v := el.get("continuation"); v != nil {
							spec.Continuation = d.str(mp+".continuation", v)
							if spec.Continuation != "" && !policy.IsContinuation(spec.Continuation) {
								d.fail(mp+".continuation", v, "%q is not prefill, restart, instruction or none", spec.Continuation)
							}
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

func (d *configDecoder) ref(path string, v *jsonValue) policy.ModelRef {
	if !d.want(path, v, jsonString) {
		return policy.ModelRef{}
	}
	r, err := policy.ParseModelRef(v.str)
	if err != nil {
		d.fail(path, v, "%v", err)
		return r
	}
	d.refs = append(d.refs, policy.RefSite{Ref: r, Path: path, Line: v.line, Col: v.col})
	return r
}

// CheckConfig reads a config and returns every problem in it (not only the first), each with its
// key and line: bad values, and model refs whose provider has neither a models.providers entry
// nor a stored profile (hasProfile, nil: not checked), which would be discovered as an outage.
func CheckConfig(src []byte, hasProfile func(provider string) bool) (*policy.Config, []error) {
	root, err := parseJSON5(string(src))
	if err != nil {
		return nil, []error{err}
	}
	d := &configDecoder{}
	cfg := d.decode(root)
	cfg.RefSites = d.refs
	var out []error
	for _, e := range d.all {
		out = append(out, e)
	}
	if hasProfile != nil {
		for _, e := range Unreachable(cfg, hasProfile) {
			out = append(out, e)
		}
	}
	return cfg, out // the config as far as it decoded, beside its problems (later checks read it)
}

// Unreachable names the model refs of a parsed config whose provider has neither a
// models.providers entry nor a stored profile: a model no reply could reach, a config mistake to
// name at load (with the key, line and column where the file names it) rather than an outage to
// discover. It lives here, not in policy, because what it reports are the decoder's positions
// (Config.RefSites); a config built in code has none, and nothing is reported for it.
func Unreachable(cfg *policy.Config, hasProfile func(provider string) bool) []*ConfigError {
	var out []*ConfigError
	for _, r := range cfg.RefSites {
		if _, ok := cfg.Providers[r.Ref.Provider]; ok || hasProfile(r.Ref.Provider) {
			continue
		}
		out = append(out, &ConfigError{Path: r.Path, Line: r.Line, Col: r.Col,
			Msg: fmt.Sprintf("%s: provider %q has no models.providers entry and no stored profile (baton auth add --provider %s)", r.Ref, r.Ref.Provider, r.Ref.Provider)})
	}
	return out
}

// selection reads a model setting: "p/m" or {primary, fallbacks}. nil when absent.
func (d *configDecoder) selection(path string, v *jsonValue) *policy.ModelSelection {
	if v == nil {
		return nil
	}
	switch v.kind {
	case jsonString:
		return &policy.ModelSelection{Primary: d.ref(path, v)}
	case jsonObject:
		sel := &policy.ModelSelection{}
		if p := v.get("primary"); p != nil {
			sel.Primary = d.ref(path+".primary", p)
		}
		if f := v.get("fallbacks"); f != nil && d.want(path+".fallbacks", f, jsonArray) {
			sel.HasFallbacks = true
			sel.Fallbacks = []policy.ModelRef{}
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

func (d *configDecoder) allowlist(path string, v *jsonValue) []policy.ModelRef {
	if v == nil {
		return nil
	}
	var out []policy.ModelRef
	switch v.kind {
	case jsonObject: // OpenClaw keys the allowlist by ref: {"openai/gpt-5": {alias: …}}
		for _, m := range v.obj {
			r, err := policy.ParseModelRef(m.key)
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

func (d *configDecoder) heartbeat(path string, v *jsonValue) *policy.Heartbeat {
	if v == nil || !d.want(path, v, jsonObject) {
		return nil
	}
	hb := &policy.Heartbeat{}
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

var profileModes = map[string]bool{"api_key": true, "oauth": true, "token": true, "aws-sdk": true,
	"aws_keys": true, "service_account": true, "ambient": true}

func (d *configDecoder) profiles(cfg *policy.Config, v *jsonValue) {
	if !d.want("auth.profiles", v, jsonObject) {
		return
	}
	for _, m := range v.obj {
		path := "auth.profiles." + m.key
		if !d.want(path, m.value, jsonObject) {
			continue
		}
		pc := policy.ProfileConfig{ID: m.key}
		pc.Provider = policy.NormalizeProvider(d.str(path+".provider", m.value.get("provider")))
		if m.value.get("provider") == nil {
			prefix, _, ok := strings.Cut(m.key, ":")
			if !ok || prefix == "" {
				d.fail(path+".provider", m.value, "missing, and the id is not provider:name")
			}
			pc.Provider = policy.NormalizeProvider(prefix)
		}
		if mode := m.value.get("mode"); mode != nil {
			pc.Mode = d.str(path+".mode", mode)
			if d.err == nil && !profileModes[pc.Mode] {
				d.fail(path+".mode", mode, "%q is not one of api_key, oauth, token, aws-sdk, aws_keys, service_account, ambient", pc.Mode)
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

func (d *configDecoder) order(cfg *policy.Config, v *jsonValue) {
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
		cfg.AuthOrder[policy.NormalizeProvider(m.key)] = ids
	}
}

func (d *configDecoder) cooldowns(c *policy.Cooldowns, v *jsonValue) {
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
			c.BillingBackoffByProvider[policy.NormalizeProvider(m.key)] = d.positive("auth.cooldowns.billingBackoffHoursByProvider."+m.key, m.value, time.Hour)
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

// cloud reads what the clouds' APIs need (region, project, apiVersion) and any provider's extra
// headers and query, and names what a cloud's API lacks: a region for Bedrock and Vertex AI, the
// resource's endpoint for Azure (its deployments default to the models' ids).
func (d *configDecoder) cloud(pc *policy.ProviderConfig, path string, v *jsonValue) {
	for key, dst := range map[string]*string{"region": &pc.Region, "project": &pc.Project, "apiVersion": &pc.APIVersion} {
		if e := v.get(key); e != nil {
			*dst = d.str(path+"."+key, e)
		}
	}
	pc.Headers = d.strings(path+".headers", v.get("headers"))
	pc.Query = d.strings(path+".query", v.get("query"))
	for name := range pc.Headers {
		if strings.EqualFold(name, "authorization") || strings.EqualFold(name, "x-api-key") || strings.EqualFold(name, "api-key") || strings.EqualFold(name, "x-goog-api-key") {
			// A credential in the config would travel in every reply's history: profiles keep them.
			d.fail(path+".headers."+name, v.get("headers"), "is a credential: store it as an auth profile (baton auth add), not in the config")
		}
	}
	switch pc.API {
	case policy.APIBedrockConverse, policy.APIVertexAI:
		if pc.Region == "" {
			d.fail(path+".region", v, "missing: a %s provider needs its region (e.g. %s)", pc.API,
				map[string]string{policy.APIBedrockConverse: `"us-east-1"`, policy.APIVertexAI: `"us-east5" or "global"`}[pc.API])
		}
	case policy.APIAzureOpenAI, policy.APIAzureOpenAIResponses:
		if pc.BaseURL == "" {
			d.fail(path+".baseUrl", v, "missing: an %s provider needs its resource's endpoint (https://<resource>.openai.azure.com)", pc.API)
		}
	}
}

// strings reads an object of strings (headers, query); nil when absent.
func (d *configDecoder) strings(path string, v *jsonValue) map[string]string {
	if v == nil || !d.want(path, v, jsonObject) {
		return nil
	}
	out := map[string]string{}
	for _, m := range v.obj {
		if m.key == "" {
			d.fail(path, m.value, "an empty name")
			continue
		}
		out[m.key] = d.str(path+"."+m.key, m.value)
	}
	return out
}

// cost reads a catalog entry's price per million tokens (OpenClaw's cost).
func (d *configDecoder) cost(path string, v *jsonValue) *policy.ModelCost {
	if v == nil || !d.want(path, v, jsonObject) {
		return nil
	}
	c := &policy.ModelCost{}
	for key, dst := range map[string]*float64{"input": &c.Input, "output": &c.Output, "cacheRead": &c.CacheRead, "cacheWrite": &c.CacheWrite} {
		e := v.get(key)
		if e == nil || !d.want(path+"."+key, e, jsonNumber) {
			continue
		}
		if e.num < 0 || math.IsInf(e.num, 0) || math.IsNaN(e.num) {
			d.fail(path+"."+key, e, "%v is not a price (US dollars per million tokens, 0 or more)", e.num)
			continue
		}
		*dst = e.num
	}
	for _, m := range v.obj {
		switch m.key {
		case "input", "output", "cacheRead", "cacheWrite":
		default:
			d.fail(path+"."+m.key, m.value, "is not a price baton reads (input, output, cacheRead, cacheWrite)")
		}
	}
	return c
}

// budget reads a daily budget ({perDay: dollars}).
func (d *configDecoder) budget(path string, v *jsonValue) *policy.Budget {
	if v == nil || !d.want(path, v, jsonObject) {
		return nil
	}
	e := v.get("perDay")
	if e == nil {
		d.fail(path+".perDay", v, "missing: the US dollars a UTC day may spend")
		return nil
	}
	if !d.want(path+".perDay", e, jsonNumber) {
		return nil
	}
	if e.num < 0 || math.IsInf(e.num, 0) || math.IsNaN(e.num) {
		d.fail(path+".perDay", e, "%v is not an amount of US dollars (0 or more)", e.num)
		return nil
	}
	return &policy.Budget{PerDay: e.num}
}

func finitePositive(f float64) bool { return f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

// deadlines reads a catalog entry's bounds (policy.Config.Deadlines): OpenClaw's `reasoning`, and
// baton's attemptTimeoutMs, minTokensPerSecond and throughputGraceMs.
func (d *configDecoder) deadlines(spec *policy.ModelSpec, mp string, el *jsonValue) {
	if b := el.get("reasoning"); b != nil && d.want(mp+".reasoning", b, jsonBool) {
		spec.Reasoning = b.b
	}
	if v := el.get("attemptTimeoutMs"); v != nil {
		spec.AttemptTimeout = d.positive(mp+".attemptTimeoutMs", v, time.Millisecond)
	}
	if v := el.get("minTokensPerSecond"); v != nil && d.want(mp+".minTokensPerSecond", v, jsonNumber) {
		if !finitePositive(v.num) || v.num > 1e6 {
			d.fail(mp+".minTokensPerSecond", v, "%v is not a positive number of tokens a second", v.num)
		} else {
			spec.MinTokensPerSecond = v.num
		}
	}
	if v := el.get("throughputGraceMs"); v != nil {
		spec.ThroughputGrace = d.positive(mp+".throughputGraceMs", v, time.Millisecond)
		if spec.MinTokensPerSecond == 0 && el.get("minTokensPerSecond") == nil {
			d.fail(mp+".throughputGraceMs", v, "is the grace of a throughput floor: set minTokensPerSecond too")
		}
	}
}
