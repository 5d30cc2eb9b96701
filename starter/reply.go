package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// runReply starts a ReplyWorkflow and waits for its answer.
func runReply(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("reply", flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	agent := fs.String("agent", "main", "agent id")
	session := fs.String("session", "", "session key (a reply without one keeps no state)")
	model := fs.String("model", "", "a one-off provider/model (strict: no fallback)")
	asJSON := fs.Bool("json", false, "print the whole result as JSON")
	wait := fs.Duration("wait", 0, "when every model is cooling down, wait (durably) up to this long for the first to come back instead of failing")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the answer")
	set, code, ok := parseFlags(fs, args, errOut)
	if !ok {
		return code
	}
	message := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(message) == "" {
		fmt.Fprintln(errOut, `baton reply: want a message: baton reply [flags] "message"`)
		return exitUsage
	}
	if *model != "" {
		if _, err := policy.ParseModelRef(*model); err != nil {
			fmt.Fprintf(errOut, "baton reply: --model: %v\n", err)
			return exitUsage
		}
	}
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton reply: %v\n", err)
		return exitUsage
	}
	if *wait < 0 {
		fmt.Fprintf(errOut, "baton reply: --wait must not be negative, got %v\n", *wait)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c, err := tf.dial(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton reply: %v\n", err)
		return exitFailure
	}
	defer c.Close()
	req := policy.ReplyRequest{Agent: *agent, Session: *session, Message: message, Model: *model, WaitForCooldown: *wait}
	var res policy.ReplyResult
	var run client.WorkflowRun
	// A user's /model during the reply may end it for a restart with the new selection: once.
	for restarts := 0; ; restarts++ {
		run, err = workflows.StartReply(ctx, c, tf.TaskQueue, req)
		if err != nil {
			fmt.Fprintf(errOut, "baton reply: starting the reply: %v\n", err)
			return exitFailure
		}
		err = run.Get(ctx, &res)
		var appErr *temporal.ApplicationError
		if restarts == 0 && errors.As(err, &appErr) && appErr.Type() == policy.ErrLiveSessionModelSwitch {
			fmt.Fprintf(errOut, "baton reply: %s; starting again with the session's new selection\n", appErr.Message())
			continue
		}
		break
	}
	if err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			if *asJSON {
				var details any
				_ = appErr.Details(&details)
				_ = json.NewEncoder(out).Encode(map[string]any{"workflowId": run.GetID(), "runId": run.GetRunID(), "error": map[string]any{
					"type": appErr.Type(), "message": appErr.Message(), "details": details}})
			}
			fmt.Fprintf(errOut, "baton reply: %s: %s (workflow %s, run %s)\n", appErr.Type(), appErr.Message(), run.GetID(), run.GetRunID())
			return exitFailure
		}
		if deadlinePassed(ctx, err) {
			fmt.Fprintf(errOut, "baton reply: no answer within %v (workflow %s, run %s, goes on; is baton-worker running?)\n", *timeout, run.GetID(), run.GetRunID())
			return exitFailure
		}
		fmt.Fprintf(errOut, "baton reply: %v (workflow %s, run %s)\n", err, run.GetID(), run.GetRunID())
		return exitFailure
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"workflowId": run.GetID(), "runId": run.GetRunID(), "result": res})
		return 0
	}
	for _, n := range res.Notices {
		fmt.Fprintln(out, n)
	}
	fmt.Fprintln(out, res.Text)
	return 0
}
