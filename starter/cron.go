package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
	_ "time/tzdata" // --tz works without the system's zone files

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/schedules"
	"github.com/batonhq/baton/workflows"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// cronPrefix keeps baton's schedules apart from others in the namespace.
const cronPrefix = schedules.CronPrefix

var overlapPolicies = map[string]enumspb.ScheduleOverlapPolicy{
	"skip": enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, "buffer_one": enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"buffer_all": enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL, "cancel_other": enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	"terminate_other": enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER, "allow_all": enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

// runCron dispatches `baton cron add|list|describe|pause|resume|trigger|backfill|delete`.
func runCron(ctx context.Context, args []string, out, errOut io.Writer) int {
	subs := "add, list, describe, pause, resume, trigger, backfill, delete"
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(out, cronHelp)
		return 0
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(errOut, "baton cron: want a subcommand first: %s\n", subs)
		return exitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("cron "+sub, flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	var (
		spec, tz, agent, model, fallbacks, session, overlap, note string
		noFallbacks                                               bool
		wait                                                      time.Duration
		from, to                                                  string
		budget                                                    float64
	)
	switch sub {
	case "add":
		fs.StringVar(&spec, "cron", "", `cron expression, e.g. "0 9 * * *" (required)`)
		fs.StringVar(&tz, "tz", "", "time zone of the expression, e.g. Europe/Berlin (default UTC)")
		fs.StringVar(&agent, "agent", "main", "agent id")
		fs.StringVar(&model, "model", "", "payload.model: the job's primary provider/model (default: the agent's)")
		fs.StringVar(&fallbacks, "fallbacks", "", "payload.fallbacks: comma-separated provider/model list (default: the configured fallbacks)")
		fs.BoolVar(&noFallbacks, "no-fallbacks", false, "payload.fallbacks: []: the job is strict")
		fs.StringVar(&session, "session", "", "session key the runs reply in (default: none)")
		fs.Float64Var(&budget, "budget-per-day", 0, "US dollars the job's runs may spend a UTC day, at the catalog's prices; a run that would start over it does not start (default: no budget)")
		fs.DurationVar(&wait, "wait", 0, "payload.waitForCooldown: when every model is cooling down, sleep (durably) until the first comes back, for up to this long (e.g. 30m)")
		fs.StringVar(&overlap, "overlap", "skip", "when a run is still going at the next time: skip, buffer_one, buffer_all, cancel_other, terminate_other, allow_all")
	case "pause", "resume":
		fs.StringVar(&note, "note", "", "why (shown in describe and the Web UI)")
	case "backfill":
		fs.StringVar(&from, "from", "", "start of the range, RFC 3339 (required)")
		fs.StringVar(&to, "to", "", "end of the range, RFC 3339 (required)")
	case "list", "describe", "trigger", "delete":
	default:
		fmt.Fprintf(errOut, "baton cron: unknown subcommand %q (%s)\n", sub, subs)
		return exitUsage
	}
	set, code, ok := parseFlags(fs, args[1:], errOut)
	if !ok {
		return code
	}
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton cron %s: %v\n", sub, err)
		return exitUsage
	}
	wantArgs := map[string]string{"add": "ID \"message\"", "describe": "ID", "pause": "ID", "resume": "ID", "trigger": "ID", "backfill": "ID", "delete": "ID"}
	if sub == "list" && fs.NArg() > 0 || sub != "list" && sub != "add" && fs.NArg() != 1 || sub == "add" && fs.NArg() < 2 {
		fmt.Fprintf(errOut, "baton cron %s: want %s\n", sub, wantArgs[sub])
		return exitUsage
	}
	var action *client.ScheduleWorkflowAction
	var overlapPolicy enumspb.ScheduleOverlapPolicy
	var start, end time.Time
	switch sub {
	case "add":
		req, err := cronRequest(agent, model, fallbacks, noFallbacks, session, strings.Join(fs.Args()[1:], " "))
		if err != nil {
			fmt.Fprintf(errOut, "baton cron add: %v\n", err)
			return exitUsage
		}
		if wait < 0 {
			fmt.Fprintf(errOut, "baton cron add: --wait %s is negative\n", wait)
			return exitUsage
		}
		req.WaitForCooldown = wait
		req.Job = fs.Arg(0)
		if set["budget-per-day"] {
			if budget < 0 || math.IsInf(budget, 0) || math.IsNaN(budget) {
				fmt.Fprintf(errOut, "baton cron add: --budget-per-day %v is not an amount of US dollars (0 or more)\n", budget)
				return exitUsage
			}
			req.JobBudget = &policy.Budget{PerDay: budget}
		}
		if err := checkCron(spec); err != nil {
			fmt.Fprintf(errOut, "baton cron add: --cron: %v\n", err)
			return exitUsage
		}
		if tz != "" {
			if _, err := time.LoadLocation(tz); err != nil {
				fmt.Fprintf(errOut, "baton cron add: --tz: %q is not a time zone (%v)\n", tz, err)
				return exitUsage
			}
		}
		var known bool
		if overlapPolicy, known = overlapPolicies[overlap]; !known {
			fmt.Fprintf(errOut, "baton cron add: --overlap: %q is not skip, buffer_one, buffer_all, cancel_other, terminate_other or allow_all\n", overlap)
			return exitUsage
		}
		action = &client.ScheduleWorkflowAction{ID: "cron-" + fs.Arg(0), Workflow: workflows.ReplyWorkflowName, Args: []any{req},
			TaskQueue: tf.TaskQueue, WorkflowExecutionTimeout: 24 * time.Hour, TypedSearchAttributes: workflows.ReplySearchAttributes(req.Agent, req.Session)}
	case "backfill":
		var err error
		if start, err = time.Parse(time.RFC3339, from); err != nil {
			fmt.Fprintf(errOut, "baton cron backfill: --from %q is not RFC 3339\n", from)
			return exitUsage
		}
		if end, err = time.Parse(time.RFC3339, to); err != nil || !end.After(start) {
			fmt.Fprintf(errOut, "baton cron backfill: --to %q is not an RFC 3339 time after --from\n", to)
			return exitUsage
		}
	}

	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := tf.dial(dctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton cron %s: %v\n", sub, err)
		return exitFailure
	}
	defer c.Close()
	sc := c.ScheduleClient()
	// Memos are written through the client's converter (encrypted under BATON_PAYLOAD_KEY).
	opts, _ := tf.clientOptions() // dial checked them
	if sub == "list" {
		return cronList(dctx, sc, opts.DataConverter, out, errOut)
	}
	id := fs.Arg(0)
	h := sc.GetHandle(dctx, cronPrefix+id)
	switch sub {
	case "add":
		_, err = sc.Create(dctx, client.ScheduleOptions{ID: cronPrefix + id,
			Spec:   client.ScheduleSpec{CronExpressions: []string{spec}, TimeZoneName: tz},
			Action: action, Overlap: overlapPolicy,
			// The server keeps the expression as calendar specs; the memo keeps it as written.
			Memo: map[string]any{"baton": "cron", "cron": spec, "tz": tz}})
		if err == nil {
			fmt.Fprintf(out, "Cron job %s: %q (%s), agent %s.\n", id, spec, orUTC(tz), agent)
		}
	case "describe":
		return cronDescribe(dctx, c, h, opts.DataConverter, id, out, errOut)
	case "pause":
		err = h.Pause(dctx, client.SchedulePauseOptions{Note: note})
	case "resume":
		err = h.Unpause(dctx, client.ScheduleUnpauseOptions{Note: note})
	case "trigger":
		err = h.Trigger(dctx, client.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL})
	case "backfill":
		err = h.Backfill(dctx, client.ScheduleBackfillOptions{Backfill: []client.ScheduleBackfill{{Start: start, End: end,
			Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL}}})
	case "delete":
		err = h.Delete(dctx)
	}
	if err != nil {
		fmt.Fprintf(errOut, "baton cron %s %s: %v\n", sub, id, err)
		return exitFailure
	}
	if sub != "add" {
		fmt.Fprintf(out, "Cron job %s: %s done.\n", id, sub)
	}
	return 0
}

