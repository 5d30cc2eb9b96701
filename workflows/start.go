package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batonhq/baton/policy"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ReplyStartOptions are how every starter of a reply (baton reply, serve, cron schedules, the
// bench) starts it: the agent and session go in as search attributes at start, so the reply need
// not spend a history event upserting them.
func ReplyStartOptions(id, taskQueue, agent, session string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue, TypedSearchAttributes: ReplySearchAttributes(agent, session)}
}

// ReplySearchAttributes are the attributes a reply starts with.
func ReplySearchAttributes(agent, session string) temporal.SearchAttributes {
	sa := []temporal.SearchAttributeUpdate{saAgent.ValueSet(agent)}
	if session != "" {
		sa = append(sa, saSession.ValueSet(session))
	}
	return temporal.NewSearchAttributes(sa...)
}

// LaneID is the workflow ID of a session's replies: one runs at a time under it.
func LaneID(agent, session string) string { return "reply/" + agent + "/" + session }

// StartReply starts a reply as `baton reply` and `serve` do. A session runs one turn at a time,
// like OpenClaw's session lanes: its replies share the workflow ID LaneID, and while one runs the
// next waits for it to end, then starts (so it decides on what the previous turn recorded: its
// cooldowns, its fallback override). A reply without a session starts at once under its own ID.
func StartReply(ctx context.Context, c client.Client, taskQueue string, req policy.ReplyRequest) (client.WorkflowRun, error) {
	if req.Session == "" {
		id := fmt.Sprintf("reply-%s-%d", req.Agent, time.Now().UnixNano())
		return c.ExecuteWorkflow(ctx, ReplyStartOptions(id, taskQueue, req.Agent, ""), ReplyWorkflowName, req)
	}
	id := LaneID(req.Agent, req.Session)
	opts := ReplyStartOptions(id, taskQueue, req.Agent, req.Session)
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	for {
		run, err := c.ExecuteWorkflow(ctx, opts, ReplyWorkflowName, req)
		var running *serviceerror.WorkflowExecutionAlreadyStarted
		if !errors.As(err, &running) {
			return run, err
		}
		// The session's current turn: wait for its end, whatever it is (its answer is not ours).
		_ = c.GetWorkflow(ctx, id, running.RunId).Get(ctx, nil)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("waiting for the session's running turn (%s): %w", id, err)
		}
	}
}
