// Command temporal-dev runs a real Temporal server (frontend, history, matching and worker services)
// in one process on SQLite, with the Web UI, so that baton's demo and tests need neither Docker nor
// a download. It accepts the flags that the Go SDK's testsuite.StartDevServer passes, so tests start
// it with DevServerOptions{ExistingPath: "bin/temporal-dev"}.
//
// With --db postgres://user:password@host:port/dbname?sslmode=disable it keeps its state on
// PostgreSQL instead, with Temporal's own postgres12 plugin and schema (set up or updated at
// start; visibility in dbname_visibility), and registers the namespaces through the frontend.
// Processes started with the same --db and different --port form one Temporal cluster: they find
// each other through the cluster_membership table, split the history shards and task queues, and
// when one stops or dies the others take over its share. --db and --db-filename exclude each
// other.
//
// It lives in its own Go module because go.temporal.io/server pins an older go.temporal.io/api than
// the SDK the rest of baton uses.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

// exitUsage is the exit code for bad flags, as for every baton command.
const exitUsage = 2

// gcPercent is the garbage collector's target (GOGC) unless the environment sets one: at Go's
// default of 100 the collector took 6-9 % of the server's CPU with 1,000 workflows in flight, at
// 400 it takes ~3 %, for a few hundred MB more of heap (BENCHMARKS.md).
const gcPercent = 400

func main() {
	if v := gcTarget(os.Getenv); v != 0 {
		debug.SetGCPercent(v)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// gcTarget is the GOGC to set: gcPercent, or 0 (leave it) when GOGC is in the environment.
func gcTarget(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return 0
	}
	return gcPercent
}

func run(args []string, stdout, stderr io.Writer) int {
	// Listen before anything starts: a caller may interrupt as soon as the frontend answers.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	opts, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "temporal-dev: %v\n", err)
		return exitUsage
	}
	srv, err := newDevServer(opts)
	if err != nil {
		fmt.Fprintf(stderr, "temporal-dev: %s\n", opts.pg.redact(err.Error()))
		return 1
	}
	if err := srv.start(); err != nil {
		fmt.Fprintf(stderr, "temporal-dev: %s\n", opts.pg.redact(err.Error()))
		srv.stop()
		return 1
	}
	fmt.Fprintf(stdout, "Temporal server: %s (namespace %s)\n", opts.frontendAddress(), strings.Join(opts.namespaces, ", "))
	if opts.headless {
		fmt.Fprintln(stdout, "Web UI: off (--headless)")
	} else {
		fmt.Fprintf(stdout, "Web UI: http://%s\n", opts.uiAddress())
	}

	select {
	case s := <-sig:
		fmt.Fprintf(stderr, "temporal-dev: %v received, stopping\n", s)
	case err := <-srv.uiErr:
		fmt.Fprintf(stderr, "temporal-dev: web UI: %s\n", opts.pg.redact(err.Error()))
		srv.stop()
		return 1
	}
	srv.stop()
	fmt.Fprintln(stderr, "temporal-dev: stopped")
	return 0
}
