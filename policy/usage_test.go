package policy

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestCooldownLadder(t *testing.T) {
	// "1 minute, 5 minutes, 25 minutes, 1 hour (cap)"
	want := []time.Duration{time.Minute, 5 * time.Minute, 25 * time.Minute, time.Hour, time.Hour, time.Hour}
	for i, w := range want {
		if got := CooldownStep(i + 1); got != w {
			t.Errorf("error %d: %v, want %v", i+1, got, w)
		}
	}
}

func TestBillingAndAuthPermanentBackoff(t *testing.T) {
	cd := DefaultCooldowns()
	// "Billing backoff starts at 5 hours, doubles after each billing failure, and caps at 24 hours."
	for n, want := range map[int]time.Duration{1: 5 * time.Hour, 2: 10 * time.Hour, 3: 20 * time.Hour, 4: 24 * time.Hour, 9: 24 * time.Hour} {
		if got := DisableStep(cd.BillingBackoff, cd.BillingMax, n); got != want {
			t.Errorf("billing failure %d: %v, want %v", n, got, want)
		}
	}
	for n, want := range map[int]time.Duration{1: 10 * time.Minute, 2: 20 * time.Minute, 3: 40 * time.Minute, 4: time.Hour} {
		if got := DisableStep(cd.AuthPermanentBackoff, cd.AuthPermanentMax, n); got != want {
			t.Errorf("auth_permanent failure %d: %v, want %v", n, got, want)
		}
	}
}

func fail(s ProfileStats, r Reason, model string, at time.Time) ProfileStats {
	return RecordFailure(s, Outcome{Reason: r, Model: model, Provider: "openai"}, DefaultCooldowns(), at)
}