func orUTC(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

// cronRequest is the reply a cron job starts: payload.model is a job primary that uses the
// configured fallbacks unless payload.fallbacks is given; [] is strict.
func cronRequest(agent, model, fallbacks string, noFallbacks bool, session, message string) (workflows.ReplyRequest, error) {
	if strings.TrimSpace(message) == "" {
		return workflows.ReplyRequest{}, errors.New("want a message: baton cron add ID --cron \"0 9 * * *\" \"message\"")
	}
	if noFallbacks && fallbacks != "" {
		return workflows.ReplyRequest{}, errors.New("--fallbacks and --no-fallbacks together")
	}
	cp := &policy.FixedChain{}
	if model != "" {
		ref, err := policy.ParseModelRef(model)
		if err != nil {
			return workflows.ReplyRequest{}, fmt.Errorf("--model: %w", err)
		}
		cp.Model = ref
	}
	if noFallbacks {
		cp.HasFallbacks, cp.Fallbacks = true, []policy.ModelRef{}
	}
	if fallbacks != "" {
		cp.HasFallbacks = true
		for i, f := range strings.Split(fallbacks, ",") {
			ref, err := policy.ParseModelRef(f)
			if err != nil {
				return workflows.ReplyRequest{}, fmt.Errorf("--fallbacks[%d]: %w", i, err)
			}
			cp.Fallbacks = append(cp.Fallbacks, ref)
		}
	}
	if cp.Model.IsZero() && cp.HasFallbacks {
		return workflows.ReplyRequest{}, errors.New("--fallbacks and --no-fallbacks need --model (payload.fallbacks goes with payload.model)")
	}
	return workflows.ReplyRequest{Agent: agent, Session: session, Message: message, FixedChain: cp}, nil
}

// checkCron catches the plainly malformed; the server checks the rest and says why.
func checkCron(spec string) error {
	if strings.TrimSpace(spec) == "" {
		return errors.New(`missing (e.g. "0 9 * * *")`)
	}
	if strings.HasPrefix(spec, "@") {
		return nil
	}
	if n := len(strings.Fields(spec)); n < 5 || n > 7 {
		return fmt.Errorf("%q has %d fields; a cron expression has 5 (minute hour day month weekday)", spec, n)
	}
	return nil
}

func cronList(ctx context.Context, sc client.ScheduleClient, dc converter.DataConverter, out, errOut io.Writer) int {
	it, err := sc.List(ctx, client.ScheduleListOptions{})
	if err != nil {
		fmt.Fprintf(errOut, "baton cron list: %v\n", err)
		return exitFailure
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tCRON\tPAUSED\tNEXT RUN")
	n := 0
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			fmt.Fprintf(errOut, "baton cron list: %v\n", err)
			return exitFailure
		}
		if !strings.HasPrefix(e.ID, cronPrefix) {
			continue
		}
		n++
		next := "-"
		if len(e.NextActionTimes) > 0 {
			next = e.NextActionTimes[0].UTC().Format(time.RFC3339)
		}
		cron := schedules.MemoString(dc, e.Memo, "cron")
		if cron == "" {
			cron = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", strings.TrimPrefix(e.ID, cronPrefix), cron, e.Paused, next)
	}
	_ = tw.Flush()
	if n == 0 {
		fmt.Fprintln(out, "(no cron jobs: baton cron add ID --cron \"0 9 * * *\" \"message\")")
	}
	return 0
}

func cronDescribe(ctx context.Context, c client.Client, h client.ScheduleHandle, dc converter.DataConverter, id string, out, errOut io.Writer) int {
	d, err := h.Describe(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton cron describe %s: %v\n", id, err)
		return exitFailure
	}
	fmt.Fprintf(out, "cron job %s\n", id)
	spec, tz := schedules.MemoString(dc, d.Memo, "cron"), schedules.MemoString(dc, d.Memo, "tz")
	if spec == "" && d.Schedule.Spec != nil {
		spec, tz = strings.Join(d.Schedule.Spec.CronExpressions, "; "), d.Schedule.Spec.TimeZoneName
	}
	fmt.Fprintf(out, "  cron:   %s (%s)\n", dash(spec), orUTC(tz))
	if a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction); ok && len(a.Args) > 0 {
		fmt.Fprintf(out, "  action: %s on task queue %s\n", a.Workflow, a.TaskQueue)
		if line := cronReplyLine(dc, a.Args[0]); line != "" {
			fmt.Fprintf(out, "  reply:  %s\n", line)
		}
	}
	fmt.Fprintf(out, "  paused: %v", d.Schedule.State.Paused)
	if d.Schedule.State.Note != "" {
		fmt.Fprintf(out, " (%s)", d.Schedule.State.Note)
	}
	fmt.Fprintln(out)
	if len(d.Info.NextActionTimes) > 0 {
		fmt.Fprintf(out, "  next:   %s\n", d.Info.NextActionTimes[0].UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(out, "  runs:   %d (%d skipped by the overlap policy)\n", d.Info.NumActions, d.Info.NumActionsSkippedOverlap)
	for _, a := range d.Info.RecentActions {
		wid := a.StartWorkflowResult.WorkflowID
		fmt.Fprintf(out, "  %s  %s: %s\n", a.ActualTime.UTC().Format(time.RFC3339), wid, runOutcome(ctx, c, wid, a.StartWorkflowResult.FirstExecutionRunID))
	}
	return 0
}

// cronReplyLine describes the reply a job starts (its argument, as the server keeps it: a
// payload the client's converter reads, encrypted under BATON_PAYLOAD_KEY).
func cronReplyLine(dc converter.DataConverter, arg any) string {
	p, ok := arg.(*commonpb.Payload)
	if !ok {
		return ""
	}
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	var req workflows.ReplyRequest
	if err := dc.FromPayload(p, &req); err != nil {
		return "unreadable (" + err.Error() + ")"
	}
	parts := []string{"agent " + req.Agent}
	if req.Session != "" {
		parts = append(parts, "session "+req.Session)
	}
	if c := req.FixedChain; c != nil && !c.Model.IsZero() {
		m := "model " + c.Model.String()
		switch {
		case c.HasFallbacks && len(c.Fallbacks) == 0:
			m += " (strict)"
		case c.HasFallbacks:
			var fb []string
			for _, f := range c.Fallbacks {
				fb = append(fb, f.String())
			}
			m += " then " + strings.Join(fb, ", ")
		default:
			m += " (then the configured fallbacks)"
		}
		parts = append(parts, m)
	}
	if req.WaitForCooldown > 0 {
		parts = append(parts, "waits up to "+req.WaitForCooldown.String()+" for a cooldown")
	}
	return strings.Join(parts, ", ")
}

// runOutcome is a cron run's answer or failure summary, or that it is still running.
func runOutcome(ctx context.Context, c client.Client, wid, rid string) string {
	desc, err := c.DescribeWorkflowExecution(ctx, wid, rid)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "running"
	}
	var res policy.ReplyResult
	err = c.GetWorkflow(ctx, wid, rid).Get(ctx, &res)
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &appErr):
		return "failed: " + appErr.Message()
	case err != nil:
		return "failed: " + err.Error()
	}
	return fmt.Sprintf("answered by %s/%s: %q", res.Served.Provider, res.Served.Model, summaryText(res.Text, 80))
}

func summaryText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
