package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

const (
	exitFailure = 1
	exitUsage   = 2
)

// command is one `baton NAME` subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, out, errOut io.Writer) int
}

var commands = map[string]command{
	"bench":         {"measure baton end to end against its goals (make bench) [--json]", runBench},
	"chaos":         {"run a PostgreSQL cluster under load while things break, and check every promise (make chaos)", runChaos},
	"auth":          {"auth profiles: list, add, order set, clear-cooldown, test, disable, enable, remove, rekey", runAuth},
	"doctor":        {"import OpenClaw's legacy auth files (--state-dir DIR [--fix])", runDoctor},
	"classify":      {"classify provider errors: JSON lines on stdin, one {\"reason\"} per line out", runClassify},
	"config":        {"check a config: every problem with its line (config check FILE [--store URL])", runConfig},
	"fake-provider": {"serve the scriptable fake model provider (--listen ADDR --script FILE)", runFakeProvider},
	"codec-server":  {"serve the payload codec (BATON_PAYLOAD_KEY) for the Web UI", runCodecServer},
	"cron":          {"cron jobs on Temporal Schedules: add, list, describe, pause, resume, trigger, backfill, delete", runCron},
	"explain":       {"print a reply's failover timeline (WORKFLOW_ID or FILE.json) [--json]", runExplain},
	"history":       {"export a workflow history as JSON (history export ID > FILE.json)", runHistory},
	"replay":        {"replay a history (FILE.json or --workflow-id ID) against this code", runReplay},
	"serve":         {"an OpenAI-compatible endpoint: POST /v1/chat/completions, GET /v1/models (--listen 127.0.0.1:8080)", runServe},
	"session":       {"list, show or change sessions: list, status, model, reset, patch, compact", runSession},
	"replies":       {"list recent replies from visibility (--failed-over, --agent, --since 24h)", runReplies},
	"health":        {"probe a /healthz or /readyz URL: exit 0 when it answers 2xx (compose healthchecks)", runHealth},
	"simulate":      {"run a scenario file through the real workflow (--check compares with its expect)", runSimulate},
	"reply":         {"start a reply and print the answer (and any failover notice)", runReply},
	"ping":          {"check that a worker answers on the task queue", runPing},
	"version":       {"print baton's version", runVersion},
}

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(out)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(errOut, "baton: unknown command %q (run 'baton help')\n", args[0])
		return exitUsage
	}
	if text, ok := dispatcherHelp[args[0]]; ok && len(args) == 2 && isHelp(args[1]) {
		fmt.Fprint(out, text)
		return 0
	}
	return cmd.run(ctx, args[1:], out, errOut)
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "baton: durable model failover for LLM agents, on Temporal.")
	fmt.Fprintln(w, "\nUsage: baton COMMAND [flags]   (baton COMMAND --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nEnvironment: TEMPORAL_ADDRESS (127.0.0.1:7233), TEMPORAL_NAMESPACE (default), BATON_TASK_QUEUE (baton).")
}

func runVersion(_ context.Context, args []string, out, errOut io.Writer) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(out, "Usage: baton version   (prints baton's version)")
		printExamples(out, "version")
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintf(errOut, "baton version: unexpected argument %q\n", strings.Join(args, " "))
		return exitUsage
	}
	fmt.Fprintf(out, "baton %s\n", version)
	return 0
}
