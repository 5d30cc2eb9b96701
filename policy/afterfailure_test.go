package policy

import (
	"fmt"
	"testing"
	"time"
)

// Issue 31, item 4: after a failed attempt the reply asks policy one question and applies the
// plan. Each row is a rule of the seeds (or DESIGN.md where they leave a choice); the plan is
// written out in full by planText.
func TestAfterFailure(t *testing.T) {
	now := t0.Add(time.Hour)
	cd := DefaultCooldowns()
	cd.OverloadedBackoff = 250 * time.Millisecond
	formatRetry := cd
	formatRetry.AllowFormatRetry = true

	// failed is a failure of openai/gpt-5, the primary of a chain of two, on profile openai:a,
	// with openai:b available and untried, in session s1.
	failed := func(r Reason, more ...func(*FailedAttempt)) FailedAttempt {
		f := FailedAttempt{Outcome: AttemptOutcome{Reason: r, Error: "boom"}, Candidate: ModelRef{"openai", "gpt-5"}, ChainLen: 2,
			Profile: "openai:a", Decision: CandidateDecision{Action: ActionAttempt, Profile: "openai:a"},
			Order: []OrderedProfile{{ID: "openai:a", Available: true}, {ID: "openai:b", Available: true}},
			Tried: map[string]bool{"openai:a": true}, Rotations: map[Reason]int{},
			Stats:   []StoredProfile{{ID: "openai:a", Provider: "openai"}, {ID: "openai:b", Provider: "openai"}},
			Session: "s1", SkipTTL: DefaultSkipTTL, Cooldowns: cd, Now: now}
		for _, m := range more {
			m(&f)
		}
		return f
	}
	status := func(s int) func(*FailedAttempt) { return func(f *FailedAttempt) { f.Outcome.Status = s } }
	retried := func(n int) func(*FailedAttempt) { return func(f *FailedAttempt) { f.Retries = n } }
	retryAfter := func(d time.Duration) func(*FailedAttempt) {
		return func(f *FailedAttempt) { f.Outcome.Hint = RetryHint{After: d, HasAfter: true} }
	}
	rotated := func(r Reason, n int) func(*FailedAttempt) { return func(f *FailedAttempt) { f.Rotations[r] = n } }
	everyProfileTried := func(f *FailedAttempt) { f.Tried["openai:b"] = true }
	onFallback := func(f *FailedAttempt) { f.Index = 1 }
	probed := func(f *FailedAttempt) { f.Decision.Action = ActionProbe }
	transientProbe := func(f *FailedAttempt) { f.Index, f.Decision.Action, f.Decision.TransientProbe = 1, ActionProbe, true }
	coolingForTheModel := func(f *FailedAttempt) {
		f.Stats[0].Stats = ProfileStats{ErrorCount: 1, CooldownUntil: now.Add(time.Minute), CooldownReason: ReasonTimeout, CooldownModel: "gpt-5"}
	}
	cut := func(partial string) func(*FailedAttempt) {
		return func(f *FailedAttempt) {
			f.Outcome.Partial, f.Outcome.Delivered, f.Outcome.StreamFault, f.Outcome.Error, f.Outcome.BilledOutput = partial, true, "stall", "stalled", 3
		}
	}
	holding := func(text, fault string) func(*FailedAttempt) {
		return func(f *FailedAttempt) { f.Held = CutAnswer{Text: text, Fault: fault, BilledOutput: 1} }
	}
	with := func(m func(*FailedAttempt)) func(*FailedAttempt) { return m }

	cases := []struct {
		name string
		f    FailedAttempt
		want string
	}{
		// Same-candidate retries stand in for the SDK's own.
		{"a 503 is retried on the same candidate and profile after 0.5 s, spread by jitter",
			failed(ReasonTimeout, status(503)), "retry openai:a (retry 1) after 500ms + up to 250ms, jittered"},
		{"the second retry waits 1 s", failed(ReasonTimeout, status(503), retried(1)), "retry openai:a (retry 2) after 1s + up to 500ms, jittered"},
		{"after two retries the chain's rule for the reason applies", failed(ReasonTimeout, status(503), retried(2)), "advance"},
		{"a 429 waits its Retry-After", failed(ReasonRateLimit, status(429), retryAfter(2*time.Second)), "retry openai:a (retry 1) after 2s, jittered"},
		{"a Retry-After beyond the wait cap is not waited: the failure surfaces at once",
			failed(ReasonRateLimit, status(429), retryAfter(61*time.Second)), "rotate to openai:b"},
		{"a reset before any output is retried",
			failed(ReasonTimeout, with(func(f *FailedAttempt) { f.Outcome.Net = "reset" })), "retry openai:a (retry 1) after 500ms + up to 250ms, jittered"},
		{"a stalled stream is not retried on the same route",
			failed(ReasonTimeout, status(200), with(func(f *FailedAttempt) { f.Outcome.StreamFault = "stall" })), "advance"},
		{"simulate draws no jitter",
			failed(ReasonTimeout, status(503), with(func(f *FailedAttempt) { f.NoJitter = true })), "retry openai:a (retry 1) after 500ms + up to 250ms"},
		{"a probe is one call: a 503 on a route cooling for the model is not retried",
			failed(ReasonTimeout, status(503), probed, coolingForTheModel), "advance; a reply from before one-call probes retries"},
		{"a reply that began before probes were one call retries its probe in place",
			failed(ReasonTimeout, status(503), probed, coolingForTheModel, with(func(f *FailedAttempt) { f.ProbesRetriedInPlace = true })),
			"retry openai:a (retry 1) after 500ms + up to 250ms, jittered"},
		{"a user's /model waits for no retry",
			failed(ReasonTimeout, status(503), with(func(f *FailedAttempt) { f.SwitchPending = true })), "advance"},
		{"a refused prefill is asked once more, to restart: no retry counted, nobody blamed",
			failed(ReasonNone, status(400), retried(1), holding("The quick ", "cut"), with(func(f *FailedAttempt) { f.Outcome.PrefillRejected = true })),
			"retry openai:a (retry 1), asking it to restart"},
		{"a refused restart is an ordinary failure",
			failed(ReasonNone, status(400), with(func(f *FailedAttempt) { f.Outcome.PrefillRejected, f.Continuation = true, ContinueRestart })), "advance"},

		// Rotation inside a candidate.
		{"a rate limit rotates one profile", failed(ReasonRateLimit), "rotate to openai:b"},
		{"then falls back", failed(ReasonRateLimit, rotated(ReasonRateLimit, 1)), "advance"},
		{"an overload rotates after overloadedBackoffMs", failed(ReasonOverloaded), "rotate to openai:b after 250ms"},
		{"a second overload falls back", failed(ReasonOverloaded, rotated(ReasonOverloaded, 1)), "advance"},
		{"auth tries each remaining profile", failed(ReasonAuth, rotated(ReasonAuth, 3)), "rotate to openai:b"},
		{"billing tries each remaining profile", failed(ReasonBilling), "rotate to openai:b"},
		{"one profile's auth_permanent rotates to the provider's others", failed(ReasonAuthPermanent), "rotate to openai:b"},
		{"a timeout advances the chain", failed(ReasonTimeout), "advance"},
		{"model_not_found advances", failed(ReasonModelNotFound), "advance"},
		{"an empty response advances", failed(ReasonEmptyResponse), "advance"},
		{"no other available profile: advance", failed(ReasonRateLimit, everyProfileTried), "advance"},
		{"a profile in cooldown is passed over",
			failed(ReasonAuth, with(func(f *FailedAttempt) {
				f.Order = []OrderedProfile{{ID: "openai:a", Available: true}, {ID: "openai:b"}, {ID: "openai:c", Available: true}}
			})), "rotate to openai:c"},
		{"a user-pinned profile never rotates", failed(ReasonAuth, with(func(f *FailedAttempt) { f.UserPinned = true })), "advance"},
		{"a failed probe never rotates", failed(ReasonAuth, probed), "advance"},

		// Stops.
		{"context overflow stops the reply", failed(ReasonContextOverflow), "stop: ContextOverflowError: boom"},
		{"a format error stops the reply, never rotating", failed(ReasonFormat), "stop: FormatError: boom"},
		{"a pending /model takes over from a stop for the reason",
			failed(ReasonContextOverflow, with(func(f *FailedAttempt) { f.SwitchPending = true })), "stop: ContextOverflowError: boom"},

		// The opt-in format retry: one per reply.
		{"opted in: the first format error advances to the next candidate",
			failed(ReasonFormat, with(func(f *FailedAttempt) { f.Cooldowns = formatRetry })), "advance"},
		{"opted in: a probe's format error advances too",
			failed(ReasonFormat, probed, with(func(f *FailedAttempt) { f.Cooldowns = formatRetry })), "advance"},
		{"opted in: the second format error of a reply stops",
			failed(ReasonFormat, with(func(f *FailedAttempt) {
				f.Cooldowns, f.Earlier = formatRetry, []Attempt{{Result: ResultFailed, Reason: ReasonFormat}, {Result: ResultFailed, Reason: ReasonTimeout}}
			})), "stop: FormatError: boom"},
		{"opted in: other failures before, or a skip for format, leave the retry",
			failed(ReasonFormat, with(func(f *FailedAttempt) {
				f.Cooldowns, f.Earlier = formatRetry, []Attempt{{Result: ResultFailed, Reason: ReasonRateLimit}, {Result: ResultSkipped, Reason: ReasonFormat}}
			})), "advance"},
		{"opted in: a format error on the last candidate stops",
			failed(ReasonFormat, onFallback, with(func(f *FailedAttempt) { f.Cooldowns = formatRetry })), "stop: FormatError: boom"},
		{"opted in: context overflow still stops",
			failed(ReasonContextOverflow, with(func(f *FailedAttempt) { f.Cooldowns = formatRetry })), "stop: ContextOverflowError: boom"},

		// A stream that failed after the caller saw part of the answer.
		{"a failure before the first byte fails over unseen", failed(ReasonTimeout, cut("")), "advance"},
		{"content no live caller saw fails over from scratch",
			failed(ReasonTimeout, cut("The quick "), with(func(f *FailedAttempt) { f.Outcome.Delivered = false })), "advance"},
		{"a cut answer is continued by the next candidate", failed(ReasonTimeout, cut("The quick ")),
			`advance; first cut; the caller holds "The quick " (billed 0+3; the stream of openai/gpt-5 failed after 10 characters reached the caller (stall: stalled))`},
		{"a second cut adds to what the caller holds, which the first cut names",
			failed(ReasonTimeout, holding("The ", "the first cut"), cut("quick ")), `advance; the caller holds "The quick " (billed 0+4; the first cut)`},
		{"midStream error: the caller's stream ends with an error",
			failed(ReasonTimeout, cut("The quick "), with(func(f *FailedAttempt) { f.MidStream = MidStreamError })),
			"stop: StreamInterruptedError: the stream failed after part of the answer reached the caller: stalled; logged as advance; even with a /model pending"},
		{"a tool call the caller holds cannot be continued",
			failed(ReasonTimeout, cut(""), with(func(f *FailedAttempt) { f.Outcome.ToolCallsDelivered = 1 })),
			"stop: StreamInterruptedError: the stream failed after part of the answer reached the caller: stalled; logged as advance; even with a /model pending"},
		{"a continuation that answers something else ends the reply, blaming nobody",
			failed(ReasonNone, holding("The quick ", "the first cut"), with(func(f *FailedAttempt) { f.Outcome.Mismatch, f.Outcome.Error = true, "another answer" })),
			"stop: ContinuationMismatchError: the first cut; another answer; recorded as continuation_mismatch; blames nobody; even with a /model pending"},

		// The reply's one transient probe per provider, and the skip cache.
		{"a failed transient probe spends the reply's one probe of the provider", failed(ReasonRateLimit, transientProbe), "advance; spends the transient probe"},
		{"a transient probe failing with model_not_found keeps it", failed(ReasonModelNotFound, transientProbe), "advance"},
		{"a primary's probe spends no transient probe", failed(ReasonRateLimit, probed), "advance"},
		{"a fallback failing auth in a session is skipped there for the skip TTL",
			failed(ReasonAuth, onFallback), "rotate to openai:b; marks openai/gpt-5 openai:a skipped for auth for 1m0s"},
		{"auth_permanent marks it too, and a transient probe failing with it keeps the slot",
			failed(ReasonAuthPermanent, transientProbe), "advance; marks openai/gpt-5 openai:a skipped for auth_permanent for 1m0s"},
		{"the primary is never marked", failed(ReasonAuth), "rotate to openai:b"},
		{"a reply outside a session marks nothing", failed(ReasonAuth, onFallback, with(func(f *FailedAttempt) { f.Session = "" })), "rotate to openai:b"},
		{"a skip TTL of 0 turns the cache off", failed(ReasonAuth, onFallback, with(func(f *FailedAttempt) { f.SkipTTL = 0 })), "rotate to openai:b"},
		{"a rate limit marks nothing", failed(ReasonRateLimit, onFallback), "rotate to openai:b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := planText(AfterFailure(c.f), c.f); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// planText writes out every field of a plan, beside what the failed attempt already was.
func planText(p FailurePlan, f FailedAttempt) string {
	var s string
	switch p.Step {
	case StepRetry:
		s = fmt.Sprintf("retry %s (retry %d)", p.Profile, p.Retries)
	case StepRotate:
		s = "rotate to " + p.Profile
	case StepAdvance:
		s = "advance"
	case StepStop:
		s = "stop: " + p.StopType + ": " + p.StopMessage
	default:
		s = "?" + p.Step
	}
	if p.Wait > 0 {
		s += fmt.Sprintf(" after %v", p.Wait)
	}
	if p.spread > 0 {
		s += fmt.Sprintf(" + up to %v", p.spread)
	}
	if p.Jitter {
		s += ", jittered"
	}
	if p.Continuation != "" {
		s += ", asking it to " + p.Continuation
	}
	if p.Step == StepRetry {
		rest := p
		rest.Step, rest.Profile, rest.Retries, rest.Continuation, rest.Wait, rest.spread, rest.Jitter = "", "", 0, "", 0, 0, false
		rest.Held = CutAnswer{}
		if fmt.Sprint(rest) != fmt.Sprint(FailurePlan{}) || p.Held != f.Held {
			s += fmt.Sprintf("; and %+v", rest)
		}
		return s
	}
	if p.Step != StepRotate && p.Profile != "" {
		s += "; next profile " + p.Profile
	}
	if p.Retries != 0 {
		s += fmt.Sprintf("; %d retries", p.Retries)
	}
	if p.DecisionStep != p.Step {
		s += "; logged as " + p.DecisionStep
	}
	if p.Reason != f.Outcome.Reason {
		s += "; recorded as " + string(p.Reason)
	}
	if !p.Blames {
		s += "; blames nobody"
	}
	if p.Cuts {
		s += "; first cut"
	}
	if p.Held != f.Held {
		s += fmt.Sprintf("; the caller holds %q (billed %d+%d; %s)", p.Held.Text, p.Held.BilledInput, p.Held.BilledOutput, p.Held.Fault)
	}
	if p.SpendsTransientProbe {
		s += "; spends the transient probe"
	}
	if m := p.SkipMark; m != nil {
		s += fmt.Sprintf("; marks %s %s skipped for %s for %v", m.Model, m.Profile, m.Reason, m.Until.Sub(f.Now))
	}
	if !p.YieldsToSwitch {
		s += "; even with a /model pending"
	}
	if p.DependsOnProbeOneCall {
		s += "; a reply from before one-call probes retries"
	}
	if p.Step != StepStop && (p.StopType != "" || p.StopMessage != "") {
		s += "; stop " + p.StopType + ": " + p.StopMessage
	}
	return s
}

// A retry's jitter spreads its backoff by up to half again; a Retry-After and a rotation's
// overloadedBackoffMs are waited as given.
func TestThePauseBeforeTheNextCall(t *testing.T) {
	backoff := AfterFailure(FailedAttempt{Outcome: AttemptOutcome{Status: 408, Reason: ReasonTimeout}})
	hinted := AfterFailure(FailedAttempt{Outcome: AttemptOutcome{Status: 429, Reason: ReasonRateLimit, Hint: RetryHint{After: 2 * time.Second, HasAfter: true}}})
	cd := DefaultCooldowns()
	cd.OverloadedBackoff = 250 * time.Millisecond
	rotation := AfterFailure(FailedAttempt{Outcome: AttemptOutcome{Reason: ReasonOverloaded}, Profile: "p:a", Cooldowns: cd,
		Order: []OrderedProfile{{ID: "p:a", Available: true}, {ID: "p:b", Available: true}}, Tried: map[string]bool{"p:a": true}})
	for _, c := range []struct {
		name   string
		plan   FailurePlan
		jitter float64
		want   time.Duration
	}{
		{"no jitter: the backoff", backoff, 0, 500 * time.Millisecond},
		{"jitter adds up to half", backoff, 0.5, 625 * time.Millisecond},
		{"at most half", backoff, 1, 750 * time.Millisecond},
		{"a fraction out of range is clamped", backoff, 7, 750 * time.Millisecond},
		{"a negative one too", backoff, -1, 500 * time.Millisecond},
		{"a Retry-After is waited as given", hinted, 0.9, 2 * time.Second},
		{"an overload rotation waits overloadedBackoffMs", rotation, 0, 250 * time.Millisecond},
	} {
		if got := c.plan.Pause(c.jitter); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
