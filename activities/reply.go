package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
)

// Limits are the worker's settings that bound a reply.
type Limits struct {
	RetryMaxWait      time.Duration
	SkipTTL           time.Duration
	FirstTokenTimeout time.Duration
	IdleTimeout       time.Duration
	ResponseTimeout   time.Duration
	InfraRetries      int
	// ReasoningFirstTokenTimeout is the first-token default of a request that asks for reasoning
	// or a reasoning model; AttemptTimeout bounds a whole attempt (0: no bound).
	ReasoningFirstTokenTimeout time.Duration
	AttemptTimeout             time.Duration
}

// DefaultLimits are DESIGN.md's defaults.
func DefaultLimits() Limits {
	return Limits{RetryMaxWait: policy.DefaultRetryMaxWait, SkipTTL: policy.DefaultSkipTTL,
		FirstTokenTimeout: provider.DefaultFirstTokenTimeout, IdleTimeout: provider.DefaultIdleTimeout, ResponseTimeout: provider.DefaultResponseTimeout,
		ReasoningFirstTokenTimeout: provider.DefaultReasoningFirstTokenTimeout}
}

func (a *Activities) limits() Limits {
	if a.Limits == (Limits{}) {
		return DefaultLimits()
	}
	return a.Limits
}

func (a *Activities) store() (*store.Store, error) {
	if a.Store == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no store (BATON_STORE)", "NoStore", nil)
	}
	return a.Store, nil
}

// LoadReply reads everything a reply decides on: config, session, profiles with their usage
// stats, order overrides. Never a secret.
func (a *Activities) LoadReply(ctx context.Context, req workflows.ReplyRequest) (policy.ReplyState, error) {
	st, err := a.store()
	if err != nil {
		return policy.ReplyState{}, err
	}
	lim := a.limits()
	state := policy.ReplyState{Config: a.Config.Get().ForAgent(req.Agent), RetryMaxWait: lim.RetryMaxWait, SkipTTL: lim.SkipTTL,
		FirstTokenTimeout: lim.FirstTokenTimeout, IdleTimeout: lim.IdleTimeout, ResponseTimeout: lim.ResponseTimeout,
		ReasoningFirstTokenTimeout: lim.ReasoningFirstTokenTimeout, AttemptTimeout: lim.AttemptTimeout,
		InfraRetries: lim.InfraRetries}
	if req.Session != "" {
		sess, err := st.GetSession(ctx, req.Session)
		if err != nil {
			return state, err
		}
		state.Session, state.Notice, state.Reprobed, state.SkipMarks = sess.Model, sess.Notice, sess.LastReprobeAt, sess.SkipMarks
	}
	state.AuthAgent = req.Agent
	profiles, err := st.ListProfiles(ctx, req.Agent)
	if err != nil {
		return state, err
	}
	if state.AuthAgent = policy.AuthAgent(req.Agent, len(profiles)); state.AuthAgent != req.Agent {
		if profiles, err = st.ListProfiles(ctx, state.AuthAgent); err != nil {
			return state, err
		}
	}
	for _, p := range profiles {
		state.Profiles = append(state.Profiles, p.StoredProfile)
	}
	if state.Orders, err = st.Orders(ctx, state.AuthAgent); err != nil {
		return state, err
	}
	state.Budgets, err = a.budgets(ctx, st, req)
	return state, err
}

