package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// Decisions of ReplyWorkflow pinned beside it, with the SDK's test environment and the reply's
// activities replaced by a script: each test is one decision. The end-to-end tests (testsuite/,
// starter/) prove the wiring against a real server.

// script stands in for the reply's activities and records what the reply asked of them.
type script struct {
	state     policy.ReplyState
	attempt   func(n int, r workflows.AttemptRequest) (policy.AttemptOutcome, error)
	calls     []workflows.AttemptRequest
	queues    []string // the task queue each call was scheduled on
	records   []workflows.OutcomeRecord
	writes    []workflows.SessionWrite
	rollbacks []workflows.SessionRollback
	// write answers the fallback write (true, nil when nil).
	write func(workflows.SessionWrite) (bool, error)
	// rollback answers the nth run of a rollback (nil when nil).
	rollback func(n int) error
	undos    int // runs of the rollback, failed ones included
}

// stateOf is a reply state whose config chain is primary, then fallbacks; every provider has one
// profile, <provider>:k.
func stateOf(primary string, fallbacks ...string) policy.ReplyState {
	cfg := policy.DefaultConfig()
	ref, _ := policy.ParseModelRef(primary)
	cfg.Model.Primary = ref
	seen := map[string]bool{ref.Provider: true}
	profiles := []policy.StoredProfile{{ID: ref.Provider + ":k", Provider: ref.Provider, Type: "api_key"}}
	for _, f := range fallbacks {
		fr, _ := policy.ParseModelRef(f)
		cfg.Model.Fallbacks = append(cfg.Model.Fallbacks, fr)
		if !seen[fr.Provider] {
			seen[fr.Provider] = true
			profiles = append(profiles, policy.StoredProfile{ID: fr.Provider + ":k", Provider: fr.Provider, Type: "api_key"})
		}
	}
	return policy.ReplyState{Config: cfg, Profiles: profiles}
}

func (s *script) run(t *testing.T, req workflows.ReplyRequest, during ...func(env *testsuite.TestWorkflowEnvironment)) (policy.ReplyResult, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.ReplyWorkflow, workflowName(workflows.ReplyWorkflowName))
	reg := func(fn any, name string) { env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	reg(func(context.Context, workflows.ReplyRequest) (policy.ReplyState, error) { return s.state, nil }, workflows.LoadReplyActivity)
	reg(func(ctx context.Context, r workflows.AttemptRequest) (policy.AttemptOutcome, error) {
		s.calls, s.queues = append(s.calls, r), append(s.queues, activity.GetInfo(ctx).TaskQueue)
		return s.attempt(len(s.calls), r)
	}, workflows.AttemptActivity)
	reg(func(_ context.Context, r workflows.OutcomeRecord) (policy.ProfileStats, error) {
		s.records = append(s.records, r)
		return policy.ProfileStats{}, nil
	}, workflows.RecordOutcomeActivity)
	reg(func(context.Context, workflows.ProbeClaim) (bool, error) { return true, nil }, workflows.ClaimProbeActivity)
	reg(func(_ context.Context, w workflows.SessionWrite) (bool, error) {
		s.writes = append(s.writes, w)
		if s.write != nil {
			return s.write(w)
		}
		return true, nil
	}, workflows.WriteFallbackActivity)
	reg(func(_ context.Context, r workflows.SessionRollback) (workflows.Done, error) {
		s.undos++
		if s.rollback != nil {
			if err := s.rollback(s.undos); err != nil {
				return workflows.Done{}, err
			}
		}
		s.rollbacks = append(s.rollbacks, r)
		return workflows.Done{}, nil
	}, workflows.RollbackFallbackActivity)
	reg(func(context.Context, policy.TurnEnd) (workflows.Done, error) { return workflows.Done{}, nil }, workflows.EndTurnActivity)
	reg(func(context.Context, workflows.SkipMarkRequest) (workflows.Done, error) { return workflows.Done{}, nil }, workflows.MarkSkipActivity)
	for _, f := range during {
		f(env)
	}
	req.NoJitter = true
	env.ExecuteWorkflow(workflows.ReplyWorkflowName, req)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the reply did not end")
	}
	var res policy.ReplyResult
	if err := env.GetWorkflowError(); err != nil {
		return res, err
	}
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res, nil
}

func answer(text string) policy.AttemptOutcome {
	return policy.AttemptOutcome{OK: true, Answer: policy.Answer{Text: text}, Recorded: &policy.ProfileStats{}}
}

func timedOut() policy.AttemptOutcome {
	return policy.AttemptOutcome{Reason: policy.ReasonTimeout, StreamFault: "stall", Error: "stalled", Recorded: &policy.ProfileStats{}}
}

func errorType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}

