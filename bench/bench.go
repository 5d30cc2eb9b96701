// Package bench measures baton end to end against its performance goals: a real Temporal dev
// server (bin/temporal-dev), a real worker process (bin/baton-worker) and the fake provider at a
// fixed latency, all on loopback. `baton bench` runs it and `make bench` calls that.
//
// Every figure is measured side by side in one run, so the ratios compare like with like: the
// direct call and the reply hit the same fake provider on the same machine at the same time.
package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
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

// The bench's world: one provider per role, so that one phase's cooldowns never touch another's.
const (
	taskQueue    = "baton-bench"
	serveQueue   = "baton-bench-serve" // baton serve's replies (see startServe)
	benchText    = "bench answer"
	agentHappy   = "happy"
	agentFail    = "failover"
	agentOutage  = "outage"
	agentSilent  = "silent"
	profileHappy = "alpha:bench"
	profileFail  = "beta:bench"  // answers 429 with a Retry-After beyond the retry budget
	profileWin   = "gamma:bench" // every fallback
	profileDown  = "delta:bench" // down for the whole outage
	profileMute  = "eps:bench"   // never sends a token
	agentStream  = "stream"
	profileLive  = "zeta:bench" // a streamed answer of 20 chunks over 2 s
)

// The streamed answer of the time-to-first-token phase: 20 chunks, 100 ms apart.
const streamWords, streamGap = 20, 100 * time.Millisecond

const benchConfig = `{
  agents: {
    defaults: { model: { primary: "alpha/m" } },
    list: [
      { id: "happy",    model: { primary: "alpha/m" } },
      { id: "failover", model: { primary: "beta/m",  fallbacks: ["gamma/m"] } },
      { id: "outage",   model: { primary: "delta/m", fallbacks: ["gamma/m"] } },
      { id: "silent",   model: { primary: "eps/m",   fallbacks: ["gamma/m"] } },
      { id: "stream",   model: { primary: "zeta/m" } },
    ],
  },
}`

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
}

func (b *bench) progress(format string, args ...any) {
	fmt.Fprintf(b.opts.Progress, "bench: "+format+"\n", args...)
}

