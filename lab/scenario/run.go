package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/internal/logging"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/registry"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	sdktestsuite "go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// Output is what simulate prints (SCENARIOS.md "Output").
type Output struct {
	Name  string       `json:"name"`
	Turns []TurnOutput `json:"turns"`
	Calls []CallOutput `json:"calls"`
}

// TurnOutput is one turn's result.
type TurnOutput struct {
	At         string                    `json:"at"`
	Outcome    string                    `json:"outcome"`
	Served     *policy.Served            `json:"served,omitempty"`
	Text       string                    `json:"text,omitempty"`
	Attempts   []map[string]any          `json:"attempts,omitempty"`
	Error      map[string]any            `json:"error"`
	Notices    []string                  `json:"notices,omitzero"`
	Session    map[string]any            `json:"session,omitempty"`
	UsageStats map[string]map[string]any `json:"usageStats"`
}

// CallOutput is one provider call.
type CallOutput struct {
	At       string `json:"at"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Profile  string `json:"profile"`
}

const agentDefault = "main"

// Run plays every turn of sc and returns the output.
func Run(ctx context.Context, sc *Scenario) (*Output, error) {
	dir, err := os.MkdirTemp("", "baton-simulate-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	cfgSrc := []byte("{}")
	if len(sc.Config) > 0 {
		cfgSrc = sc.Config
	}
	cfg, err := config.ParseConfig(cfgSrc)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "baton.db"), store.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		return nil, err
	}
	defer st.Close()

	var creds []store.Credential
	secrets := map[string]string{}
	for _, p := range sc.Profiles {
		c := store.Credential{ID: p.ID, Provider: policy.NormalizeProvider(p.Provider), Type: p.Type, Key: p.Key, Access: p.Access,
			Refresh: p.Refresh, Token: p.Token, Expires: p.Expires, Email: p.Email}
		if err := st.PutCredential(ctx, agentDefault, c); err != nil {
			return nil, fmt.Errorf("profiles: %w", err)
		}
		creds = append(creds, c)
		secrets[p.Key+p.Token+p.Access] = p.ID
	}
	if err := seedState(ctx, st, sc); err != nil {
		return nil, err
	}

	// The clock of the turn being played, read by the fake provider to stamp calls and by the
	// activities to stamp what they record.
	var clockMu sync.Mutex
	var now func() time.Time
	fake := fakeprovider.New(sc.Provider, secrets)
	fake.Now = func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		if now == nil {
			return sc.Start
		}
		return now()
	}
	if err := fake.Start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	defer fake.Close()
	lab.PointAtFake(cfg, fake, creds)

	src := &activities.ConfigSource{}
	src.Set(cfg)
	lim := activities.DefaultLimits()
	if t := sc.Timeouts; t != nil {
		if t.FirstTokenMs > 0 {
			lim.FirstTokenTimeout = time.Duration(t.FirstTokenMs) * time.Millisecond
			lim.ReasoningFirstTokenTimeout = lim.FirstTokenTimeout // the scenario's bound, reasoning or not
		}
		if t.IdleMs > 0 {
			lim.IdleTimeout = time.Duration(t.IdleMs) * time.Millisecond
		}
		if t.AttemptMs > 0 {
			lim.AttemptTimeout = time.Duration(t.AttemptMs) * time.Millisecond
		}
	}
	if v, ok := sc.Env["BATON_RETRY_MAX_WAIT_SECONDS"]; ok {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil {
			return nil, fmt.Errorf("env.BATON_RETRY_MAX_WAIT_SECONDS: %q is not a number", v)
		}
		lim.RetryMaxWait = time.Duration(n) * time.Second
	}
	skipRaw, skipSet := sc.Env["BATON_FALLBACK_SKIP_TTL_MS"]
	if !skipSet {
		skipRaw, skipSet = sc.Env["OPENCLAW_FALLBACK_SKIP_TTL_MS"]
	}
	if lim.SkipTTL, err = policy.ParseSkipTTL(skipRaw, skipSet); err != nil {
		return nil, fmt.Errorf("env: skip TTL: %w", err)
	}
	// What an attempt records itself is stamped on the scenario clock, as the workflow's own steps are.
	acts := &activities.Activities{Identity: "simulate", Store: st, Config: src, Limits: lim, Now: fake.Now, ServerUp: activities.NoServer}

	out := &Output{Name: sc.Name}
	clock := newTurnClock(sc.Start)
	agentOf := map[string]string{}
	for _, s := range sc.Sessions {
		agentOf[s.Key] = s.Agent
	}
	for i, turn := range sc.Turns {
		at := clock.next(time.Duration(turn.After))
		var to TurnOutput
		if turn.Session != nil {
			if err := sessionOp(ctx, st, turn.Session, agentOf, at); err != nil {
				return nil, fmt.Errorf("turns[%d]: %w", i, err)
			}
			to = TurnOutput{At: stamp(at), Outcome: "session"}
			to.Session, _ = sessionFields(ctx, st, turn.Session.Key)
			clock.ended(at)
		} else {
			req := replyRequest(turn.Reply, agentOf)
			env, err := playReply(ctx, st, fake, acts, &clockMu, &now, at, req, turn.Reply)
			if err != nil {
				return nil, fmt.Errorf("turns[%d]: %w", i, err)
			}
			end := env.Now()
			to = TurnOutput{At: stamp(at)}
			if err := env.GetWorkflowError(); err != nil {
				fillFailure(&to, err)
			} else {
				var res policy.ReplyResult
				if err := env.GetWorkflowResult(&res); err != nil {
					return nil, fmt.Errorf("turns[%d]: %w", i, err)
				}
				to.Outcome, to.Served, to.Text, to.Notices = "completed", &res.Served, res.Text, res.Notices
				if to.Notices == nil {
					to.Notices = []string{}
				}
				to.Attempts = attemptsOut(res.Attempts)
			}
			if req.Session != "" {
				to.Session, _ = sessionFields(ctx, st, req.Session)
			}
			clock.ended(end)
		}
		if to.UsageStats, err = usageOut(ctx, st); err != nil {
			return nil, err
		}
		out.Turns = append(out.Turns, to)
	}
	for _, c := range fake.Calls() {
		out.Calls = append(out.Calls, CallOutput{At: stamp(c.At), Provider: c.Provider, Model: c.Model, Profile: c.Profile})
	}
	return out, nil
}

// playReply runs one reply turn in the SDK's test environment on the scenario clock. A switchTo
// writes the user's /model to the session and sends the switch when the fake provider has
// received the turn's call N, before releasing that call's response; abortAfterCalls cancels the
// reply at call N. A reply that continues as new (a switch that restarts it) runs on in a new
// environment, as a caller's wait follows the new run.
func playReply(ctx context.Context, st *store.Store, fake *fakeprovider.Server, acts *activities.Activities, clockMu *sync.Mutex,
	now *func() time.Time, at time.Time, req workflows.ReplyRequest, r *ReplyTurn) (*sdktestsuite.TestWorkflowEnvironment, error) {
	first := len(fake.Calls())
	var env *sdktestsuite.TestWorkflowEnvironment
	var envMu sync.Mutex
	current := func() *sdktestsuite.TestWorkflowEnvironment {
		envMu.Lock()
		defer envMu.Unlock()
		return env
	}
	var hookErr error
	fake.BeforeRespond = func(c fakeprovider.Call) {
		n := c.N - first
		if r.AbortAfterCalls > 0 && n == r.AbortAfterCalls {
			current().CancelWorkflow()
		}
		if sw := r.SwitchTo; sw != nil && n == sw.AfterCalls {
			ref, _ := policy.ParseModelRef(sw.Model) // validated
			if _, err := st.SetUserModel(ctx, req.Session, req.Agent, ref, sw.Profile, c.At); err != nil {
				hookErr = fmt.Errorf("switchTo: writing the session: %w", err)
				return
			}
			done := make(chan error, 1)
			current().UpdateWorkflow(workflows.SwitchModelUpdate, "", &updateCallbacks{done: done},
				workflows.SwitchModel{Model: sw.Model, Profile: sw.Profile})
			select {
			case err := <-done:
				if err != nil {
					hookErr = fmt.Errorf("switchTo: the reply refused the switch: %w", err)
				}
			case <-time.After(30 * time.Second):
				hookErr = fmt.Errorf("switchTo: the reply did not take the switch")
			}
		}
	}
	defer func() { fake.BeforeRespond = nil }()
	for {
		var s sdktestsuite.WorkflowTestSuite
		s.SetLogger(logging.Discard)
		e := s.NewTestWorkflowEnvironment()
		e.SetStartTime(at)
		e.SetTestTimeout(5 * time.Minute)
		// Each run its own workflow ID: what an attempt keeps is kept under the run's identity.
		e.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: fmt.Sprintf("simulate-%d", runSeq.Add(1))})
		registry.Register(e, acts)
		envMu.Lock()
		env = e
		envMu.Unlock()
		clockMu.Lock()
		*now = e.Now
		clockMu.Unlock()
		e.ExecuteWorkflow(workflows.ReplyWorkflowName, req)
		clockMu.Lock()
		*now = nil
		clockMu.Unlock()
		if hookErr != nil {
			return nil, hookErr
		}
		var can *workflow.ContinueAsNewError
		if !errors.As(e.GetWorkflowError(), &can) {
			return e, nil
		}
		if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &req); err != nil {
			return nil, fmt.Errorf("the reply continued as new with an input that does not decode: %w", err)
		}
		at = e.Now()
	}
}

// runSeq numbers the runs simulate plays, in this process.
var runSeq atomic.Int64

// updateCallbacks reports the end of an update.
type updateCallbacks struct{ done chan error }

func (u *updateCallbacks) Accept()                   {}
func (u *updateCallbacks) Reject(err error)          { u.done <- err }
func (u *updateCallbacks) Complete(_ any, err error) { u.done <- err }

// turnClock keeps SCENARIOS.md's clock: turn i is scheduled at the scenario's start plus the sum
// of the afters up to it, and starts at the later of that and the end of the turn before it. A
// long turn delays the next one; it does not shift the schedule of the turns after.
type turnClock struct {
	scheduled time.Time // start + the afters so far
	free      time.Time // when the last turn ended
}

func newTurnClock(start time.Time) turnClock { return turnClock{scheduled: start, free: start} }

// next is the start of the turn that comes after the previous one's schedule.
func (c *turnClock) next(after time.Duration) time.Time {
	c.scheduled = c.scheduled.Add(after)
	if c.free.After(c.scheduled) {
		return c.free
	}
	return c.scheduled
}

// ended records when a turn ended (never before it started).
func (c *turnClock) ended(at time.Time) {
	if at.After(c.free) {
		c.free = at
	}
}

func stamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

func replyRequest(r *ReplyTurn, agentOf map[string]string) workflows.ReplyRequest {
	agent := r.Agent
	if agent == "" {
		agent = agentOf[r.Session]
	}
	if agent == "" {
		agent = agentDefault
	}
	req := workflows.ReplyRequest{Agent: agent, Session: r.Session, Message: r.Message, Model: r.Model, Heartbeat: r.Heartbeat,
		Image: r.Image, NoJitter: true, WaitForCooldown: time.Duration(r.WaitForCooldown)}
	if r.Cron != nil {
		cp := &policy.FixedChain{}
		if ref, err := policy.ParseModelRef(r.Cron.Model); err == nil {
			cp.Model = ref
		}
		if r.Cron.Fallbacks != nil {
			cp.HasFallbacks = true
			cp.Fallbacks = []policy.ModelRef{}
			for _, f := range *r.Cron.Fallbacks {
				if ref, err := policy.ParseModelRef(f); err == nil {
					cp.Fallbacks = append(cp.Fallbacks, ref)
				}
			}
		}
		req.FixedChain = cp
	}
	return req
}

func fillFailure(to *TurnOutput, err error) {
	to.Outcome = "failed"
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		to.Error = map[string]any{"type": "Error", "message": err.Error()}
		return
	}
	e := map[string]any{"type": appErr.Type(), "message": appErr.Error()}
	var ex policy.Exhaustion
	if appErr.Type() == policy.ErrFallbackSummary && appErr.Details(&ex) == nil {
		to.Attempts = attemptsOut(ex.Attempts)
		if ex.Reason != policy.ReasonNone {
			e["reason"] = string(ex.Reason)
		} else {
			e["reason"] = nil
		}
		if ex.SoonestCooldownExpiry != nil {
			e["soonestCooldownExpiry"] = stamp(*ex.SoonestCooldownExpiry)
		} else {
			e["soonestCooldownExpiry"] = nil
		}
	} else {
		var attempts []policy.Attempt
		if appErr.Details(&attempts) == nil {
			to.Attempts = attemptsOut(attempts)
			e["reason"] = string(policy.LastReason(attempts))
		}
		if appErr.Type() == policy.ErrAborted {
			e["reason"] = nil // an abort is nobody's failure
		}
	}
	to.Error = e
}

func attemptsOut(attempts []policy.Attempt) []map[string]any {
	out := make([]map[string]any, 0, len(attempts))
	for _, a := range attempts {
		m := map[string]any{"provider": a.Provider, "model": a.Model, "result": a.Result}
		if a.Profile != "" {
			m["profile"] = a.Profile
		}
		if a.Reason != policy.ReasonNone {
			m["reason"] = string(a.Reason)
		}
		if a.Status != 0 {
			m["status"] = a.Status
		}
		if a.Probe != nil {
			m["probe"] = *a.Probe
		}
		if a.Retries != nil {
			m["retries"] = *a.Retries
		}
		out = append(out, m)
	}
	return out
}

func sessionFields(ctx context.Context, st *store.Store, key string) (map[string]any, error) {
	sess, err := st.GetSession(ctx, key)
	if err != nil {
		return nil, err
	}
	m := sess.Model
	out := map[string]any{}
	for k, v := range map[string]string{"providerOverride": m.ProviderOverride, "modelOverride": m.ModelOverride,
		"modelOverrideSource": m.ModelOverrideSource, "authProfileOverride": m.AuthProfileOverride,
		"authProfileOverrideSource": m.AuthProfileOverrideSource, "modelOverrideFallbackOriginProvider": m.ModelOverrideFallbackOriginProvider,
		"modelOverrideFallbackOriginModel": m.ModelOverrideFallbackOriginModel} {
		if v != "" {
			out[k] = v
		}
	}
	if m.AuthProfileOverrideCompactionCount != nil {
		out["authProfileOverrideCompactionCount"] = *m.AuthProfileOverrideCompactionCount
	}
	if m.CompactionCount != 0 {
		out["compactionCount"] = m.CompactionCount
	}
	return out, nil
}

func usageOut(ctx context.Context, st *store.Store) (map[string]map[string]any, error) {
	profiles, err := st.ListProfiles(ctx, agentDefault)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for _, p := range profiles {
		s := p.Stats
		if s.IsZero() {
			continue
		}
		m := map[string]any{}
		times := map[string]time.Time{"lastUsed": s.LastUsed, "cooldownUntil": s.CooldownUntil, "disabledUntil": s.DisabledUntil,
			"lastFailureAt": s.LastFailureAt, "blockedUntil": s.BlockedUntil}
		for k, v := range times {
			if !v.IsZero() {
				m[k] = stamp(v)
			}
		}
		if _, ok := m["lastUsed"]; !ok {
			m["lastUsed"] = nil
		}
		if s.CooldownReason != "" {
			m["cooldownReason"] = string(s.CooldownReason)
		}
		if s.CooldownModel != "" {
			m["cooldownModel"] = s.CooldownModel
		}
		if s.DisabledReason != "" {
			m["disabledReason"] = string(s.DisabledReason)
		}
		if s.ErrorCount != 0 {
			m["errorCount"] = s.ErrorCount
		}
		if len(s.FailureCounts) > 0 {
			fc := map[string]int{}
			for r, n := range s.FailureCounts {
				fc[string(r)] = n
			}
			m["failureCounts"] = fc
		}
		out[p.ID] = m
	}
	return out, nil
}

func seedState(ctx context.Context, st *store.Store, sc *Scenario) error {
	if sc.State != nil {
		ids := make([]string, 0, len(sc.State.UsageStats))
		for id := range sc.State.UsageStats {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			u := sc.State.UsageStats[id]
			stats := policy.ProfileStats{CooldownModel: u.CooldownModel, CooldownReason: policy.Reason(u.CooldownReason),
				ErrorCount: u.ErrorCount, DisabledReason: policy.Reason(u.DisabledReason)}
			for dst, src := range map[*time.Time]*time.Time{&stats.LastUsed: u.LastUsed, &stats.CooldownUntil: u.CooldownUntil,
				&stats.LastFailureAt: u.LastFailureAt, &stats.DisabledUntil: u.DisabledUntil} {
				if src != nil {
					*dst = src.UTC()
				}
			}
			for r, n := range u.FailureCounts {
				if stats.FailureCounts == nil {
					stats.FailureCounts = map[policy.Reason]int{}
				}
				stats.FailureCounts[policy.Reason(r)] = n
			}
			if _, err := st.RecordOutcome(ctx, agentDefault, id, func(policy.ProfileStats) policy.ProfileStats { return stats }); err != nil {
				return fmt.Errorf("state.usageStats.%s: %w", id, err)
			}
		}
		for provider, ids := range sc.State.Order {
			if err := st.SetOrder(ctx, agentDefault, provider, ids); err != nil {
				return fmt.Errorf("state.order.%s: %w", provider, err)
			}
		}
	}
	for i, s := range sc.Sessions {
		seed := s
		_, err := st.UpdateSession(ctx, s.Key, s.Agent, sc.Start, func(sess *store.Session) error {
			sess.Model = policy.SessionModel{ProviderOverride: seed.ProviderOverride, ModelOverride: seed.ModelOverride,
				ModelOverrideSource: seed.ModelOverrideSource, AuthProfileOverride: seed.AuthProfileOverride,
				AuthProfileOverrideSource: seed.AuthProfileOverrideSource, AuthProfileOverrideCompactionCount: seed.AuthProfileOverrideCompactionCount,
				ModelOverrideFallbackOriginProvider: seed.ModelOverrideFallbackOriginProvider,
				ModelOverrideFallbackOriginModel:    seed.ModelOverrideFallbackOriginModel, CompactionCount: seed.CompactionCount}
			if seed.ModelOverride != "" {
				sess.Model.ModelOverrideUpdatedAt = sc.Start
				if seed.ModelOverrideUpdatedAt != nil {
					sess.Model.ModelOverrideUpdatedAt = seed.ModelOverrideUpdatedAt.UTC()
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("sessions[%d]: %w", i, err)
		}
	}
	return nil
}

func sessionOp(ctx context.Context, st *store.Store, op *SessionOp, agentOf map[string]string, at time.Time) error {
	agent := agentOf[op.Key]
	if agent == "" {
		agent = agentDefault
	}
	switch op.Op {
	case "model":
		ref, err := policy.ParseModelRef(op.Model)
		if err != nil {
			return fmt.Errorf("session.model: %w", err)
		}
		_, err = st.SetUserModel(ctx, op.Key, agent, ref, op.Profile, at)
		return err
	case "reset":
		_, err := st.ResetSession(ctx, op.Key, at)
		return err
	case "compact":
		_, err := st.CompactSession(ctx, op.Key, at)
		return err
	case "patch":
		_, err := st.PatchSession(ctx, op.Key, agent, op.Fields, at)
		return err
	}
	return fmt.Errorf("session.op %q", op.Op)
}

// JSON renders the output as simulate prints it.
func (o *Output) JSON() ([]byte, error) { return json.MarshalIndent(o, "", "  ") }
