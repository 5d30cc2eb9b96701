package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/node"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/workflows"
	enumspb "go.temporal.io/api/enums/v1"
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
	system := fs.String("system", "", "a system prompt")
	temperature := fs.Float64("temperature", 0, "sampling temperature (0..2)")
	maxTokens := fs.Int64("max-tokens", 0, "the most tokens the answer may have")
	var images []string
	fs.Func("image", "an image file (PNG, JPEG, GIF or WebP) to send with the message; repeatable", func(s string) error {
		images = append(images, s)
		return nil
	})
	storeURL := storeFlag(fs)
	configPath := fs.String("config", os.Getenv("BATON_CONFIG"), "the worker's config: with it, the attempts run here and the answer prints as it streams (env BATON_CONFIG)")
	set, code, ok := parseFlags(fs, args, errOut)
	if !ok {
		return code
	}
	if fs.NArg() == 2 && fs.Arg(0) == "cancel" {
		return cancelReply(ctx, tf, set, fs.Arg(1), out, errOut)
	}
	if fs.NArg() == 2 && fs.Arg(0) == "attach" {
		return attachReply(ctx, tf, set, *storeURL, fs.Arg(1), out, errOut)
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
	turn, err := cliTurn(message, *system, images)
	if err != nil {
		fmt.Fprintf(errOut, "baton reply: %v\n", err)
		return exitUsage
	}
	if set["temperature"] {
		if *temperature < 0 || *temperature > 2 {
			fmt.Fprintf(errOut, "baton reply: --temperature: %v is not 0..2\n", *temperature)
			return exitUsage
		}
		turn.Params.Temperature = temperature
	}
	if set["max-tokens"] {
		if *maxTokens < 1 {
			fmt.Fprintf(errOut, "baton reply: --max-tokens: %d is not a positive number\n", *maxTokens)
			return exitUsage
		}
		turn.Params.MaxTokens = maxTokens
	}
	var cfg *policy.Config
	if *configPath != "" {
		if cfg, err = loadConfig(*configPath); err != nil {
			fmt.Fprintf(errOut, "baton reply: --config / BATON_CONFIG: %v\n", err)
			return exitUsage
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	// Ctrl-C aborts the reply, not only this command.
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	c, err := tf.dial(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton reply: %v\n", err)
		return exitFailure
	}
	defer c.Close()
	content := &lazyStore{url: *storeURL}
	defer content.Close()
	req, err := workflows.WithTurn(ctx, content, workflows.ReplyRequest{Agent: *agent, Session: *session, Model: *model, WaitForCooldown: *wait}, turn)
	if err != nil {
		fmt.Fprintf(errOut, "baton reply: %v\n", err)
		return exitFailure
	}
	// With the worker's config, this process runs the attempts itself and prints the answer as
	// the provider sends it.
	var stream *live.Stream
	if cfg != nil && !*asJSON {
		// The attempts run on the node a worker runs them on (store, limits, metrics).
		n, err := node.Open(ctx, node.Options{Service: "baton", Store: *storeURL, StoreName: "--store / BATON_STORE",
			Config: cfg, ConfigName: "--config / BATON_CONFIG", ConfigFile: *configPath, NoTracing: true})
		if err != nil {
			fmt.Fprintf(errOut, "baton reply: %v\n", err)
			if node.IsUsage(err) {
				return exitUsage
			}
			return exitFailure
		}
		defer n.Close()
		if n.Warning != nil {
			fmt.Fprintf(errOut, "baton reply: %v (the default is used)\n", n.Warning)
		}
		door, err := n.Door(c, tf.TaskQueue)
		if err != nil {
			fmt.Fprintf(errOut, "baton reply: %v\n", err)
			return exitFailure
		}
		defer door.Stop()
		key := live.NewKey()
		stream = door.Hub.Open(ctx, key)
		defer stream.Close()
		req.StreamQueue, req.StreamKey = door.Queue, key
	}
	var res policy.ReplyResult
	// A user's /model during the reply starts it over with the new selection (continue-as-new):
	// the wait follows the new run.
	// A reply nobody will run is said at once, not after the whole timeout.
	if err := waitForWorker(ctx, c, tf.TaskQueue, noWorkerWait); err != nil {
		fmt.Fprintf(errOut, "baton reply: %v\n", err)
		return exitFailure
	}
	run, err := workflows.StartReply(ctx, c, tf.TaskQueue, req)
	if err != nil {
		fmt.Fprintf(errOut, "baton reply: starting the reply: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(errOut, "baton reply: workflow %s, run %s\n", run.GetID(), run.GetRunID())
	if isTerminal(errOut) {
		stopStatus := showStatus(ctx, c, run, errOut)
		defer stopStatus()
	}
	printed := &strings.Builder{}
	err = waitPrinting(ctx, run, stream, &res, out, printed)
	if ctx.Err() != nil && !deadlinePassed(ctx, err) {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if cerr := c.CancelWorkflow(cctx, run.GetID(), run.GetRunID()); cerr != nil {
			fmt.Fprintf(errOut, "baton reply: interrupted; cancelling the reply failed: %v (workflow %s, run %s)\n", cerr, run.GetID(), run.GetRunID())
			return exitFailure
		}
		fmt.Fprintf(errOut, "\nbaton reply: interrupted: the reply is aborted (workflow %s, run %s)\n", run.GetID(), run.GetRunID())
		return exitFailure
	}
	if printed.Len() > 0 {
		fmt.Fprintln(out)
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
			// A sentence first; the error's name (for scripts and searches) after it.
			fmt.Fprintf(errOut, "baton reply: %s (%s; workflow %s, run %s)\n", appErr.Message(), appErr.Type(), run.GetID(), run.GetRunID())
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
	if printed.Len() > 0 {
		// The answer went out as it streamed; what did not (an attempt on the shared worker) follows.
		if rest, ok := strings.CutPrefix(res.Text, printed.String()); ok && rest != "" {
			fmt.Fprintln(out, rest)
		}
		for _, n := range res.Notices {
			fmt.Fprintln(out, n)
		}
		return 0
	}
	for _, n := range res.Notices {
		fmt.Fprintln(out, n)
	}
	fmt.Fprintln(out, res.Text)
	return 0
}

// waitPrinting waits for the reply's result, printing the answer's text as it streams.
func waitPrinting(ctx context.Context, run client.WorkflowRun, stream *live.Stream, res *policy.ReplyResult, out io.Writer, printed *strings.Builder) error {
	if stream == nil {
		return run.Get(ctx, res)
	}
	done := make(chan error, 1)
	go func() { done <- run.Get(ctx, res) }()
	print := func() {
		for _, d := range stream.Take() {
			if d.Text != "" {
				fmt.Fprint(out, d.Text)
				printed.WriteString(d.Text)
			}
		}
	}
	for {
		select {
		case <-stream.Ready():
			print()
		case err := <-done:
			print()
			return err
		}
	}
}

// cancelReply is `baton reply cancel ID`: the reply is aborted (its provider call closed, its
// fallback override rolled back) and fails as AbortedError.
func cancelReply(ctx context.Context, tf temporalFlags, set map[string]bool, id string, out, errOut io.Writer) int {
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton reply cancel: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := tf.dial(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton reply cancel: %v\n", err)
		return exitFailure
	}
	defer c.Close()
	if err := c.CancelWorkflow(ctx, id, ""); err != nil {
		fmt.Fprintf(errOut, "baton reply cancel: %s: %v\n", id, err)
		return exitFailure
	}
	fmt.Fprintf(out, "cancelled %s\n", id)
	return 0
}

// cliTurn is the turn `baton reply` sends: an optional system prompt, then the message with its
// images. A file that is not an image of a type every wire takes is refused by name.
func cliTurn(message, system string, images []string) (provider.Turn, error) {
	user := provider.Message{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart(message)}}
	for _, path := range images {
		data, err := os.ReadFile(path)
		if err != nil {
			return provider.Turn{}, fmt.Errorf("--image %s: %w", path, err)
		}
		mt := provider.SniffImage(data)
		if mt == "" {
			return provider.Turn{}, fmt.Errorf("--image %s: not a PNG, JPEG, GIF or WebP image", path)
		}
		user.Content = append(user.Content, provider.Part{Type: provider.PartImage, MediaType: mt, Data: data})
	}
	var turn provider.Turn
	if system != "" {
		turn.Messages = append(turn.Messages, provider.Message{Role: provider.RoleSystem, Content: []provider.Part{provider.TextPart(system)}})
	}
	turn.Messages = append(turn.Messages, user)
	return turn, nil
}

// noWorkerWait is how long baton reply waits for a worker to poll its task queue.
const noWorkerWait = 10 * time.Second

// waitForWorker returns once a worker polls taskQueue, or an error that says none does.
func waitForWorker(ctx context.Context, c client.Client, taskQueue string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		resp, err := c.DescribeTaskQueue(ctx, taskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err == nil {
			for _, p := range resp.GetPollers() {
				if time.Since(p.GetLastAccessTime().AsTime()) < time.Minute {
					return nil
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no worker polls the task queue %q: start baton-worker with BATON_TASK_QUEUE=%s (and the same TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE)", taskQueue, taskQueue)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// isTerminal reports whether w is a terminal (status lines are for people, not for pipes).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// showStatus says, on a terminal, what the reply is waiting for: the attempt in flight (which
// candidate, which profile) or a wait (a Retry-After, a backoff, a durable wait for a cooldown).
func showStatus(ctx context.Context, c client.Client, run client.WorkflowRun, w io.Writer) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		last := ""
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.StatusQuery)
			if err != nil {
				continue
			}
			var st workflows.Status
			if v.Get(&st) != nil {
				continue
			}
			line := ""
			switch {
			case !st.WaitUntil.IsZero():
				line = fmt.Sprintf("waiting until %s before trying again", st.WaitUntil.Local().Format("15:04:05"))
			case st.Candidate != "":
				line = fmt.Sprintf("trying %s with %s (attempt %d)", st.Candidate, st.Profile, len(st.Attempts)+1)
			}
			if line != "" && line != last {
				fmt.Fprintf(w, "baton reply: %s\n", line)
				last = line
			}
		}
	}()
	return cancel
}
