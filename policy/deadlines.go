package policy

import "time"

// Deadlines are the bounds of one attempt that depend on its model and its request (the
// response and idle timeouts do not: they are the worker's alone).
type Deadlines struct {
	// FirstToken runs from the response headers until the first chunk.
	FirstToken time.Duration `json:"firstToken"`
	// Attempt bounds the whole attempt, from the request to its last chunk (0: no bound beyond
	// the others).
	Attempt time.Duration `json:"attempt,omitempty"`
	// MinTokensPerSecond is the throughput floor (0: none): once the answer has started, a
	// stream that averages fewer tokens a second after ThroughputGrace fails as a timeout.
	MinTokensPerSecond float64       `json:"minTokensPerSecond,omitempty"`
	ThroughputGrace    time.Duration `json:"throughputGrace,omitempty"`
}

// DeadlineDefaults are the worker's defaults (its environment): BATON_FIRST_TOKEN_TIMEOUT_MS,
// BATON_REASONING_FIRST_TOKEN_TIMEOUT_MS and BATON_ATTEMPT_TIMEOUT_MS.
type DeadlineDefaults struct {
	FirstToken          time.Duration
	ReasoningFirstToken time.Duration
	Attempt             time.Duration
}

// DefaultThroughputGrace is how long a stream may crawl after its first token before a
// throughput floor with no throughputGraceMs of its own judges it.
const DefaultThroughputGrace = 10 * time.Second

// DeadlineDefaults are the reply's defaults, as the worker loaded them.
func (s ReplyState) DeadlineDefaults() DeadlineDefaults {
	return DeadlineDefaults{FirstToken: s.FirstTokenTimeout, ReasoningFirstToken: s.ReasoningFirstTokenTimeout, Attempt: s.AttemptTimeout}
}

// Deadlines are the bounds of an attempt on ref, for a request that asks for reasoning or not:
//   - the first-token timeout is the model's catalog firstTokenTimeoutMs when it has one; else,
//     when the request asks for reasoning or the catalog marks the model `reasoning: true`, the
//     reasoning default (never shorter than the plain default: a reasoning model thinks before
//     its first token); else the plain default, which is short, so that a fast model's stall
//     fails over in seconds;
//   - the attempt bound is the model's attemptTimeoutMs, else the default (0: none);
//   - the throughput floor is the model's alone (off by default), its grace
//     DefaultThroughputGrace unless the model gives throughputGraceMs.
func (c *Config) Deadlines(ref ModelRef, reasoning bool, def DeadlineDefaults) Deadlines {
	spec, _ := c.modelSpec(ref)
	d := Deadlines{FirstToken: def.FirstToken, Attempt: def.Attempt}
	switch {
	case spec.FirstTokenTimeout > 0:
		d.FirstToken = spec.FirstTokenTimeout
	case reasoning || spec.Reasoning:
		d.FirstToken = max(def.FirstToken, def.ReasoningFirstToken)
	}
	if spec.AttemptTimeout > 0 {
		d.Attempt = spec.AttemptTimeout
	}
	if spec.MinTokensPerSecond > 0 {
		d.MinTokensPerSecond, d.ThroughputGrace = spec.MinTokensPerSecond, spec.ThroughputGrace
		if d.ThroughputGrace <= 0 {
			d.ThroughputGrace = DefaultThroughputGrace
		}
	}
	return d
}

// modelSpec is ref's catalog entry (models.providers.<id>.models[]), if it has one.
func (c *Config) modelSpec(ref ModelRef) (ModelSpec, bool) {
	if c == nil {
		return ModelSpec{}, false
	}
	for _, m := range c.Providers[NormalizeProvider(ref.Provider)].Models {
		if m.ID == ref.Model {
			return m, true
		}
	}
	return ModelSpec{}, false
}
