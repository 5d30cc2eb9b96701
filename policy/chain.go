package policy

import (
	"errors"
	"fmt"
)

// Selection sources: who chose the model a reply starts with. They decide how strict the chain is.
const (
	SelectConfiguredDefault = "configured_default" // agents.defaults.model
	SelectAgentPrimary      = "agent_primary"      // agents.list[].model
	SelectAutoOverride      = "auto_override"      // a fallback persisted on the session
	SelectUserOverride      = "user_override"      // /model, sessions.patch, or a legacy override
	SelectCron              = "cron"               // payload.model / payload.fallbacks
	SelectExplicit          = "explicit"           // a one-off provider/model
	SelectHeartbeat         = "heartbeat"          // heartbeat.model
	SelectImage             = "image"              // agents.defaults.imageModel
	SelectReprobe           = "reprobe"            // the origin of an auto override, tried again
)

// Candidate origins in the chain.
const (
	OriginRequested          = "requested"
	OriginConfiguredFallback = "configured-fallback"
	OriginConfiguredPrimary  = "configured-primary"
)

// Candidate is one model of the chain.
type Candidate struct {
	ModelRef
	Origin string `json:"origin"`
}

// Chain is the ordered list of candidates a reply walks.
type Chain struct {
	Candidates []Candidate `json:"candidates"`
	Source     string      `json:"source"`
	// Requested is the model the reply was asked for: the one notices call "selected".
	Requested ModelRef `json:"requested"`
	Image     bool     `json:"image,omitempty"`
}

// Strict reports a chain of the requested model alone.
func (c Chain) Strict() bool { return len(c.Candidates) == 1 }

// Index returns the position of ref in the chain, or -1.
func (c Chain) Index(ref ModelRef) int {
	for i, cand := range c.Candidates {
		if cand.ModelRef == ref {
			return i
		}
	}
	return -1
}

// FixedChain is a chain the caller fixed: a cron job's payload, an HTTP request's model and
// fallbacks (no fallbacks given: the configured ones; given, even []: exactly those).
type FixedChain struct {
	Model        ModelRef   `json:"model"`
	Fallbacks    []ModelRef `json:"fallbacks,omitempty"`
	HasFallbacks bool       `json:"hasFallbacks,omitempty"` // fallbacks given, even []: [] is strict
}

// ChainRequest is what a reply asks for.
type ChainRequest struct {
	Agent      string        `json:"agent"`
	Session    *SessionModel `json:"session,omitempty"`
	Explicit   ModelRef      `json:"explicit"`
	FixedChain *FixedChain   `json:"cron,omitempty"`      // the name in decision records predates it
	Heartbeat  *ModelRef     `json:"heartbeat,omitempty"` // a heartbeat run; its own model, or zero
	Image      bool          `json:"image,omitempty"`
	// Reprobe starts from the auto override's origin (see ReprobeDue).
	Reprobe bool `json:"reprobe,omitempty"`
}

// ErrNoModel is returned when nothing names a model to start with.
var ErrNoModel = errors.New("no model to start with: set agents.defaults.model (or the agent's model)")

// AgentPrimary is the agent's effective primary: its own, else the configured default.
func (c *Config) AgentPrimary(agent string) ModelRef {
	if a, ok := c.Agent(agent); ok && a.Model != nil && !a.Model.Primary.IsZero() {
		return a.Model.Primary
	}
	return c.Model.Primary
}

// AgentFallbacks are the agent's configured fallbacks: its own if its model object has them,
// else the defaults'.
func (c *Config) AgentFallbacks(agent string) []ModelRef {
	if a, ok := c.Agent(agent); ok && a.Model != nil && a.Model.HasFallbacks {
		return a.Model.Fallbacks
	}
	return c.Model.Fallbacks
}

