package workflows

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/batonhq/baton/policy"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Registered names of the reply and its activities. They are part of every recorded history:
// never rename them.
const (
	ReplyWorkflowName        = "Reply"
	LoadReplyActivity        = "LoadReply"
	AttemptActivity          = "Attempt"
	RecordOutcomeActivity    = "RecordOutcome"
	ClaimProbeActivity       = "ClaimProbe"
	WriteFallbackActivity    = "WriteFallback"
	RollbackFallbackActivity = "RollbackFallback"
	EndTurnActivity          = "EndTurn"
	MarkSkipActivity         = "MarkSkip"

	// StatusQuery returns the reply's Status.
	StatusQuery = "status"
	// SwitchModelUpdate is a user's /model during a running reply.
	SwitchModelUpdate = "switchModel"

	// leanHistoryChange guards the lean history: store steps as local activities, the outcome
	// recorded (and the turn ended) by the attempt itself, search attributes given at start and
	// upserted only when a reply fails over. Replies started before keep their activities.
	leanHistoryChange = "lean-history"
	// switchRestartChange: a user's /model that is not a later candidate starts the reply over
	// (continue-as-new with the new selection) instead of failing it for the caller to restart.
	switchRestartChange = "switch-restart"

	// infraRetryChange: an attempt whose worker was lost (heartbeat timeout, worker shutdown) is
	// run again in place, without blame, instead of counting as the provider's timeout.
	infraRetryChange = "infra-retry"

	// attemptHeartbeat is how soon a lost worker is noticed: an attempt heartbeats on its own
	// timer whatever its stream does (provider silence is the stream watchdog's to judge).
	attemptHeartbeat = 10 * time.Second

	// streamQueueWait is how long an attempt waits for the front door's own worker before the
	// shared queue takes it (the front door died, or runs no worker).
	streamQueueWait = 10 * time.Second
)

// SwitchModel is the switchModel update's argument.
type SwitchModel struct {
	Model   string `json:"model"` // provider/model
	Profile string `json:"profile,omitempty"`
}

// Search attributes a reply upserts, so an operator can find every reply that failed over. The
// namespace must have them registered (the dev server does; see README for a real cluster).
var (
	saAgent          = temporal.NewSearchAttributeKeyKeyword("BatonAgent")
	saSession        = temporal.NewSearchAttributeKeyKeyword("BatonSession")
	saFinalModel     = temporal.NewSearchAttributeKeyKeyword("BatonFinalModel")
	saFailoverReason = temporal.NewSearchAttributeKeyKeyword("BatonFailoverReason")
	saAttempts       = temporal.NewSearchAttributeKeyInt64("BatonAttempts")
	saUsedFallback   = temporal.NewSearchAttributeKeyBool("BatonUsedFallback")
)

// Status is what the status query answers.
type Status struct {
	Candidate string           `json:"candidate,omitempty"`
	Profile   string           `json:"profile,omitempty"`
	Attempts  []policy.Attempt `json:"attempts"`
	WaitUntil time.Time        `json:"waitUntil,omitzero"`
}

// ReplyWorkflow walks the candidate chain for one agent reply, as the seeds describe: decide per
// candidate, write the fallback to the session before trying it, attempt one profile at a time,
// record each outcome, rotate or advance, roll back what a failed fallback wrote.
func ReplyWorkflow(ctx workflow.Context, req policy.ReplyRequest) (policy.ReplyResult, error) {
	r := &reply{req: req, transientUsed: map[string]bool{}, started: workflow.Now(ctx)}
	r.lean = workflow.GetVersion(ctx, leanHistoryChange, workflow.DefaultVersion, 1) == 1
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func() (Status, error) {
		st := r.status
		st.Attempts = append([]policy.Attempt{}, r.attempts...)
		return st, nil
	}); err != nil {
		return policy.ReplyResult{}, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, SwitchModelUpdate, r.onSwitch,
		workflow.UpdateHandlerOptions{Validator: validateSwitch}); err != nil {
		return policy.ReplyResult{}, err
	}
	if err := r.setup(ctx); err != nil {
		return policy.ReplyResult{}, err
	}
	res, err := r.run(ctx)
	if err != nil && (ctx.Err() != nil || isAbort(err)) {
		// The caller hung up or the reply was cancelled: no further candidate, no reason.
		r.observe(ctx, "aborted", false)
		return policy.ReplyResult{}, temporal.NewNonRetryableApplicationError("the reply was aborted", policy.ErrAborted, nil, r.attempts)
	}
	return res, err
}

