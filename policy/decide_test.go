package policy

import (
	"testing"
	"time"
)

func TestDecideCandidate(t *testing.T) {
	now := t0.Add(time.Hour)
	avail := OrderedProfile{ID: "p:a", Available: true}
	coolingFor := func(r Reason, until time.Duration) (OrderedProfile, ProfileStats) {
		s := ProfileStats{CooldownUntil: now.Add(until), CooldownReason: r, ErrorCount: 1}
		if opensDisable(r) {
			s = ProfileStats{DisabledUntil: now.Add(until), DisabledReason: r, ErrorCount: 1}
		}
		return OrderedProfile{ID: "p:a", Until: now.Add(until), Stats: &s}, s
	}
	state := func(index, chainLen int, r Reason, until time.Duration) CandidateState {
		op, _ := coolingFor(r, until)
		return CandidateState{Candidate: ModelRef{"p", "m"}, Index: index, ChainLen: chainLen, Profiles: []OrderedProfile{op}}
	}
	cases := []struct {
		name   string
		cs     CandidateState
		action string
		reason Reason
	}{
		{"an available profile is attempted",
			CandidateState{Candidate: ModelRef{"p", "m"}, ChainLen: 2, Profiles: []OrderedProfile{avail}}, ActionAttempt, ""},
		{"a primary whose soonest expiry is within 2 minutes is probed",
			state(0, 2, ReasonRateLimit, 2*time.Minute), ActionProbe, ReasonRateLimit},
		{"a primary whose expiry is further away is skipped",
			state(0, 2, ReasonRateLimit, 2*time.Minute+time.Second), ActionSkip, ReasonRateLimit},
		{"billing probes only the primary near expiry",
			state(0, 2, ReasonBilling, time.Minute), ActionProbe, ReasonBilling},
		{"billing on a fallback is skipped",
			state(1, 2, ReasonBilling, time.Minute), ActionSkip, ReasonBilling},
		{"auth skips the provider, never probed",
			state(0, 2, ReasonAuth, time.Second), ActionSkip, ReasonAuth},
		{"auth_permanent skips the provider",
			state(0, 1, ReasonAuthPermanent, time.Second), ActionSkip, ReasonAuthPermanent},
		{"a transient cooldown on a sibling is probed once per reply",
			state(1, 3, ReasonOverloaded, time.Hour), ActionProbe, ReasonOverloaded},
		{"a second transient probe of the provider is skipped",
			func() CandidateState {
				s := state(2, 3, ReasonRateLimit, time.Hour)
				s.TransientProbeUsed = true
				return s
			}(),
			ActionSkip, ReasonRateLimit},
		{"a strict chain of one is probed whenever the throttle is open, whatever the expiry",
			state(0, 1, ReasonRateLimit, time.Hour), ActionProbe, ReasonRateLimit},
		{"a model_not_found cooldown on a fallback is skipped",
			state(1, 2, ReasonModelNotFound, time.Minute), ActionSkip, ReasonModelNotFound},
		{"a skip-cache mark skips a fallback",
			CandidateState{Candidate: ModelRef{"p", "m"}, Index: 1, ChainLen: 2, Profiles: []OrderedProfile{avail}, SkipCached: ReasonAuth}, ActionSkip, ReasonAuth},
		{"a skip-cache mark never skips the primary",
			CandidateState{Candidate: ModelRef{"p", "m"}, Index: 0, ChainLen: 2, Profiles: []OrderedProfile{avail}, SkipCached: ReasonAuth}, ActionAttempt, ""},
		{"a provider with no profile is skipped",
			CandidateState{Candidate: ModelRef{"p", "m"}, ChainLen: 2}, ActionSkip, ReasonAuth},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := DecideCandidate(c.cs, now)
			if d.Action != c.action || d.Reason != c.reason {
				t.Errorf("got %s (%s), want %s (%s)", d.Action, d.Reason, c.action, c.reason)
			}
		})
	}
	d := DecideCandidate(state(0, 2, ReasonAuth, time.Second), now)
	if d.SkipText != "Provider p has auth issue (skipping all models)" {
		t.Errorf("skip text %q", d.SkipText)
	}
	if d := DecideCandidate(state(0, 2, ReasonRateLimit, time.Hour), now); d.SkipText != "Provider p is in cooldown" {
		t.Errorf("skip text %q", d.SkipText)
	}
}

func TestSameCandidateRetry(t *testing.T) {
	cases := []struct {
		name         string
		rs           retryState
		retry        bool
		wait, spread time.Duration
	}{
		{"a 429 with Retry-After 0 is retried at once", retryState{Status: 429, Hint: RetryHint{HasAfter: true}}, true, 0, 0},
		{"a 429 with Retry-After 2 waits 2 s, unspread", retryState{Status: 429, Hint: RetryHint{After: 2 * time.Second, HasAfter: true}}, true, 2 * time.Second, 0},
		{"a Retry-After beyond the cap is not waited", retryState{Status: 429, Hint: RetryHint{After: 61 * time.Second, HasAfter: true}}, false, 0, 0},
		{"the cap is configurable", retryState{Status: 429, MaxWait: 5 * time.Second, Hint: RetryHint{After: 6 * time.Second, HasAfter: true}}, false, 0, 0},
		{"a 503 without a hint backs off 0.5 s, jitter adding up to half", retryState{Status: 503}, true, 500 * time.Millisecond, 250 * time.Millisecond},
		{"then 1 s", retryState{Status: 503, RetriesSoFar: 1}, true, time.Second, 500 * time.Millisecond},
		{"at most twice", retryState{Status: 503, RetriesSoFar: 2}, false, 0, 0},
		{"a 409 is retried", retryState{Status: 409}, true, 500 * time.Millisecond, 250 * time.Millisecond},
		{"a reset before any output is retried", retryState{Net: NetReset}, true, 500 * time.Millisecond, 250 * time.Millisecond},
		{"a refused connection is not", retryState{Net: NetRefused}, false, 0, 0},
		{"a stalled stream is not retried on the same route", retryState{Status: 0, StreamFault: true}, false, 0, 0},
		{"a 400 is not", retryState{Status: 400}, false, 0, 0},
		{"a 401 is not", retryState{Status: 401}, false, 0, 0},
	}
	for _, c := range cases {
		if retry, wait, spread := sameCandidateRetry(c.rs); retry != c.retry || wait != c.wait || spread != c.spread {
			t.Errorf("%s: %v after %v (+%v), want %v after %v (+%v)", c.name, retry, wait, spread, c.retry, c.wait, c.spread)
		}
	}
}