func TestRecordFailure(t *testing.T) {
	cd := DefaultCooldowns()
	t.Run("a rate limit cools the profile down for that model only, for 1 minute", func(t *testing.T) {
		s := fail(ProfileStats{}, ReasonRateLimit, "gpt-5", t0)
		if !s.CooldownUntil.Equal(t0.Add(time.Minute)) || s.CooldownModel != "gpt-5" || s.CooldownReason != ReasonRateLimit || s.ErrorCount != 1 {
			t.Fatalf("%+v", s)
		}
		if Available(s, "openai", "gpt-5", t0.Add(30*time.Second)) {
			t.Error("gpt-5 usable during its cooldown")
		}
		if !Available(s, "openai", "gpt-5-mini", t0.Add(30*time.Second)) {
			t.Error("a sibling model must stay usable")
		}
		if !Available(s, "openai", "gpt-5", t0.Add(time.Minute)) {
			t.Error("now >= until means expired")
		}
	})
	t.Run("a failure inside an active window changes nothing: one outage climbs the ladder once", func(t *testing.T) {
		s := fail(ProfileStats{}, ReasonRateLimit, "gpt-5", t0)
		again := fail(s, ReasonRateLimit, "gpt-5", t0.Add(10*time.Second))
		if again.ErrorCount != 1 || !again.CooldownUntil.Equal(s.CooldownUntil) {
			t.Errorf("%+v", again)
		}
	})
	t.Run("a failure after the window expired is the next step of the ladder", func(t *testing.T) {
		s := fail(ProfileStats{}, ReasonTimeout, "gpt-5", t0)
		s = fail(s, ReasonTimeout, "gpt-5", t0.Add(2*time.Minute))
		if s.ErrorCount != 2 || !s.CooldownUntil.Equal(t0.Add(7*time.Minute)) {
			t.Errorf("%+v", s)
		}
		s = fail(s, ReasonOverloaded, "gpt-5", t0.Add(10*time.Minute))
		if s.ErrorCount != 3 || !s.CooldownUntil.Equal(t0.Add(35*time.Minute)) || s.CooldownModel != "" {
			t.Errorf("overloaded is profile-wide and climbs on: %+v", s)
		}
	})
	t.Run("counters restart after failureWindowHours without a failure", func(t *testing.T) {
		s := fail(ProfileStats{}, ReasonTimeout, "gpt-5", t0)
		s = fail(s, ReasonTimeout, "gpt-5", t0.Add(25*time.Hour))
		if s.ErrorCount != 1 || !s.CooldownUntil.Equal(t0.Add(25*time.Hour+time.Minute)) {
			t.Errorf("%+v", s)
		}
	})
	t.Run("a record without lastFailureAt counts as recent", func(t *testing.T) {
		s := fail(ProfileStats{ErrorCount: 2}, ReasonTimeout, "gpt-5", t0)
		if s.ErrorCount != 3 || !s.CooldownUntil.Equal(t0.Add(25*time.Minute)) {
			t.Errorf("%+v", s)
		}
	})
	t.Run("a failure on another model widens the window to the whole profile", func(t *testing.T) {
		s := fail(ProfileStats{}, ReasonRateLimit, "gpt-5", t0)
		s = fail(s, ReasonRateLimit, "gpt-5-mini", t0.Add(30*time.Second))
		if s.ErrorCount != 2 || s.CooldownModel != "" || !s.CooldownUntil.Equal(t0.Add(30*time.Second+5*time.Minute)) {
			t.Errorf("%+v", s)
		}
	})
	t.Run("billing disables the whole profile for 5 hours", func(t *testing.T) {
		s := fail(ProfileStats{}, ReasonBilling, "claude", t0)
		if !s.DisabledUntil.Equal(t0.Add(5*time.Hour)) || s.DisabledReason != ReasonBilling || !s.CooldownUntil.IsZero() {
			t.Fatalf("%+v", s)
		}
		if Available(s, "openai", "other-model", t0.Add(time.Hour)) {
			t.Error("billing blocks every model of the profile")
		}
		again := fail(s, ReasonBilling, "claude", t0.Add(time.Hour))
		if !again.DisabledUntil.Equal(s.DisabledUntil) || again.ErrorCount != 1 {
			t.Errorf("a retry inside a disable must not extend it: %+v", again)
		}
		later := fail(s, ReasonBilling, "claude", t0.Add(6*time.Hour))
		if !later.DisabledUntil.Equal(t0.Add(16 * time.Hour)) {
			t.Errorf("the second billing failure doubles: %+v", later)
		}
	})
	t.Run("billing still opens a disable when only a cooldown is active", func(t *testing.T) {
		s := fail(ProfileStats{}, ReasonRateLimit, "gpt-5", t0)
		s = fail(s, ReasonBilling, "gpt-5", t0.Add(10*time.Second))
		if !s.DisabledUntil.Equal(t0.Add(10*time.Second + 5*time.Hour)) {
			t.Errorf("%+v", s)
		}
	})
	t.Run("auth_permanent disables for 10 minutes", func(t *testing.T) {
		s := fail(ProfileStats{}, ReasonAuthPermanent, "gpt-5", t0)
		if !s.DisabledUntil.Equal(t0.Add(10*time.Minute)) || s.DisabledReason != ReasonAuthPermanent {
			t.Errorf("%+v", s)
		}
	})
	t.Run("context overflow and format never touch the profile", func(t *testing.T) {
		for _, r := range []Reason{ReasonContextOverflow, ReasonFormat, ReasonNone} {
			if s := fail(ProfileStats{}, r, "gpt-5", t0); !s.IsZero() {
				t.Errorf("%s: %+v", r, s)
			}
		}
	})
	t.Run("openrouter profiles never get cooldowns", func(t *testing.T) {
		s := RecordFailure(ProfileStats{}, Outcome{Reason: ReasonRateLimit, Model: "x", Provider: "openrouter"}, cd, t0)
		if !s.IsZero() {
			t.Errorf("%+v", s)
		}
	})
	t.Run("a Retry-After too long to wait bounds the window", func(t *testing.T) {
		s := RecordFailure(ProfileStats{}, Outcome{Reason: ReasonRateLimit, Model: "gpt-5", Provider: "openai",
			Hint: RetryHint{After: 10 * time.Minute, HasAfter: true}}, cd, t0)
		if !s.CooldownUntil.Equal(t0.Add(10 * time.Minute)) {
			t.Errorf("%+v", s)
		}
	})
	t.Run("a provider-reported usage reset sets blockedUntil exactly", func(t *testing.T) {
		reset := t0.Add(3*time.Hour + 17*time.Minute)
		s := RecordFailure(ProfileStats{}, Outcome{Reason: ReasonRateLimit, Model: "gpt-5", Provider: "openai", Hint: RetryHint{ResetAt: reset}}, cd, t0)
		if !s.BlockedUntil.Equal(reset) || !UnusableUntil(s, "openai", "gpt-5", t0).Equal(reset) {
			t.Errorf("%+v", s)
		}
	})
}

