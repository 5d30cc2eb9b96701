package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
	system := fs.String("system", "", "a system prompt")
	temperature := fs.Float64("temperature", 0, "sampling temperature (0..2)")
	maxTokens := fs.Int64("max-tokens", 0, "the most tokens the answer may have")
	var images []string
	fs.Func("image", "an image file (PNG, JPEG, GIF or WebP) to send with the message; repeatable", func(s string) error {
		images = append(images, s)
		return nil
	})
	storeURL := storeFlag(fs)
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
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c, err := tf.dial(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton reply: %v\n", err)
		return exitFailure
	}
	defer c.Close()
	content := &lazyStore{url: *storeURL}
	defer content.Close()
	req, err := workflows.WithTurn(ctx, content, policy.ReplyRequest{Agent: *agent, Session: *session, Model: *model, WaitForCooldown: *wait}, turn)
	if err != nil {
		fmt.Fprintf(errOut, "baton reply: %v\n", err)
		return exitFailure
	}
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

// cliTurn is the turn `baton reply` sends: an optional system prompt, then the message with its
// images. A file that is not an image of a type every wire takes is refused by name.
func cliTurn(message, system string, images []string) (policy.Turn, error) {
	user := policy.Message{Role: policy.RoleUser, Content: []policy.Part{policy.TextPart(message)}}
	for _, path := range images {
		data, err := os.ReadFile(path)
		if err != nil {
			return policy.Turn{}, fmt.Errorf("--image %s: %w", path, err)
		}
		mt := policy.SniffImage(data)
		if mt == "" {
			return policy.Turn{}, fmt.Errorf("--image %s: not a PNG, JPEG, GIF or WebP image", path)
		}
		user.Content = append(user.Content, policy.Part{Type: policy.PartImage, MediaType: mt, Data: data})
	}
	var turn policy.Turn
	if system != "" {
		turn.Messages = append(turn.Messages, policy.Message{Role: policy.RoleSystem, Content: []policy.Part{policy.TextPart(system)}})
	}
	turn.Messages = append(turn.Messages, user)
	return turn, nil
}