func TestAFailedFallbackRollsBackOnlyWhatItWrote(t *testing.T) {
	s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(int, workflows.AttemptRequest) (policy.AttemptOutcome, error) { return timedOut(), nil }}
	_, err := s.run(t, workflows.ReplyRequest{Agent: "main", Session: "s", Message: "hi"})
	if errorType(err) != policy.ErrFallbackSummary {
		t.Fatalf("ended with %v", err)
	}
	if len(s.writes) != 1 || s.writes[0].Next.ModelOverride != "claude" || len(s.rollbacks) != 1 ||
		s.rollbacks[0].Written.ModelOverride != "claude" || s.rollbacks[0].Before.ModelOverride != "" {
		t.Errorf("writes %+v, rollbacks %+v: the fallback's write, then its rollback to what was before", s.writes, s.rollbacks)
	}
}

// A rollback outlasts a store that restarts: the brief retries of the other store steps (5 tries,
// ~3 s) would leave the failed fallback on the session while PostgreSQL restarts for 10 s.
func TestARollbackOutlastsAStoreThatRestarts(t *testing.T) {
	s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(int, workflows.AttemptRequest) (policy.AttemptOutcome, error) { return timedOut(), nil },
		rollback: func(n int) error {
			if n <= 5 {
				return errors.New("failed to connect: the database system is starting up")
			}
			return nil
		}}
	_, err := s.run(t, workflows.ReplyRequest{Agent: "main", Session: "s", Message: "hi"})
	if errorType(err) != policy.ErrFallbackSummary {
		t.Fatalf("ended with %v", err)
	}
	if s.undos != 6 || len(s.rollbacks) != 1 || s.rollbacks[0].Written.ModelOverride != "claude" {
		t.Errorf("%d runs of the rollback, %+v done: the sixth undoes the write", s.undos, s.rollbacks)
	}
}

// A fallback write that failed may have landed (committed as the database went away): the reply
// that ends on it undoes what it would have written, as after a failed fallback.
func TestAFailedFallbackWriteIsRolledBackAllTheSame(t *testing.T) {
	s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(int, workflows.AttemptRequest) (policy.AttemptOutcome, error) { return timedOut(), nil },
		write: func(workflows.SessionWrite) (bool, error) {
			return false, temporal.NewNonRetryableApplicationError("the database went away", "StoreDown", nil)
		}}
	_, err := s.run(t, workflows.ReplyRequest{Agent: "main", Session: "s", Message: "hi"})
	if err == nil || len(s.calls) != 1 {
		t.Fatalf("ended with %v after %d calls: the fallback is never called", err, len(s.calls))
	}
	if len(s.rollbacks) != 1 || s.rollbacks[0].Written.ModelOverride != "claude" || s.rollbacks[0].Before.ModelOverride != "" || s.rollbacks[0].Session != "s" {
		t.Errorf("rollbacks %+v: what the failed write would have written, undone", s.rollbacks)
	}
}

func TestAnAttemptThatRecordedIsNotRecordedAgain(t *testing.T) {
	s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(n int, _ workflows.AttemptRequest) (policy.AttemptOutcome, error) {
			if n == 1 {
				out := timedOut()
				out.Recorded = nil // the attempt's store step failed: the reply records it
				return out, nil
			}
			return answer("ok"), nil
		}}
	if _, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	if len(s.records) != 1 || s.records[0].Model != "gpt-5" || s.records[0].Reason != policy.ReasonTimeout {
		t.Errorf("records %+v: only the outcome the attempt could not record", s.records)
	}
}

func TestALostWorkerRunsTheAttemptAgainWithoutBlameUpToTheLimit(t *testing.T) {
	lost := temporal.NewNonRetryableApplicationError("the worker stopped", policy.ErrWorkerShutdown, nil)
	s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(n int, _ workflows.AttemptRequest) (policy.AttemptOutcome, error) {
			if n <= 2 {
				return policy.AttemptOutcome{}, lost
			}
			return answer("ok"), nil
		}}
	s.state.InfraRetries = 2
	res, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"})
	if err != nil || res.Served.Model != "gpt-5" || len(res.Attempts) != 1 || len(s.records) != 0 {
		t.Fatalf("%+v %v, records %+v: the same candidate, one attempt, nobody blamed", res, err, s.records)
	}
	if s.calls[0].Key != s.calls[1].Key || s.calls[1].Key != s.calls[2].Key {
		t.Errorf("keys %q %q %q: a run again keeps the attempt's identity", s.calls[0].Key, s.calls[1].Key, s.calls[2].Key)
	}
	s = &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(int, workflows.AttemptRequest) (policy.AttemptOutcome, error) {
			return policy.AttemptOutcome{}, lost
		}}
	s.state.InfraRetries = 2
	if _, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"}); errorType(err) != policy.ErrWorkersLost || len(s.calls) != 3 {
		t.Errorf("ended with %v after %d calls, want WorkersLostError after 3", err, len(s.calls))
	}
}

