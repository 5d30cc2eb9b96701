// Package policy is baton's failover rules as pure functions: the config model, error
// classification, the candidate chain, profile order, cooldown arithmetic, per-candidate decisions,
// failure summaries and notices. No I/O, no clock (time is a parameter), no Temporal.
package policy

import (
	"errors"
	"fmt"
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
	// Budget (baton's key) limits what the agent's replies spend a day.
	Budget *Budget `json:"budget,omitempty"`
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

// The wire formats a provider may speak (models.providers.<id>.api), as package provider names
// them (provider.APIs: a test keeps the two lists equal).
const (
	APIOpenAICompletions    = "openai-completions"
	APIOpenAIResponses      = "openai-responses"
	APIAnthropicMessages    = "anthropic-messages"
	APIAzureOpenAI          = "azure-openai"
	APIAzureOpenAIResponses = "azure-openai-responses"
	APIBedrockConverse      = "bedrock-converse"
	APIGoogleGemini         = "google-gemini"
	APIVertexAI             = "vertex-ai"
)

// APIs lists them all.
var APIs = []string{APIOpenAICompletions, APIOpenAIResponses, APIAnthropicMessages, APIAzureOpenAI, APIAzureOpenAIResponses,
	APIBedrockConverse, APIGoogleGemini, APIVertexAI}

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
	// What the clouds' APIs need (baton's keys): Region (bedrock-converse, vertex-ai), Project
	// (vertex-ai; else the service account's), APIVersion (azure-openai's api-version).
	Region     string `json:"region,omitempty"`
	Project    string `json:"project,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	// Headers and Query go with every call to this provider (OpenClaw's headers; query is
	// baton's). Not secrets: those live in auth profiles.
	Headers map[string]string `json:"headers,omitempty"`
	Query   map[string]string `json:"query,omitempty"`
}

// ModelSpec is one catalog entry: the model's id and the inputs it accepts ("text", "image").
type ModelSpec struct {
	ID    string   `json:"id"`
	Input []string `json:"input,omitempty"`
	// FirstTokenTimeout (firstTokenTimeoutMs, baton's key) replaces BATON_FIRST_TOKEN_TIMEOUT_MS
	// for this model: a slow-thinking model may be given longer than a fast one.
	FirstTokenTimeout time.Duration `json:"firstTokenTimeout,omitempty"`
	// Reasoning (OpenClaw's key) marks a reasoning model, which thinks before its first token:
	// it gets the reasoning first-token default (Deadlines).
	Reasoning bool `json:"reasoning,omitempty"`
	// AttemptTimeout (attemptTimeoutMs, baton's key) bounds a whole attempt on this model, from
	// the request to the last chunk, in place of BATON_ATTEMPT_TIMEOUT_MS.
	AttemptTimeout time.Duration `json:"attemptTimeout,omitempty"`
	// MinTokensPerSecond and ThroughputGrace (minTokensPerSecond, throughputGraceMs: baton's keys)
	// are a throughput floor: a stream that averages fewer tokens a second once its grace has run
	// fails as a timeout. Off (0) by default.
	MinTokensPerSecond float64       `json:"minTokensPerSecond,omitempty"`
	ThroughputGrace    time.Duration `json:"throughputGrace,omitempty"`
	// Cost is the model's price per million tokens (OpenClaw's key); nil: unpriced.
	Cost *ModelCost `json:"cost,omitempty"`
	// Deployment (baton's key) is the Azure deployment that serves this model; "": its id.
	Deployment string `json:"deployment,omitempty"`
	// Continuation (baton's key) is how this model can continue an answer another candidate's
	// stream left cut: ContinuePrefill, ContinueRestart, ContinueInstruction or ContinueNone; ""
	// is the default of its provider's api and flavour (DefaultContinuation).
	Continuation string `json:"continuation,omitempty"`
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
	// RefSites are the model refs a config file names, and where, as package config's decoder
	// found them (for config.Unreachable); nil for a config built in code.
	RefSites []RefSite `json:"-"`
}

// RefSite is a model ref and where a config file names it: the key path and its 1-based line and
// column.
type RefSite struct {
	Ref       ModelRef
	Path      string
	Line, Col int
}

// CronJob is one cron.jobs[] entry.
type CronJob struct {
	ID      string     `json:"id"`
	Cron    string     `json:"cron"`
	TZ      string     `json:"tz,omitempty"`
	Agent   string     `json:"agent"`
	Session string     `json:"session,omitempty"`
	Message string     `json:"message"`
	Payload FixedChain `json:"payload"`
	// WaitForCooldown is payload.waitForCooldown: the durable wait of `baton reply --wait` (a
	// duration, or milliseconds). Kept beside the payload, not in it: FixedChain travels in
	// workflow inputs, and the wait has its own field there (ReplyRequest.WaitForCooldown).
	WaitForCooldown time.Duration `json:"waitForCooldown,omitempty"`
	// Budget (baton's key) limits what the job's runs spend a day.
	Budget *Budget `json:"budget,omitempty"`
}

// DefaultConfig is what an empty config file means.
func DefaultConfig() *Config {
	return &Config{Cooldowns: DefaultCooldowns(), AuthOrder: map[string][]string{}, Providers: map[string]ProviderConfig{}}
}

// ForAgent is the config a reply of agent reads, and records in its history at its start: the
// defaults, that agent's entry, the catalog and the auth settings, without the other agents and
// the cron jobs (the worker's schedules), which no decision of the reply reads. nil stays nil.
func (c *Config) ForAgent(agent string) *Config {
	if c == nil {
		return nil
	}
	out := *c
	out.Agents, out.CronJobs, out.RefSites = nil, nil, nil
	if a, ok := c.Agent(agent); ok {
		out.Agents = []Agent{a}
	}
	return &out
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