// budgets are the daily budgets over the reply (its cron job's, then its agent's) with what was
// spent against them today.
func (a *Activities) budgets(ctx context.Context, st *store.Store, req workflows.ReplyRequest) ([]policy.BudgetCheck, error) {
	now := a.now()
	var out []policy.BudgetCheck
	check := func(scope, agent, job string, b *policy.Budget) error {
		if b == nil {
			return nil
		}
		spent, err := st.SpentOn(ctx, agent, job, now)
		if err != nil {
			return err
		}
		out = append(out, policy.BudgetCheck{Scope: scope, PerDay: b.PerDay, Spent: spent.Cost, Day: policy.DayOf(now)})
		return nil
	}
	if req.Job != "" {
		if err := check("cron job "+req.Job, req.Agent, req.Job, req.JobBudget); err != nil {
			return nil, err
		}
	}
	if ag, ok := a.Config.Get().Agent(req.Agent); ok {
		if err := check("agent "+req.Agent, req.Agent, "", ag.Budget); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Attempt makes one call with one profile. It heartbeats per chunk, so a stalled stream ends as a
// heartbeat timeout too, and returns a classified outcome: a failure is data, not an error, so the
// history keeps the reason every decision was made on.
func (a *Activities) Attempt(ctx context.Context, req workflows.AttemptRequest) (out policy.AttemptOutcome, err error) {
	defer func() { traceAttempt(ctx, req, out, err) }()
	// An attempt run again after a lost worker returns what its first run bought.
	kept, final, done := a.kept(ctx, req)
	if final {
		return kept, nil
	}
	out, err = a.attempt(ctx, req, done)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // cancelled: the aborted call changes no usage stats
	}
	if err != nil && workerStopping(ctx) {
		// Not the provider's doing: the reply runs the attempt again elsewhere, without blame.
		err = temporal.NewNonRetryableApplicationError("the worker stopped during the attempt", policy.ErrWorkerShutdown, err)
	}
	if err != nil {
		return out, err
	}
	// Kept before reporting (a report lost with its worker or server loses no answer), with the
	// call's spend in the same transaction.
	a.keep(ctx, req, out, a.spend(req, &out))
	if out.OK {
		a.handOver(req, out)
	}
	if policy.WillRetry(out, req.Retries, req.RetryMaxWait) || out.Mismatch || out.PrefillRejected {
		// Retried in place, or (a continuation's mismatch, a refused prefill) not the profile's
		// doing: nothing is recorded against it.
		a.awaitServer(ctx)
		return out, nil
	}
	// The final outcome of this route: record it here, where the answer is, instead of in a step
	// of its own, and end the turn of a success, in one transaction with the outcome kept again
	// with what it recorded (so that a run again records nothing twice). A store failure leaves
	// both to the reply, and loses no answer.
	if recorded, err := a.record(ctx, req, out); err != nil {
		a.logger().Warn("recording the outcome failed; the reply records it", zap.String("profile", req.Profile), zap.Error(err))
	} else {
		out = recorded
	}
	a.awaitServer(ctx)
	return out, nil
}

// record applies a route's final outcome to its profile's usage stats and ends the turn of a
// success, all or nothing, and returns the outcome saying so.
func (a *Activities) record(ctx context.Context, req workflows.AttemptRequest, out policy.AttemptOutcome) (policy.AttemptOutcome, error) {
	st, err := a.store()
	if err != nil {
		return out, err
	}
	at := a.now()
	err = st.Together(ctx, func(ctx context.Context) error {
		stats, err := a.RecordOutcome(ctx, workflows.OutcomeRecord{Agent: req.Agent, Profile: req.Profile, Provider: req.Provider,
			Model: req.Model, OK: out.OK, Reason: out.Reason, Hint: out.Hint, At: at})
		if err != nil {
			return err
		}
		out.Recorded = &stats
		if out.OK && req.OnSuccess != nil {
			end := *req.OnSuccess
			end.At = at
			if err := a.EndTurn(ctx, end); err != nil {
				return fmt.Errorf("ending the turn of session %s: %w", end.Session, err)
			}
			out.TurnEnded = true
		}
		if req.Key == "" {
			return nil
		}
		data, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return st.PutAttemptOutcome(ctx, req.Key, data, true)
	})
	return out, err
}

// handOver gives the caller its whole answer as soon as it is kept (answer first): the reply's
// bookkeeping (usage stats, the end of the turn, its report and completion) follows without the
// caller waiting on it, and a run again after a lost worker returns the kept answer without
// calling the provider. The answer is the reply's as the workflow makes it on a success: the text
// the caller held before, this attempt's, and the cut attempts' billing.
func (a *Activities) handOver(req workflows.AttemptRequest, out policy.AttemptOutcome) {
	stream, ok := a.Streams.Get(req.StreamKey)
	if !ok {
		return
	}
	calls, reasoning, err := provider.DecodeAnswerContent(out.ToolCalls, out.Reasoning)
	if err != nil {
		return // the caller gets it from the reply's result
	}
	model := req.Provider + "/" + req.Model
	stream.Send(live.Delta{Model: model, Final: &live.Final{Model: model, Attempts: req.Before + 1, FallbackReason: string(req.FallbackReason),
		Answer: provider.Answer{Text: req.Prefill + out.Text, ToolCalls: calls, Reasoning: reasoning, FinishReason: out.FinishReason,
			Usage: provider.Usage{Input: out.Input + req.HeldBilledInput, Output: out.Output + req.HeldBilledOutput,
				CachedInput: out.CachedInput, Reasoning: out.ReasoningOutput}}}})
}

// awaitServer holds a finished attempt until its server answers, for up to the heartbeat
// timeout: the SDK gives a report 10 s, and a server that is away longer would lose it (the
// kept outcome makes a run again free, but one report is cheaper than a timeout and a run again).
// While the client's connection is open (ServerUp), it reports at once.
func (a *Activities) awaitServer(ctx context.Context) {
	if a.ServerUp != nil && a.ServerUp() {
		return
	}
	c := activity.GetClient(ctx)
	if c == nil {
		return
	}
	deadline := time.Now().Add(activity.GetInfo(ctx).HeartbeatTimeout)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.CheckHealth(hctx, &client.CheckHealthRequest{})
		cancel()
		if err == nil || ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return
		}
		time.Sleep(wait)
	}
}