func (b *bench) start(ctx context.Context) error {
	latency := int(b.opts.Latency / time.Millisecond)
	ok := fakeprovider.Response{Text: benchText, Usage: &fakeprovider.Usage{Input: 12, Output: 3}, DelayMs: latency}
	rules := []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "beta"}, Respond: []fakeprovider.Response{{Status: 429,
			Headers: map[string]string{"retry-after": "3600"},
			Body:    `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`}}},
		{Match: fakeprovider.Match{Provider: "delta"}, Respond: []fakeprovider.Response{{Status: 503,
			Body: `{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error"}}`}}},
		// Headers, then never a token: the first-token timeout, not the response timeout.
		{Match: fakeprovider.Match{Provider: "eps"}, Respond: []fakeprovider.Response{{Text: benchText, StallAfterChunks: new(0), StallMs: int(time.Hour / time.Millisecond)}}},
		{Match: fakeprovider.Match{Provider: "zeta"}, Respond: []fakeprovider.Response{{Text: strings.Repeat("word ", streamWords),
			DelayMs: latency, ChunkDelayMs: int(streamGap / time.Millisecond)}}},
		{Match: fakeprovider.Match{}, Respond: []fakeprovider.Response{ok}},
	}
	creds := []store.Credential{}
	secrets := map[string]string{}
	for i, id := range []string{profileHappy, profileFail, profileWin, profileDown, profileMute, profileLive} {
		key := fmt.Sprintf("sk-bench-%d-%d", i, time.Now().UnixNano())
		creds = append(creds, store.Credential{ID: id, Provider: policy.ProviderOfProfile(id), Type: "api_key", Key: key})
		secrets[key] = id
	}
	b.fake = fakeprovider.New(rules, secrets)
	if err := b.fake.Start("127.0.0.1:0"); err != nil {
		return fmt.Errorf("fake provider: %w", err)
	}
	cfg, err := config.ParseConfig([]byte(benchConfig))
	if err != nil {
		return err
	}
	lab.PointAtFake(cfg, b.fake, creds)
	b.config = cfg
	configPath := filepath.Join(b.dir, "baton.json5")
	if err := os.WriteFile(configPath, []byte(configJSON(cfg)), 0o600); err != nil {
		return err
	}
	storeURL := "sqlite://" + filepath.Join(b.dir, "baton.db")
	if b.store, err = store.Open(ctx, storeURL, store.Options{}); err != nil {
		return err
	}
	for _, c := range creds {
		if err := b.store.PutCredential(ctx, "main", c); err != nil {
			return err
		}
	}

	b.progress("starting the dev server (%s)", b.opts.ServerBin)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if b.server, err = lab.StartServer(sctx, lab.ServerOptions{Path: b.opts.ServerBin, Args: strings.Fields(os.Getenv("BATON_BENCH_SERVER_ARGS"))}); err != nil {
		return err
	}
	b.c = b.server.Client()

	if b.logf, err = os.Create(filepath.Join(b.dir, "worker.log")); err != nil {
		return err
	}
	b.worker = exec.Command(b.opts.WorkerBin)
	b.worker.Env = append(os.Environ(),
		"TEMPORAL_ADDRESS="+b.server.HostPort(), "TEMPORAL_NAMESPACE=default", "BATON_TASK_QUEUE="+taskQueue,
		"BATON_STORE="+storeURL, "BATON_CONFIG="+configPath, "LOG_LEVEL=warn",
		"BATON_FIRST_TOKEN_TIMEOUT_MS="+strconv.FormatInt(b.opts.FirstTokenTimeout.Milliseconds(), 10),
		"BATON_METRICS_LISTEN=", "BATON_PAYLOAD_KEY=")
	b.worker.Stdout, b.worker.Stderr = b.logf, b.logf
	b.progress("starting the worker (%s)", b.opts.WorkerBin)
	if err := b.worker.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", b.opts.WorkerBin, err)
	}
	if b.opts.BatonBin != "" {
		if err := b.startServe(ctx, storeURL, configPath); err != nil {
			return err
		}
	}
	// Ready when it answers a ping.
	pctx, pcancel := context.WithTimeout(ctx, time.Minute)
	defer pcancel()
	run, err := b.c.ExecuteWorkflow(pctx, client.StartWorkflowOptions{ID: "bench-ping", TaskQueue: taskQueue},
		workflows.PingWorkflowName, workflows.PingInput{Message: "bench"})
	if err == nil {
		err = run.Get(pctx, nil)
	}
	if err != nil {
		return fmt.Errorf("the worker did not answer a ping: %w\n%s", err, tailFile(b.logf.Name(), 20))
	}
	return nil
}

// startServe runs `baton serve` (its own worker makes the attempts of its callers) on a free port.
func (b *bench) startServe(ctx context.Context, storeURL, configPath string) error {
	addr, err := lab.FreeHostPort()
	if err != nil {
		return err
	}
	if b.serveLog, err = os.Create(filepath.Join(b.dir, "serve.log")); err != nil {
		return err
	}
	b.serve = exec.Command(b.opts.BatonBin, "serve", "--listen", addr)
	// serve runs replies too (eager start on the shared queue's worker in its process): on a
	// queue of its own, so that the replies this bench starts from its client stay baton-worker's.
	b.serve.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+b.server.HostPort(), "TEMPORAL_NAMESPACE=default", "BATON_TASK_QUEUE="+serveQueue,
		"BATON_STORE="+storeURL, "BATON_CONFIG="+configPath, "BATON_PAYLOAD_KEY=", "BATON_SERVE_TOKEN=", "LOG_LEVEL=warn",
		"BATON_FIRST_TOKEN_TIMEOUT_MS="+strconv.FormatInt(b.opts.FirstTokenTimeout.Milliseconds(), 10))
	b.serve.Stdout, b.serve.Stderr = b.serveLog, b.serveLog
	b.progress("starting baton serve (%s) on %s", b.opts.BatonBin, addr)
	if err := b.serve.Start(); err != nil {
		return fmt.Errorf("starting %s serve: %w", b.opts.BatonBin, err)
	}
	b.serveURL = "http://" + addr
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(b.serveURL + "/v1/models"); err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("baton serve did not answer on %s:\n%s", addr, tailFile(b.serveLog.Name(), 20))
		}
	}
}

