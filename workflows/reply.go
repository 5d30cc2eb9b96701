package workflows

import (
	"time"

	"github.com/batonhq/baton/policy"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Registered names of the reply and its handlers. They are part of every recorded history:
// never rename them.
const (
	ReplyWorkflowName = "Reply"

	// StatusQuery returns the reply's Status.
	StatusQuery = "status"
	// SwitchModelUpdate is a user's /model during a running reply.
	SwitchModelUpdate = "switchModel"
)

// ReplyWorkflow walks the candidate chain for one agent reply, as the seeds describe: decide per
// candidate, write the fallback to the session before trying it, attempt one profile at a time,
// record each outcome, rotate or advance, roll back what a failed fallback wrote.
func ReplyWorkflow(ctx workflow.Context, req ReplyRequest) (policy.ReplyResult, error) {
	r := &reply{req: req, transientUsed: map[string]bool{}, started: workflow.Now(ctx)}
	if err := r.handle(ctx); err != nil {
		return policy.ReplyResult{}, err
	}
	if err := r.setup(ctx); err != nil {
		return policy.ReplyResult{}, err
	}
	res, err := r.run(ctx)
	if err != nil && (ctx.Err() != nil || isAbort(err)) {
		// The caller hung up or the reply was cancelled: no further candidate, no reason.
		r.observe(ctx, "aborted", false)
		return policy.ReplyResult{}, temporal.NewNonRetryableApplicationError("the reply was aborted", policy.ErrAborted, nil, r.joined())
	}
	return res, err
}

// reply is one reply's state.
type reply struct {
	req           ReplyRequest
	state         policy.ReplyState
	session       policy.SessionModel // as this reply last knew or wrote it
	chain         policy.Chain
	attempts      []policy.Attempt
	transientUsed map[string]bool // providers whose transient probe this reply spent
	clearStale    bool            // a heartbeat found the auto override stale
	status        Status
	pending       *SwitchModel // a user's switch, applied once the in-flight attempt ends
	started       time.Time
	// held is the answer a live caller already holds from attempts cut mid-stream; the next
	// attempt continues it (streaming.midStream "continue").
	held policy.CutAnswer
	// checked: this reply continues cut answers under the continuation check (changeContinuationCheck).
	checked bool
	// streamLost: the front door's queue went unpolled; attempts go to the shared queue.
	streamLost bool
	// attemptSeq numbers the attempts (their identity); workersLost counts infrastructure faults.
	attemptSeq  int
	workersLost int
}

// joined is every attempt of the reply, across the runs a /model restart began: what its result
// and its failure details list.
func (r *reply) joined() []policy.Attempt {
	if len(r.req.Earlier) == 0 {
		return r.attempts
	}
	return append(append([]policy.Attempt{}, r.req.Earlier...), r.attempts...)
}

// authAgent is whose credentials and usage stats this reply uses.
func (r *reply) authAgent() string {
	if r.state.AuthAgent != "" {
		return r.state.AuthAgent
	}
	return r.req.Agent
}

// replyAgent is the reply's own agent when its profiles are another's ("": the same).
func (r *reply) replyAgent() string {
	if r.authAgent() != r.req.Agent {
		return r.req.Agent
	}
	return ""
}

func (r *reply) setup(ctx workflow.Context) error {
	state, err := LoadReply.RunLocal(storeStep(ctx), r.req)
	if err != nil {
		return err
	}
	r.state = state
	if r.state.Config == nil {
		r.state.Config = policy.DefaultConfig()
	}
	plan, err := policy.PlanReply(r.state.Config, r.req.Ask(), r.state.Session, r.state.Reprobed, workflow.Now(ctx))
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "BadRequest", nil)
	}
	r.chain, r.session, r.clearStale = plan.Chain, plan.Session, plan.ClearStale
	// A run that would start over a daily budget does not start. Only a history whose first step
	// read budgets can take this branch: one recorded before budgets existed replays as it ran.
	if over := policy.OverBudget(r.state.Budgets); over != nil {
		r.observe(ctx, "failed", false)
		return temporal.NewNonRetryableApplicationError(policy.BudgetNotice(*over), policy.ErrBudgetExceeded, nil, *over)
	}
	// Starters give these at start (ReplyStartOptions); a reply started without them sets them.
	if _, given := workflow.GetTypedSearchAttributes(ctx).GetKeyword(saAgent); !given {
		_ = workflow.UpsertTypedSearchAttributes(ctx, saAgent.ValueSet(r.req.Agent), saSession.ValueSet(r.req.Session))
	}
	return nil
}