// workerLost reports an attempt ended by baton's infrastructure: its worker stopped
// heartbeating (killed, partitioned, its server away), shut down under it, or never took it.
func workerLost(err error) bool {
	var timeoutErr *temporal.TimeoutError
	var appErr *temporal.ApplicationError
	return (errors.As(err, &timeoutErr) && (timeoutErr.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT ||
		timeoutErr.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START)) ||
		(errors.As(err, &appErr) && appErr.Type() == policy.ErrWorkerShutdown)
}

// isAbort reports whether err is the reply's cancellation, or an attempt ended because its
// caller went away.
func isAbort(err error) bool {
	var appErr *temporal.ApplicationError
	return temporal.IsCanceledError(err) || (errors.As(err, &appErr) && appErr.Type() == policy.ErrAborted)
}

// reply is one reply's state.
type reply struct {
	req           policy.ReplyRequest
	state         policy.ReplyState
	session       policy.SessionModel // as this reply last knew or wrote it
	chain         policy.Chain
	attempts      []policy.Attempt
	transientUsed map[string]bool // providers whose transient probe this reply spent
	clearStale    bool            // a heartbeat found the auto override stale
	status        Status
	pending       *SwitchModel // a user's switch, applied once the in-flight attempt ends
	started       time.Time
	lean          bool // leanHistoryChange
	// prefix is the answer a live caller already holds from attempts cut mid-stream; the next
	// attempt continues it (streaming.midStream "continue").
	prefix string
	// streamLost: the front door's queue went unpolled; attempts go to the shared queue.
	streamLost bool
	// attemptSeq numbers the attempts (their identity); workersLost counts infrastructure faults.
	attemptSeq  int
	workersLost int
}

// observe records the reply's latency and outcome (the SDK's metrics handler is replay-safe).
func (r *reply) observe(ctx workflow.Context, outcome string, usedFallback bool) {
	m := workflow.GetMetricsHandler(ctx)
	m.WithTags(map[string]string{"outcome": outcome}).Timer("baton_reply_latency").Record(workflow.Now(ctx).Sub(r.started))
	if usedFallback {
		m.Counter("baton_fallbacks_total").Inc(1)
	}
}

func validateSwitch(_ workflow.Context, s SwitchModel) error {
	ref, err := policy.ParseModelRef(s.Model)
	if err != nil {
		return err
	}
	if s.Profile != "" && policy.ProviderOfProfile(s.Profile) != ref.Provider {
		return fmt.Errorf("profile %q is not a %s profile", s.Profile, ref.Provider)
	}
	return nil
}

// onSwitch takes a user's /model: the in-flight attempt finishes first (see applySwitch).
func (r *reply) onSwitch(_ workflow.Context, s SwitchModel) error {
	r.pending = &s
	return nil
}

// applySwitch acts on a pending switch after the candidate at current failed: a later candidate
// is jumped to (the switch recorded as an attempt), anything else ends the reply with
// LiveSessionModelSwitchError so that the caller starts it again with the new selection.
func (r *reply) applySwitch(ctx workflow.Context, current int) (int, error) {
	s := *r.pending
	r.pending = nil
	ref, _ := policy.ParseModelRef(s.Model) // validated
	r.attempts = append(r.attempts, policy.Attempt{Provider: ref.Provider, Model: ref.Model, Profile: s.Profile,
		Result: policy.ResultSwitched, At: workflow.Now(ctx)})
	// The user's choice is now the session's: no fallback may write over it.
	r.session.ProviderOverride, r.session.ModelOverride, r.session.ModelOverrideSource = ref.Provider, ref.Model, policy.SourceUser
	if s.Profile != "" {
		r.session.AuthProfileOverride, r.session.AuthProfileOverrideSource = s.Profile, policy.SourceUser
	}
	jump, restart := policy.LiveSwitch(r.chain, current, ref)
	if restart {
		if workflow.GetVersion(ctx, switchRestartChange, workflow.DefaultVersion, 1) == 1 {
			// Every front door alike: the reply starts over with the user's selection, and every
			// caller's wait follows the new run.
			next := r.req
			next.Model, next.Restarts = ref.String(), r.req.Restarts+1
			return 0, workflow.NewContinueAsNewError(ctx, ReplyWorkflowName, next)
		}
		return 0, temporal.NewNonRetryableApplicationError("Live session model switch requested: "+ref.String(),
			policy.ErrLiveSessionModelSwitch, nil, s, r.attempts)
	}
	return jump, nil
}