// An attempt records its own outcome only when the reply will not call the same route again:
// WillRetry must agree with AfterFailure on an ordinary route, whatever the jitter.
func TestWillRetry(t *testing.T) {
	cases := []struct {
		name    string
		out     AttemptOutcome
		retries int
		maxWait time.Duration
		want    bool
	}{
		{"an answer is final", AttemptOutcome{OK: true, Status: 200}, 0, 0, false},
		{"a first 503 is retried", AttemptOutcome{Status: 503}, 0, 0, true},
		{"a third 503 is final", AttemptOutcome{Status: 503}, 2, 0, false},
		{"a 429 waiting beyond the cap is final", AttemptOutcome{Status: 429, Hint: RetryHint{After: time.Hour, HasAfter: true}}, 0, 0, false},
		{"within a raised cap it is retried", AttemptOutcome{Status: 429, Hint: RetryHint{After: time.Hour, HasAfter: true}}, 0, 2 * time.Hour, true},
		{"a reset before output is retried", AttemptOutcome{Net: "reset"}, 0, 0, true},
		{"a cut stream is final", AttemptOutcome{Status: 200, StreamFault: "cut"}, 0, 0, false},
		{"a 401 is final", AttemptOutcome{Status: 401, Reason: ReasonAuth}, 0, 0, false},
	}
	for _, c := range cases {
		if got := WillRetry(c.out, c.retries, c.maxWait); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		plan := AfterFailure(FailedAttempt{Outcome: c.out, Retries: c.retries, RetryMaxWait: c.maxWait})
		if retry := plan.Step == StepRetry; !c.out.OK && retry != c.want {
			t.Errorf("%s: AfterFailure retries: %v", c.name, retry)
		}
	}
}

func TestParseSkipTTL(t *testing.T) {
	cases := []struct {
		raw     string
		set     bool
		want    time.Duration
		wantErr bool
	}{
		{"", false, 60 * time.Second, false},
		{"60000", true, 60 * time.Second, false},
		{"0", true, 0, false},
		{"5", true, time.Second, false},
		{"900000", true, 10 * time.Minute, false},
		{"1000ms", true, 60 * time.Second, true},
		{"-1", true, 60 * time.Second, true},
		{"+5", true, 60 * time.Second, true},
		{"", true, 60 * time.Second, true},
		{"99999999999999999999", true, 60 * time.Second, true},
	}
	for _, c := range cases {
		got, err := ParseSkipTTL(c.raw, c.set)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("ParseSkipTTL(%q, %v) = %v, %v", c.raw, c.set, got, err)
		}
	}
}

func TestLiveSwitch(t *testing.T) {
	ch := Chain{Candidates: []Candidate{{ModelRef: ModelRef{"a", "1"}}, {ModelRef: ModelRef{"b", "2"}}, {ModelRef: ModelRef{"c", "3"}}}}
	if jump, restart := LiveSwitch(ch, 0, ModelRef{"c", "3"}); jump != 2 || restart {
		t.Errorf("a later candidate is jumped to: %d %v", jump, restart)
	}
	if _, restart := LiveSwitch(ch, 1, ModelRef{"a", "1"}); !restart {
		t.Error("an earlier candidate restarts the reply")
	}
	if _, restart := LiveSwitch(ch, 0, ModelRef{"z", "9"}); !restart {
		t.Error("a model outside the chain restarts the reply")
	}
}

func TestProbeThrottle(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		last time.Time
		open bool
	}{
		{"a provider never probed may be probed", time.Time{}, true},
		{"a provider probed 29 s ago may not be probed again", now.Add(-29 * time.Second), false},
		{"the slot opens again after 30 s", now.Add(-30 * time.Second), true},
	} {
		if got := ProbeSlotOpen(tc.last, now); got != tc.open {
			t.Errorf("%s: ProbeSlotOpen = %v", tc.name, got)
		}
	}
	probe := CandidateDecision{Action: ActionProbe, SetsThrottle: true}
	transient := CandidateDecision{Action: ActionProbe, SetsThrottle: true, TransientProbe: true}
	for _, tc := range []struct {
		name    string
		d       CandidateDecision
		claimed bool
		action  string
	}{
		{"a primary probe that claimed the slot probes", probe, true, ActionProbe},
		{"a primary inside the 30 s probe throttle is skipped", probe, false, ActionSkip},
		{"a transient sibling probe goes on without the slot", transient, false, ActionProbe},
		{"an attempt is not a probe: no slot to claim", CandidateDecision{Action: ActionAttempt}, false, ActionAttempt},
	} {
		if got := AfterClaim(tc.d, tc.claimed).Action; got != tc.action {
			t.Errorf("%s: action %s, want %s", tc.name, got, tc.action)
		}
	}
}