func (r *reply) run(ctx workflow.Context) (policy.ReplyResult, error) {
	deadline := workflow.Now(ctx).Add(r.req.WaitForCooldown)
	for {
		res, done, err := r.walk(ctx)
		if done {
			return res, err
		}
		// Every candidate failed or was unavailable. With a wait budget, sleep until the soonest
		// one may be back and walk the chain again; else fail with the summary.
		now := workflow.Now(ctx)
		e := policy.Exhausted(r.attempts, r.chain.Image, policy.SoonestBack(r.chain, r.state.Profiles, now))
		if r.checked && r.held.Text != "" {
			// A caller holds part of an answer no candidate could finish: its stream ends with an
			// error naming the cut, never a wait nobody would see the end of.
			r.observe(ctx, "failed", false)
			return policy.ReplyResult{}, temporal.NewNonRetryableApplicationError(
				r.held.Fault+"; no candidate could continue it: "+e.Message, policy.ErrStreamInterrupted, nil, r.joined())
		}
		if r.req.WaitForCooldown <= 0 || e.SoonestCooldownExpiry == nil || e.SoonestCooldownExpiry.After(deadline) {
			return policy.ReplyResult{}, r.fail(ctx, e)
		}
		r.status.WaitUntil = *e.SoonestCooldownExpiry
		if err := workflow.Sleep(ctx, max(e.SoonestCooldownExpiry.Sub(now), time.Second)); err != nil {
			return policy.ReplyResult{}, err
		}
		r.status.WaitUntil = time.Time{}
	}
}

// walk tries the chain once. done: the reply ends (an answer, or a stop).
func (r *reply) walk(ctx workflow.Context) (policy.ReplyResult, bool, error) {
	cfg := r.state.Config
	failedBefore := false // a candidate before this one failed or was unavailable (not merely text-only)
	for i := 0; i < len(r.chain.Candidates); i++ {
		cand := r.chain.Candidates[i]
		now := workflow.Now(ctx)
		if r.checked && r.held.Text != "" && cfg.Continuation(cand.ModelRef) == policy.ContinueNone {
			r.skip(ctx, i, policy.Attempt{Provider: cand.Provider, Model: cand.Model, Result: policy.ResultSkipped,
				Reason: policy.ReasonNoContinuation, Error: policy.NoContinuationSkipText(cand.ModelRef), At: now}, 0)
			continue
		}
		if r.req.CarriesImages && !cfg.AcceptsImages(cand.ModelRef) {
			r.skip(ctx, i, policy.Attempt{Provider: cand.Provider, Model: cand.Model,
				Result: policy.ResultSkipped, Reason: policy.ReasonTextOnly, Error: policy.TextOnlySkipText(cand.ModelRef), At: now}, 0)
			continue
		}
		pin, userPin, _ := r.session.ProfilePin(cand.Provider)
		ordered := policy.OrderProfiles(policy.OrderInput{Provider: cand.Provider, Model: cand.Model, Now: now, Config: cfg,
			StoredOrder: r.state.Orders[cand.Provider], Profiles: r.state.Profiles, Pin: pin, UserPin: userPin})
		skipCached := policy.ReasonNone
		if len(ordered) > 0 {
			skipCached = policy.SkipMarkFor(r.state.SkipMarks, cand.ModelRef, ordered[0].ID, now)
		}
		d := policy.DecideCandidate(policy.CandidateState{Candidate: cand.ModelRef, Index: i, ChainLen: len(r.chain.Candidates),
			Profiles: ordered, TransientProbeUsed: r.transientUsed[cand.Provider], SkipCached: skipCached}, now)
		if d.Action == policy.ActionProbe && d.SetsThrottle {
			claimed, err := ClaimProbe.RunLocal(storeStep(ctx), ProbeClaim{Agent: r.authAgent(), Provider: cand.Provider, At: now})
			if err != nil {
				return policy.ReplyResult{}, true, err
			}
			d = policy.AfterClaim(d, claimed)
		}
		if d.Action == policy.ActionSkip {
			r.skip(ctx, i, policy.Attempt{Provider: cand.Provider, Model: cand.Model, Profile: d.Profile,
				Result: policy.ResultSkipped, Reason: d.Reason, Error: d.SkipText, At: now}, len(ordered))
			failedBefore = true
			continue
		}

		before, wrote := r.session, false
		if policy.WritesFallback(r.req.Ask(), r.chain, i, failedBefore, r.session) {
			next := policy.FallbackWrite(r.session, cand.ModelRef, r.chain.Requested, d.Profile, now)
			ok, err := WriteFallback.RunLocal(storeStep(ctx), SessionWrite{
				Session: r.req.Session, Agent: r.req.Agent, Expected: before, Next: next, At: now})
			if err != nil {
				// A write that failed may have landed all the same (committed as the database
				// went away, or as the reply was cancelled): undo what it would have written,
				// where the session still holds it, before the reply ends.
				if workflow.GetVersion(ctx, changeRollbackFailedWrite, workflow.DefaultVersion, 1) == 1 {
					r.session = next
					r.rollback(ctx, before)
				}
				return policy.ReplyResult{}, true, err
			}
			if ok {
				r.session, wrote = next, true
			}
		}

		res, done, err := r.tryCandidate(ctx, i, cand, ordered, d, userPin)
		if wrote && (!done || err != nil) {
			r.rollback(ctx, before)
		}
		if done {
			return res, true, err
		}
		failedBefore = true
		if r.pending != nil {
			jump, err := r.applySwitch(ctx, i)
			if err != nil {
				return policy.ReplyResult{}, true, err
			}
			i = jump - 1 // candidates jumped over get no record
		}
	}
	return policy.ReplyResult{}, false, nil
}