// kept returns what an earlier run of this attempt kept: its outcome (final), or the text its
// stream had reached (a checkpoint), which this run continues instead of buying again.
func (a *Activities) kept(ctx context.Context, req workflows.AttemptRequest) (out policy.AttemptOutcome, final bool, done string) {
	if req.Key == "" || a.Store == nil {
		return out, false, ""
	}
	data, final, err := a.Store.GetAttemptOutcome(ctx, req.Key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			a.logger().Warn("reading a kept attempt outcome failed", zap.String("attempt", req.Key), zap.Error(err))
		}
		return out, false, ""
	}
	if err := json.Unmarshal(data, &out); err != nil {
		a.logger().Warn("a kept attempt outcome does not decode", zap.String("attempt", req.Key), zap.Error(err))
		return policy.AttemptOutcome{}, false, ""
	}
	if final {
		a.logger().Info("attempt run again: returning the outcome its first run kept", zap.String("attempt", req.Key))
		return out, true, ""
	}
	return policy.AttemptOutcome{}, false, out.Partial
}

// keep stores an attempt's outcome under its identity, with its spend (nil: none) in the same
// transaction; a store failure is logged, not fatal. A spend that cannot be written loses a
// figure, never the kept outcome: that is then kept alone.
func (a *Activities) keep(ctx context.Context, req workflows.AttemptRequest, out policy.AttemptOutcome, spend *store.SpendRow) {
	if req.Key == "" || a.Store == nil {
		return
	}
	data, err := json.Marshal(out)
	if err == nil && spend != nil {
		err = a.Store.Together(ctx, func(ctx context.Context) error {
			if err := a.Store.RecordSpend(ctx, *spend); err != nil {
				return err
			}
			return a.Store.PutAttemptOutcome(ctx, req.Key, data, true)
		})
		if err == nil {
			return
		}
		a.logger().Warn("recording the spend with the outcome failed; keeping the outcome alone", zap.String("attempt", req.Key), zap.Error(err))
	}
	if err == nil {
		err = a.Store.PutAttemptOutcome(ctx, req.Key, data, true)
	}
	if err != nil {
		a.logger().Warn("keeping the attempt outcome failed", zap.String("attempt", req.Key), zap.Error(err))
	}
}

// workerStopping reports whether the attempt's worker is shutting down.
func workerStopping(ctx context.Context) bool {
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return true
	default:
		return false
	}
}

// checkpointEvery bounds the store writes of a growing answer.
const checkpointEvery = 2 * time.Second

