package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/serve"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// attachReply is `baton reply attach ID`: a running or finished reply's answer, from its start,
// whichever door started it. ID is a response's id (resp_…, the Responses door's) or a reply's
// workflow ID. A reply with an event log prints as it streams; any other once it ends.
func attachReply(ctx context.Context, tf temporalFlags, set map[string]bool, storeURL, id string, out, errOut io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(errOut, "baton reply attach: "+format+"\n", a...)
		return code
	}
	if err := tf.validate(set); err != nil {
		return fail(exitUsage, "%v", err)
	}
	c, err := tf.dial(ctx)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	defer c.Close()
	var st *store.Store
	if !storeMissing(storeURL) {
		if st, err = openStore(ctx, storeURL); err != nil {
			return fail(exitFailure, "%v", err)
		}
		defer st.Close()
	}
	workflowID, runID, logKey := id, "", ""
	if strings.HasPrefix(id, "resp_") {
		if st == nil {
			return fail(exitFailure, "%s: the store %s does not exist (is it the worker's BATON_STORE?)", id, storeURL)
		}
		data, err := st.GetResponse(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return fail(exitFailure, "%s: no such response (or past BATON_CONTENT_RETENTION)", id)
		}
		var rec struct{ WorkflowID, RunID string }
		if err == nil {
			err = json.Unmarshal(data, &rec)
		}
		if err != nil {
			return fail(exitFailure, "%s: %v", id, err)
		}
		workflowID, runID, logKey = rec.WorkflowID, rec.RunID, id
	} else if logKey, err = replyLogKey(ctx, c, id); err != nil {
		return fail(exitFailure, "%s: %v", id, err)
	}
	var rs serve.ResponseStore
	if st != nil {
		rs = st
	}
	p := &printer{out: out}
	_, err = serve.Attach(ctx, c, rs, workflowID, runID, logKey, p)
	if p.printed {
		fmt.Fprintln(out)
	}
	if err != nil {
		return fail(exitFailure, "%s: %v", id, err)
	}
	return 0
}

// replyLogKey is the event log a reply keeps (its start names it; "" when it keeps none).
func replyLogKey(ctx context.Context, c client.Client, workflowID string) (string, error) {
	conv, err := codec.ConvertersFromEnv(os.LookupEnv)
	if err != nil {
		return "", err
	}
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, 0)
	if !it.HasNext() {
		return "", fmt.Errorf("no such reply")
	}
	ev, err := it.Next()
	if err != nil {
		return "", err
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil {
		return "", fmt.Errorf("its history does not start with its start")
	}
	dc := conv.Data
	if dc == nil {
		dc = converter.GetDefaultDataConverter() // no payload key
	}
	var req workflows.ReplyRequest
	if err := dc.FromPayloads(attrs.GetInput(), &req); err != nil {
		return "", fmt.Errorf("reading its start: %w", err)
	}
	return req.LogKey, nil
}

// printer prints an answer's text as it comes and each tool call on a line of its own.
type printer struct {
	out     io.Writer
	printed bool
}

func (p *printer) Text(delta string) {
	fmt.Fprint(p.out, delta)
	p.printed = true
}

func (p *printer) ToolCall(call provider.ToolCall) {
	if p.printed {
		fmt.Fprintln(p.out)
	}
	fmt.Fprintf(p.out, "tool call %s %s(%s)", call.ID, call.Name, call.Arguments)
	p.printed = true
}
