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
