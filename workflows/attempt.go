package workflows

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/batonhq/baton/policy"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// One attempt on one (candidate, profile): where it runs, and how a lost worker is told from a
// failing provider. What follows a failure (a same-candidate retry among others) is
// policy.AfterFailure's plan, which tryCandidate applies.

const (
	// attemptHeartbeat is how soon a lost worker is noticed: an attempt heartbeats on its own
	// timer whatever its stream does (provider silence is the stream watchdog's to judge).
	attemptHeartbeat = 10 * time.Second

	// streamQueueWait is how long an attempt waits for the front door's own worker before the
	// shared queue takes it (the front door died, or runs no worker).
	streamQueueWait = 10 * time.Second
)

// call makes one attempt with the given same-candidate retries so far and continuation. A lost
// worker or a dead door queue is baton's fault, not the provider's: the same attempt runs again.
func (r *reply) call(ctx workflow.Context, cand policy.Candidate, profile string, onSuccess *policy.TurnEnd,
	retries int, continuation string) (policy.AttemptOutcome, error) {
	dl := r.state.Config.Deadlines(cand.ModelRef, r.req.Reasoning, r.state.DeadlineDefaults()) // the model's clocks
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    attemptHeartbeat, // a worker that stops heartbeating is gone
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
	r.attemptSeq++
	run := workflow.GetInfo(ctx).WorkflowExecution
	key := fmt.Sprintf("%s/%s/%d", run.ID, run.RunID, r.attemptSeq)
	for {
		live := r.req.StreamQueue != "" && !r.streamLost
		if live {
			opts.TaskQueue, opts.ScheduleToStartTimeout = r.req.StreamQueue, streamQueueWait
		} else {
			opts.TaskQueue, opts.ScheduleToStartTimeout = "", 0
		}
		out, err := Attempt.Run(workflow.WithActivityOptions(ctx, opts), AttemptRequest{
			Agent: r.authAgent(), Provider: cand.Provider, Model: cand.Model, Profile: profile,
			Message: r.req.Message, Turn: r.req.Turn, TurnRef: r.req.TurnRef, StreamKey: r.req.StreamKey, LogKey: r.req.LogKey, Prefill: r.held.Text, Key: key,
			Continuation: continuation,
			Now:          workflow.Now(ctx), FirstTokenTimeout: dl.FirstToken, IdleTimeout: r.state.IdleTimeout, ResponseTimeout: r.state.ResponseTimeout,
			AttemptTimeout: dl.Attempt, MinTokensPerSecond: dl.MinTokensPerSecond, ThroughputGrace: dl.ThroughputGrace,
			Retries: retries, RetryMaxWait: r.state.RetryMaxWait, OnSuccess: onSuccess,
			Before: len(r.joined()), FallbackReason: policy.LastReason(r.joined()),
			HeldBilledInput: r.held.BilledInput, HeldBilledOutput: r.held.BilledOutput,
			Job: r.req.Job, ReplyAgent: r.replyAgent(),
		})
		var timeoutErr *temporal.TimeoutError
		switch {
		case live && errors.As(err, &timeoutErr) && timeoutErr.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
			// The front door's worker is gone: the shared queue takes the same attempt, no blame.
			r.streamLost = true
			continue
		case workerLost(err):
			// baton's own fault: the same attempt again (same identity: what it kept is not bought
			// again), no usage, no session write, no notice, no fallback.
			r.workersLost++
			if limit := cmp.Or(r.state.InfraRetries, policy.DefaultInfraRetries); r.workersLost > limit {
				return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"the workers running this reply were lost %d times (%v): baton's infrastructure failed, not the models", r.workersLost, err),
					policy.ErrWorkersLost, nil, r.joined())
			}
			continue
		case errors.As(err, &timeoutErr):
			// The attempt outlived its start-to-close timeout: the provider held it too long.
			out = policy.AttemptOutcome{Reason: policy.ReasonTimeout, Error: "the attempt ran past its time limit", StreamFault: "stall"}
		case err != nil:
			return out, err
		}
		return out, nil
	}
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

// randomFraction runs only inside SideEffect, whose result the history records.
func randomFraction() float64 { return rand.Float64() }