// ttftDirect is the time to the first content delta of the streamed answer, called directly.
func (b *bench) ttftDirect(ctx context.Context) (time.Duration, error) {
	cred, err := b.store.Secret(ctx, "main", profileLive)
	if err != nil {
		return 0, err
	}
	pc := b.config.Providers["zeta"]
	var first time.Duration
	start := time.Now()
	_, err = provider.Complete(ctx, provider.Request{Provider: "zeta", Model: "m", API: pc.API, BaseURL: pc.BaseURL,
		Credential: provider.Credential{Type: cred.Type, Key: cred.Key}, Turn: provider.TextTurn("count"),
		OnDelta: func(d provider.Delta) {
			if d.Text != "" && first == 0 {
				first = time.Since(start)
			}
		}})
	if err != nil {
		return 0, fmt.Errorf("direct streamed call: %w", err)
	}
	return first, nil
}

// serveReply is a non-streamed session reply through `baton serve` (OpenAI's wire), timed from the
// request to the whole answer.
func (b *bench) serveReply(ctx context.Context, agent, session string) (replied, error) {
	body := `{"model":"agent:` + agent + `","messages":[{"role":"user","content":"hello"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.serveURL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return replied{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-baton-session", session)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return replied{}, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		return replied{}, fmt.Errorf("baton serve answered %d %s (%v)\n%s", resp.StatusCode, answer, err, tailFile(b.serveLog.Name(), 20))
	}
	return replied{took: took, id: resp.Header.Get("x-baton-workflow-id"), runID: resp.Header.Get("x-baton-run-id")}, nil
}

// ttftServe is the time to the first content byte of the same answer through `baton serve`, and
// the reply's workflow ID and run.
func (b *bench) ttftServe(ctx context.Context) (time.Duration, string, string, error) {
	body := `{"model":"agent:stream","stream":true,"messages":[{"role":"user","content":"count"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.serveURL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	var first time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if first == 0 && strings.Contains(sc.Text(), `"content":"word`) {
			first = time.Since(start)
		}
	}
	if resp.StatusCode != http.StatusOK || first == 0 {
		return 0, "", "", fmt.Errorf("baton serve answered %d with no content\n%s", resp.StatusCode, tailFile(b.serveLog.Name(), 20))
	}
	return first, resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id"), nil
}

func (b *bench) close() {
	if b.serve != nil && b.serve.Process != nil {
		_ = b.serve.Process.Signal(syscall.SIGTERM)
		_ = b.serve.Wait()
	}
	if b.serveLog != nil {
		b.serveLog.Close()
	}
	if b.worker != nil && b.worker.Process != nil {
		_ = b.worker.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = b.worker.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			_ = b.worker.Process.Kill()
		}
	}
	if b.logf != nil {
		b.logf.Close()
	}
	if b.server != nil {
		_ = b.server.Stop()
	}
	if b.store != nil {
		b.store.Close()
	}
	if b.fake != nil {
		b.fake.Close()
	}
}

func (b *bench) run(ctx context.Context) (*Results, error) {
	o := b.opts
	res := &Results{At: time.Now().UTC(), Machine: machine(), Raw: b.raw, Events: map[string][]string{}, Timeline: map[string][]string{}, Setup: Setup{
		LatencyMs: o.Latency.Milliseconds(), Samples: o.Samples, InFlight: o.InFlight,
		OutageSeconds: int64(o.Outage / time.Second), OutageEveryMs: o.OutageEvery.Milliseconds(),
		FirstTokenTimeoutMs: o.FirstTokenTimeout.Milliseconds(), ServerArgs: os.Getenv("BATON_BENCH_SERVER_ARGS")}}

	// Warm up both paths so that first-use costs (connections, caches) are not measured.
	for range 3 {
		if _, err := b.direct(ctx, "alpha", profileHappy); err != nil {
			return nil, err
		}
		if _, err := b.reply(ctx, agentHappy, b.session("warm")); err != nil {
			return nil, err
		}
	}

	b.progress("happy path: %d direct calls and %d replies, interleaved", o.Samples, o.Samples)
	direct, happy, happyRun, err := b.sideBySide(ctx, func() (replied, error) {
		r, err := b.reply(ctx, agentHappy, b.session("happy"))
		if err == nil && !r.servedBy(profileHappy) {
			err = fmt.Errorf("a happy reply was served by %s", r.res.Served.Profile)
		}
		return r, err
	})
	if err != nil {
		return nil, err
	}
	b.raw["direct_p50_ms"], b.raw["reply_happy_p50_ms"] = p(direct, 50), p(happy, 50)

	b.progress("one failover: %d direct calls to the winner and %d replies whose primary answers 429", o.Samples, o.Samples)
	var directWin, failover []float64
	var failRun replied
	for range o.Samples {
		d, err := b.direct(ctx, "gamma", profileWin)
		if err != nil {
			return nil, err
		}
		directWin = append(directWin, ms(d))
		// The primary's key must be usable again for the next sample to fail over once more.
		if _, err := b.store.RecordOutcome(ctx, "main", profileFail, policy.ClearCooldown); err != nil {
			return nil, err
		}
		r, err := b.reply(ctx, agentFail, b.session("failover"))
		if err != nil {
			return nil, err
		}
		if !r.servedBy(profileWin) || len(r.res.Attempts) != 2 {
			return nil, fmt.Errorf("a failover reply was served by %s after %d attempts, want %s after 2",
				r.res.Served.Profile, len(r.res.Attempts), profileWin)
		}
		failover, failRun = append(failover, ms(r.took)), r
	}
	b.raw["direct_winner_p50_ms"], b.raw["reply_failover_p50_ms"] = p(directWin, 50), p(failover, 50)

	happyTypes, happyTimeline, err := b.events(ctx, happyRun)
	if err != nil {
		return nil, err
	}
	failTypes, failTimeline, err := b.events(ctx, failRun)
	if err != nil {
		return nil, err
	}
	res.Events["happy"], res.Events["failover"] = happyTypes, failTypes
	res.Timeline["happy"], res.Timeline["failover"] = happyTimeline, failTimeline
	happyEvents, failEvents := len(happyTypes), len(failTypes)
	b.raw["events_failover"] = float64(failEvents)

	b.progress("silent primary: the first token never comes (first-token timeout %v)", o.FirstTokenTimeout)
	silent := 0.0
	for range 2 {
		r, err := b.reply(ctx, agentSilent, "")
		if err != nil {
			return nil, err
		}
		if !r.servedBy(profileWin) {
			return nil, fmt.Errorf("a silent-primary reply was served by %s", r.res.Served.Profile)
		}
		silent = max(silent, r.took.Seconds())
	}

	var ttftFigures []Figure
	if b.serve != nil {
		b.progress("time to first token: %d streamed answers (%d chunks over %v) directly and through baton serve", o.Samples, streamWords, streamWords*streamGap)
		var direct, served []float64
		var id, runID string
		for range o.Samples {
			d, err := b.ttftDirect(ctx)
			if err != nil {
				return nil, err
			}
			sv, wid, rid, err := b.ttftServe(ctx)
			if err != nil {
				return nil, err
			}
			direct, served, id, runID = append(direct, ms(d)), append(served, ms(sv)), wid, rid
		}
		b.raw["ttft_direct_p50_ms"], b.raw["ttft_serve_p50_ms"] = p(direct, 50), p(served, 50)
		streamed, streamedTimeline, err := b.events(ctx, replied{id: id, runID: runID})
		if err != nil {
			return nil, err
		}
		res.Events["streamed"], res.Timeline["streamed"] = streamed, streamedTimeline

		b.progress("happy path through baton serve: %d direct calls and %d non-streamed replies, interleaved", o.Samples, o.Samples)
		directServe, serveHappy, serveRun, err := b.sideBySide(ctx, func() (replied, error) {
			return b.serveReply(ctx, agentHappy, b.session("serve"))
		})
		if err != nil {
			return nil, err
		}
		b.raw["serve_direct_p50_ms"], b.raw["serve_happy_p50_ms"] = p(directServe, 50), p(serveHappy, 50)
		serveTypes, serveTimeline, err := b.events(ctx, serveRun)
		if err != nil {
			return nil, err
		}
		res.Events["serve_happy"], res.Timeline["serve_happy"] = serveTypes, serveTimeline
		ttftFigures = []Figure{
			figure("serve_happy_ratio", b.raw["serve_happy_p50_ms"]/b.raw["serve_direct_p50_ms"], "", 1.05, "<=",
				"p50 of a non-streamed session reply through baton serve (eager start on serve's own worker) answered by its primary ÷ p50 of the same call made directly"),
			figure("ttft_ratio", b.raw["ttft_serve_p50_ms"]/b.raw["ttft_direct_p50_ms"], "", 1.10, "<=",
				fmt.Sprintf("p50 time to the first content byte through baton serve (streamed) ÷ direct, on a streamed answer of %d chunks over %v", streamWords, streamWords*streamGap)),
			figure("events_streamed", float64(len(streamed)), "events", 12, "<=", "history events of a reply streamed live through baton serve"),
		}
	}

	b.progress("outage: the primary is down for %v while a reply arrives every %v", o.Outage, o.OutageEvery)
	primaryCalls, err := b.outage(ctx)
	if err != nil {
		return nil, err
	}

	// The engine floor first, then the replies, with the same number in flight on the same
	// server: the floor's 1,000 finished workflows are in the database when the replies run.
	b.progress("engine floor: %d workflows of one no-op local activity in flight at once (a worker in this process)", o.InFlight)
	floorRPS, floorLat, err := b.floor(ctx)
	if err != nil {
		return nil, err
	}
	b.raw["floor_p50_ms"], b.raw["floor_p99_ms"] = p(floorLat, 50), p(floorLat, 99)

	b.progress("throughput: %d replies in flight at once", o.InFlight)
	rps, lat, err := b.throughput(ctx)
	if err != nil {
		return nil, err
	}
	directP50 := b.raw["direct_p50_ms"]
	b.raw["inflight_p50_ms"], b.raw["inflight_p99_ms"] = p(lat, 50), p(lat, 99)

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
		figure("events_happy", float64(happyEvents), "events", 8, "<=", "history events of a session reply answered by its primary"),
		figure("events_per_extra_attempt", float64(failEvents-happyEvents)/float64(len(failRun.res.Attempts)-1), "events", 6, "<=",
			"(events of the one-failover reply − events_happy) ÷ its extra attempts"),
		figure("throughput_rps", rps, "replies/s", 100, ">=",
			fmt.Sprintf("%d session replies started at once ÷ time until the last answered", o.InFlight)),
		figure("throughput_ratio", rps/floorRPS, "", 0.8, ">=",
			"throughput_rps ÷ floor_rps: baton's replies against the cheapest workflow on the same server, same in-flight count"),
		measured("floor_rps", floorRPS, "workflows/s",
			fmt.Sprintf("the engine floor: %d workflows of one no-op local activity (a worker in the bench process) started at once from a client as the replies are ÷ time until the last completed", o.InFlight)),
		measured("floor_p50_ms", b.raw["floor_p50_ms"], "ms",
			fmt.Sprintf("p50 time from start to completion of a floor workflow with %d in flight", o.InFlight)),
		measured("p99_overhead_ms", b.raw["inflight_p99_ms"]-directP50, "ms",
			fmt.Sprintf("p99 reply latency with %d in flight − p50 of a direct call (no goal of its own: reported beside throughput)", o.InFlight)),
		figure("worker_rss_mb", rss, "MB", 200, "<=",
			fmt.Sprintf("peak resident memory (VmHWM) of the baton-worker process over the whole run, %d replies in flight at its peak", o.InFlight)),
	}
	res.Figures = append(res.Figures, ttftFigures...)
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

func (b *bench) session(kind string) string {
	b.seq++
	return fmt.Sprintf("bench-%s-%d", kind, b.seq)
}

// direct makes the call a reply's attempt makes, from this process, and times it.
func (b *bench) direct(ctx context.Context, providerID, profile string) (time.Duration, error) {
	cred, err := b.store.Secret(ctx, "main", profile)
	if err != nil {
		return 0, err
	}
	pc := b.config.Providers[providerID]
	start := time.Now()
	_, err = provider.Complete(ctx, provider.Request{Provider: providerID, Model: "m", API: pc.API, BaseURL: pc.BaseURL,
		Credential: provider.Credential{Type: cred.Type, Key: cred.Key},
		Turn:       provider.TextTurn("hello")})
	if err != nil {
		return 0, fmt.Errorf("direct call to %s: %w", providerID, err)
	}
	return time.Since(start), nil
}

// sideBySide makes Samples happy direct calls and Samples replies, interleaved so that both see
// the same machine, and gives their times (ms) and the last reply.
func (b *bench) sideBySide(ctx context.Context, reply func() (replied, error)) (direct, replies []float64, last replied, err error) {
	for range b.opts.Samples {
		d, err := b.direct(ctx, "alpha", profileHappy)
		if err != nil {
			return nil, nil, replied{}, err
		}
		r, err := reply()
		if err != nil {
			return nil, nil, replied{}, err
		}
		direct, replies, last = append(direct, ms(d)), append(replies, ms(r.took)), r
	}
	return direct, replies, last, nil
}

type replied struct {
	res       policy.ReplyResult
	took      time.Duration
	id, runID string
}

func (r replied) servedBy(profile string) bool { return r.res.Served.Profile == profile }

// reply starts a reply as `baton reply` and `serve` do (workflows.StartReply: one turn at a time
// per session) and waits for its answer.
func (b *bench) reply(ctx context.Context, agent, session string) (replied, error) {
	start := time.Now()
	run, err := workflows.StartReply(ctx, b.c, taskQueue, policy.ReplyRequest{Agent: agent, Session: session, Message: "hello"})
	if err != nil {
		return replied{}, fmt.Errorf("starting a reply of %s: %w", agent, err)
	}
	return b.wait(ctx, run, start)
}

func (b *bench) wait(ctx context.Context, run client.WorkflowRun, start time.Time) (replied, error) {
	var res policy.ReplyResult
	if err := run.Get(ctx, &res); err != nil {
		return replied{}, fmt.Errorf("reply %s: %w", run.GetID(), err)
	}
	return replied{res: res, took: time.Since(start), id: run.GetID(), runID: run.GetRunID()}, nil
}

// startUnderLoad starts a workflow as a careful client does under load: a start that timed out
// or was turned away is sent again with the same workflow ID (so it never starts twice), and one
// the server already took is joined. The time spent waiting counts in the workflow's latency.
func (b *bench) startUnderLoad(ctx context.Context, retried *atomic.Int64, opts client.StartWorkflowOptions, workflowType string, args ...any) (client.WorkflowRun, error) {
	// A start sent again after the first one's workflow already ended must not run it twice.
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	for {
		run, err := b.c.ExecuteWorkflow(ctx, opts, workflowType, args...)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		var deadline *serviceerror.DeadlineExceeded
		var unavailable *serviceerror.Unavailable
		var exhausted *serviceerror.ResourceExhausted
		switch {
		case err == nil:
			return run, nil
		case errors.As(err, &started):
			return b.c.GetWorkflow(ctx, opts.ID, ""), nil
		case ctx.Err() != nil:
			return nil, err
		case errors.As(err, &deadline) || errors.As(err, &unavailable) || errors.As(err, &exhausted) ||
			errors.Is(err, context.DeadlineExceeded):
			retried.Add(1)
			continue
		default:
			return nil, err
		}
	}
}

// events lists a reply's history events by type (a local activity's marker by its activity).
// The timeline gives each event's time after the first (the server's clock), and the time the
// bench saw the answer after its start call (reply.took) when known.
func (b *bench) events(ctx context.Context, r replied) ([]string, []string, error) {
	h, err := history.Fetch(ctx, b.c, r.id, r.runID)
	if err != nil {
		return nil, nil, fmt.Errorf("history of %s: %w", r.id, err)
	}
	var types, timeline []string
	var first time.Time
	for _, e := range h.GetEvents() {
		t := strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
		if m := e.GetMarkerRecordedEventAttributes(); m != nil {
			t += " " + m.GetMarkerName()
			var la struct{ ActivityType string }
			if d := m.GetDetails()["data"]; d != nil && converter.GetDefaultDataConverter().FromPayloads(d, &la) == nil {
				t += " " + la.ActivityType
			}
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			t += " " + a.GetActivityType().GetName()
		}
		types = append(types, t)
		at := e.GetEventTime().AsTime()
		if first.IsZero() {
			first = at
		}
		timeline = append(timeline, fmt.Sprintf("%7.1f ms %s", ms(at.Sub(first)), t))
	}
	if r.took > 0 {
		timeline = append(timeline, fmt.Sprintf("%7.1f ms answered (bench: start call to result)", ms(r.took)))
	}
	return types, timeline, nil
}

// outage sends one reply every OutageEvery on one session while the primary answers 503, and
// counts the attempts on the primary (an attempt is one tried (candidate, profile): its
// same-candidate retries are inside it, as DESIGN.md counts them) and the calls that reached it.
func (b *bench) outage(ctx context.Context) (int, error) {
	before := b.callsTo("delta")
	session := b.session("outage")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	attempts := 0
	tick := time.NewTicker(b.opts.OutageEvery)
	defer tick.Stop()
	end := time.Now().Add(b.opts.Outage)
	replies := 0
	for time.Now().Before(end) {
		replies++
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.reply(ctx, agentOutage, session)
			if err == nil && !r.servedBy(profileWin) {
				err = fmt.Errorf("an outage reply was served by %s", r.res.Served.Profile)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmpOr(firstErr, err)
				return
			}
			for _, a := range r.res.Attempts {
				if a.Provider == "delta" && a.Result != policy.ResultSkipped {
					attempts++
				}
			}
		}()
		select {
		case <-tick.C:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	b.raw["outage_replies"] = float64(replies)
	b.raw["outage_primary_calls"] = float64(b.callsTo("delta") - before)
	return attempts, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (b *bench) callsTo(providerID string) int {
	n := 0
	for _, c := range b.fake.Calls() {
		if c.Provider == providerID {
			n++
		}
	}
	return n
}

// throughput starts InFlight session replies at once and waits for all of them.
func (b *bench) throughput(ctx context.Context) (float64, []float64, error) {
	stamp := time.Now().UnixNano()
	return b.load(ctx, "inflight", func(i int) (client.StartWorkflowOptions, string, []any) {
		session := fmt.Sprintf("bench-load-%d", i)
		return workflows.ReplyStartOptions(fmt.Sprintf("bench-load-%d-%d", i, stamp), taskQueue, agentHappy, session),
			workflows.ReplyWorkflowName, []any{policy.ReplyRequest{Agent: agentHappy, Session: session, Message: "hello"}}
	})
}

// The engine floor: the cheapest workflow baton could possibly be (start, one local activity
// that does nothing, complete), run by a worker in the bench process on its own task queue.
const (
	floorTaskQueue    = "baton-bench-floor"
	floorWorkflowName = "BenchFloor"
	floorActivityName = "BenchFloorNoop"
)

func floorWorkflow(ctx workflow.Context) error {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteLocalActivity(ctx, floorActivityName).Get(ctx, nil)
}

func floorNoop(context.Context) error { return nil }

// floor starts InFlight floor workflows at once, as throughput starts the replies, and waits for
// all of them. Its worker runs only for this phase.
func (b *bench) floor(ctx context.Context) (float64, []float64, error) {
	w := worker.New(b.c, floorTaskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(floorWorkflow, workflow.RegisterOptions{Name: floorWorkflowName})
	w.RegisterActivityWithOptions(floorNoop, activity.RegisterOptions{Name: floorActivityName})
	if err := w.Start(); err != nil {
		return 0, nil, fmt.Errorf("starting the floor's worker: %w", err)
	}
	defer w.Stop()
	// Warm up as the replies were: the first workflow pays for the task queue and the worker's
	// first polls.
	run, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bench-floor-warm-%d", time.Now().UnixNano()),
		TaskQueue: floorTaskQueue}, floorWorkflowName)
	if err == nil {
		err = run.Get(ctx, nil)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("a floor workflow: %w", err)
	}
	stamp := time.Now().UnixNano()
	return b.load(ctx, "floor", func(i int) (client.StartWorkflowOptions, string, []any) {
		return client.StartWorkflowOptions{ID: fmt.Sprintf("bench-floor-%d-%d", i, stamp), TaskQueue: floorTaskQueue}, floorWorkflowName, nil
	})
}

// load starts InFlight workflows at once (start gives the i-th one's options, type and arguments),
// each under its own ID, and waits for all of them: their rate (completed ÷ wall time) and each
// one's time from its first start call to its completion, in ms. raw gets KIND_wall_ms and
// KIND_retried_starts.
func (b *bench) load(ctx context.Context, kind string, start func(i int) (client.StartWorkflowOptions, string, []any)) (float64, []float64, error) {
	n := b.opts.InFlight
	lat := make([]float64, n)
	errs := make([]error, n)
	var retried atomic.Int64
	var wg sync.WaitGroup
	cpu := b.cpuTimes()
	begin := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts, workflowType, args := start(i)
			t := time.Now()
			run, err := b.startUnderLoad(ctx, &retried, opts, workflowType, args...)
			if err == nil {
				err = run.Get(ctx, nil)
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", opts.ID, err)
				return
			}
			lat[i] = ms(time.Since(t))
		}()
	}
	wg.Wait()
	wall := time.Since(begin)
	if err := errors.Join(errs...); err != nil {
		return 0, nil, err
	}
	b.raw[kind+"_wall_ms"] = ms(wall)
	b.raw[kind+"_retried_starts"] = float64(retried.Load())
	for proc, t := range b.cpuTimes() {
		if t0, ok := cpu[proc]; ok {
			b.raw[kind+"_"+proc+"_cpu_ms_per_wf"] = ms(t-t0) / float64(n)
		}
	}
	return float64(n) / wall.Seconds(), lat, nil
}

