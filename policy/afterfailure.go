package policy

import "time"

// After a failed attempt the reply asks one question, AfterFailure, and applies the plan's
// fields: retry the same profile, rotate to the next profile, advance the chain or stop; what
// the caller's cut answer becomes; which skip mark to write; whether the reply's transient probe
// is spent. Every rule it combines lives here, except the order of profiles (order.go) and what
// a cut stream means for its caller (stream.go, continuation.go).

// Steps after a failed attempt.
const (
	StepRetry   = "retry"   // the same candidate and profile again
	StepRotate  = "rotate"  // the next profile of the same candidate
	StepAdvance = "advance" // the next candidate of the chain
	StepStop    = "stop"    // the reply ends
)

// FailedAttempt is what a reply knows when an attempt has failed.
type FailedAttempt struct {
	// Outcome is what the call said: reason, status, hints, stream fault, what reached the caller.
	Outcome   AttemptOutcome
	Candidate ModelRef
	Index     int // the candidate's position in the chain; 0 is the primary
	ChainLen  int
	Profile   string // the profile the call used
	// Decision is the candidate's (DecideCandidate, after the claim): a probe never rotates, and
	// a failed transient probe may spend the reply's one transient probe of the provider.
	Decision CandidateDecision
	// Order is the candidate's profiles in order (OrderProfiles); Tried, those this candidate
	// already tried; UserPinned, the user pinned the profile (it never rotates).
	Order      []OrderedProfile
	Tried      map[string]bool
	UserPinned bool
	// Rotations already made inside this candidate, by reason.
	Rotations map[Reason]int
	// Earlier is this run's attempts before this one (a reply has one format retry).
	Earlier []Attempt
	// Stats are the profiles as the reply last loaded or recorded them: a call on a route they
	// cool down for the model was a probe, and a probe is one call.
	Stats []StoredProfile

	// Retries is how many same-candidate retries came before this call; RetryMaxWait the
	// longest Retry-After waited (0: DefaultRetryMaxWait); Continuation how this call was asked
	// to continue a cut answer ("", or ContinueRestart after a refused prefill).
	Retries      int
	RetryMaxWait time.Duration
	Continuation string
	// NoJitter: backoffs are not spread (simulate).
	NoJitter bool
	// ProbesRetriedInPlace: the reply began before a probe was one call, and retries its probes
	// like any call (see FailurePlan.DependsOnProbeOneCall).
	ProbesRetriedInPlace bool
	// SwitchPending: a user's /model is waiting for this attempt to end; it waits for no retry.
	SwitchPending bool

	// Held is the answer the caller holds from attempts cut before this one; MidStream is
	// streaming.midStream.
	Held      CutAnswer
	MidStream string
	// Session is the reply's session ("" none); SkipTTL the skip cache's (0: off).
	Session   string
	SkipTTL   time.Duration
	Cooldowns Cooldowns
	Now       time.Time
}

// FailurePlan is what the reply does after a failed attempt.
type FailurePlan struct {
	// Step is StepRetry, StepRotate, StepAdvance or StepStop.
	Step string
	// Profile, Retries and Continuation are the next call's on this candidate (a retry or a
	// rotation); Profile "" when the candidate is done.
	Profile      string
	Retries      int
	Continuation string
	// Wait is the pause before that call (Pause adds a retry's jitter); Jitter: the workflow
	// draws a random fraction for Pause (recorded; drawn for every same-candidate retry, also
	// one whose Retry-After leaves it unused, as replies always have).
	Wait   time.Duration
	Jitter bool
	spread time.Duration // the most jitter adds
	// DependsOnProbeOneCall: an ordinary call failing so would be retried in place, a probe is
	// not; a reply that began before that rule retries it. The workflow asks which its reply is
	// (a version marker, only here), and plans again with ProbesRetriedInPlace if it began before.
	DependsOnProbeOneCall bool

	// The rest is for a failure that is not retried.

	// Blames: the failure counts against the profile (the reply records it when the attempt did
	// not). Reason is the one the attempt is recorded with.
	Blames bool
	Reason Reason
	// DecisionStep is the step the decision record names: the chain's step for the reason, also
	// when a cut the caller saw ends the reply instead (the record has no outcome for that).
	DecisionStep string
	// Held is the caller's cut answer after this failure, for the next candidate to continue;
	// Cuts, this failure first cut it.
	Held CutAnswer
	Cuts bool
	// SpendsTransientProbe: the reply's one transient probe of the provider is spent.
	SpendsTransientProbe bool
	// SkipMark, when set, is written to the session's skip cache.
	SkipMark *SkipMark
	// YieldsToSwitch: a user's /model pending once the rest is applied decides where the reply
	// goes (LiveSwitch), in place of Step. A cut or a continuation that ended the reply does not.
	YieldsToSwitch bool
	// StopType and StopMessage are the error a stopped reply ends with (its attempts as details).
	StopType    string
	StopMessage string
}

