package policy

import (
	"strings"
	"testing"
	"time"
)

func tried(p, m, profile, result string, r Reason, status int, err string) Attempt {
	f, z := false, 0
	return Attempt{Provider: p, Model: m, Profile: profile, Result: result, Reason: r, Status: status, Error: err, Probe: &f, Retries: &z}
}

func TestFailureSummary(t *testing.T) {
	attempts := []Attempt{
		tried("openai", "gpt-5", "openai:a", ResultFailed, ReasonRateLimit, 429, "Rate limit reached\n  for gpt-5"),
		{Provider: "google", Model: "gemini", Profile: "google:a", Result: ResultSkipped, Reason: ReasonBilling, Error: "Provider google is in cooldown"},
		{Provider: "xai", Model: "grok", Result: ResultSkipped, Reason: ReasonAuth, Error: "Provider xai has auth issue (skipping all models)"},
	}
	want := "All models failed (3): openai/gpt-5: Rate limit reached for gpt-5 (rate_limit) | " +
		"google/gemini: Provider google is in cooldown (billing) | xai/grok: Provider xai has auth issue (skipping all models) (auth)"
	if got := FailureSummary(attempts, false); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := FailureSummary(attempts[:1], true); !strings.HasPrefix(got, "All image models failed (1): ") {
		t.Errorf("image summary %q", got)
	}
	long := strings.Repeat("x", 300)
	got := FailureSummary([]Attempt{tried("a", "b", "", ResultFailed, ReasonTimeout, 0, long)}, false)
	if want := "a/b: " + strings.Repeat("x", 119) + "… (timeout)"; !strings.HasSuffix(got, want) {
		t.Errorf("a long error is cut to 119 characters and …: %q", got)
	}
	if LastReason(attempts) != ReasonAuth {
		t.Error("the reason is the last unsuccessful attempt's")
	}
}

func TestNotices(t *testing.T) {
	gpt, claude, gemini := ModelRef{"openai", "gpt-5"}, ModelRef{"anthropic", "claude"}, ModelRef{"google", "gemini"}
	failed := []Attempt{
		tried("openai", "gpt-5", "openai:a", ResultFailed, ReasonRateLimit, 429, ""),
		tried("openai", "gpt-5", "openai:b", ResultFailed, ReasonRateLimit, 429, ""),
		tried("anthropic", "claude", "anthropic:a", ResultSucceeded, "", 0, ""),
	}
	notices, state := Notices(NoticeState{}, gpt, claude, failed)
	if len(notices) != 1 || notices[0] != "↪️ Model Fallback: anthropic/claude (selected openai/gpt-5; rate limit (+1 more attempts))" {
		t.Errorf("first fallback: %q", notices)
	}
	if again, same := Notices(state, gpt, claude, failed[2:]); len(again) != 0 || same != state {
		t.Errorf("a sticky turn repeats no notice: %q", again)
	}
	if moved, _ := Notices(state, gpt, gemini, []Attempt{tried("anthropic", "claude", "", ResultFailed, ReasonOverloaded, 529, "")}); len(moved) != 1 ||
		moved[0] != "↪️ Model Fallback: google/gemini (selected openai/gpt-5; overloaded)" {
		t.Errorf("a move to another fallback is a new state: %q", moved)
	}
	cleared, next := Notices(state, gpt, gpt, nil)
	if len(cleared) != 1 || cleared[0] != "↪️ Model Fallback cleared: openai/gpt-5 (was anthropic/claude)" || next != (NoticeState{}) {
		t.Errorf("recovery: %q %+v", cleared, next)
	}
	if none, _ := Notices(NoticeState{}, gpt, gpt, nil); len(none) != 0 {
		t.Errorf("nothing to say: %q", none)
	}
}