// authAgent is whose credentials and usage stats this reply uses.
func (r *reply) authAgent() string {
	if r.state.AuthAgent != "" {
		return r.state.AuthAgent
	}
	return r.req.Agent
}

// storeWork runs one store step: a local activity in a lean reply (one marker event, no round
// trip through the server), an activity in a reply started before the lean history.
func (r *reply) storeWork(ctx workflow.Context, result any, name string, args ...any) error {
	retry := &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 5, NonRetryableErrorTypes: []string{"NoStore"}}
	if r.lean {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: time.Minute, RetryPolicy: retry})
		return workflow.ExecuteLocalActivity(lctx, name, args...).Get(ctx, result)
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: retry})
	return workflow.ExecuteActivity(actx, name, args...).Get(ctx, result)
}

func (r *reply) setup(ctx workflow.Context) error {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: time.Minute,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{"NoStore"}},
	})
	if err := workflow.ExecuteLocalActivity(lctx, LoadReplyActivity, r.req).Get(ctx, &r.state); err != nil {
		return err
	}
	if r.state.Config == nil {
		r.state.Config = policy.DefaultConfig()
	}
	r.session = r.state.Session
	cfg := r.state.Config
	now := workflow.Now(ctx)

	creq := policy.ChainRequest{Agent: r.req.Agent, Cron: r.req.Cron, Image: r.req.Image}
	if r.req.Session != "" && !r.req.Image {
		creq.Session = &r.session
	}
	if r.req.Model != "" {
		ref, err := policy.ParseModelRef(r.req.Model)
		if err != nil {
			return temporal.NewNonRetryableApplicationError("model: "+err.Error(), "BadRequest", nil)
		}
		creq.Explicit = ref
	}
	if hb := r.req.Heartbeat; hb != nil {
		own := policy.ModelRef{}
		if hb.Model != "" {
			ref, err := policy.ParseModelRef(hb.Model)
			if err != nil {
				return temporal.NewNonRetryableApplicationError("heartbeat model: "+err.Error(), "BadRequest", nil)
			}
			own = ref
		} else if policy.HeartbeatIsStale(r.session, cfg.AgentPrimary(r.req.Agent)) {
			// A heartbeat without its own model clears an auto override that no longer fits.
			r.session = policy.ClearAuto(r.session)
			r.clearStale = true
		}
		creq.Heartbeat = &own
	}
	if _, due := policy.ReprobeDue(r.session, r.state.Reprobed, now); due && creq.Cron == nil && creq.Explicit.IsZero() {
		creq.Reprobe = true
	}
	chain, err := policy.BuildChain(cfg, creq)
	if err == nil && r.req.CarriesImages && !chain.Image && policy.ImageRoute(cfg, chain) {
		// No candidate of the chain takes images: the image model chain serves the turn, under
		// its own rules (no session override read or written).
		creq.Image, creq.Session, creq.Reprobe = true, nil, false
		chain, err = policy.BuildChain(cfg, creq)
	}
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "BadRequest", nil)
	}
	r.chain = chain
	// Starters give these at start (ReplyStartOptions); a reply started without them sets them.
	if _, given := workflow.GetTypedSearchAttributes(ctx).GetKeyword(saAgent); !r.lean || !given {
		_ = workflow.UpsertTypedSearchAttributes(ctx, saAgent.ValueSet(r.req.Agent), saSession.ValueSet(r.req.Session))
	}
	return nil
}

