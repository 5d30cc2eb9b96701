package policy

import (
	"testing"
	"time"
)

// The bounds of an attempt: the catalog entry first, then whether the request or the model
// reasons, then the worker's defaults.
func TestDeadlines(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Providers["openai"] = ProviderConfig{ID: "openai", Models: []ModelSpec{
		{ID: "gpt-fast"},
		{ID: "o-think", Reasoning: true},
		{ID: "o-pinned", Reasoning: true, FirstTokenTimeout: 5 * time.Second},
		{ID: "bounded", AttemptTimeout: 90 * time.Second},
		{ID: "floored", MinTokensPerSecond: 8},
		{ID: "floored-grace", MinTokensPerSecond: 2.5, ThroughputGrace: 3 * time.Second},
		{ID: "grace-only", ThroughputGrace: 3 * time.Second},
	}}
	def := DeadlineDefaults{FirstToken: 10 * time.Second, ReasoningFirstToken: 60 * time.Second}
	withAttempt := def
	withAttempt.Attempt = 2 * time.Minute
	longPlain := DeadlineDefaults{FirstToken: 2 * time.Minute, ReasoningFirstToken: 60 * time.Second}
	cases := []struct {
		name      string
		model     string
		reasoning bool
		def       DeadlineDefaults
		want      Deadlines
	}{
		{"a model without an entry gets the plain default", "unknown", false, def, Deadlines{FirstToken: 10 * time.Second}},
		{"a plain entry gets the plain default", "gpt-fast", false, def, Deadlines{FirstToken: 10 * time.Second}},
		{"a request that asks for reasoning gets the reasoning default", "gpt-fast", true, def, Deadlines{FirstToken: 60 * time.Second}},
		{"so does one without an entry", "unknown", true, def, Deadlines{FirstToken: 60 * time.Second}},
		{"a model marked reasoning gets it without asking", "o-think", false, def, Deadlines{FirstToken: 60 * time.Second}},
		{"the catalog's firstTokenTimeoutMs wins over reasoning", "o-pinned", true, def, Deadlines{FirstToken: 5 * time.Second}},
		{"the reasoning default is never shorter than the plain one", "o-think", false, longPlain, Deadlines{FirstToken: 2 * time.Minute}},
		{"an unset reasoning default is the plain one", "o-think", false, DeadlineDefaults{FirstToken: 10 * time.Second}, Deadlines{FirstToken: 10 * time.Second}},
		{"no attempt bound by default", "gpt-fast", false, def, Deadlines{FirstToken: 10 * time.Second}},
		{"the environment's attempt bound", "gpt-fast", false, withAttempt, Deadlines{FirstToken: 10 * time.Second, Attempt: 2 * time.Minute}},
		{"the catalog's attemptTimeoutMs wins", "bounded", false, withAttempt, Deadlines{FirstToken: 10 * time.Second, Attempt: 90 * time.Second}},
		{"the catalog's attemptTimeoutMs without a default", "bounded", false, def, Deadlines{FirstToken: 10 * time.Second, Attempt: 90 * time.Second}},
		{"a throughput floor with the default grace", "floored", false, def,
			Deadlines{FirstToken: 10 * time.Second, MinTokensPerSecond: 8, ThroughputGrace: DefaultThroughputGrace}},
		{"a throughput floor with its own grace", "floored-grace", false, def,
			Deadlines{FirstToken: 10 * time.Second, MinTokensPerSecond: 2.5, ThroughputGrace: 3 * time.Second}},
		{"a grace without a floor is no floor", "grace-only", false, def, Deadlines{FirstToken: 10 * time.Second}},
		{"another provider's entry does not count", "o-think", false, def, Deadlines{FirstToken: 10 * time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := ModelRef{Provider: "openai", Model: c.model}
			if c.name == "another provider's entry does not count" {
				ref.Provider = "anthropic"
			}
			if got := cfg.Deadlines(ref, c.reasoning, c.def); got != c.want {
				t.Errorf("Deadlines(%s, reasoning %v) = %+v, want %+v", ref, c.reasoning, got, c.want)
			}
		})
	}
	var none *Config
	if got := none.Deadlines(ModelRef{Provider: "p", Model: "m"}, true, def); got != (Deadlines{FirstToken: 60 * time.Second}) {
		t.Errorf("a nil config: %+v", got)
	}
	st := ReplyState{FirstTokenTimeout: time.Second, ReasoningFirstTokenTimeout: 2 * time.Second, AttemptTimeout: 3 * time.Second}
	if got := st.DeadlineDefaults(); got != (DeadlineDefaults{FirstToken: time.Second, ReasoningFirstToken: 2 * time.Second, Attempt: 3 * time.Second}) {
		t.Errorf("DeadlineDefaults %+v", got)
	}
}

// An attempt that outlasted its bound, and a stream under its throughput floor, are timeouts
// decided by their kind, and like a first-token timeout they are not retried on the same route:
// the next candidate gets its turn at once.
func TestDeadlineFaultsAreTimeoutsNotRetriedInPlace(t *testing.T) {
	for _, f := range []StreamFault{FaultAttemptTimeout, FaultSlow, FaultFirstToken} {
		for _, msg := range []string{"", "insufficient credits", "rate limit reached"} {
			if got := AttemptReason(parsed(Failure{Stream: f, Message: msg})); got != ReasonTimeout {
				t.Errorf("%s (%q): %s, want timeout", f, msg, got)
			}
		}
		if plan := AfterFailure(FailedAttempt{Outcome: AttemptOutcome{StreamFault: string(f), Reason: ReasonTimeout}}); plan.Step == StepRetry {
			t.Errorf("%s: retried in place after %v", f, plan.Wait)
		}
		for _, out := range []AttemptOutcome{{StreamFault: string(f), Reason: ReasonTimeout}, {Status: 200, StreamFault: string(f), Partial: "half"}} {
			if WillRetry(out, 0, 0) {
				t.Errorf("%s: WillRetry(%+v)", f, out)
			}
		}
	}
}
