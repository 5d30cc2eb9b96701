package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/batonhq/baton/bench"
	"github.com/batonhq/baton/lab"
)

// runBench measures baton end to end against its goals (bench/) and prints a table of
// the figures; --json prints bench/results.json's content on stdout and the table on stderr.
func runBench(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the results as JSON on stdout (the table and progress go to stderr)")
	serverBin := fs.String("server-bin", "", "the Temporal dev server binary (default: $BATON_TEMPORAL_DEV, else temporal-dev beside this binary)")
	workerBin := fs.String("worker-bin", "", "the worker binary (default: baton-worker beside this binary)")
	latency := fs.Duration("latency", 300*time.Millisecond, "latency of every healthy answer of the fake provider")
	samples := fs.Int("samples", 20, "samples of each sequential measurement")
	inFlight := fs.Int("in-flight", 1000, "replies in flight at once for throughput, and as many workflows of each engine floor (local and regular activity) before them")
	outage := fs.Duration("outage", 60*time.Second, "how long the primary is down in the outage measurement")
	every := fs.Duration("outage-every", time.Second, "one reply per this interval during the outage")
	firstToken := fs.Duration("first-token-timeout", 5*time.Second, "the worker's first-token timeout during the run")
	postgres := fs.String("postgres", "", "run the dev server (temporal-dev --db) and the store on PostgreSQL: a URL whose role may create databases; the run makes its own and drops them (make bench passes scripts/test-postgres.sh's)")
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton bench: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	for name, d := range map[string]time.Duration{"latency": *latency, "outage": *outage, "outage-every": *every, "first-token-timeout": *firstToken} {
		if d <= 0 {
			fmt.Fprintf(errOut, "baton bench: --%s must be positive, got %v\n", name, d)
			return exitUsage
		}
	}
	if *samples < 1 || *inFlight < 1 {
		fmt.Fprintf(errOut, "baton bench: --samples and --in-flight must be at least 1\n")
		return exitUsage
	}
	server, worker, err := benchBinaries(*serverBin, *workerBin)
	if err != nil {
		fmt.Fprintf(errOut, "baton bench: %v\n", err)
		return exitUsage
	}
	table := out
	if *asJSON {
		table = errOut
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(errOut, "baton bench: finding this binary (for baton serve): %v\n", err)
		return exitFailure
	}
	res, err := bench.Run(ctx, bench.Options{ServerBin: server, WorkerBin: worker, BatonBin: self, Latency: *latency, Samples: *samples,
		InFlight: *inFlight, Outage: *outage, OutageEvery: *every, FirstTokenTimeout: *firstToken, Progress: errOut, Postgres: *postgres})
	if err != nil {
		fmt.Fprintf(errOut, "baton bench: %v\n", err)
		return exitFailure
	}
	res.PrintTable(table)
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(errOut, "baton bench: %v\n", err)
			return exitFailure
		}
	}
	if !res.AllPass() {
		fmt.Fprintln(errOut, "baton bench: some figures miss their goals (see BENCHMARKS.md for what limits each)")
		return exitFailure
	}
	return 0
}

// benchBinaries finds the dev server and the worker: flags, then $BATON_TEMPORAL_DEV, then the
// folder of this binary (bin/ after make build).
func benchBinaries(server, worker string) (string, string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", "", err
	}
	dir := filepath.Dir(self)
	if server == "" {
		server = os.Getenv(lab.DevServerEnv)
	}
	if server == "" {
		server = filepath.Join(dir, "temporal-dev")
	}
	if worker == "" {
		worker = filepath.Join(dir, "baton-worker")
	}
	for flagName, p := range map[string]string{"--server-bin": server, "--worker-bin": worker} {
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("%s: %s not found (run `make build`)", flagName, p)
		}
	}
	return server, worker, nil
}