func TestDecisionRecord(t *testing.T) {
	ch := Chain{Requested: ModelRef{"openai", "gpt-5"}, Candidates: []Candidate{
		{ModelRef: ModelRef{"openai", "gpt-5"}, Origin: OriginRequested},
		{ModelRef: ModelRef{"anthropic", "claude"}, Origin: OriginConfiguredFallback}}}
	fail := tried("openai", "gpt-5", "openai:a", ResultFailed, ReasonRateLimit, 429, "Rate limit reached")
	r := NewDecisionRecord(DecisionInput{Decision: DecisionFailed, Chain: ch, Index: 0, AttemptNo: 1, Attempt: fail, ProfileCount: 2})
	if r.Event != "model_fallback_decision" || r.Reason != "rate_limit" || r.NextCandidateModel != "claude" || !r.IsPrimary ||
		r.FallbackStepFinalOutcome != StepNextFallback || r.FallbackStepToModel != "anthropic/claude" || r.FallbackStepChainPosition != 1 {
		t.Errorf("%+v", r)
	}
	if msg := r.ConsoleMessage(); msg != "model fallback decision: decision=candidate_failed requested=openai/gpt-5 candidate=openai/gpt-5 reason=rate_limit next=anthropic/claude" {
		t.Errorf("console %q", msg)
	}
	win := tried("anthropic", "claude", "anthropic:a", ResultSucceeded, "", 0, "")
	s := NewDecisionRecord(DecisionInput{Decision: DecisionSucceeded, Chain: ch, Index: 1, AttemptNo: 2, Attempt: win, Previous: &fail})
	if s.FallbackStepFromModel != "openai/gpt-5" || s.FallbackStepToModel != "anthropic/claude" || s.FallbackStepFinalOutcome != StepSucceeded {
		t.Errorf("a success links the failed attempt to the winner: %+v", s)
	}
	last := NewDecisionRecord(DecisionInput{Decision: DecisionFailed, Chain: ch, Index: 1, AttemptNo: 2, Attempt: win})
	if last.FallbackStepFinalOutcome != StepChainExhausted || last.FallbackStepToModel != "" {
		t.Errorf("%+v", last)
	}
	probe := NewDecisionRecord(DecisionInput{Decision: DecisionProbe, Chain: ch, Index: 0, AttemptNo: 1, Attempt: fail})
	if probe.FallbackStepType != "" {
		t.Error("probe decisions carry no fallbackStep fields")
	}
}

// Issue 20, item 10: a failure that stops the reply is logged as that stop, with no next candidate.
func TestDecisionRecordOfAStop(t *testing.T) {
	ch := Chain{Requested: ModelRef{"openai", "gpt-5"}, Candidates: []Candidate{
		{ModelRef: ModelRef{"openai", "gpt-5"}, Origin: OriginRequested},
		{ModelRef: ModelRef{"anthropic", "claude"}, Origin: OriginConfiguredFallback}}}
	failed := func(r Reason) Attempt { return tried("openai", "gpt-5", "openai:a", ResultFailed, r, 400, "x") }
	cases := []struct {
		name      string
		attempt   Attempt
		step      string
		outcome   string
		nextModel string
	}{
		{"context overflow stops, inferred", failed(ReasonContextOverflow), "", StepContextOverflow, ""},
		{"context overflow stops, told", failed(ReasonContextOverflow), StepStop, StepContextOverflow, ""},
		{"a format error stops when nothing says otherwise", failed(ReasonFormat), "", StepFormat, ""},
		{"a format error the opt-in advanced past goes to the next candidate", failed(ReasonFormat), StepAdvance, StepNextFallback, "anthropic/claude"},
		{"a user's abort stops", tried("openai", "gpt-5", "openai:a", ResultFailed, ReasonNone, 0, ""), StepStop, StepAborted, ""},
		{"a rate limit advances", failed(ReasonRateLimit), StepAdvance, StepNextFallback, "anthropic/claude"},
		{"a failure with no step named advances as before", failed(ReasonTimeout), "", StepNextFallback, "anthropic/claude"},
	}
	for _, c := range cases {
		r := NewDecisionRecord(DecisionInput{Decision: DecisionFailed, Chain: ch, Index: 0, AttemptNo: 1, Attempt: c.attempt, Step: c.step})
		if r.FallbackStepFinalOutcome != c.outcome || r.FallbackStepToModel != c.nextModel {
			t.Errorf("%s: outcome %q to %q, want %q to %q", c.name, r.FallbackStepFinalOutcome, r.FallbackStepToModel, c.outcome, c.nextModel)
		}
		if (c.nextModel == "") != (r.NextCandidateProvider == "") {
			t.Errorf("%s: next candidate %s/%s", c.name, r.NextCandidateProvider, r.NextCandidateModel)
		}
		if c.nextModel == "" && !strings.HasSuffix(r.ConsoleMessage(), " next=none") {
			t.Errorf("%s: console %q", c.name, r.ConsoleMessage())
		}
	}
}