func (a *Activities) attempt(ctx context.Context, req workflows.AttemptRequest, done string) (policy.AttemptOutcome, error) {
	st, err := a.store()
	if err != nil {
		return policy.AttemptOutcome{}, err
	}
	cred, err := st.Secret(ctx, req.Agent, req.Profile)
	if errors.Is(err, store.ErrNotFound) {
		return policy.AttemptOutcome{Reason: policy.ReasonAuth, Error: fmt.Sprintf("profile %s is not in the store", req.Profile)}, nil
	}
	if err != nil {
		return policy.AttemptOutcome{}, err
	}
	turn, err := a.turnOf(ctx, st, req)
	if err != nil {
		return policy.AttemptOutcome{}, err
	}
	cfg := a.Config.Get()
	var chunks atomic.Int64
	stopBeat := heartbeat(ctx, &chunks)
	defer stopBeat()
	// A live caller (this process is its front door) gets each delta as the provider sends it,
	// and its going away ends the call at once.
	stream, _ := a.Streams.Get(req.StreamKey)
	// done is what an earlier run of this attempt streamed before its worker was lost: this run
	// continues it, and keeps checkpoints of its own as the answer grows. What the caller holds is
	// continued as this model can be asked to, and its answer checked against it before any of it
	// goes out (policy/continuation.go).
	var jr *journal
	if req.LogKey != "" {
		var logged string
		if jr, logged, err = openJournal(ctx, st, req.LogKey, stream, a.logger()); err != nil {
			return policy.AttemptOutcome{}, err
		}
		defer jr.close()
		// What an earlier run of this attempt logged reached the caller, checkpointed or not.
		if rest, ok := strings.CutPrefix(logged, req.Prefill); ok && len(rest) > len(done) {
			done = rest
		}
	}
	held := req.Prefill + done
	strategy := cmp.Or(req.Continuation, cfg.Continuation(policy.ModelRef{Provider: req.Provider, Model: req.Model}))
	given := policy.ContinuationGiven(strategy, held)
	sink := &deltaSink{stream: stream, journal: jr, model: req.Provider + "/" + req.Model, last: time.Now()}
	if held != "" {
		sink.check = policy.NewContinuationCheck(held, given)
	}
	if req.Key != "" {
		sink.checkpoint = func(text string) {
			data, _ := json.Marshal(policy.AttemptOutcome{Partial: done + text}) // plain strings: cannot fail
			if err := st.PutAttemptOutcome(ctx, req.Key, data, false); err != nil {
				a.logger().Warn("checkpointing the answer failed", zap.String("attempt", req.Key), zap.Error(err))
			}
		}
	}
	// A continuation found to be a different answer is not bought to its end.
	ctx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	sink.diverged = cancelCall
	if stream != nil {
		defer context.AfterFunc(stream.Context(), cancelCall)()
	}
	call := CallTo(cfg, policy.ModelRef{Provider: req.Provider, Model: req.Model}, cred)
	call.Turn = turn
	call.FirstTokenTimeout, call.IdleTimeout, call.ResponseTimeout = req.FirstTokenTimeout, req.IdleTimeout, req.ResponseTimeout
	call.AttemptTimeout, call.MinTokensPerSecond, call.ThroughputGrace = req.AttemptTimeout, req.MinTokensPerSecond, req.ThroughputGrace
	call.OnChunk = func() { chunks.Add(1) }
	call.OnDelta = sink.send
	call.Prefill, call.Continuation, call.PrefillPrefix = given, strategy, policy.PrefixFlavour(req.Provider)
	call.HTTPClient = a.HTTPClient
	call.Now = func() time.Time { return req.Now }
	resp, err := provider.Complete(ctx, call)
	if err != nil && stream != nil && stream.Context().Err() != nil {
		return policy.AttemptOutcome{}, temporal.NewNonRetryableApplicationError("the caller went away", policy.ErrAborted, nil)
	}
	if sink.mismatched() || (err == nil && sink.check != nil && sink.check.End() != policy.ContinuationMatches) {
		// Not a fault of the model's, and nothing of it reached the caller: the reply ends.
		a.count(req, "mismatched", policy.ReasonNone)
		return policy.AttemptOutcome{Mismatch: true, Error: fmt.Sprintf("%s/%s answered something else than the %d characters the caller holds (continuation: %s)",
			req.Provider, req.Model, len(held), strategy)}, nil
	}
	var pe *provider.Error
	switch {
	case errors.As(err, &pe) && given != "" && policy.IsPrefillRejection(pe.Status, cmp.Or(pe.Message, pe.BodyPreview)):
		// A capability, not a fault: no profile is blamed; the reply asks again with restart.
		return policy.AttemptOutcome{PrefillRejected: true, Status: pe.Status, Error: cmp.Or(pe.Message, pe.BodyPreview)}, nil
	case errors.As(err, &pe):
		out := policy.AttemptOutcome{Reason: ReasonOf(req.Provider, pe), Status: pe.Status, Code: pe.Code,
			Error: pe.Message, Hint: HintOf(pe, req.Now), StreamFault: pe.Stream, Net: pe.Net,
			Partial: sink.sent.String(), Delivered: sink.delivered, ToolCallsDelivered: sink.toolCalls}
		if out.Error == "" {
			out.Error = pe.BodyPreview
		}
		if out.Delivered {
			// The provider bills the cut stream's output too (estimated: about 4 characters a token).
			out.BilledOutput = int64((utf8.RuneCountInString(out.Partial) + 3) / 4)
		}
		a.count(req, "failed", out.Reason)
		a.logger().Info("attempt failed", zap.String("provider", req.Provider), zap.String("model", req.Model),
			zap.String("profile", req.Profile), zap.String("reason", out.Reason.String()), zap.Int("status", out.Status))
		return out, nil
	case err != nil:
		// Not the provider's answer (a missing base URL, an unsupported API): the chain goes on,
		// the profile is not blamed.
		a.count(req, "failed", policy.ReasonNone)
		return policy.AttemptOutcome{Error: err.Error()}, nil
	}
	a.count(req, "succeeded", policy.ReasonNone)
	if resp.Refreshed != nil {
		cred.Access, cred.Refresh, cred.Expires = resp.Refreshed.Access, resp.Refreshed.Refresh, resp.Refreshed.Expires
		if err := st.PutCredential(ctx, req.Agent, cred); err != nil {
			a.logger().Warn("storing a refreshed token failed", zap.String("profile", req.Profile), zap.Error(err))
		}
	}
	if held != "" {
		rest, _ := policy.ContinuationOf(held, given, resp.Answer.Text) // matches: checked above
		resp.Answer.Text = done + rest
	}
	return succeeded(resp.Answer)
}