// skip records a candidate not tried.
func (r *reply) skip(ctx workflow.Context, i int, a policy.Attempt, profiles int) {
	r.attempts = append(r.attempts, a)
	r.log(ctx, policy.DecisionSkip, i, a, profiles, nil, "")
}

// tryCandidate tries the candidate's profiles in order, one call at a time, and applies what
// policy.AfterFailure plans after each failed one. done reports that the reply ends here: with a
// result, or with a stop error.
func (r *reply) tryCandidate(ctx workflow.Context, i int, cand policy.Candidate, ordered []policy.OrderedProfile,
	d policy.CandidateDecision, userPin bool) (policy.ReplyResult, bool, error) {
	probe := d.Action == policy.ActionProbe
	tried := map[string]bool{}
	rotations := map[policy.Reason]int{}
	retries, continuation := 0, ""
	var spent policy.Spend // what the calls of the attempt under way consumed
	for profile := d.Profile; profile != ""; {
		tried[profile] = true
		r.status.Candidate, r.status.Profile = cand.String(), profile
		// What a success writes depends only on the failures before it: computed before the
		// attempt, which ends the turn itself.
		end, notices := policy.EndOfTurn(policy.TurnEndInput{Request: r.req.Ask(), Chain: r.chain, Served: cand.ModelRef,
			Profile: profile, Attempts: r.attempts, Notice: r.state.Notice, ClearStale: r.clearStale})
		out, err := r.call(ctx, cand, profile, end, retries, continuation)
		if err != nil {
			return r.interrupted(ctx, err, cand, profile, probe, retries)
		}
		now := workflow.Now(ctx)
		p, rt := probe, retries
		a := policy.Attempt{Provider: cand.Provider, Model: cand.Model, Profile: profile, Probe: &p, Retries: &rt,
			Continues: r.held.Text != "", At: now}
		if out.Spend != nil {
			spent = spent.Add(*out.Spend)
		}
		if !spent.IsZero() {
			s := spent
			a.Spend = &s
		}
		if out.OK {
			if err := r.record(ctx, cand, profile, out, now); err != nil {
				return policy.ReplyResult{}, true, err
			}
			a.Result = policy.ResultSucceeded
			r.attempts = append(r.attempts, a)
			res, err := r.succeed(ctx, i, cand, profile, out, end, notices)
			return res, true, err
		}

		f := policy.FailedAttempt{Outcome: out, Candidate: cand.ModelRef, Index: i, ChainLen: len(r.chain.Candidates), Profile: profile,
			Decision: d, Order: ordered, Tried: tried, UserPinned: userPin, Rotations: rotations, Earlier: r.attempts,
			Stats: r.state.Profiles, Retries: retries, RetryMaxWait: r.state.RetryMaxWait, Continuation: continuation,
			NoJitter: r.req.NoJitter, SwitchPending: r.pending != nil, Held: r.held, MidStream: r.state.Config.Streaming.MidStream,
			Session: r.req.Session, SkipTTL: r.state.SkipTTL, Cooldowns: r.state.Config.Cooldowns, Now: now}
		plan := policy.AfterFailure(f)
		if plan.DependsOnProbeOneCall && workflow.GetVersion(ctx, changeProbeOneCall, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			f.ProbesRetriedInPlace = true
			plan = policy.AfterFailure(f)
		}
		if plan.Step == policy.StepRetry {
			// Only the last failure of a series counts: nothing is recorded, the same route again.
			jitter := 0.0
			if plan.Jitter {
				_ = workflow.SideEffect(ctx, func(workflow.Context) any { return randomFraction() }).Get(&jitter)
			}
			if wait := plan.Pause(jitter); wait > 0 {
				r.status.WaitUntil = workflow.Now(ctx).Add(wait)
				if err := workflow.Sleep(ctx, wait); err != nil {
					return r.interrupted(ctx, err, cand, profile, probe, retries)
				}
				r.status.WaitUntil = time.Time{}
			}
			profile, retries, continuation = plan.Profile, plan.Retries, plan.Continuation
			continue
		}

		if plan.Blames {
			if err := r.record(ctx, cand, profile, out, now); err != nil {
				return policy.ReplyResult{}, true, err
			}
		}
		a.Result, a.Reason, a.Status, a.Code, a.Error = policy.ResultFailed, plan.Reason, out.Status, out.Code, out.Error
		r.attempts = append(r.attempts, a)
		spent = policy.Spend{}
		r.log(ctx, policy.DecisionFailed, i, a, len(ordered), nil, plan.DecisionStep)
		if plan.Cuts {
			r.checked = workflow.GetVersion(ctx, changeContinuationCheck, workflow.DefaultVersion, 1) == 1
		}
		r.held = plan.Held
		if plan.SpendsTransientProbe {
			r.transientUsed[cand.Provider] = true
		}
		if plan.SkipMark != nil {
			if _, err := MarkSkip.RunLocal(storeStep(ctx), SkipMarkRequest{Session: r.req.Session, Mark: *plan.SkipMark, At: now}); err != nil {
				return policy.ReplyResult{}, true, err
			}
		}
		if plan.YieldsToSwitch && r.pending != nil {
			return policy.ReplyResult{}, false, nil // the user switched: walk decides where to go
		}
		switch plan.Step {
		case policy.StepStop:
			return policy.ReplyResult{}, true, temporal.NewNonRetryableApplicationError(plan.StopMessage, plan.StopType, nil, r.joined())
		case policy.StepRotate:
			rotations[plan.Reason]++
			if plan.Wait > 0 {
				if err := workflow.Sleep(ctx, plan.Wait); err != nil {
					return policy.ReplyResult{}, true, err
				}
			}
		}
		profile, retries, continuation = plan.Profile, plan.Retries, plan.Continuation
	}
	return policy.ReplyResult{}, false, nil
}