func TestMidStreamErrorStopsWhereTheCallerSawContent(t *testing.T) {
	s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(int, workflows.AttemptRequest) (policy.AttemptOutcome, error) {
			out := timedOut()
			out.Partial, out.Delivered = "The quick ", true
			return out, nil
		}}
	s.state.Config.Streaming.MidStream = policy.MidStreamError
	if _, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"}); errorType(err) != policy.ErrStreamInterrupted || len(s.calls) != 1 {
		t.Errorf("ended with %v after %d calls, want StreamInterruptedError and no fallback", err, len(s.calls))
	}
}

func TestACutAnswerIsContinuedWithWhatTheCallerHolds(t *testing.T) {
	cut := func() policy.AttemptOutcome {
		out := timedOut()
		out.Partial, out.Delivered, out.BilledOutput = "The quick ", true, 3
		return out
	}
	t.Run("the fallback continues it: the result is the whole answer, billed for both", func(t *testing.T) {
		s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
			attempt: func(n int, r workflows.AttemptRequest) (policy.AttemptOutcome, error) {
				if n == 1 {
					return cut(), nil
				}
				out := answer("brown fox.")
				out.Output = 4
				return out, nil
			}}
		res, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"})
		if err != nil || res.Text != "The quick brown fox." || res.Output != 7 || !res.Attempts[1].Continues || s.calls[1].Prefill != "The quick " {
			t.Errorf("%q (%d output tokens), %v, the fallback sent %q", res.Text, res.Output, err, s.calls[1].Prefill)
		}
	})
	t.Run("a continuation that is another answer ends the reply, naming the cut", func(t *testing.T) {
		s := &script{state: stateOf("openai/gpt-5", "anthropic/claude", "google/gemini"),
			attempt: func(n int, r workflows.AttemptRequest) (policy.AttemptOutcome, error) {
				if n == 1 {
					return cut(), nil
				}
				return policy.AttemptOutcome{Mismatch: true, Error: "another answer"}, nil
			}}
		_, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"})
		if errorType(err) != policy.ErrContinuationMismatch || len(s.calls) != 2 || len(s.records) != 0 {
			t.Errorf("ended with %v after %d calls, records %+v", err, len(s.calls), s.records)
		}
	})
	t.Run("a refused prefill is asked again to restart, blaming nobody", func(t *testing.T) {
		s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
			attempt: func(n int, r workflows.AttemptRequest) (policy.AttemptOutcome, error) {
				switch n {
				case 1:
					return cut(), nil
				case 2:
					return policy.AttemptOutcome{PrefillRejected: true, Status: 400}, nil
				}
				return answer("brown fox."), nil
			}}
		res, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"})
		if err != nil || len(s.calls) != 3 || s.calls[2].Continuation != policy.ContinueRestart || s.calls[2].Model != "claude" ||
			len(res.Attempts) != 2 || len(s.records) != 0 {
			t.Errorf("%v; calls %+v; attempts %+v; records %+v", err, s.calls, res.Attempts, s.records)
		}
	})
	t.Run("a model that cannot continue is skipped; none left ends the caller's stream", func(t *testing.T) {
		s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
			attempt: func(int, workflows.AttemptRequest) (policy.AttemptOutcome, error) { return cut(), nil }}
		s.state.Config.Providers = map[string]policy.ProviderConfig{"anthropic": {Models: []policy.ModelSpec{{ID: "claude", Continuation: policy.ContinueNone}}}}
		_, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"})
		var app *temporal.ApplicationError
		var attempts []policy.Attempt
		if !errors.As(err, &app) || app.Type() != policy.ErrStreamInterrupted || app.Details(&attempts) != nil || len(s.calls) != 1 ||
			len(attempts) != 2 || attempts[1].Reason != policy.ReasonNoContinuation {
			t.Errorf("ended with %v after %d calls, attempts %+v", err, len(s.calls), attempts)
		}
	})
}

func TestAProbeIsOneCallNotThree(t *testing.T) {
	s := &script{state: stateOf("openai/gpt-5", "openai/gpt-5-mini"),
		attempt: func(_ int, r workflows.AttemptRequest) (policy.AttemptOutcome, error) {
			if r.Model == "gpt-5" {
				return policy.AttemptOutcome{Reason: policy.ReasonTimeout, Status: 503, Error: "unavailable"}, nil
			}
			return answer("ok"), nil
		}}
	// The key cools down for the primary, with a minute to go: the reply probes it.
	s.state.Profiles[0].Stats = policy.ProfileStats{ErrorCount: 1, CooldownUntil: time.Now().Add(time.Minute), CooldownReason: policy.ReasonTimeout, CooldownModel: "gpt-5"}
	res, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"}, func(env *testsuite.TestWorkflowEnvironment) {
		env.SetStartTime(time.Now())
	})
	if err != nil || len(s.calls) != 2 || res.Attempts[0].Probe == nil || !*res.Attempts[0].Probe || *res.Attempts[0].Retries != 0 {
		t.Errorf("%v: calls %d, attempts %+v: one call on the probe, then the fallback", err, len(s.calls), res.Attempts)
	}
	s.state.Profiles[0].Stats = policy.ProfileStats{}
	s.calls = nil
	if _, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi"}); err != nil || len(s.calls) != 4 {
		t.Errorf("%v after %d calls: an ordinary call is retried in place twice, then the fallback", err, len(s.calls))
	}
}