func TestRecordSuccess(t *testing.T) {
	s := fail(ProfileStats{}, ReasonTimeout, "gpt-5", t0)
	ok := RecordSuccess(s, "gpt-5", t0.Add(2*time.Minute))
	if ok.ErrorCount != 0 || !ok.CooldownUntil.IsZero() || !ok.LastUsed.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("a success clears the window that covers its model: %+v", ok)
	}
	other := RecordSuccess(s, "gpt-5-mini", t0.Add(30*time.Second))
	if other.ErrorCount != 1 || other.CooldownModel != "gpt-5" {
		t.Errorf("a window scoped to another model stays, with errorCount: %+v", other)
	}
	disabled := RecordSuccess(fail(ProfileStats{}, ReasonBilling, "x", t0), "x", t0.Add(time.Hour))
	if !disabled.DisabledUntil.IsZero() || disabled.DisabledReason != "" {
		t.Errorf("a probe that succeeds clears the disable: %+v", disabled)
	}
}

// Issue 20, item 9: a success narrows, it does not erase, what another model proved.
func TestRecordSuccessNarrowsAProfileWideWindow(t *testing.T) {
	overloadedA := fail(ProfileStats{}, ReasonOverloaded, "model-a", t0) // profile-wide, begun by model-a
	widened := fail(fail(ProfileStats{}, ReasonRateLimit, "model-a", t0), ReasonRateLimit, "model-b", t0.Add(30*time.Second))
	cases := []struct {
		name      string
		before    ProfileStats
		success   string
		at        time.Duration
		usable    map[string]bool // model -> usable right after the success
		until     time.Time       // the window left (zero: none)
		errorKept bool
	}{
		{"B's success on a window begun by A: usable for B, A keeps its window", overloadedA, "model-b", 10 * time.Second,
			map[string]bool{"model-b": true, "model-c": true, "model-a": false}, t0.Add(time.Minute), true},
		{"A's own success clears the window", overloadedA, "model-a", 10 * time.Second,
			map[string]bool{"model-a": true, "model-b": true}, time.Time{}, false},
		{"a window widened by B stays A's when B recovers, at its widened end", widened, "model-b", 40 * time.Second,
			map[string]bool{"model-b": true, "model-a": false}, widened.CooldownUntil, true},
		{"a window begun by a failure of no known model is cleared by any success", fail(ProfileStats{}, ReasonOverloaded, "", t0), "model-b", 10 * time.Second,
			map[string]bool{"model-a": true, "model-b": true}, time.Time{}, false},
		{"after the window ends, a success clears everything as before", overloadedA, "model-b", 2 * time.Minute,
			map[string]bool{"model-a": true, "model-b": true}, time.Time{}, false},
	}
	for _, c := range cases {
		now := t0.Add(c.at)
		got := RecordSuccess(c.before, c.success, now)
		for model, want := range c.usable {
			if Available(got, "openai", model, now) != want {
				t.Errorf("%s: %s usable = %v, want %v (%+v)", c.name, model, !want, want, got)
			}
		}
		if !got.CooldownUntil.Equal(c.until) && active(c.until, now) {
			t.Errorf("%s: window until %v, want %v", c.name, got.CooldownUntil, c.until)
		}
		if (got.ErrorCount > 0) != c.errorKept {
			t.Errorf("%s: errorCount %d", c.name, got.ErrorCount)
		}
	}
	// The narrowed window is the same outage: A failing inside it changes nothing.
	narrowed := RecordSuccess(overloadedA, "model-b", t0.Add(10*time.Second))
	if again := fail(narrowed, ReasonOverloaded, "model-a", t0.Add(20*time.Second)); again.ErrorCount != narrowed.ErrorCount || !again.CooldownUntil.Equal(narrowed.CooldownUntil) {
		t.Errorf("a failure inside the narrowed window counted again: %+v", again)
	}
}

