// Package bench measures baton end to end against its performance goals: a real Temporal dev
// server (bin/temporal-dev), a real worker process (bin/baton-worker) and the fake provider at a
// fixed latency, all on loopback. `baton bench` runs it and `make bench` calls that.
//
// Every figure is measured side by side in one run, so the ratios compare like with like: the
// direct call and the reply hit the same fake provider on the same machine at the same time.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"go.temporal.io/sdk/client"
)

// Options size a run. The zero value of a field takes the default the goals are stated for.
type Options struct {
	// ServerBin is bin/temporal-dev; WorkerBin is bin/baton-worker; BatonBin is bin/baton (for
	// `baton serve`, whose time to first token is measured).
	ServerBin, WorkerBin, BatonBin string
	// Latency of every healthy answer of the fake provider (300 ms).
	Latency time.Duration
	// Samples of each sequential measurement (20).
	Samples int
	// InFlight replies started at once for throughput and p99 overhead (1,000).
	InFlight int
	// Outage is how long the primary is down while replies arrive every OutageEvery (60 s, 1 s).
	Outage, OutageEvery time.Duration
	// FirstTokenTimeout is the worker's BATON_FIRST_TOKEN_TIMEOUT_MS during the run (5 s).
	FirstTokenTimeout time.Duration
	// Progress receives a line per phase (nil: none).
	Progress io.Writer
	// Postgres, when set, is a PostgreSQL URL whose role may create databases: the run puts the
	// dev server's persistence and visibility (temporal-dev --db) and the store on databases of
	// its own there, dropped after. Empty: both on SQLite, as `make demo` runs.
	Postgres string
}