func TestExhausted(t *testing.T) {
	attempts := []Attempt{tried("openai", "gpt-5", "openai:a", ResultFailed, ReasonRateLimit, 429, "slow down")}
	soon := t0.Add(time.Minute)
	e := Exhausted(attempts, false, EarliestOf(time.Time{}, t0.Add(time.Hour), soon))
	if e.Message != "All models failed (1): openai/gpt-5: slow down (rate_limit)" || e.Reason != ReasonRateLimit ||
		e.SoonestCooldownExpiry == nil || !e.SoonestCooldownExpiry.Equal(soon) {
		t.Errorf("%+v", e)
	}
	if e := Exhausted(attempts, false, time.Time{}); e.SoonestCooldownExpiry != nil {
		t.Error("no known expiry is null")
	}
}

// A reply whose chain ran out only on rate limits is the caller's to retry later: 429 with
// Retry-After, the whole seconds until the soonest candidate is back.
func TestAnExhaustionOfRateLimitsIsA429(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	limited := Attempt{Result: ResultFailed, Reason: ReasonRateLimit}
	skipped := Attempt{Result: ResultSkipped, Reason: ReasonRateLimit}
	for _, c := range []struct {
		name       string
		e          Exhaustion
		limited    bool
		retryAfter int
	}{
		{"every failed or skipped attempt rate-limited: the seconds until the soonest back, rounded up",
			Exhaustion{Attempts: []Attempt{limited, skipped}, SoonestCooldownExpiry: at(90*time.Second + 200*time.Millisecond)}, true, 91},
		{"whole seconds are not rounded up", Exhaustion{Attempts: []Attempt{limited}, SoonestCooldownExpiry: at(time.Minute)}, true, 60},
		{"less than a second is 1", Exhaustion{Attempts: []Attempt{limited}, SoonestCooldownExpiry: at(100 * time.Millisecond)}, true, 1},
		{"an expiry already past is 1", Exhaustion{Attempts: []Attempt{limited}, SoonestCooldownExpiry: at(-5 * time.Second)}, true, 1},
		{"no expiry known: no Retry-After", Exhaustion{Attempts: []Attempt{limited}}, true, 0},
		{"a user's switch is not a failure", Exhaustion{Attempts: []Attempt{limited, {Result: ResultSwitched}}, SoonestCooldownExpiry: at(time.Second)}, true, 1},
		{"one failure of another reason: not a 429",
			Exhaustion{Attempts: []Attempt{limited, {Result: ResultFailed, Reason: ReasonTimeout}}, SoonestCooldownExpiry: at(time.Second)}, false, 0},
		{"a candidate skipped for auth: not a 429", Exhaustion{Attempts: []Attempt{limited, {Result: ResultSkipped, Reason: ReasonAuth}}}, false, 0},
		{"no attempt at all: not a 429", Exhaustion{SoonestCooldownExpiry: at(time.Second)}, false, 0},
	} {
		if limited, retryAfter := c.e.AllRateLimited(now); limited != c.limited || retryAfter != c.retryAfter {
			t.Errorf("%s: %v, Retry-After %d; want %v, %d", c.name, limited, retryAfter, c.limited, c.retryAfter)
		}
	}
}