// writesSession reports whether this reply may persist fallback overrides: a session reply on
// its model chain (image chain replies, cron jobs and heartbeats neither read nor write them).
func (r *reply) writesSession() bool {
	return r.req.Session != "" && !r.chain.Image && r.req.Cron == nil && r.req.Heartbeat == nil
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
		e := r.exhaustion(ctx)
		now := workflow.Now(ctx)
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
	blocked := false // a candidate before this one failed or was unavailable (not merely text-only)
	for i := 0; i < len(r.chain.Candidates); i++ {
		cand := r.chain.Candidates[i]
		now := workflow.Now(ctx)
		if r.req.CarriesImages && !cfg.AcceptsImages(cand.ModelRef) {
			r.attempts = append(r.attempts, policy.Attempt{Provider: cand.Provider, Model: cand.Model,
				Result: policy.ResultSkipped, Reason: policy.ReasonTextOnly, Error: policy.TextOnlySkipText(cand.ModelRef), At: now})
			r.log(ctx, policy.DecisionSkip, i, r.attempts[len(r.attempts)-1], 0, nil, "")
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
			claimed, err := r.claimProbe(ctx, cand.Provider, now)
			if err != nil {
				return policy.ReplyResult{}, true, err
			}
			// Only primary probes wait for the throttle; a transient sibling probe just sets it.
			if !claimed && !d.TransientProbe {
				d.Action = policy.ActionSkip
			}
		}
		if d.Action == policy.ActionSkip {
			r.attempts = append(r.attempts, policy.Attempt{Provider: cand.Provider, Model: cand.Model, Profile: d.Profile,
				Result: policy.ResultSkipped, Reason: d.Reason, Error: d.SkipText, At: now})
			r.log(ctx, policy.DecisionSkip, i, r.attempts[len(r.attempts)-1], len(ordered), nil, "")
			blocked = true
			continue
		}

		// A candidate reached only past text-only ones is not a fallback from a failure: the
		// session keeps its model for the next (text) turn.
		before, wrote := r.session, false
		if i > 0 && blocked && r.writesSession() && cand.ModelRef != r.chain.Requested && policy.CanWriteFallback(r.session) {
			next := policy.FallbackWrite(r.session, cand.ModelRef, r.chain.Requested, d.Profile, now)
			ok, err := r.writeFallback(ctx, before, next, now)
			if err != nil {
				return policy.ReplyResult{}, true, err
			}
			if ok {
				r.session, wrote = next, true
			}
		}

		res, done, err := r.tryCandidate(ctx, i, cand, ordered, d, userPin)
		if done {
			if err != nil && wrote {
				r.rollback(ctx, before)
			}
			return res, true, err
		}
		if wrote {
			r.rollback(ctx, before)
		}
		blocked = true
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

// tryCandidate tries the candidate's profiles in order (rotating as policy says). done reports
// that the reply ends here: with a result, or with a stop error.
func (r *reply) tryCandidate(ctx workflow.Context, i int, cand policy.Candidate, ordered []policy.OrderedProfile,
	d policy.CandidateDecision, userPin bool) (policy.ReplyResult, bool, error) {
	probe := d.Action == policy.ActionProbe
	tried := map[string]bool{}
	rotations := map[policy.Reason]int{}
	profile := d.Profile
	for profile != "" {
		tried[profile] = true
		r.status.Candidate, r.status.Profile = cand.String(), profile
		var onSuccess *policy.TurnEnd
		if r.lean {
			onSuccess, _ = r.turnEnd(cand, profile, r.attempts)
		}
		out, retries, err := r.call(ctx, cand, profile, onSuccess)
		if err != nil {
			return policy.ReplyResult{}, true, err
		}
		now := workflow.Now(ctx)
		if out.Recorded != nil {
			r.applyStats(profile, *out.Recorded)
		} else if err := r.record(ctx, cand, profile, out, now); err != nil {
			return policy.ReplyResult{}, true, err
		}
		p, rt := probe, retries
		a := policy.Attempt{Provider: cand.Provider, Model: cand.Model, Profile: profile, Probe: &p, Retries: &rt,
			Continues: r.prefix != "", At: now}
		if out.OK {
			a.Result = policy.ResultSucceeded
			r.attempts = append(r.attempts, a)
			res, err := r.succeed(ctx, i, cand, profile, out)
			return res, true, err
		}
		a.Result, a.Reason, a.Status, a.Code, a.Error = policy.ResultFailed, out.Reason, out.Status, out.Code, out.Error
		r.attempts = append(r.attempts, a)
		next := ""
		for _, op := range ordered {
			if op.Available && !tried[op.ID] {
				next = op.ID
				break
			}
		}
		step, wait := policy.NextStep(policy.FailureState{Reason: out.Reason, Rotations: rotations, NextProfile: next,
			UserPinned: userPin, Probe: probe, FormatRetryUsed: policy.UsedFormatRetry(r.attempts[:len(r.attempts)-1]),
			HasNextCandidate: i+1 < len(r.chain.Candidates)}, r.state.Config.Cooldowns)
		r.log(ctx, policy.DecisionFailed, i, a, len(ordered), nil, step)
		switch policy.MidStreamAction(r.state.Config.Streaming.MidStream, out.Delivered, out.Partial, out.ToolCallsDelivered) {
		case policy.AfterFaultStop:
			return policy.ReplyResult{}, true, temporal.NewNonRetryableApplicationError(
				"the stream failed after part of the answer reached the caller: "+out.Error, policy.ErrStreamInterrupted, nil, r.attempts)
		case policy.AfterFaultContinue:
			r.prefix += out.Partial
		}
		if probe && d.TransientProbe && !policy.KeepsTransientSlot(out.Reason) {
			r.transientUsed[cand.Provider] = true
		}
		// A lean reply postdates the skip cache: it asks no version of it.
		if policy.MarksSkipCache(i, out.Reason, r.req.Session) && r.state.SkipTTL > 0 &&
			(r.lean || workflow.GetVersion(ctx, "skip-cache", workflow.DefaultVersion, 1) == 1) {
			mark := policy.SkipMark{Model: cand.String(), Profile: profile, Reason: out.Reason, Until: now.Add(r.state.SkipTTL)}
			if err := r.storeWork(ctx, nil, MarkSkipActivity, policy.SkipMarkRequest{Session: r.req.Session, Mark: mark, At: now}); err != nil {
				return policy.ReplyResult{}, true, err
			}
		}
		if r.pending != nil {
			return policy.ReplyResult{}, false, nil // the user switched: walk decides where to go
		}
		switch step {
		case policy.StepStop:
			return policy.ReplyResult{}, true, r.stop(out)
		case policy.StepRotate:
			rotations[out.Reason]++
			if wait > 0 {
				if err := workflow.Sleep(ctx, wait); err != nil {
					return policy.ReplyResult{}, true, err
				}
			}
			profile = next
		default:
			profile = ""
		}
	}
	return policy.ReplyResult{}, false, nil
}

// call makes one attempt, with the same-candidate retries that stand in for SDK retries:
// durable timers between them, only the last failure counts against the profile.
func (r *reply) call(ctx workflow.Context, cand policy.Candidate, profile string, onSuccess *policy.TurnEnd) (policy.AttemptOutcome, int, error) {
	firstToken := r.state.Config.FirstTokenTimeout(cand.ModelRef, r.state.FirstTokenTimeout)
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    attemptHeartbeat, // a worker that stops heartbeating is gone
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
	key := ""
	for retries := 0; ; retries++ {
		if key == "" {
			r.attemptSeq++
			run := workflow.GetInfo(ctx).WorkflowExecution
			key = fmt.Sprintf("%s/%s/%d", run.ID, run.RunID, r.attemptSeq)
		}
		live := r.req.StreamQueue != "" && !r.streamLost
		if live {
			opts.TaskQueue, opts.ScheduleToStartTimeout = r.req.StreamQueue, streamQueueWait
		} else {
			opts.TaskQueue, opts.ScheduleToStartTimeout = "", 0
		}
		var out policy.AttemptOutcome
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), AttemptActivity, policy.AttemptRequest{
			Agent: r.authAgent(), Provider: cand.Provider, Model: cand.Model, Profile: profile,
			Message: r.req.Message, Turn: r.req.Turn, TurnRef: r.req.TurnRef, StreamKey: r.req.StreamKey, Prefill: r.prefix, Key: key,
			Now: workflow.Now(ctx), FirstTokenTimeout: firstToken, IdleTimeout: r.state.IdleTimeout, ResponseTimeout: r.state.ResponseTimeout,
			Record: r.lean, Retries: retries, RetryMaxWait: r.state.RetryMaxWait, OnSuccess: onSuccess,
		}).Get(ctx, &out)
		var timeoutErr *temporal.TimeoutError
		switch {
		case live && errors.As(err, &timeoutErr) && timeoutErr.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
			// The front door's worker is gone: the shared queue takes the same attempt, no blame.
			r.streamLost = true
			retries--
			continue
		case workerLost(err) && workflow.GetVersion(ctx, infraRetryChange, workflow.DefaultVersion, 1) == 1:
			// baton's own fault: the same attempt again (same identity: what it kept is not bought
			// again), no usage, no session write, no notice, no fallback.
			r.workersLost++
			limit := r.state.InfraRetries
			if limit <= 0 {
				limit = policy.DefaultInfraRetries
			}
			if r.workersLost > limit {
				return out, retries, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"the workers running this reply were lost %d times (%v): baton's infrastructure failed, not the models", r.workersLost, err),
					policy.ErrWorkersLost, nil, r.attempts)
			}
			retries--
			continue
		case errors.As(err, &timeoutErr):
			// Replies started before infra-retry: a worker that stopped heartbeating counted as a stall.
			out = policy.AttemptOutcome{Reason: policy.ReasonTimeout, Error: "the attempt stopped heartbeating", StreamFault: "stall"}
		case err != nil:
			return out, retries, err
		}
		key = "" // the next call is a new attempt
		if out.OK || r.pending != nil {
			return out, retries, nil // a user's switch waits for no more retries
		}
		if r.lean && !policy.WillRetry(out, retries, r.state.RetryMaxWait) {
			return out, retries, nil // no jitter is drawn (nor recorded) for a retry not made
		}
		jitter := 0.0
		if !r.req.NoJitter {
			_ = workflow.SideEffect(ctx, func(workflow.Context) any { return randomFraction() }).Get(&jitter)
		}
		retry, wait := policy.SameCandidateRetry(policy.RetryState{Status: out.Status, Net: policy.NetErrorKind(out.Net),
			StreamFault: out.StreamFault != "", Hint: out.Hint, RetriesSoFar: retries, MaxWait: r.state.RetryMaxWait, Jitter: jitter})
		if !retry {
			return out, retries, nil
		}
		if wait > 0 {
			r.status.WaitUntil = workflow.Now(ctx).Add(wait)
			if err := workflow.Sleep(ctx, wait); err != nil {
				return out, retries, err
			}
			r.status.WaitUntil = time.Time{}
		}
	}
}