func (o *Options) defaults() {
	if o.Latency <= 0 {
		o.Latency = 300 * time.Millisecond
	}
	if o.Samples <= 0 {
		o.Samples = 20
	}
	if o.InFlight <= 0 {
		o.InFlight = 1000
	}
	if o.Outage <= 0 {
		o.Outage = 60 * time.Second
	}
	if o.OutageEvery <= 0 {
		o.OutageEvery = time.Second
	}
	if o.FirstTokenTimeout <= 0 {
		o.FirstTokenTimeout = 5 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// Figure is one measured value with its goal.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	// Goal and Cmp ("<=" or ">="): the figure passes when Value Cmp Goal.
	Goal float64 `json:"goal"`
	Cmp  string  `json:"cmp"`
	Pass bool    `json:"pass"`
	// How says what was measured.
	How string `json:"how"`
}

// Results is bench/results.json.
type Results struct {
	At      time.Time `json:"at"`
	Machine string    `json:"machine"`
	Setup   Setup     `json:"setup"`
	Figures []Figure  `json:"figures"`
	// Raw holds the measurements the figures come from, in milliseconds unless named otherwise.
	Raw map[string]float64 `json:"raw"`
	// Events lists the history events of the measured happy and failover replies.
	Events map[string][]string `json:"events"`
	// Timeline gives the same events with their times: where a reply's overhead goes.
	Timeline map[string][]string `json:"timeline"`
}

// Setup records what the run was sized with.
type Setup struct {
	LatencyMs           int64 `json:"latencyMs"`
	Samples             int   `json:"samples"`
	InFlight            int   `json:"inFlight"`
	OutageSeconds       int64 `json:"outageSeconds"`
	OutageEveryMs       int64 `json:"outageEveryMs"`
	FirstTokenTimeoutMs int64 `json:"firstTokenTimeoutMs"`
	// ServerArgs are the extra dev server flags of $BATON_BENCH_SERVER_ARGS, if any.
	ServerArgs string `json:"serverArgs,omitempty"`
	// Databases is where the dev server and the store kept their state: "sqlite" or "postgresql".
	Databases string `json:"databases"`
}

// AllPass reports whether every figure met its goal.
func (r *Results) AllPass() bool {
	for _, f := range r.Figures {
		if !f.Pass {
			return false
		}
	}
	return true
}

// Figure returns the figure called name.
func (r *Results) Figure(name string) (Figure, bool) {
	for _, f := range r.Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// Run measures every figure once and returns them with their goals.
func Run(ctx context.Context, opts Options) (*Results, error) {
	opts.defaults()
	dir, err := os.MkdirTemp("", "baton-bench-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	b := &bench{opts: opts, dir: dir, raw: map[string]float64{}}
	defer b.close()
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	return b.run(ctx)
}

type bench struct {
	opts   Options
	dir    string
	server *lab.Server
	fake   *fakeprovider.Server
	store  *store.Store
	config *policy.Config
	c      client.Client
	worker *exec.Cmd
	logf   *os.File
	// serve is `baton serve`, at serveURL.
	serve    *exec.Cmd
	serveLog *os.File
	serveURL string
	raw      map[string]float64
	seq      int
	// pgName is the run's own database on Options.Postgres (its _visibility and _store beside it).
	pgName string
}

func (b *bench) progress(format string, args ...any) {
	fmt.Fprintf(b.opts.Progress, "bench: "+format+"\n", args...)
}

// run measures the phases in order (each phase's file says what it measures, and leaves its raw
// figures in b.raw) and judges them against their goals.
func (b *bench) run(ctx context.Context) (*Results, error) {
	o := b.opts
	res := &Results{At: time.Now().UTC(), Machine: machine(), Raw: b.raw, Events: map[string][]string{}, Timeline: map[string][]string{}, Setup: Setup{
		LatencyMs: o.Latency.Milliseconds(), Samples: o.Samples, InFlight: o.InFlight,
		OutageSeconds: int64(o.Outage / time.Second), OutageEveryMs: o.OutageEvery.Milliseconds(),
		FirstTokenTimeoutMs: o.FirstTokenTimeout.Milliseconds(), ServerArgs: os.Getenv("BATON_BENCH_SERVER_ARGS"), Databases: "sqlite"}}
	if o.Postgres != "" {
		res.Setup.Databases = "postgresql"
	}

	if err := b.warmUp(ctx); err != nil {
		return nil, err
	}
	happyRun, err := b.happy(ctx)
	if err != nil {
		return nil, err
	}
	failRun, err := b.failover(ctx)
	if err != nil {
		return nil, err
	}
	happyEvents, err := b.record(ctx, res, "happy", happyRun)
	if err != nil {
		return nil, err
	}
	failEvents, err := b.record(ctx, res, "failover", failRun)
	if err != nil {
		return nil, err
	}
	b.raw["events_failover"] = float64(failEvents)
	silent, err := b.silent(ctx)
	if err != nil {
		return nil, err
	}

	var serveFigures []Figure
	if b.serve != nil {
		streamedEvents, err := b.ttft(ctx, res)
		if err != nil {
			return nil, err
		}
		if err := b.serveHappy(ctx, res); err != nil {
			return nil, err
		}
		serveFigures = []Figure{
			figure("serve_happy_ratio", b.raw["serve_happy_p50_ms"]/b.raw["serve_direct_p50_ms"], "", 1.03, "<=",
				"p50 of a non-streamed session reply through baton serve (eager start on serve's own worker) answered by its primary ÷ p50 of the same call made directly"),
			figure("ttft_ratio", b.raw["ttft_serve_p50_ms"]/b.raw["ttft_direct_p50_ms"], "", 1.05, "<=",
				fmt.Sprintf("p50 time to the first content byte through baton serve (streamed) ÷ direct, on a streamed answer of %d chunks over %v", streamWords, streamWords*streamGap)),
			figure("events_streamed", float64(streamedEvents), "events", 12, "<=", "history events of a reply streamed live through baton serve"),
		}
	}

	if err := b.callFloors(ctx); err != nil {
		return nil, err
	}
	primaryCalls, err := b.outage(ctx)
	if err != nil {
		return nil, err
	}
	// The engine floors first (the local-activity one, then the regular-activity one, next to the
	// replies it is the fair floor for), then the replies, with the same number in flight on the
	// same server: the floors' finished workflows are in the database when the replies run.
	floorRPS, err := b.floor(ctx, localFloor)
	if err != nil {
		return nil, err
	}
	floorRegularRPS, err := b.floor(ctx, regularFloor)
	if err != nil {
		return nil, err
	}
	rps, err := b.throughput(ctx)
	if err != nil {
		return nil, err
	}
	directP50 := b.raw["direct_p50_ms"]

	rss, err := peakRSS(b.worker.Process.Pid)
	if err != nil {
		return nil, err
	}

	ftt := o.FirstTokenTimeout.Seconds()
	res.Figures = []Figure{
		figure("happy_ratio", b.raw["reply_happy_p50_ms"]/directP50, "", 1.05, "<=",
			"p50 of a session reply answered by its primary ÷ p50 of the same call made directly"),
		figure("failover_ratio", b.raw["reply_failover_p50_ms"]/b.raw["direct_winner_p50_ms"], "", 1.10, "<=",
			"p50 of a session reply whose primary answers 429 (Retry-After 1 h) and whose fallback answers ÷ p50 of a direct call to the fallback"),
		figure("outage_primary_attempts", float64(primaryCalls), "calls", 2, "<=",
			fmt.Sprintf("attempts on the primary (same-candidate retries inside each, raw.outage_primary_calls counts calls) while it answers 503 for %v, one reply every %v on one session", o.Outage, o.OutageEvery)),
		figure("silent_failover_s", silent, "s", ftt+1, "<=",
			fmt.Sprintf("time to an answer when the primary never sends a token (first-token timeout %v); worst of 2", o.FirstTokenTimeout)),
		figure("events_happy", float64(happyEvents), "events", 11, "<=", "history events of a session reply answered by its primary"),
		figure("events_per_extra_attempt", float64(failEvents-happyEvents)/float64(len(failRun.res.Attempts)-1), "events", 6, "<=",
			"(events of the one-failover reply − events_happy) ÷ its extra attempts"),
		figure("throughput_rps", rps, "replies/s", 100, ">=",
			fmt.Sprintf("%d session replies started at once ÷ time until the last answered", o.InFlight)),
		figure("throughput_ratio", rps/floorRegularRPS, "", 0.9, ">=",
			"throughput_rps ÷ floor_regular_rps: baton's replies against the same workflow shape (one no-op regular activity) on the same server, same in-flight count"),
		figure("engine_ratio", rps/floorRPS, "", 0.6, ">=",
			"throughput_rps ÷ floor_rps: baton's replies against the engine's absolute limit (one no-op local activity) on the same server, same in-flight count"),
		measured("floor_rps", floorRPS, "workflows/s",
			fmt.Sprintf("the engine floor: %d workflows of one no-op local activity (a worker in the bench process) started at once from a client as the replies are ÷ time until the last completed", o.InFlight)),
		measured("floor_p50_ms", b.raw["floor_p50_ms"], "ms",
			fmt.Sprintf("p50 time from start to completion of a floor workflow with %d in flight", o.InFlight)),
		measured("floor_regular_rps", floorRegularRPS, "workflows/s",
			fmt.Sprintf("the regular-activity floor: as floor_rps, with one no-op regular activity (started eagerly by the same worker) instead of the local one: a reply's shape, %d in flight", o.InFlight)),
		measured("floor_regular_p50_ms", b.raw["floor_regular_p50_ms"], "ms",
			fmt.Sprintf("p50 time from start to completion of a regular-activity floor workflow with %d in flight", o.InFlight)),
		measured("floor_happy_ratio", b.raw["floor_call_p50_ms"]/b.raw["floor_call_direct_p50_ms"], "",
			"the latency floor under happy_ratio and failover_ratio: p50 of the same call made by a workflow of a reply's shape (one regular activity that makes the call; a worker in the bench process), started by a client and timed to its completion ÷ p50 of the call made directly"),
		measured("floor_answer_first_ratio", b.raw["floor_answer_first_p50_ms"]/b.raw["floor_call_direct_p50_ms"], "",
			"the latency floor under serve_happy_ratio: as floor_happy_ratio, started eagerly by the worker's own client and timed to the moment the call returns (answer first) ÷ p50 of the call made directly"),
		measured("p99_overhead_ms", b.raw["inflight_p99_ms"]-directP50, "ms",
			fmt.Sprintf("p99 reply latency with %d in flight − p50 of a direct call (no goal of its own: reported beside throughput)", o.InFlight)),
		figure("worker_rss_mb", rss, "MB", 200, "<=",
			fmt.Sprintf("peak resident memory (VmHWM) of the baton-worker process over the whole run, %d replies in flight at its peak", o.InFlight)),
	}
	res.Figures = append(res.Figures, serveFigures...)
	return res, nil
}

// measured is a figure with no goal of its own, reported beside the ones that have one.
func measured(name string, v float64, unit, how string) Figure {
	return Figure{Name: name, Value: v, Unit: unit, Pass: true, How: how}
}

func figure(name string, v float64, unit string, goal float64, cmp, how string) Figure {
	pass := v <= goal
	if cmp == ">=" {
		pass = v >= goal
	}
	return Figure{Name: name, Value: v, Unit: unit, Goal: goal, Cmp: cmp, Pass: pass, How: how}
}

func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

// PrintTable writes the figures with their goals, as `baton bench` shows them.
func (res *Results) PrintTable(w io.Writer) {
	fmt.Fprintf(w, "\nbaton bench, %s (fake provider at %d ms)\n\n", res.Machine, res.Setup.LatencyMs)
	fmt.Fprintf(w, "  %-26s %12s   %-10s %s\n", "figure", "value", "goal", "")
	fmt.Fprintf(w, "  %s\n", strings.Repeat("-", 60))
	for _, f := range res.Figures {
		goal, verdict := "-", "measured"
		if f.Cmp != "" {
			goal = f.Cmp + " " + trimFloat(f.Goal)
			verdict = "ok"
			if !f.Pass {
				verdict = "MISSED"
			}
		}
		fmt.Fprintf(w, "  %-26s %12s   %-10s %s\n", f.Name, trimFloat(f.Value), goal, verdict)
	}
	fmt.Fprintln(w)
}

func trimFloat(v float64) string {
	switch {
	case v == float64(int64(v)):
		return fmt.Sprintf("%d", int64(v))
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