// Issue 20, item 9: one key serves a primary and its fallback; the primary is down. Stateless
// replies (no session to remember the fallback) arrive every 2 s for 10 minutes; each walks the
// chain as the workflow does. The primary is tried at most once per probe-throttle interval.
func TestOutageTriesThePrimaryOncePerThrottleInterval(t *testing.T) {
	cfg := DefaultConfig()
	profiles := []StoredProfile{{ID: "agg:key", Provider: "agg", Type: TypeAPIKey}}
	chain := []ModelRef{{"agg", "primary"}, {"agg", "fallback"}}
	var lastProbe time.Time
	var primaryAt []time.Time
	for now := t0; now.Before(t0.Add(10 * time.Minute)); now = now.Add(2 * time.Second) {
		transientUsed := false
		for i, cand := range chain {
			ordered := OrderProfiles(OrderInput{Provider: cand.Provider, Model: cand.Model, Now: now, Config: cfg, Profiles: profiles})
			d := DecideCandidate(CandidateState{Candidate: cand, Index: i, ChainLen: len(chain), Profiles: ordered, TransientProbeUsed: transientUsed}, now)
			if d.Action == ActionProbe && d.SetsThrottle {
				claimed := ProbeSlotOpen(lastProbe, now) // as the store's TryProbe
				if claimed {
					lastProbe = now
				}
				d = AfterClaim(d, claimed)
			}
			if d.Action == ActionSkip {
				continue
			}
			if d.TransientProbe {
				transientUsed = true
			}
			if i == 0 {
				primaryAt = append(primaryAt, now)
				profiles[0].Stats = RecordFailure(profiles[0].Stats, Outcome{Reason: ReasonOverloaded, Model: cand.Model, Provider: cand.Provider}, cfg.Cooldowns, now)
				continue
			}
			profiles[0].Stats = RecordSuccess(profiles[0].Stats, cand.Model, now)
			break
		}
	}
	if len(primaryAt) == 0 || len(primaryAt) > 10 {
		t.Fatalf("primary attempts at %v", primaryAt)
	}
	for k := 1; k < len(primaryAt); k++ {
		if gap := primaryAt[k].Sub(primaryAt[k-1]); gap < ProbeThrottle {
			t.Errorf("primary tried %v after the previous attempt (attempts at %v)", gap, primaryAt)
		}
	}
	if first15 := len(primaryAt) - len(filterAfter(primaryAt, t0.Add(30*time.Second))); first15 != 1 {
		t.Errorf("15 replies in the first 30 s tried the primary %d times, want 1", first15)
	}
}

func filterAfter(ts []time.Time, from time.Time) []time.Time {
	var out []time.Time
	for _, x := range ts {
		if !x.Before(from) {
			out = append(out, x)
		}
	}
	return out
}

func TestUnavailableReasonAndSoonestExpiry(t *testing.T) {
	rate := fail(ProfileStats{}, ReasonRateLimit, "gpt-5", t0)
	billing := fail(ProfileStats{}, ReasonBilling, "gpt-5", t0)
	auth := fail(ProfileStats{}, ReasonAuth, "gpt-5", t0)
	cases := []struct {
		name  string
		stats []ProfileStats
		model string
		want  Reason
	}{
		{"one rate-limited profile", []ProfileStats{rate}, "gpt-5", ReasonRateLimit},
		{"billing beats rate_limit on a tie", []ProfileStats{rate, billing}, "gpt-5", ReasonBilling},
		{"auth beats billing on a tie", []ProfileStats{billing, auth}, "gpt-5", ReasonAuth},
		{"a cooldown scoped to another model does not count", []ProfileStats{rate}, "gpt-5-mini", ReasonNone},
		{"nothing active", []ProfileStats{{}}, "gpt-5", ReasonNone},
	}
	for _, c := range cases {
		if got := UnavailableReason(c.stats, "openai", c.model, t0.Add(time.Second)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := SoonestExpiry([]ProfileStats{billing, rate}, "openai", "gpt-5", t0); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("soonest = %v", got)
	}
	if got := SoonestExpiry([]ProfileStats{rate}, "openai", "gpt-5-mini", t0); !got.IsZero() {
		t.Errorf("a window for another model is not relevant: %v", got)
	}
}