func (r *reply) record(ctx workflow.Context, cand policy.Candidate, profile string, out policy.AttemptOutcome, now time.Time) error {
	var stats policy.ProfileStats
	err := r.storeWork(ctx, &stats, RecordOutcomeActivity, policy.OutcomeRecord{
		Agent: r.authAgent(), Profile: profile, Provider: cand.Provider, Model: cand.Model,
		OK: out.OK, Reason: out.Reason, Hint: out.Hint, At: now,
	})
	if err != nil {
		return err
	}
	r.applyStats(profile, stats)
	return nil
}

// applyStats keeps the reply's view of a profile's usage stats as recorded.
func (r *reply) applyStats(profile string, stats policy.ProfileStats) {
	for k := range r.state.Profiles {
		if r.state.Profiles[k].ID == profile {
			r.state.Profiles[k].Stats = stats
		}
	}
}

func (r *reply) claimProbe(ctx workflow.Context, provider string, now time.Time) (bool, error) {
	var claimed bool
	err := r.storeWork(ctx, &claimed, ClaimProbeActivity, r.authAgent(), provider, now)
	return claimed, err
}

func (r *reply) writeFallback(ctx workflow.Context, expected, next policy.SessionModel, now time.Time) (bool, error) {
	var ok bool
	err := r.storeWork(ctx, &ok, WriteFallbackActivity, policy.SessionWrite{
		Session: r.req.Session, Agent: r.req.Agent, Expected: expected, Next: next, At: now,
	})
	return ok, err
}

