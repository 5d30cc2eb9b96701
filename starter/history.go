package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/registry"
	"github.com/batonhq/baton/ui"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
)

// loadHistory reads a history from a JSON file (an argument ending in .json, or an existing file)
// or fetches it from the server by workflow id.
func loadHistory(ctx context.Context, tf temporalFlags, arg, runID string) (*historypb.History, error) {
	if _, err := os.Stat(arg); err == nil || strings.HasSuffix(arg, ".json") {
		return history.Load(arg)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := tf.dial(dctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return history.Fetch(dctx, c, arg, runID)
}

// runHistory is `baton history export ID [--run-id R]`.
func runHistory(ctx context.Context, args []string, out, errOut io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(out, historyHelp)
		return 0
	}
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(errOut, "baton history: want `baton history export WORKFLOW_ID [--run-id R] > FILE.json`")
		return exitUsage
	}
	fs := flag.NewFlagSet("history export", flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	runID := fs.String("run-id", "", "run id (default: the latest run)")
	decode := fs.Bool("decode", false, "write the payloads and failure messages decrypted (BATON_PAYLOAD_KEY), readable without the key: keep the file as safe as the prompts it holds")
	set, code, ok := parseFlags(fs, args[1:], errOut)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(errOut, "baton history export: want one WORKFLOW_ID")
		return exitUsage
	}
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton history export: %v\n", err)
		return exitUsage
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := tf.dial(dctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton history export: %v\n", err)
		return exitFailure
	}
	defer c.Close()
	h, err := history.Fetch(dctx, c, fs.Arg(0), *runID)
	if err != nil {
		fmt.Fprintf(errOut, "baton history export: %v\n", err)
		return exitFailure
	}
	if *decode {
		pc, err := codec.FromEnv(os.LookupEnv)
		if err == nil && pc == nil {
			err = fmt.Errorf("--decode needs the key: %s is not set", codec.EnvKey)
		}
		if err == nil {
			codec.DecodeFailures(h, pc.Converters().Data)
			err = pc.DecodePayloads(h)
		}
		if err != nil {
			fmt.Fprintf(errOut, "baton history export: %v\n", err)
			return exitFailure
		}
	}
	data, err := history.Marshal(h)
	if err != nil {
		fmt.Fprintf(errOut, "baton history export: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(out, string(data))
	return 0
}

// runReplay replays a history against this binary's workflow code.
func runReplay(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	workflowID := fs.String("workflow-id", "", "fetch this workflow's history from the server")
	runID := fs.String("run-id", "", "run id (with --workflow-id; default: the latest run)")
	set, code, ok := parseFlags(fs, args, errOut)
	if !ok {
		return code
	}
	arg := *workflowID
	switch {
	case arg != "" && fs.NArg() > 0:
		fmt.Fprintln(errOut, "baton replay: give either FILE.json or --workflow-id, not both")
		return exitUsage
	case arg == "" && fs.NArg() != 1:
		fmt.Fprintln(errOut, "baton replay: want FILE.json or --workflow-id ID")
		return exitUsage
	case arg == "":
		arg = fs.Arg(0)
	}
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton replay: %v\n", err)
		return exitUsage
	}
	h, err := loadHistory(ctx, tf, arg, *runID)
	if err != nil {
		fmt.Fprintf(errOut, "baton replay: %v\n", err)
		return exitFailure
	}
	// An encrypted history replays through the same converters as the worker's (BATON_PAYLOAD_KEY).
	conv, err := codec.ConvertersFromEnv(os.LookupEnv)
	if err != nil {
		fmt.Fprintf(errOut, "baton replay: %v\n", err)
		return exitUsage
	}
	replayer, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
		DataConverter: conv.Data, FailureConverter: conv.Failure})
	if err != nil {
		fmt.Fprintf(errOut, "baton replay: %v\n", err)
		return exitFailure
	}
	registry.RegisterWorkflows(replayer)
	if err := replayer.ReplayWorkflowHistory(nil, h); err != nil {
		fmt.Fprintf(errOut, "baton replay: %s does not replay against this code: %v\n", arg, err)
		return exitFailure
	}
	fmt.Fprintf(out, "%s: %d events replay against this code\n", arg, len(h.GetEvents()))
	return 0
}