// BuildChain applies the selection-source policy of the seeds and returns the candidate chain.
func BuildChain(cfg *Config, req ChainRequest) (Chain, error) {
	primary := cfg.AgentPrimary(req.Agent)
	fallbacks := cfg.AgentFallbacks(req.Agent)
	// withFallbacks: the requested model, the given fallbacks, then (when the fallbacks are the
	// configured ones) the agent's primary, so an overridden run settles back on the default.
	withFallbacks := func(source string, requested ModelRef, fbs []ModelRef, appendPrimary bool) (Chain, error) {
		if requested.IsZero() {
			return Chain{}, ErrNoModel
		}
		ch := Chain{Source: source, Requested: requested}
		ch.add(requested, OriginRequested)
		for _, f := range fbs {
			ch.add(f, OriginConfiguredFallback)
		}
		if appendPrimary && !primary.IsZero() {
			ch.add(primary, OriginConfiguredPrimary)
		}
		return ch, nil
	}
	strict := func(source string, requested ModelRef) (Chain, error) {
		return withFallbacks(source, requested, nil, false)
	}

	switch {
	case req.Image:
		img := cfg.ImageModel
		if img.Primary.IsZero() {
			return Chain{}, errors.New("no image model: set agents.defaults.imageModel")
		}
		ch, err := withFallbacks(SelectImage, img.Primary, img.Fallbacks, false)
		ch.Image = true
		return ch, err
	case !req.Explicit.IsZero():
		return strict(SelectExplicit, req.Explicit)
	case req.FixedChain != nil && !req.FixedChain.Model.IsZero():
		if req.FixedChain.HasFallbacks {
			return withFallbacks(SelectCron, req.FixedChain.Model, req.FixedChain.Fallbacks, false)
		}
		return withFallbacks(SelectCron, req.FixedChain.Model, fallbacks, true)
	case req.Heartbeat != nil && !req.Heartbeat.IsZero():
		return withFallbacks(SelectHeartbeat, *req.Heartbeat, fallbacks, true)
	}

	if req.Session != nil {
		over, ok := req.Session.Override()
		switch src := req.Session.EffectiveOverrideSource(); {
		case ok && src == SourceUser:
			return strict(SelectUserOverride, over)
		case ok && src == SourceAuto && req.Reprobe:
			if origin, hasOrigin := req.Session.Origin(); hasOrigin {
				ch, err := withFallbacks(SelectReprobe, origin, fallbacks, true)
				ch.add(over, OriginConfiguredFallback) // the fallback that served stays reachable
				return ch, err
			}
		case ok && src == SourceAuto:
			ch, err := withFallbacks(SelectAutoOverride, over, fallbacks, true)
			// Notices still compare with what was selected before the fallback.
			if origin, hasOrigin := req.Session.Origin(); hasOrigin {
				ch.Requested = origin
			} else {
				ch.Requested = primary
			}
			return ch, err
		}
	}

	if a, ok := cfg.Agent(req.Agent); ok && a.Model != nil {
		m := a.Model
		switch {
		case !m.Primary.IsZero() && !m.HasFallbacks:
			return strict(SelectAgentPrimary, m.Primary) // a string, or an object without fallbacks
		case m.HasFallbacks:
			return withFallbacks(SelectAgentPrimary, primary, m.Fallbacks, false)
		}
	}
	return withFallbacks(SelectConfiguredDefault, cfg.Model.Primary, cfg.Model.Fallbacks, true)
}

func (c *Chain) add(ref ModelRef, origin string) {
	if ref.IsZero() || c.Index(ref) >= 0 {
		return
	}
	c.Candidates = append(c.Candidates, Candidate{ModelRef: ref, Origin: origin})
}

// String lists the chain as p/m → p/m.
func (c Chain) String() string {
	s := ""
	for i, cand := range c.Candidates {
		if i > 0 {
			s += " → "
		}
		s += cand.ModelRef.String()
	}
	return fmt.Sprintf("%s [%s]", s, c.Source)
}

// ReasonTextOnly is why a turn that carries images skips a candidate the catalog marks
// text-only. It is a skip, never a failure: no profile is blamed and no cooldown starts.
const ReasonTextOnly Reason = "text_only"

// TextOnlySkipText is the skip's explanation in the attempt record.
func TextOnlySkipText(c ModelRef) string {
	return fmt.Sprintf("%s accepts text only (models.providers.%s.models[].input) and the turn carries images", c, c.Provider)
}

// ImageRoute says how a turn that carries images is served: on its own chain when a candidate
// accepts images (the text-only ones skipped), else on the image model chain.
func ImageRoute(cfg *Config, c Chain) (useImageChain bool) {
	for _, cand := range c.Candidates {
		if cfg.AcceptsImages(cand.ModelRef) {
			return false
		}
	}
	return true
}