// RecordOutcome applies an outcome to the profile's usage stats in one transaction.
func (a *Activities) RecordOutcome(ctx context.Context, r workflows.OutcomeRecord) (policy.ProfileStats, error) {
	st, err := a.store()
	if err != nil {
		return policy.ProfileStats{}, err
	}
	cd := a.Config.Get().Cooldowns
	stats, err := st.RecordOutcome(ctx, r.Agent, r.Profile, func(s policy.ProfileStats) policy.ProfileStats {
		if r.OK {
			return policy.RecordSuccess(s, r.Model, r.At)
		}
		return policy.RecordFailure(s, policy.Outcome{Reason: r.Reason, Model: r.Model, Provider: r.Provider, Hint: r.Hint}, cd, r.At)
	})
	if err == nil && r.OK {
		err = st.SetLastGood(ctx, r.Agent, r.Provider, r.Profile)
	}
	if err == nil && !r.OK && a.Metrics != nil {
		until := stats.CooldownUntil
		if stats.DisabledUntil.After(until) {
			until = stats.DisabledUntil
		}
		if until.After(r.At) {
			a.Metrics.Observe("baton_cooldown_seconds", map[string]string{"provider": r.Provider, "reason": string(r.Reason)}, until.Sub(r.At).Seconds())
		}
	}
	return stats, err
}

// ClaimProbe takes the provider's probe slot (once per provider per 30 s, across replies).
func (a *Activities) ClaimProbe(ctx context.Context, c workflows.ProbeClaim) (bool, error) {
	st, err := a.store()
	if err != nil {
		return false, err
	}
	return st.TryProbe(ctx, c.Agent, c.Provider, c.At)
}

