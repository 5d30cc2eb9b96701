package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// runSession dispatches `baton session status|model|reset|patch|compact S`.
func runSession(ctx context.Context, args []string, out, errOut io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(out, sessionHelp)
		return 0
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(errOut, "baton session: want a subcommand first: list, status, model, reset, patch, compact (baton session --help)")
		return exitUsage
	}
	sub := args[0]
	if sub == "list" {
		return runSessionList(ctx, args[1:], out, errOut)
	}
	fs := flag.NewFlagSet("session "+sub, flag.ContinueOnError)
	agent := fs.String("agent", "main", "agent id (for a new session)")
	storeURL := storeFlag(fs)
	configPath := fs.String("config", os.Getenv("BATON_CONFIG"), "OpenClaw-shaped config, for the selected model (env BATON_CONFIG)")
	asJSON := fs.Bool("json", false, "print the session as JSON")
	var tf temporalFlags
	tf.register(fs)
	if _, code, ok := parseFlags(fs, args[1:], errOut); !ok {
		return code
	}
	want := map[string]int{"status": 1, "model": 2, "reset": 1, "compact": 1}
	n, known := want[sub]
	switch {
	case sub == "patch" && fs.NArg() >= 2:
	case sub == "patch":
		fmt.Fprintln(errOut, "baton session patch: want SESSION field=value...")
		return exitUsage
	case !known:
		fmt.Fprintf(errOut, "baton session: unknown subcommand %q (list, status, model, reset, patch, compact)\n", sub)
		return exitUsage
	case fs.NArg() != n:
		usage := map[string]string{"status": "SESSION", "model": "SESSION provider/model[@profile]", "reset": "SESSION", "compact": "SESSION"}
		fmt.Fprintf(errOut, "baton session %s: want %s\n", sub, usage[sub])
		return exitUsage
	}
	key := fs.Arg(0)
	var patch map[string]string
	var ref policy.ModelRef
	var profile string
	switch sub {
	case "model":
		spec := fs.Arg(1)
		if at := strings.LastIndex(spec, "@"); at > 0 {
			spec, profile = spec[:at], spec[at+1:]
		}
		var err error
		if ref, err = policy.ParseModelRef(spec); err != nil {
			fmt.Fprintf(errOut, "baton session model: %v\n", err)
			return exitUsage
		}
		if err := policy.CheckUserChoice(ref, profile); err != nil {
			fmt.Fprintf(errOut, "baton session model: %v\n", err)
			return exitUsage
		}
	case "patch":
		patch = map[string]string{}
		for _, kv := range fs.Args()[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				fmt.Fprintf(errOut, "baton session patch: %q is not field=value\n", kv)
				return exitUsage
			}
			switch k {
			case "model", "providerOverride", "modelOverride", "authProfileOverride":
			default:
				fmt.Fprintf(errOut, "baton session patch: unknown field %q (model, providerOverride, modelOverride, authProfileOverride)\n", k)
				return exitUsage
			}
			patch[k] = v
		}
	}
	open := openStore
	if sub == "status" {
		open = openStoreToRead
	}
	s, err := open(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton session %s: %v\n", sub, err)
		return exitFailure
	}
	defer s.Close()
	now := time.Now().UTC()
	var sess store.Session
	switch sub {
	case "status":
		sess, err = s.GetSession(ctx, key)
	case "model":
		sess, err = s.SetUserModel(ctx, key, *agent, ref, profile, now)
	case "reset":
		sess, err = s.ResetSession(ctx, key, now)
	case "compact":
		sess, err = s.CompactSession(ctx, key, now)
	case "patch":
		sess, err = s.PatchSession(ctx, key, *agent, patch, now)
	}
	if err != nil {
		fmt.Fprintf(errOut, "baton session %s: %v\n", sub, err)
		return exitFailure
	}
	if sub == "model" || (sub == "patch" && sess.LiveModelSwitchPending) {
		notifyRunningReplies(ctx, tf, key, sess, errOut)
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sess)
		return 0
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(errOut, "baton session %s: --config / BATON_CONFIG: %v\n", sub, err)
		return exitUsage
	}
	printStatus(out, sess, cfg)
	return 0
}

