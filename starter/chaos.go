package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/batonhq/baton/chaos"
)

// runChaos runs baton as a cluster on PostgreSQL under a steady load while processes die and
// dependencies restart, and checks every promise against the provider's ledger and the store
// (chaos/). It exits 1 when a promise broke or a fault could not be dealt.
func runChaos(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	postgres := fs.String("postgres", os.Getenv("BATON_TEST_POSTGRES"), "PostgreSQL URL whose role may create databases; the run makes its own (env BATON_TEST_POSTGRES; make chaos passes scripts/test-postgres.sh's)")
	restart := fs.String("postgres-restart", "", "shell command that restarts PostgreSQL, for that fault (make chaos: scripts/test-postgres.sh restart); empty skips the fault, said so")
	serverBin := fs.String("server-bin", "", "the Temporal dev server binary (default: $BATON_TEMPORAL_DEV, else temporal-dev beside this binary)")
	workerBin := fs.String("worker-bin", "", "the worker binary (default: baton-worker beside this binary)")
	duration := fs.Duration("duration", 5*time.Minute, "how long the load runs; the faults strike over its first 80 %")
	rate := fs.Float64("rate", 20, "replies a second")
	outage := fs.Duration("outage", 30*time.Second, "how long the provider outage lasts")
	deadline := fs.Duration("deadline", 3*time.Minute, "a request with no end by then counts as hung")
	dir := fs.String("dir", "", "folder for the processes' logs (default: a new temporary folder, kept)")
	jsonPath := fs.String("json", "", "also write the report as JSON to this file")
	keep := fs.Bool("keep", false, "keep the run's PostgreSQL databases (dropped by default)")
	calm := fs.Bool("calm", false, "no faults: the same load on the same cluster, for its figures without them")
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton chaos: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if strings.TrimSpace(*postgres) == "" {
		fmt.Fprintln(errOut, "baton chaos: --postgres (or BATON_TEST_POSTGRES) is required: a PostgreSQL URL whose role may create databases (scripts/test-postgres.sh prints one)")
		return exitUsage
	}
	for name, d := range map[string]time.Duration{"duration": *duration, "outage": *outage, "deadline": *deadline} {
		if d <= 0 {
			fmt.Fprintf(errOut, "baton chaos: --%s must be positive, got %v\n", name, d)
			return exitUsage
		}
	}
	if *rate <= 0 || *rate > 1000 {
		fmt.Fprintf(errOut, "baton chaos: --rate must be above 0 and at most 1000, got %v\n", *rate)
		return exitUsage
	}
	server, worker, err := benchBinaries(*serverBin, *workerBin)
	if err != nil {
		fmt.Fprintf(errOut, "baton chaos: %v\n", err)
		return exitUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(errOut, "baton chaos: finding this binary (for baton serve): %v\n", err)
		return exitFailure
	}
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", "baton-chaos-"); err != nil {
			fmt.Fprintf(errOut, "baton chaos: %v\n", err)
			return exitFailure
		}
	} else if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintf(errOut, "baton chaos: --dir: %v\n", err)
		return exitUsage
	}
	rep, err := chaos.Run(ctx, chaos.Options{Postgres: *postgres, PostgresRestart: *restart, ServerBin: server, WorkerBin: worker, BatonBin: self,
		Duration: *duration, Rate: *rate, Outage: *outage, Deadline: *deadline, Dir: *dir, Keep: *keep, Calm: *calm, Progress: errOut})
	if err != nil {
		fmt.Fprintf(errOut, "baton chaos: %v (logs in %s)\n", err, *dir)
		return exitFailure
	}
	rep.PrintTable(out)
	if *jsonPath != "" {
		if err := rep.WriteJSON(*jsonPath); err != nil {
			fmt.Fprintf(errOut, "baton chaos: --json: %v\n", err)
			return exitFailure
		}
	}
	if !rep.Pass {
		fmt.Fprintln(errOut, "baton chaos: a promise broke or a fault could not be dealt (see above)")
		return exitFailure
	}
	return 0
}