func TestACancelRollsBackAndRecordsTheAttemptInFlight(t *testing.T) {
	s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(n int, _ workflows.AttemptRequest) (policy.AttemptOutcome, error) {
			if n == 1 {
				return timedOut(), nil
			}
			// The fallback is rate-limited and says to come back in 30 s: the reply waits in place.
			return policy.AttemptOutcome{Reason: policy.ReasonRateLimit, Status: 429, Hint: policy.RetryHint{After: 30 * time.Second, HasAfter: true}}, nil
		}}
	_, err := s.run(t, workflows.ReplyRequest{Agent: "main", Session: "s", Message: "hi"}, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Second)
	})
	var app *temporal.ApplicationError
	var attempts []policy.Attempt
	if !errors.As(err, &app) || app.Type() != policy.ErrAborted || app.Details(&attempts) != nil {
		t.Fatalf("ended with %v", err)
	}
	if len(s.rollbacks) != 1 || len(attempts) != 2 || attempts[1].Model != "claude" || attempts[1].Result != policy.ResultFailed || attempts[1].Reason != policy.ReasonNone {
		t.Errorf("rollbacks %+v, attempts %+v: the fallback's write undone, the attempt in flight recorded with no reason", s.rollbacks, attempts)
	}
}

func TestADeadDoorQueueHandsTheSameAttemptToTheSharedQueue(t *testing.T) {
	s := &script{state: stateOf("openai/gpt-5", "anthropic/claude"),
		attempt: func(n int, r workflows.AttemptRequest) (policy.AttemptOutcome, error) {
			if n == 1 {
				return policy.AttemptOutcome{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
			}
			return answer("ok"), nil
		}}
	res, err := s.run(t, workflows.ReplyRequest{Agent: "main", Message: "hi", StreamQueue: "baton/door/gone", StreamKey: "k"})
	if err != nil || len(s.calls) != 2 || s.calls[0].Key != s.calls[1].Key || res.Served.Model != "gpt-5" || len(res.Attempts) != 1 || len(s.records) != 0 {
		t.Errorf("%v: calls %+v, attempts %+v: the same attempt again, nobody blamed", err, s.calls, res.Attempts)
	}
	if s.queues[0] != "baton/door/gone" || s.queues[1] == "baton/door/gone" {
		t.Errorf("queues %v: the door's, then the shared one", s.queues)
	}
}

func TestAModelSwitchJumpsToALaterCandidateOrStartsOver(t *testing.T) {
	for _, c := range []struct {
		to      string
		restart bool
	}{{"anthropic/claude", false}, {"google/gemini", true}} {
		t.Run(c.to, func(t *testing.T) {
			var env *testsuite.TestWorkflowEnvironment
			s := &script{state: stateOf("openai/gpt-5", "mistral/large", "anthropic/claude"),
				attempt: func(n int, r workflows.AttemptRequest) (policy.AttemptOutcome, error) {
					if n == 1 {
						// The user's /model arrives while the first attempt runs.
						env.UpdateWorkflow(workflows.SwitchModelUpdate, "switch", &testsuite.TestUpdateCallback{
							OnReject: func(err error) { t.Errorf("switch rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {}},
							workflows.SwitchModel{Model: c.to})
						return timedOut(), nil
					}
					return answer("from " + r.Provider), nil
				}}
			res, err := s.run(t, workflows.ReplyRequest{Agent: "main", Session: "s", Message: "hi"}, func(e *testsuite.TestWorkflowEnvironment) { env = e })
			if c.restart {
				var can *workflow.ContinueAsNewError
				if !errors.As(err, &can) || len(s.calls) != 1 {
					t.Errorf("ended with %v after %d calls, want a continue-as-new with the user's choice", err, len(s.calls))
				}
				return
			}
			if err != nil || res.Served.Provider != "anthropic" || len(s.calls) != 2 || len(res.Attempts) != 3 || res.Attempts[1].Result != policy.ResultSwitched {
				t.Errorf("%v: served %+v, attempts %+v: mistral jumped over, the switch recorded", err, res.Served, res.Attempts)
			}
		})
	}
}
