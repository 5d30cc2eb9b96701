package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/batonhq/baton/testsuite/scenario"
)

// runSimulate plays a scenario file (docs/SCENARIOS.md) through the real workflow and prints
// what happened; with --check it compares that with the file's expect.
func runSimulate(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	check := fs.Bool("check", false, "compare with the file's expect: exit 1 with a per-field diff on a mismatch")
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
	data, err := res.JSON()
	if err != nil {
		fmt.Fprintf(errOut, "baton simulate: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(out, string(data))
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