// WriteFallback writes the fallback override before the fallback is tried, only if the session
// still holds what the reply loaded. false: the session moved (a user chose meanwhile).
func (a *Activities) WriteFallback(ctx context.Context, w workflows.SessionWrite) (bool, error) {
	st, err := a.store()
	if err != nil {
		return false, err
	}
	_, err = st.CompareAndSetModel(ctx, w.Session, w.Agent, w.Expected, w.Next, w.At)
	if errors.Is(err, store.ErrSessionMoved) {
		return false, nil
	}
	return err == nil, err
}

// RollbackFallback restores what a failed fallback wrote, where it still holds what it wrote.
func (a *Activities) RollbackFallback(ctx context.Context, r workflows.SessionRollback) error {
	st, err := a.store()
	if err != nil {
		return err
	}
	_, err = st.RollbackModel(ctx, r.Session, r.Before, r.Written, r.At)
	if errors.Is(err, store.ErrSessionUnreadable) {
		// The rollback outlasts a store that restarts (undoStep); a spoilt row it cannot outlast.
		return temporal.NewNonRetryableApplicationError(err.Error(), "SessionUnreadable", err)
	}
	return err
}

// MarkSkip records a skip-cache mark on the session (replacing one for the same candidate and
// profile, dropping expired ones).
func (a *Activities) MarkSkip(ctx context.Context, r workflows.SkipMarkRequest) error {
	st, err := a.store()
	if err != nil {
		return err
	}
	_, err = st.UpdateSession(ctx, r.Session, "", r.At, func(s *store.Session) error {
		s.SessionState = s.SessionState.MarkSkip(r.Mark, r.At)
		return nil
	})
	return err
}

// EndTurn writes what a finished turn leaves on the session: notice state, the profile pin, and
// the clearing of an auto override whose origin answered.
func (a *Activities) EndTurn(ctx context.Context, e policy.TurnEnd) error {
	st, err := a.store()
	if err != nil {
		return err
	}
	_, err = st.UpdateSession(ctx, e.Session, e.Agent, e.At, func(s *store.Session) error {
		s.SessionState = s.SessionState.EndTurn(e)
		return nil
	})
	return err
}

// HeartbeatEvery bounds how long a cancelled reply's attempt goes on: its cancellation comes back
// on a heartbeat (the worker lets the SDK send them this often: MaxHeartbeatThrottleInterval).
const HeartbeatEvery = 500 * time.Millisecond

// heartbeat tells the server, every third of the heartbeat timeout (at most HeartbeatEvery),
// that this worker still streams (the chunk count as progress), until stop. Off the stream's path: the SDK sends a
// first heartbeat synchronously, which would delay the answer; a stalled stream is ended by the
// provider's watchdog, a dead worker by the missing heartbeats.
func heartbeat(ctx context.Context, chunks *atomic.Int64) (stop func()) {
	every := min(activity.GetInfo(ctx).HeartbeatTimeout/3, HeartbeatEvery)
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				activity.RecordHeartbeat(ctx, chunks.Load())
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done) }
}

// deltaSink hands an attempt's deltas to its live caller, remembers what reached it, and
// checkpoints the growing text. A continuation of a cut answer passes its check first: nothing
// of it goes out before its opening repeated what the caller holds, and nothing at all when it
// did not.
type deltaSink struct {
	stream     *live.Stream
	journal    *journal // nil: the reply keeps no event log
	model      string
	check      *policy.ContinuationCheck // nil: not a continuation
	diverged   func()                    // ends the call once the check failed
	all        strings.Builder
	sent       strings.Builder
	delivered  bool
	toolCalls  int
	checkpoint func(text string) // nil: none
	last       time.Time
}

// mismatched reports whether the continuation turned out to be another answer.
func (s *deltaSink) mismatched() bool {
	return s.check != nil && s.check.Verdict() == policy.ContinuationDiverges
}