// Pause is how long to wait before the plan's next call, given the fraction in [0,1) the
// workflow drew for a jittered retry (0 when it drew none).
func (p FailurePlan) Pause(jitter float64) time.Duration {
	return p.Wait + time.Duration(float64(p.spread)*min(max(jitter, 0), 1))
}

// AfterFailure decides what a reply does after a failed attempt. In order: a refused prefill is
// asked once more to restart (a capability, not a fault); a same-candidate retry, unless a
// user's /model waits or the call was a probe; a continuation that answered something else
// ends the reply, blaming nobody; then the chain's step for the reason (chainStep), with what a
// cut the caller saw means (ended or continued), the transient probe, the skip cache.
func AfterFailure(f FailedAttempt) FailurePlan {
	out := f.Outcome
	if out.PrefillRejected && f.Continuation != ContinueRestart {
		// Not a same-candidate retry: it counts none, waits for nothing, blames nobody.
		return FailurePlan{Step: StepRetry, Profile: f.Profile, Retries: f.Retries, Continuation: ContinueRestart, Held: f.Held}
	}
	probeOneCall := false
	if !f.SwitchPending {
		rs := retryState{Status: out.Status, Net: NetErrorKind(out.Net), StreamFault: out.StreamFault != "", Hint: out.Hint,
			RetriesSoFar: f.Retries, MaxWait: f.RetryMaxWait}
		retry, wait, spread := sameCandidateRetry(rs)
		// A probe asks whether an outage is over: retries in place would be the very calls the
		// cooldown spares.
		probeOneCall = retry && !f.ProbesRetriedInPlace && probeCall(f.Stats, f.Profile, f.Candidate.Provider, f.Candidate.Model, f.Now)
		if retry && !probeOneCall {
			return FailurePlan{Step: StepRetry, Profile: f.Profile, Retries: f.Retries + 1, Continuation: f.Continuation,
				Wait: wait, spread: spread, Jitter: !f.NoJitter, Held: f.Held}
		}
	}
	if out.Mismatch {
		// The continuation is another answer and none of it went out: the caller's answer cannot
		// be finished truthfully. Nobody is blamed.
		return FailurePlan{Step: StepStop, DecisionStep: StepStop, Reason: ReasonContinuationMismatch, Held: f.Held,
			StopType: ErrContinuationMismatch, StopMessage: f.Held.Fault + "; " + out.Error, DependsOnProbeOneCall: probeOneCall}
	}

	next := nextProfile(f.Order, f.Tried)
	step, wait := chainStep(f, next)
	p := FailurePlan{Step: step, DecisionStep: step, Blames: true, Reason: out.Reason, Held: f.Held, YieldsToSwitch: true,
		DependsOnProbeOneCall: probeOneCall}
	switch midStreamAction(f.MidStream, out.Delivered, out.Partial, out.ToolCallsDelivered) {
	case afterFaultStop:
		p.Step, p.YieldsToSwitch = StepStop, false
		p.StopType, p.StopMessage = ErrStreamInterrupted, "the stream failed after part of the answer reached the caller: "+out.Error
		return p
	case afterFaultContinue:
		if p.Held.Text == "" {
			p.Held.Fault, p.Cuts = cutText(f.Candidate, out.Partial, out.StreamFault, out.Error), true
		}
		p.Held.Text += out.Partial
		p.Held.BilledInput += out.BilledInput
		p.Held.BilledOutput += out.BilledOutput
	}
	p.SpendsTransientProbe = f.Decision.Action == ActionProbe && f.Decision.TransientProbe && !keepsTransientSlot(out.Reason)
	if marksSkipCache(f.Index, out.Reason, f.Session) && f.SkipTTL > 0 {
		p.SkipMark = &SkipMark{Model: f.Candidate.String(), Profile: f.Profile, Reason: out.Reason, Until: f.Now.Add(f.SkipTTL)}
	}
	switch step {
	case StepStop:
		p.StopType, p.StopMessage = stopType(out.Reason), out.Error
	case StepRotate:
		p.Profile, p.Wait = next, wait
	}
	return p
}