// interrupted ends a candidate whose call or retry wait failed with err. The attempt in flight
// when the reply was aborted is recorded: failed, with no reason.
func (r *reply) interrupted(ctx workflow.Context, err error, cand policy.Candidate, profile string, probe bool,
	retries int) (policy.ReplyResult, bool, error) {
	if ctx.Err() != nil || isAbort(err) {
		r.attempts = append(r.attempts, policy.Attempt{Provider: cand.Provider, Model: cand.Model, Profile: profile,
			Probe: &probe, Retries: &retries, Continues: r.held.Text != "", Result: policy.ResultFailed, At: workflow.Now(ctx)})
	}
	return policy.ReplyResult{}, true, err
}

// record keeps the profile's usage stats as the attempt recorded them, recording them here when
// the attempt could not (its store step failed, or the attempt timed out).
func (r *reply) record(ctx workflow.Context, cand policy.Candidate, profile string, out policy.AttemptOutcome, now time.Time) error {
	stats := out.Recorded
	if stats == nil {
		s, err := RecordOutcome.RunLocal(storeStep(ctx), OutcomeRecord{Agent: r.authAgent(), Profile: profile,
			Provider: cand.Provider, Model: cand.Model, OK: out.OK, Reason: out.Reason, Hint: out.Hint, At: now})
		if err != nil {
			return err
		}
		stats = &s
	}
	for k := range r.state.Profiles {
		if r.state.Profiles[k].ID == profile {
			r.state.Profiles[k].Stats = *stats
		}
	}
	return nil
}

