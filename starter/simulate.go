package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/batonhq/baton/lab/scenario"
)

// runSimulate plays a scenario file (docs/SCENARIOS.md) through the real workflow and prints
// what happened; with --check it compares that with the file's expect.
func runSimulate(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	check := fs.Bool("check", false, "compare with the file's expect: exit 1 with a per-field diff on a mismatch")
	brief := fs.Bool("brief", false, "print one line per turn and attempt instead of JSON")
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(errOut, "baton simulate: want one scenario FILE")
		return exitUsage
	}
	sc, err := scenario.Load(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(errOut, "baton simulate: %v\n", err)
		return exitUsage
	}
	res, err := scenario.Run(ctx, sc)
	if err != nil {
		fmt.Fprintf(errOut, "baton simulate: %s: %v\n", fs.Arg(0), err)
		return exitFailure
	}
	if *brief {
		printBrief(out, res)
	} else {
		data, err := res.JSON()
		if err != nil {
			fmt.Fprintf(errOut, "baton simulate: %v\n", err)
			return exitFailure
		}
		fmt.Fprintln(out, string(data))
	}
	if !*check {
		return 0
	}
	diffs, err := scenario.Check(sc.Expect, res)
	if err != nil {
		fmt.Fprintf(errOut, "baton simulate: %s: %v\n", fs.Arg(0), err)
		return exitUsage
	}
	if len(diffs) > 0 {
		fmt.Fprintf(errOut, "baton simulate: %s: %d mismatch(es) with expect:\n", fs.Arg(0), len(diffs))
		for _, d := range diffs {
			fmt.Fprintln(errOut, "  "+d)
		}
		return exitFailure
	}
	fmt.Fprintf(errOut, "baton simulate: %s: matches expect\n", fs.Arg(0))
	return 0
}

// printBrief is the scenario's story, a line per turn and per attempt.
func printBrief(out io.Writer, res *scenario.Output) {
	fmt.Fprintln(out, res.Name)
	for _, t := range res.Turns {
		line := fmt.Sprintf("%s  %s", t.At, t.Outcome)
		if t.Served != nil {
			line += fmt.Sprintf(" by %s/%s (%s)", t.Served.Provider, t.Served.Model, t.Served.Profile)
		}
		if t.Error != nil {
			line += fmt.Sprintf(": %v", t.Error["message"])
		}
		fmt.Fprintln(out, line)
		for _, a := range t.Attempts {
			fmt.Fprintf(out, "    %s/%s %v: %v", a["provider"], a["model"], orDash(a["profile"]), a["result"])
			if r, ok := a["reason"]; ok {
				fmt.Fprintf(out, " (%v)", r)
			}
			if n, ok := a["retries"].(int); ok && n > 0 {
				fmt.Fprintf(out, " after %d retries", n)
			}
			fmt.Fprintln(out)
		}
		for _, n := range t.Notices {
			fmt.Fprintf(out, "    %s\n", n)
		}
	}
}

func orDash(v any) any {
	if v == nil {
		return "-"
	}
	return v
}