// chainStep is the step after a failure that is not retried in place: rotate (after a wait:
// overloadedBackoffMs), advance or stop. next is the next untried available profile ("" none).
func chainStep(f FailedAttempt, next string) (step string, wait time.Duration) {
	cd := f.Cooldowns
	switch f.Outcome.Reason {
	case ReasonContextOverflow:
		return StepStop, 0
	case ReasonFormat:
		// The same payload fails the same way on every key: never rotate. With the opt-in, the
		// next model gets one chance per reply; with nothing after this one, the stop is truer.
		if cd.AllowFormatRetry && !usedFormatRetry(f.Earlier) && f.Index+1 < f.ChainLen {
			return StepAdvance, 0
		}
		return StepStop, 0
	}
	if next == "" || f.UserPinned || f.Decision.Action == ActionProbe {
		return StepAdvance, 0
	}
	switch f.Outcome.Reason {
	case ReasonRateLimit:
		if f.Rotations[ReasonRateLimit] < cd.RateLimitedProfileRotations {
			return StepRotate, 0
		}
	case ReasonOverloaded:
		if f.Rotations[ReasonOverloaded] < cd.OverloadedProfileRotations {
			return StepRotate, cd.OverloadedBackoff
		}
	case ReasonAuth, ReasonBilling, ReasonAuthPermanent:
		return StepRotate, 0 // each remaining profile gets its chance
	}
	return StepAdvance, 0
}

// usedFormatRetry reports whether a reply whose earlier attempts are these already spent its
// format retry: a format failure that did not end the reply.
func usedFormatRetry(earlier []Attempt) bool {
	for _, a := range earlier {
		if a.Result == ResultFailed && a.Reason == ReasonFormat {
			return true
		}
	}
	return false
}

// stopType is the error type a reply stopped by a failure that must not fail over ends with:
// a context overflow says so; every other stop (a request the provider rejects) is a format error.
func stopType(r Reason) string {
	if r == ReasonContextOverflow {
		return ErrContextOverflow
	}
	return ErrFormat
}

// keepsTransientSlot reports probe failures that do not spend the reply's transient probe: they
// say nothing about whether the cooldown is over.
func keepsTransientSlot(r Reason) bool {
	switch r {
	case ReasonModelNotFound, ReasonFormat, ReasonAuth, ReasonAuthPermanent, ReasonSessionExpired:
		return true
	}
	return false
}

// marksSkipCache reports a failure that marks the skip cache: a non-primary candidate failing
// with auth or auth_permanent inside a session.
func marksSkipCache(index int, reason Reason, session string) bool {
	return index > 0 && session != "" && (reason == ReasonAuth || reason == ReasonAuthPermanent)
}

// Same-candidate retries stand in for the SDK-internal retries of the seeds.
const (
	MaxSameCandidateRetries = 2
	RetryBaseBackoff        = 500 * time.Millisecond
	DefaultRetryMaxWait     = 60 * time.Second
)

// retryState describes a failed call for sameCandidateRetry.
type retryState struct {
	Status int
	Net    NetErrorKind
	// StreamFault: the stream started and then failed (cut, stall, first-token timeout, in-band
	// error, malformed chunk). Those are not retried on the same route.
	StreamFault  bool
	Hint         RetryHint
	RetriesSoFar int
	MaxWait      time.Duration
}

// sameCandidateRetry decides whether to call the same candidate and profile again, and after
// how long: a 408, 409, 429, 5xx or a reset before any output, at most twice; Retry-After when
// given and within MaxWait (a longer one is not waited: the failure surfaces at once), else
// 0.5 s doubling, which jitter spreads by up to half again (spread).
func sameCandidateRetry(rs retryState) (retry bool, wait, spread time.Duration) {
	if rs.RetriesSoFar >= MaxSameCandidateRetries || rs.StreamFault {
		return false, 0, 0
	}
	retryable := rs.Status == 408 || rs.Status == 409 || rs.Status == 429 || (rs.Status >= 500 && rs.Status <= 599) ||
		(rs.Status == 0 && rs.Net == NetReset)
	if !retryable {
		return false, 0, 0
	}
	maxWait := rs.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultRetryMaxWait
	}
	if rs.Hint.HasAfter {
		if rs.Hint.After > maxWait {
			return false, 0, 0
		}
		return true, rs.Hint.After, 0
	}
	backoff := RetryBaseBackoff << rs.RetriesSoFar
	return true, backoff, backoff / 2
}

// probeCall reports whether a call on profile for provider/model at now is a probe: the profile's
// usage stats, as the reply last loaded or recorded them, cool it down for that model, so only
// DecideCandidate's probe could have chosen it. A window that ended meanwhile makes the route an
// ordinary one again.
func probeCall(profiles []StoredProfile, profile, provider, model string, now time.Time) bool {
	for i := range profiles {
		if profiles[i].ID == profile {
			return !unusableUntil(&profiles[i].Stats, provider, model, now).IsZero()
		}
	}
	return false
}