// rollback restores what this reply's fallback wrote; a failure to roll back is logged, not fatal.
func (r *reply) rollback(ctx workflow.Context, before policy.SessionModel) {
	if ctx.Err() != nil {
		// An aborted reply still undoes what it wrote: on a context its cancellation leaves alone.
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	written := r.session
	err := r.storeWork(ctx, nil, RollbackFallbackActivity, policy.SessionRollback{
		Session: r.req.Session, Before: before, Written: written, At: workflow.Now(ctx),
	})
	if err != nil {
		workflow.GetLogger(ctx).Warn("fallback rollback failed", "session", r.req.Session, "error", err)
		return
	}
	r.session = policy.NarrowRollback(r.session, before, written)
}

func (r *reply) succeed(ctx workflow.Context, i int, cand policy.Candidate, profile string, out policy.AttemptOutcome) (policy.ReplyResult, error) {
	var previous *policy.Attempt
	for k := len(r.attempts) - 2; k >= 0; k-- {
		if r.attempts[k].Result == policy.ResultFailed {
			previous = &r.attempts[k]
			break
		}
	}
	r.log(ctx, policy.DecisionSucceeded, i, r.attempts[len(r.attempts)-1], 0, previous, "")

	end, notices := r.turnEnd(cand, profile, r.attempts)
	if end != nil && !out.TurnEnded {
		end.At = workflow.Now(ctx)
		if err := r.storeWork(ctx, nil, EndTurnActivity, *end); err != nil {
			return policy.ReplyResult{}, err
		}
	}
	usedFallback := cand.ModelRef != r.chain.Requested
	reason := ""
	if usedFallback {
		reason = string(policy.LastReason(r.attempts))
	}
	r.observe(ctx, "completed", usedFallback)
	// A lean reply answered at its first try spends no event on attributes: they exist to find
	// the replies that did not.
	if !r.lean || usedFallback || len(r.attempts) > 1 {
		_ = workflow.UpsertTypedSearchAttributes(ctx, saFinalModel.ValueSet(cand.String()), saFailoverReason.ValueSet(reason),
			saAttempts.ValueSet(int64(len(r.attempts))), saUsedFallback.ValueSet(usedFallback))
	}
	return policy.ReplyResult{Text: r.prefix + out.Text, ToolCalls: out.ToolCalls, Reasoning: out.Reasoning, FinishReason: out.FinishReason,
		Input: out.Input, Output: out.Output, CachedInput: out.CachedInput,
		Served:   policy.Served{Provider: cand.Provider, Model: cand.Model, Profile: profile},
		Attempts: r.attempts, Notices: notices}, nil
}

// turnEnd is what a success of cand with profile writes on the session (nil: a reply that keeps
// no session), and the notices it shows. It depends only on the failures in attempts, so a lean
// reply computes it before the attempt and hands it over (AttemptRequest.OnSuccess).
func (r *reply) turnEnd(cand policy.Candidate, profile string, attempts []policy.Attempt) (*policy.TurnEnd, []string) {
	// Notices: a session reply compares with and keeps its notice state; a heartbeat compares
	// but keeps none; a cron job compares with none.
	prev := r.state.Notice
	if r.req.Cron != nil || r.req.Session == "" {
		prev = policy.NoticeState{}
	}
	notices, next := policy.Notices(prev, r.chain.Requested, cand.ModelRef, attempts)
	if notices == nil {
		notices = []string{}
	}
	if r.req.Session == "" || r.chain.Image {
		return nil, notices
	}
	end := &policy.TurnEnd{Session: r.req.Session, Agent: r.req.Agent, Pin: true, Provider: cand.Provider, Profile: profile,
		ClearAuto: r.clearStale}
	if r.req.Cron == nil && r.req.Heartbeat == nil {
		end.Notice = &next
		if cand.ModelRef != r.chain.Requested {
			end.FallbackReason = string(policy.LastReason(attempts))
		}
	}
	if r.chain.Source == policy.SelectReprobe {
		end.Reprobed = true
		end.ClearAuto = end.ClearAuto || cand.ModelRef == r.chain.Requested
	}
	if r.chain.Source == policy.SelectAutoOverride && cand.ModelRef == r.chain.Requested {
		end.ClearAuto = true // the chain settled back on the origin
	}
	return end, notices
}

// stop ends the reply on a failure that must not fail over.
func (r *reply) stop(out policy.AttemptOutcome) error {
	kind := policy.ErrFormat
	if out.Reason == policy.ReasonContextOverflow {
		kind = policy.ErrContextOverflow
	}
	return temporal.NewNonRetryableApplicationError(out.Error, kind, nil, r.attempts)
}

// exhaustion summarises every attempt and when the soonest candidate may be back.
func (r *reply) exhaustion(ctx workflow.Context) policy.Exhaustion {
	now := workflow.Now(ctx)
	var soonest time.Time
	for _, cand := range r.chain.Candidates {
		var stats []policy.ProfileStats
		for _, p := range r.state.Profiles {
			if policy.NormalizeProvider(p.Provider) == cand.Provider {
				stats = append(stats, p.Stats)
			}
		}
		soonest = policy.EarliestOf(soonest, policy.SoonestExpiry(stats, cand.Provider, cand.Model, now))
	}
	return policy.Exhausted(r.attempts, r.chain.Image, soonest)
}

// fail ends the reply with the exhaustion as a non-retryable FallbackSummaryError.
func (r *reply) fail(ctx workflow.Context, e policy.Exhaustion) error {
	r.observe(ctx, "failed", false)
	_ = workflow.UpsertTypedSearchAttributes(ctx, saFailoverReason.ValueSet(string(e.Reason)),
		saAttempts.ValueSet(int64(len(r.attempts))), saUsedFallback.ValueSet(false))
	return temporal.NewNonRetryableApplicationError(e.Message, policy.ErrFallbackSummary, nil, e)
}

// log writes one model_fallback_decision record through the replay-safe logger.
func (r *reply) log(ctx workflow.Context, decision string, i int, a policy.Attempt, profiles int, previous *policy.Attempt, step string) {
	rec := policy.NewDecisionRecord(policy.DecisionInput{Decision: decision, Chain: r.chain, Index: i,
		AttemptNo: len(r.attempts), Attempt: a, Previous: previous, ProfileCount: profiles, Step: step})
	workflow.GetLogger(ctx).Info(rec.ConsoleMessage(), "event", rec.Event, "decision", rec.Decision,
		"requestedProvider", rec.RequestedProvider, "requestedModel", rec.RequestedModel,
		"candidateProvider", rec.CandidateProvider, "candidateModel", rec.CandidateModel, "profile", rec.Profile,
		"attempt", rec.Attempt, "total", rec.Total, "reason", rec.Reason, "status", rec.Status,
		"nextCandidateProvider", rec.NextCandidateProvider, "nextCandidateModel", rec.NextCandidateModel,
		"fallbackStepType", rec.FallbackStepType, "fallbackStepFromModel", rec.FallbackStepFromModel,
		"fallbackStepToModel", rec.FallbackStepToModel, "fallbackStepFromFailureReason", rec.FallbackStepFromFailureReason,
		"fallbackStepChainPosition", rec.FallbackStepChainPosition, "fallbackStepFinalOutcome", rec.FallbackStepFinalOutcome)
}

// randomFraction runs only inside SideEffect, whose result the history records.
func randomFraction() float64 { return rand.Float64() }
