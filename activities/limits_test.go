package activities

import (
	"testing"
	"time"

	"github.com/batonhq/baton/internal/env"
)

// The environment's clocks reach a reply's limits; by default a plain first token waits 10 s, a
// reasoning one 60 s, and a whole attempt is unbounded.
func TestLimitsFromCarriesTheClocks(t *testing.T) {
	lim, err := LimitsFrom(env.Limits{RetryMaxWaitSeconds: 60, FirstTokenMs: 8000, ReasoningFirstTokenMs: 90000, IdleMs: 30000,
		AttemptMs: 120000, ResponseMs: 5000, InfraRetries: 3})
	if err != nil {
		t.Fatal(err)
	}
	if lim.FirstTokenTimeout != 8*time.Second || lim.ReasoningFirstTokenTimeout != 90*time.Second || lim.IdleTimeout != 30*time.Second ||
		lim.AttemptTimeout != 2*time.Minute || lim.ResponseTimeout != 5*time.Second {
		t.Errorf("limits %+v", lim)
	}
	def := DefaultLimits()
	if def.FirstTokenTimeout != 10*time.Second || def.ReasoningFirstTokenTimeout != 60*time.Second || def.AttemptTimeout != 0 {
		t.Errorf("defaults %+v", def)
	}
}
