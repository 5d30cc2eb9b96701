package bench_test

import (
	"context"
	"database/sql"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/bench"
	"github.com/batonhq/baton/lab"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to look for databases left behind
)

// TestBenchMeasuresEveryFigure runs the bench small (a few samples, 20 in flight, a 3 s outage)
// on the real dev server and a worker built from this tree: every figure comes out with its
// goal, and the ones that do not depend on the machine hold exactly.
func TestBenchMeasuresEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Temporal dev server: `make test` runs it")
	}
	res := smallRunWith(t, bench.Options{})
	if res.Setup.Databases != "sqlite" {
		t.Errorf("databases %q", res.Setup.Databases)
	}
	want := map[string]string{"happy_ratio": "<=", "failover_ratio": "<=", "outage_primary_attempts": "<=", "silent_failover_s": "<=",
		"events_happy": "<=", "events_per_extra_attempt": "<=", "throughput_rps": ">=", "throughput_ratio": ">=", "engine_ratio": ">=",
		"floor_rps": "", "floor_p50_ms": "", "floor_regular_rps": "", "floor_regular_p50_ms": "", "p99_overhead_ms": "",
		"floor_happy_ratio": "", "floor_answer_first_ratio": "",
		"worker_rss_mb": "<=", "ttft_ratio": "<=", "events_streamed": "<=", "serve_happy_ratio": "<="}
	if len(res.Figures) != len(want) {
		t.Errorf("%d figures, want %d", len(res.Figures), len(want))
	}
	for name, cmp := range want {
		f, ok := res.Figure(name)
		if !ok {
			t.Errorf("no %s", name)
			continue
		}
		if f.Cmp != cmp || (cmp != "" && f.Goal <= 0) || f.How == "" {
			t.Errorf("%s: goal %s %v (%q)", name, f.Cmp, f.Goal, f.How)
		}
	}
	// The event figures count the listed histories (their goals, not this test, hold their size:
	// the reply's history is being made leaner).
	happy, failover := res.Events["happy"], res.Events["failover"]
	if f, _ := res.Figure("events_happy"); f.Value != float64(len(happy)) || len(happy) < 4 ||
		happy[0] != "WorkflowExecutionStarted" || happy[len(happy)-1] != "WorkflowExecutionCompleted" {
		t.Errorf("events_happy %v: %q", f.Value, happy)
	}
	if f, _ := res.Figure("events_per_extra_attempt"); f.Value <= 0 || f.Value != float64(len(failover)-len(happy)) {
		t.Errorf("events_per_extra_attempt %v: %q", f.Value, failover)
	}
	if f, _ := res.Figure("happy_ratio"); f.Value < 1 {
		t.Errorf("a reply faster than the call it makes: %v", f.Value)
	}
	if f, _ := res.Figure("silent_failover_s"); f.Value < 1 || !f.Pass {
		t.Errorf("silent failover after %v s with a 1 s first-token timeout", f.Value)
	}
	if f, _ := res.Figure("outage_primary_attempts"); f.Value < 1 || res.Raw["outage_primary_calls"] < f.Value {
		t.Errorf("outage: %v attempts, %v calls", f.Value, res.Raw["outage_primary_calls"])
	}
	// Both engine floors ran beside the replies, and each ratio is the replies' rate over its
	// floor's rate: throughput_ratio over the regular-activity floor, engine_ratio over the local one.
	rps, _ := res.Figure("throughput_rps")
	for _, c := range []struct{ floor, ratio string }{{"floor_regular", "throughput_ratio"}, {"floor", "engine_ratio"}} {
		floor, _ := res.Figure(c.floor + "_rps")
		p50, _ := res.Figure(c.floor + "_p50_ms")
		ratio, _ := res.Figure(c.ratio)
		if floor.Value <= 0 || p50.Value <= 0 || res.Raw[c.floor+"_p50_ms"] <= 0 || ratio.Value <= 0 || ratio.Value != rps.Value/floor.Value {
			t.Errorf("%s %v/s (p50 %v ms), replies %v/s, %s %v", c.floor, floor.Value, p50.Value, rps.Value, c.ratio, ratio.Value)
		}
	}
	// The latency floors made the call (a workflow cannot answer before its call returns) and the
	// answer-first one did not wait for its workflow's completion.
	for _, name := range []string{"floor_happy_ratio", "floor_answer_first_ratio"} {
		if f, _ := res.Figure(name); f.Value < 0.9 {
			t.Errorf("%s %v: faster than the call it makes", name, f.Value)
		}
	}
	if res.Raw["floor_answer_first_p50_ms"] >= res.Raw["floor_call_p50_ms"] {
		t.Errorf("answer first %v ms, through completion %v ms", res.Raw["floor_answer_first_p50_ms"], res.Raw["floor_call_p50_ms"])
	}
	if f, _ := res.Figure("worker_rss_mb"); f.Value <= 0 {
		t.Errorf("worker RSS %v", f.Value)
	}
}

// TestBenchRunsOnPostgres runs the same small bench with the dev server and the store on
// PostgreSQL (--postgres): every figure comes out, the events of a reply are the same as on
// SQLite's, and the run's databases are gone after it.
func TestBenchRunsOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Temporal dev server and PostgreSQL: `make test` runs it")
	}
	base := os.Getenv("BATON_TEST_POSTGRES")
	if base == "" {
		t.Fatal("BATON_TEST_POSTGRES is not set: `make test` sets it from scripts/test-postgres.sh")
	}
	var progress strings.Builder
	res := smallRunWith(t, bench.Options{Postgres: base, Progress: &progress})
	if res.Setup.Databases != "postgresql" || !strings.Contains(progress.String(), "on PostgreSQL: databases baton_bench_") {
		t.Fatalf("databases %q; progress:\n%s", res.Setup.Databases, progress.String())
	}
	for _, name := range []string{"throughput_ratio", "engine_ratio", "floor_rps", "floor_regular_rps", "serve_happy_ratio", "events_happy"} {
		if f, ok := res.Figure(name); !ok || f.Value <= 0 {
			t.Errorf("%s: %+v", name, f)
		}
	}
	if happy := res.Events["happy"]; len(happy) < 4 || happy[len(happy)-1] != "WorkflowExecutionCompleted" {
		t.Errorf("a happy reply's events on PostgreSQL: %q", happy)
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var left int
	if err := db.QueryRow(`SELECT count(*) FROM pg_database WHERE datname LIKE 'baton\_bench\_%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d databases of bench runs left behind (%v)", left, err)
	}
}

// smallRunWith runs the bench small (a few samples, 20 in flight, a 3 s outage) on the real dev
// server with a worker and baton built from this tree, with o's databases and progress.
func smallRunWith(t *testing.T, o bench.Options) *bench.Results {
	t.Helper()
	server, err := lab.DevServerPath()
	if err != nil {
		t.Fatal(err)
	}
	root, err := lab.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	worker, baton := filepath.Join(t.TempDir(), "baton-worker"), filepath.Join(t.TempDir(), "baton")
	if out, err := exec.Command("go", "build", "-o", worker, filepath.Join(root, "worker")).CombinedOutput(); err != nil {
		t.Fatalf("building the worker: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "build", "-o", baton, filepath.Join(root, "starter")).CombinedOutput(); err != nil {
		t.Fatalf("building baton: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	o.ServerBin, o.WorkerBin, o.BatonBin = server, worker, baton
	o.Latency, o.Samples, o.InFlight, o.Outage, o.FirstTokenTimeout = 50*time.Millisecond, 3, 20, 3*time.Second, time.Second
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	res, err := bench.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