// cpuTimes reads the CPU time (user + system) spent so far by the dev server, the worker and the
// bench process, where /proc has them: what each costs per workflow under load.
func (b *bench) cpuTimes() map[string]time.Duration {
	pids := map[string]int{"bench": os.Getpid()}
	if b.worker != nil && b.worker.Process != nil {
		pids["worker"] = b.worker.Process.Pid
	}
	if pid := childWithArg(os.Getpid(), "start-dev"); pid != 0 {
		pids["server"] = pid
	}
	times := map[string]time.Duration{}
	for name, pid := range pids {
		if t, err := cpuTime(pid); err == nil {
			times[name] = t
		}
	}
	return times
}

// cpuTime is a process's user + system CPU time from /proc/PID/stat (in USER_HZ ticks, 100 a
// second on Linux).
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name (which may hold spaces) in parentheses: utime and stime
	// are the 12th and 13th.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// childWithArg finds a child process of parent with arg in its command line (the dev server,
// which the SDK starts as PATH server start-dev …), or 0.
func childWithArg(parent int, arg string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			return pid
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// p is the q-th percentile (nearest rank) of xs.
func p(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s))*q/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// peakRSS reads the process's high-water resident set (VmHWM) in MB.
func peakRSS(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the worker's memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("VmHWM not found in /proc/PID/status")
}

func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

// configJSON writes cfg's providers into the bench config, as BATON_CONFIG for the worker.
func configJSON(cfg *policy.Config) string {
	return strings.TrimSuffix(strings.TrimSpace(benchConfig), "}") + "  models: " + lab.ModelsConfig(cfg) + ",\n}\n"
}

func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
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
