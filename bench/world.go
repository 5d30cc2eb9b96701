package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
)

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
	serverArgs := strings.Fields(os.Getenv("BATON_BENCH_SERVER_ARGS"))
	if b.opts.Postgres != "" {
		var temporalURL string
		if storeURL, temporalURL, err = b.databases(ctx); err != nil {
			return err
		}
		serverArgs = append(serverArgs, "--db", temporalURL)
	}
	if b.store, err = store.Open(ctx, storeURL, store.Options{}); err != nil {
		return fmt.Errorf("the store on %s: %w", lab.Redact(storeURL), err)
	}
	for _, c := range creds {
		if err := b.store.PutCredential(ctx, "main", c); err != nil {
			return err
		}
	}

	b.progress("starting the dev server (%s)", b.opts.ServerBin)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if b.server, err = lab.StartServer(sctx, lab.ServerOptions{Path: b.opts.ServerBin, Args: serverArgs}); err != nil {
		return err
	}
	b.c = b.server.Client()

	if b.logf, err = os.Create(filepath.Join(b.dir, "worker.log")); err != nil {
		return err
	}
	b.worker = exec.Command(b.opts.WorkerBin)
	b.worker.Env = b.env(taskQueue, storeURL, configPath, "BATON_METRICS_LISTEN=")
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
	b.serve.Env = b.env(serveQueue, storeURL, configPath, "BATON_SERVE_TOKEN=")
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

// env is the environment of a process that runs replies (the worker, baton serve) on queue,
// against this run's server, store and config, then extra.
func (b *bench) env(queue, storeURL, configPath string, extra ...string) []string {
	return append(append(os.Environ(),
		"TEMPORAL_ADDRESS="+b.server.HostPort(), "TEMPORAL_NAMESPACE=default", "BATON_TASK_QUEUE="+queue,
		"BATON_STORE="+storeURL, "BATON_CONFIG="+configPath, "BATON_PAYLOAD_KEY=", "LOG_LEVEL=warn",
		"BATON_FIRST_TOKEN_TIMEOUT_MS="+strconv.FormatInt(b.opts.FirstTokenTimeout.Milliseconds(), 10)),
		extra...)
}

// databases makes the run's databases on Options.Postgres: the store's; the dev server makes
// its own two (persistence and visibility) at its start.
func (b *bench) databases(ctx context.Context) (storeURL, temporalURL string, err error) {
	name := fmt.Sprintf("baton_bench_%d", time.Now().Unix())
	if temporalURL, err = lab.DatabaseURL(b.opts.Postgres, name); err != nil {
		return "", "", fmt.Errorf("--postgres: %w", err)
	}
	if storeURL, err = lab.DatabaseURL(b.opts.Postgres, name+"_store"); err != nil {
		return "", "", fmt.Errorf("--postgres: %w", err)
	}
	if err := lab.CreateDatabase(ctx, b.opts.Postgres, name+"_store"); err != nil {
		return "", "", err
	}
	b.pgName = name
	b.progress("on PostgreSQL: databases %s, %s_visibility, %s_store (dropped after)", name, name, name)
	return storeURL, temporalURL, nil
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
	if b.pgName != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, db := range []string{b.pgName, b.pgName + "_visibility", b.pgName + "_store"} {
			if err := lab.DropDatabase(ctx, b.opts.Postgres, db); err != nil {
				b.progress("dropping database %s: %v", db, err)
			}
		}
	}
}

// configJSON writes cfg's providers into the bench config, as BATON_CONFIG for the worker.
func configJSON(cfg *policy.Config) string {
	return strings.TrimSuffix(strings.TrimSpace(benchConfig), "}") + "  models: " + lab.ModelsConfig(cfg) + ",\n}\n"
}