// printStatus shows a session as /status does: the selected model and, when the active one
// differs, the active fallback and why; the profile pin.
func printStatus(out io.Writer, sess store.Session, cfg *policy.Config) {
	if sess.Version == 0 {
		fmt.Fprintf(out, "session %s: new (no state yet)\n", sess.Key)
	} else {
		fmt.Fprintf(out, "session %s (agent %s, updated %s)\n", sess.Key, sess.Agent, sess.UpdatedAt.Format(time.RFC3339))
	}
	m := sess.Model
	selected := cfg.AgentPrimary(sess.Agent)
	source := "configured default"
	over, hasOverride := m.Override()
	switch src := m.EffectiveOverrideSource(); {
	case hasOverride && src == policy.SourceUser:
		selected, source = over, "your /model choice: strict, no fallback"
	case hasOverride && src == policy.SourceAuto:
		if origin, ok := m.Origin(); ok {
			selected = origin
		}
	}
	if selected.IsZero() {
		fmt.Fprintln(out, "  selected: (none: set agents.defaults.model)")
	} else {
		fmt.Fprintf(out, "  selected: %s (%s)\n", selected, source)
	}
	if hasOverride && m.EffectiveOverrideSource() == policy.SourceAuto {
		reason := strings.ReplaceAll(sess.FallbackReason, "_", " ")
		if reason == "" {
			reason = "fallback"
		}
		fmt.Fprintf(out, "  active:   %s (fallback since %s; %s; the selected model is tried again every 5 min)\n",
			over, m.ModelOverrideUpdatedAt.Format(time.RFC3339), reason)
	}
	if m.AuthProfileOverride != "" {
		fmt.Fprintf(out, "  profile:  %s (%s pin)\n", m.AuthProfileOverride, dash(m.AuthProfileOverrideSource))
	}
	if m.CompactionCount > 0 {
		fmt.Fprintf(out, "  compactions: %d\n", m.CompactionCount)
	}
	if sess.LiveModelSwitchPending {
		fmt.Fprintln(out, "  a model switch is pending for the running reply")
	}
}

// notifyRunningReplies sends switchModel to the session's running replies, found by the
// BatonSession search attribute. Temporal being out of reach is not an error: the session is
// written, and the next reply reads it.
func notifyRunningReplies(ctx context.Context, tf temporalFlags, key string, sess store.Session, errOut io.Writer) {
	over, ok := sess.Model.Override()
	if !ok {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := tf.dial(dctx)
	if err != nil {
		fmt.Fprintf(errOut, "note: Temporal not reachable (%s), so no running reply was told of the switch\n", tf.Address)
		return
	}
	defer c.Close()
	query := fmt.Sprintf("WorkflowType = '%s' AND BatonSession = '%s' AND ExecutionStatus = 'Running'",
		workflows.ReplyWorkflowName, strings.ReplaceAll(key, "'", "''"))
	resp, err := c.ListWorkflow(dctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
	if err != nil {
		fmt.Fprintf(errOut, "note: could not list the session's running replies: %v\n", err)
		return
	}
	profile := ""
	if sess.Model.AuthProfileOverrideSource == policy.SourceUser {
		profile = sess.Model.AuthProfileOverride
	}
	for _, e := range resp.GetExecutions() {
		_, err := c.UpdateWorkflow(dctx, client.UpdateWorkflowOptions{WorkflowID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId(),
			UpdateName: workflows.SwitchModelUpdate, Args: []any{workflows.SwitchModel{Model: over.String(), Profile: profile}},
			WaitForStage: client.WorkflowUpdateStageAccepted})
		if err != nil {
			fmt.Fprintf(errOut, "note: reply %s did not take the switch: %v\n", e.GetExecution().GetWorkflowId(), err)
			continue
		}
		fmt.Fprintf(errOut, "switch sent to the running reply %s\n", e.GetExecution().GetWorkflowId())
	}
}