// runExplain prints a reply's failover timeline, and with --svg draws it.
func runExplain(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	runID := fs.String("run-id", "", "run id (default: the latest run)")
	asJSON := fs.Bool("json", false, "print the timeline as JSON")
	svgOut := fs.String("svg", "", "also write the timeline as a picture (SVG) to this file, e.g. for an incident report")
	set, code, ok := parseFlags(fs, args, errOut)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(errOut, "baton explain: want a WORKFLOW_ID or a FILE.json")
		return exitUsage
	}
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton explain: %v\n", err)
		return exitUsage
	}
	if set["svg"] && (*svgOut == "" || strings.HasSuffix(*svgOut, string(os.PathSeparator))) {
		fmt.Fprintf(errOut, "baton explain: --svg: want a file name, got %q\n", *svgOut)
		return exitUsage
	}
	// An encrypted history is read with the same keys as the worker's (BATON_PAYLOAD_KEY, and
	// BATON_PAYLOAD_KEYS for one written before a rotation).
	conv, err := codec.ConvertersFromEnv(os.LookupEnv)
	if err != nil {
		fmt.Fprintf(errOut, "baton explain: %v\n", err)
		return exitUsage
	}
	h, err := loadHistory(ctx, tf, fs.Arg(0), *runID)
	if err != nil {
		fmt.Fprintf(errOut, "baton explain: %v\n", err)
		return exitFailure
	}
	// Failure messages are encoded too (the failure converter): restore them for the timeline.
	codec.DecodeFailures(h, conv.Data)
	tl, err := history.ExplainWith(h, history.Options{DataConverter: conv.Data})
	if err != nil {
		fmt.Fprintf(errOut, "baton explain: %s: %v\n", fs.Arg(0), err)
		return exitFailure
	}
	if tl.Unreadable != "" {
		fmt.Fprintf(errOut, "baton explain: %s: %s\n", fs.Arg(0), tl.Unreadable)
	}
	if *svgOut != "" {
		if err := writeFileAtomic(*svgOut, history.RenderSVG(tl, history.SVGOptions{List: true})); err != nil {
			fmt.Fprintf(errOut, "baton explain: --svg %s: %v\n", *svgOut, err)
			return exitFailure
		}
		fmt.Fprintf(errOut, "baton explain: the timeline's picture is in %s\n", *svgOut)
	}
	// What the attempts spent, as their records say (a history from before spend was kept has none,
	// and prints as it always did).
	spent := ui.SpendOf(h, conv.Data, tl, nil)
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if spent.Any() {
			_ = enc.Encode(explainWithSpend(tl, spent))
		} else {
			_ = enc.Encode(tl)
		}
		return 0
	}
	r := tl.Request
	fmt.Fprintf(out, "reply %s: agent %s", tl.WorkflowID, r.Agent)
	if r.Session != "" {
		fmt.Fprintf(out, ", session %s", r.Session)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	header := "TIME\tSTEP\tCANDIDATE\tPROFILE\tOUTCOME\tREASON\tSTATUS\tWAIT\tDECISION"
	withSpend := spent.Any()
	if withSpend {
		header += "\tTOKENS\tCOST"
	}
	fmt.Fprintln(tw, header)
	for i, s := range tl.Steps {
		status, wait := "-", "-"
		if s.Status != 0 {
			status = fmt.Sprint(s.Status)
		}
		if s.Wait > 0 {
			wait = s.Wait.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", s.At.Format("15:04:05.000"), s.Kind, dash(s.Model), dash(s.Profile),
			dash(s.Outcome), dash(string(s.Reason)), status, wait, s.Decision)
		if withSpend {
			tokens, cost := "-", "-"
			if sp := spent.Steps[i]; sp != nil {
				tokens = ui.FormatTokens(*sp)
				if sp.Priced {
					cost = ui.FormatCost(sp.Cost)
				}
			}
			fmt.Fprintf(tw, "\t%s\t%s", tokens, cost)
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	switch {
	case tl.Served != nil:
		fmt.Fprintf(out, "result: answered by %s/%s with %s\n", tl.Served.Provider, tl.Served.Model, tl.Served.Profile)
	case tl.Error != "" && tl.ErrorType != "":
		fmt.Fprintf(out, "result: %s: %s\n", tl.ErrorType, tl.Error)
	case tl.Error != "":
		fmt.Fprintf(out, "result: %s: %s\n", tl.Result, tl.Error)
	case tl.NextRunID != "":
		fmt.Fprintf(out, "result: restarted as run %s\n", tl.NextRunID)
	default:
		fmt.Fprintf(out, "result: %s\n", tl.Result)
	}
	if spent.Total != nil {
		label := "spent"
		if spent.SoFar {
			label = "spent so far"
		}
		fmt.Fprintf(out, "%s: %s\n", label, ui.SpentLine(*spent.Total, spent.Unpriced))
	}
	return 0
}

// explainJSON is the timeline with what its attempts spent: each tried attempt's step carries
// its record's spend, and the reply its total. Only a history that recorded some is printed so;
// another prints the timeline as it always did.
type explainJSON struct {
	*history.Timeline
	Steps []explainStep `json:"steps"` // shadows the timeline's own
	Spend *policy.Spend `json:"spend,omitempty"`
}

type explainStep struct {
	history.Step
	Spend *policy.Spend `json:"spend,omitempty"`
}

func explainWithSpend(tl *history.Timeline, spent ui.ReplySpend) explainJSON {
	out := explainJSON{Timeline: tl, Steps: make([]explainStep, len(tl.Steps)), Spend: spent.Total}
	for i, s := range tl.Steps {
		out.Steps[i] = explainStep{Step: s, Spend: spent.Steps[i]}
	}
	return out
}

// writeFileAtomic writes data to path whole or not at all: a temporary file beside it, renamed.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename there is nothing left to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
