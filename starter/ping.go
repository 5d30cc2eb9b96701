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

	"github.com/batonhq/baton/workflows"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

func runPing(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("ping", flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the server and a worker")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	set, code, ok := parseFlags(fs, args, errOut)
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton ping: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *timeout <= 0 {
		fmt.Fprintf(errOut, "baton ping: --timeout must be positive, got %v\n", *timeout)
		return exitUsage
	}
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton ping: %v\n", err)
		return exitUsage
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	started := time.Now()
	c, err := tf.dial(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton ping: %v\n", err)
		return exitFailure
	}
	defer c.Close()

	remaining := time.Until(started.Add(*timeout))
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       fmt.Sprintf("ping-%d", started.UnixNano()),
		TaskQueue:                tf.TaskQueue,
		WorkflowExecutionTimeout: remaining, // the server ends it if no worker ever picks it up
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, workflows.PingWorkflowName, workflows.PingInput{Message: "ping"})
	if err != nil {
		fmt.Fprintf(errOut, "baton ping: starting the ping workflow: %v\n", err)
		return exitFailure
	}
	var res workflows.PingResult
	if err := run.Get(ctx, &res); err != nil {
		var timeoutErr *temporal.TimeoutError
		if errors.As(err, &timeoutErr) || deadlinePassed(ctx, err) {
			fmt.Fprintf(errOut, "baton ping: no worker answered on task queue %q within %v: is baton-worker running against %s?\n",
				tf.TaskQueue, *timeout, tf.Address)
			return exitFailure
		}
		fmt.Fprintf(errOut, "baton ping: %v\n", err)
		return exitFailure
	}
	elapsed := time.Since(started).Round(time.Millisecond)
	if *asJSON {
		_ = json.NewEncoder(out).Encode(map[string]any{
			"worker": res.Worker, "taskQueue": tf.TaskQueue, "workflowId": run.GetID(), "elapsedMs": elapsed.Milliseconds(),
		})
		return 0
	}
	fmt.Fprintf(out, "pong from worker %s on task queue %q in %v (workflow %s)\n", res.Worker, tf.TaskQueue, elapsed, run.GetID())
	return 0
}

// deadlinePassed reports a wait that ran out of time. The server may answer "deadline exceeded"
// a moment before the context itself expires, so the error counts too.
func deadlinePassed(ctx context.Context, err error) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 500*time.Millisecond {
		return true // the wait was cut at (or just before) the deadline, however the server put it
	}
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "deadline exceeded")
}
