package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ReplyStartOptions are how every starter of a reply (baton reply, serve, cron schedules, the
// bench) starts it: the agent and session go in as search attributes at start, so the reply need
// not spend a history event upserting them.
// EnableEagerStart: where the starter's process runs a worker for the queue (serve), the server
// hands the first workflow task back in the start's answer, without a trip through matching; the
// SDK asks for it only then.
func ReplyStartOptions(id, taskQueue, agent, session string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue, TypedSearchAttributes: ReplySearchAttributes(agent, session),
		EnableEagerStart: true}
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
func StartReply(ctx context.Context, c client.Client, taskQueue string, req ReplyRequest) (client.WorkflowRun, error) {
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

// InlineTurnMax is the largest turn (as JSON) that travels inside the workflow input; a larger
// one is put in the store and travels as a reference, so no history grows with a conversation
// or an image (Temporal refuses payloads over 2 MB and warns at 512 KB).
const InlineTurnMax = 4 << 10

// ContentPutter keeps a turn's content (the store's PutContent).
type ContentPutter interface {
	PutContent(ctx context.Context, data []byte) (string, error)
}

// Turn is what WithTurn needs of a model turn (provider.Turn, which this package must not import:
// the workflow never reads inside a turn, it carries it as JSON).
type Turn interface {
	HasImages() bool
	// AsksReasoning reports whether the turn asks for reasoning (an effort or a thinking budget).
	AsksReasoning() bool
	// PlainMessage reports whether the turn is nothing but one user text message, and its text.
	PlainMessage() (string, bool)
	LastUserText() string
}

// WithTurn puts turn on req: inline (as JSON) when small, else in the store by reference. A turn
// that is one user text message travels as Message, as a CLI message always has.
func WithTurn(ctx context.Context, content ContentPutter, req ReplyRequest, turn Turn) (ReplyRequest, error) {
	req.CarriesImages = turn.HasImages()
	req.Reasoning = turn.AsksReasoning()
	if text, ok := turn.PlainMessage(); ok {
		req.Message, req.Turn, req.TurnRef = text, nil, ""
		return req, nil
	}
	data, err := json.Marshal(turn)
	if err != nil {
		return req, fmt.Errorf("encoding the turn: %w", err)
	}
	req.Message = turn.LastUserText()
	if len(data) <= InlineTurnMax {
		req.Turn, req.TurnRef = data, ""
		return req, nil
	}
	if content == nil {
		return req, fmt.Errorf("a turn of %d KB must be kept in the store, and this starter has none (BATON_STORE)", len(data)>>10)
	}
	ref, err := content.PutContent(ctx, data)
	if err != nil {
		return req, fmt.Errorf("keeping the turn in the store: %w", err)
	}
	req.Message, req.Turn, req.TurnRef = "", nil, ref
	return req, nil
}