// rollback restores what this reply's fallback wrote; a failure to roll back is logged, not fatal.
func (r *reply) rollback(ctx workflow.Context, before policy.SessionModel) {
	if ctx.Err() != nil {
		// An aborted reply still undoes what it wrote: on a context its cancellation leaves alone.
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	written := r.session
	_, err := RollbackFallback.RunLocal(undoStep(ctx), SessionRollback{
		Session: r.req.Session, Before: before, Written: written, At: workflow.Now(ctx)})
	if err != nil {
		workflow.GetLogger(ctx).Warn("fallback rollback failed", "session", r.req.Session, "error", err)
		return
	}
	r.session = policy.NarrowRollback(r.session, before, written)
}

func (r *reply) succeed(ctx workflow.Context, i int, cand policy.Candidate, profile string, out policy.AttemptOutcome,
	end *policy.TurnEnd, notices []string) (policy.ReplyResult, error) {
	r.log(ctx, policy.DecisionSucceeded, i, r.attempts[len(r.attempts)-1], 0, policy.LastFailed(r.attempts[:len(r.attempts)-1]), "")
	if end != nil && !out.TurnEnded {
		e := *end
		e.At = workflow.Now(ctx)
		if _, err := EndTurn.RunLocal(storeStep(ctx), e); err != nil {
			return policy.ReplyResult{}, err
		}
	}
	usedFallback := cand.ModelRef != r.chain.Requested
	reason := ""
	if usedFallback {
		reason = string(policy.LastReason(r.attempts))
	}
	r.observe(ctx, "completed", usedFallback)
	// A reply answered at its first try spends no event on attributes: they exist to find the
	// replies that did not.
	if usedFallback || len(r.attempts) > 1 {
		_ = workflow.UpsertTypedSearchAttributes(ctx, saFinalModel.ValueSet(cand.String()), saFailoverReason.ValueSet(reason),
			saAttempts.ValueSet(int64(len(r.attempts))), saUsedFallback.ValueSet(usedFallback))
	}
	answer := out.Answer
	answer.Text = r.held.Text + out.Text // the caller's whole answer, when it continued a cut stream
	// The caller was billed for the cut attempts too.
	answer.Input, answer.Output = answer.Input+r.held.BilledInput, answer.Output+r.held.BilledOutput
	res := policy.ReplyResult{Answer: answer, Served: policy.Served{Provider: cand.Provider, Model: cand.Model, Profile: profile},
		Attempts: r.joined(), Notices: notices}
	if total := policy.TotalSpend(res.Attempts); !total.IsZero() {
		res.Spend = &total
	}
	return res, nil
}

// fail ends the reply with the exhaustion as a non-retryable FallbackSummaryError.
func (r *reply) fail(ctx workflow.Context, e policy.Exhaustion) error {
	r.observe(ctx, "failed", false)
	_ = workflow.UpsertTypedSearchAttributes(ctx, saFailoverReason.ValueSet(string(e.Reason)),
		saAttempts.ValueSet(int64(len(r.attempts))), saUsedFallback.ValueSet(false))
	e.Attempts = r.joined() // the summary speaks of this run; the record lists every run's
	return temporal.NewNonRetryableApplicationError(e.Message, policy.ErrFallbackSummary, nil, e)
}