func (s *deltaSink) send(d provider.Delta) {
	if s.check != nil {
		switch {
		case s.mismatched():
			return
		case d.Text != "":
			d.Text = s.check.Feed(d.Text)
		case d.ToolCall != nil && s.check.Verdict() == policy.ContinuationChecking:
			s.check.End() // a tool call before the answer covered the caller's text: another answer
		case d.Reasoning != "" || d.ReasoningPart != nil:
			return // a caller in the middle of an answer's text takes no new reasoning
		}
		if s.mismatched() {
			s.diverged()
			return
		}
		if d.Text == "" && d.ToolCall == nil {
			return
		}
	}
	s.all.WriteString(d.Text)
	if s.checkpoint != nil && d.Text != "" && time.Since(s.last) >= checkpointEvery {
		s.last = time.Now()
		s.checkpoint(s.all.String())
	}
	ld := live.Delta{Text: d.Text, Reasoning: d.Reasoning, ToolCall: d.ToolCall, ReasoningPart: d.ReasoningPart, Model: s.model}
	switch {
	case s.journal != nil:
		s.journal.add(ld) // logged, then sent: a caller resuming elsewhere gets it again
	case s.stream == nil || !s.stream.Send(ld):
		return
	}
	s.delivered = true
	s.sent.WriteString(d.Text)
	if d.ToolCall != nil {
		s.toolCalls++
	}
}

// turnOf is the turn an attempt sends: kept in the store (TurnRef), inline, or one message.
// Content that is gone (past BATON_CONTENT_RETENTION) fails the reply with a named error: it is
// baton's loss, not the provider's, so no profile is blamed.
func (a *Activities) turnOf(ctx context.Context, st *store.Store, req workflows.AttemptRequest) (provider.Turn, error) {
	var turn provider.Turn
	switch {
	case req.TurnRef != "":
		data, err := st.GetContent(ctx, req.TurnRef)
		if errors.Is(err, store.ErrNotFound) {
			return turn, temporal.NewNonRetryableApplicationError(err.Error(), ErrTurnContentMissing, nil)
		}
		if err != nil {
			return turn, err
		}
		if err := json.Unmarshal(data, &turn); err != nil {
			return turn, temporal.NewNonRetryableApplicationError("the stored turn "+req.TurnRef+" does not decode: "+err.Error(), ErrTurnContentMissing, nil)
		}
		return turn, nil
	case len(req.Turn) > 0:
		if err := json.Unmarshal(req.Turn, &turn); err != nil {
			return turn, fmt.Errorf("the turn does not decode: %w", err)
		}
		return turn, nil
	}
	return provider.TextTurn(req.Message), nil
}

// ErrTurnContentMissing ends a reply whose turn content the store no longer holds.
const ErrTurnContentMissing = "TurnContentMissing"

// spend prices what the call consumed at the catalog's price now, counts it, and returns its row
// of the ledger budgets read (once per attempt identity; nil: nothing to write), which keep
// writes with the outcome.
func (a *Activities) spend(req workflows.AttemptRequest, out *policy.AttemptOutcome) *store.SpendRow {
	tokens := tokensOf(*out)
	if tokens.IsZero() {
		return nil
	}
	ref := policy.ModelRef{Provider: req.Provider, Model: req.Model}
	sp := policy.Price(tokens, a.Config.Get().Cost(ref))
	out.Spend = &sp
	if a.Metrics != nil {
		for kind, n := range map[string]int64{"input": sp.Input, "output": sp.Output, "cached_input": sp.CachedInput, "cache_write": sp.CacheWrite} {
			if n > 0 {
				a.Metrics.Add("baton_tokens_total", map[string]string{"provider": req.Provider, "model": req.Model, "kind": kind}, float64(n))
			}
		}
		if sp.Priced {
			a.Metrics.Add("baton_cost_total", map[string]string{"provider": req.Provider, "model": req.Model}, sp.Cost)
		}
	}
	if req.Key == "" {
		return nil
	}
	// The reply is its run: a session's replies share one workflow id (its lane).
	reply := req.Key[:max(strings.LastIndex(req.Key, "/"), 0)]
	return &store.SpendRow{Key: req.Key, Reply: reply, Agent: cmp.Or(req.ReplyAgent, req.Agent), Job: req.Job,
		Provider: req.Provider, Model: req.Model, At: a.now(), Spend: sp}
}

func (a *Activities) count(req workflows.AttemptRequest, result string, reason policy.Reason) {
	if a.Metrics == nil {
		return
	}
	a.Metrics.Add("baton_attempts_total", map[string]string{"provider": req.Provider, "model": req.Model, "result": result,
		"reason": string(reason)}, 1)
}
