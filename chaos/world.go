package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/internal/dial"
	"github.com/batonhq/baton/internal/logging"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
)

// The world's agents: each chain's primary fails in its own way and falls back to ok/m, which
// answers; the tools agent's primary answers with a tool call.
const (
	agentRateLimited = "rl"
	agentOverloaded  = "ov"
	agentCut         = "cut"
	agentSilent      = "mute"
	agentTools       = "tools"
	taskQueue        = "baton-chaos"
	// answerText is every healthy answer, its request's mark in place of {mark}.
	answerText = "Answer to {mark}: all systems nominal, over and out."
	toolText   = "Looking up {mark}."
	// cutAfter is where the cut primary's stream ends: mid-answer.
	cutAfter = 3
)

var agents = []string{agentRateLimited, agentOverloaded, agentCut, agentSilent, agentTools}

// primaries are the agents' chains' first models; every chain falls back to ok/m.
var primaries = map[string]string{agentRateLimited: "rl/m", agentOverloaded: "ov/m", agentCut: "cut/m", agentSilent: "mute/m", agentTools: "tl/m"}

// expected is the whole answer of a request to agent with mark.
func expected(agent, mark string) (string, []toolCall) {
	if agent == agentTools {
		return strings.ReplaceAll(toolText, "{mark}", mark), []toolCall{{Name: "lookup", Arguments: `{"q":"` + mark + `"}`}}
	}
	return strings.ReplaceAll(answerText, "{mark}", mark), nil
}

// healthyRules script the providers; down is the ok provider's outage.
func rules(down bool) []fakeprovider.Rule {
	ok := fakeprovider.Response{Text: answerText, DelayMs: 150, ChunkDelayMs: 20, Usage: &fakeprovider.Usage{Input: 20, Output: 12}}
	if down {
		ok = fakeprovider.Response{Status: 503, Body: `{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error"}}`}
	}
	return []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "rl"}, Respond: []fakeprovider.Response{{Status: 429, DelayMs: 20,
			Body: `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`}}},
		{Match: fakeprovider.Match{Provider: "ov"}, Respond: []fakeprovider.Response{{Status: 529, DelayMs: 20,
			Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}}},
		{Match: fakeprovider.Match{Provider: "cut"}, Respond: []fakeprovider.Response{{Text: answerText, DelayMs: 100, ChunkDelayMs: 20, CutAfterChunks: new(cutAfter)}}},
		// Headers, then never a token: the first-token timeout.
		{Match: fakeprovider.Match{Provider: "mute"}, Respond: []fakeprovider.Response{{Text: answerText, StallAfterChunks: new(0), StallMs: int(time.Hour / time.Millisecond)}}},
		{Match: fakeprovider.Match{Provider: "tl"}, Respond: []fakeprovider.Response{{Text: toolText, DelayMs: 150, ChunkDelayMs: 20,
			ToolCalls: []fakeprovider.ToolCall{{Name: "lookup", Arguments: `{"q":"{mark}"}`}}}}},
		{Match: fakeprovider.Match{Provider: "ok"}, Respond: []fakeprovider.Response{ok}},
	}
}

// profiles are one key per provider.
var profiles = []string{"rl:chaos", "ov:chaos", "cut:chaos", "mute:chaos", "tl:chaos", "ok:chaos"}

// worldConfig is the agents' config; spare adds an agent no request names (the reload fault
// toggles it: a real change that moves no reply).
func worldConfig(models string, spare bool) string {
	list := []map[string]any{}
	for _, a := range agents {
		list = append(list, map[string]any{"id": a, "model": map[string]any{"primary": primaries[a], "fallbacks": []string{"ok/m"}}})
	}
	if spare {
		list = append(list, map[string]any{"id": "spare", "model": map[string]any{"primary": "ok/m"}})
	}
	data, _ := json.Marshal(map[string]any{ // maps and strings only: cannot fail
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "ok/m"}}, "list": list},
		"models": json.RawMessage(models),
	})
	return string(data)
}

// proc is one process of the world, restartable.
type proc struct {
	name    string
	bin     string
	args    []string
	env     []string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "--- %s: starting %s\n", time.Now().Format(time.RFC3339Nano), p.name)
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = p.env, logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting %s (%s): %w", p.name, p.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	p.cmd, p.done = cmd, done
	return nil
}

// signal sends sig and waits up to wait for the process to end (then kills it).
func (p *proc) signal(sig syscall.Signal, wait time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		<-done
	}
}

func (p *proc) kill()     { p.signal(syscall.SIGKILL, 10*time.Second) }
func (p *proc) shutdown() { p.signal(syscall.SIGTERM, 40*time.Second) }

func (p *proc) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// world is the deployment: two Temporal nodes on one PostgreSQL database, two workers, two doors
// (baton serve), the store on PostgreSQL, the fake provider in this process.
type world struct {
	opts       Options
	dir        string
	fake       *fakeprovider.Server
	configPath string
	models     string
	spare      bool
	storeURL   string
	temporal   string // the Temporal database's URL
	nodes      [2]*proc
	nodePorts  [2]int
	workers    [2]*proc
	doors      [2]*proc
	doorURLs   [2]string
	store      *store.Store
	client     client.Client
	started    time.Time
	// faultsDealt are the run's faults (their times set as they strike).
	faultsDealt []*fault
}

func (w *world) progress(format string, args ...any) {
	if w.opts.Progress != nil {
		fmt.Fprintf(w.opts.Progress, "chaos: "+format+"\n", args...)
	}
}

// up brings the world up, each part checked before the next starts.
func (w *world) up(ctx context.Context) error {
	w.started = time.Now()
	name := fmt.Sprintf("baton_chaos_%d", w.started.Unix())
	var err error
	if w.temporal, err = lab.DatabaseURL(w.opts.Postgres, name); err != nil {
		return fmt.Errorf("--postgres: %w", err)
	}
	if w.storeURL, err = lab.DatabaseURL(w.opts.Postgres, name+"_store"); err != nil {
		return fmt.Errorf("--postgres: %w", err)
	}
	if err := lab.CreateDatabase(ctx, w.opts.Postgres, name+"_store"); err != nil {
		return err
	}

	w.fake = fakeprovider.New(rules(false), nil)
	w.fake.Mark = regexp.MustCompile(markPattern.String())
	if err := w.fake.Start("127.0.0.1:0"); err != nil {
		return fmt.Errorf("fake provider: %w", err)
	}
	cfg, err := config.ParseConfig([]byte(worldConfig(`{}`, false)))
	if err != nil {
		return err
	}
	cfg.Providers = map[string]policy.ProviderConfig{"ov": {API: provider.APIAnthropicMessages}}
	creds := []store.Credential{}
	for i, id := range profiles {
		key := fmt.Sprintf("sk-chaos-%d-%d", i, w.started.UnixNano())
		creds = append(creds, store.Credential{ID: id, Provider: policy.ProviderOfProfile(id), Type: "api_key", Key: key})
		w.fake.AddCredential(key, id)
	}
	lab.PointAtFake(cfg, w.fake, creds)
	w.models = lab.ModelsConfig(cfg)
	w.configPath = filepath.Join(w.dir, "baton.json")
	if err := w.writeConfig(); err != nil {
		return err
	}
	if w.store, err = store.Open(ctx, w.storeURL, store.Options{}); err != nil {
		return fmt.Errorf("the store on %s: %w", lab.Redact(w.storeURL), err)
	}
	for _, c := range creds {
		if err := w.store.PutCredential(ctx, "main", c); err != nil {
			return err
		}
	}

	for i := range w.nodes {
		port, err := freePort()
		if err != nil {
			return err
		}
		w.nodePorts[i] = port
		w.nodes[i] = &proc{name: fmt.Sprintf("temporal node %d", i+1), bin: w.opts.ServerBin, env: os.Environ(),
			args:    []string{"--db", w.temporal, "--port", strconv.Itoa(port), "--headless", "--log-level", "error"},
			logPath: filepath.Join(w.dir, fmt.Sprintf("temporal-%d.log", i+1))}
		w.progress("starting %s on port %d (PostgreSQL database %s)", w.nodes[i].name, port, name)
		if err := w.nodes[i].start(); err != nil {
			return err
		}
		// The first node sets the schema up; the second joins once it serves.
		if err := w.awaitNode(ctx, i, 3*time.Minute); err != nil {
			return err
		}
	}
	if w.client, err = dial.Dial(ctx, client.Options{HostPort: dial.Target(w.address()), Namespace: "default", Logger: logging.Discard}, time.Minute, nil); err != nil {
		return err
	}

	env := w.env()
	for i := range w.workers {
		w.workers[i] = &proc{name: fmt.Sprintf("worker %d", i+1), bin: w.opts.WorkerBin, env: env,
			logPath: filepath.Join(w.dir, fmt.Sprintf("worker-%d.log", i+1))}
		w.progress("starting %s", w.workers[i].name)
		if err := w.workers[i].start(); err != nil {
			return err
		}
	}
	for i := range w.doors {
		addr, err := lab.FreeHostPort()
		if err != nil {
			return err
		}
		w.doorURLs[i] = "http://" + addr
		w.doors[i] = &proc{name: fmt.Sprintf("serve %d", i+1), bin: w.opts.BatonBin, env: env, args: []string{"serve", "--listen", addr},
			logPath: filepath.Join(w.dir, fmt.Sprintf("serve-%d.log", i+1))}
		w.progress("starting %s on %s", w.doors[i].name, addr)
		if err := w.doors[i].start(); err != nil {
			return err
		}
	}
	for i := range w.doors {
		if err := w.awaitDoor(ctx, i, time.Minute); err != nil {
			return err
		}
	}
	return w.awaitWorkers(ctx, time.Minute)
}

// env is the environment of the workers and the doors.
func (w *world) env() []string {
	return append(os.Environ(),
		"TEMPORAL_ADDRESS="+w.address(), "TEMPORAL_NAMESPACE=default", "BATON_TASK_QUEUE="+taskQueue,
		"BATON_STORE="+w.storeURL, "BATON_CONFIG="+w.configPath, "BATON_PAYLOAD_KEY=", "BATON_SECRET_KEY=", "LOG_LEVEL=warn",
		"BATON_METRICS_LISTEN=", "BATON_SERVE_TOKEN=", "BATON_FIRST_TOKEN_TIMEOUT_MS=2000", "BATON_CONNECT_TIMEOUT=120s")
}

// address is TEMPORAL_ADDRESS: both nodes' frontends.
func (w *world) address() string {
	return fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d", w.nodePorts[0], w.nodePorts[1])
}

func (w *world) writeConfig() error {
	tmp := w.configPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(worldConfig(w.models, w.spare)), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, w.configPath) // whole or not at all: a watcher never reads half a file
}

// awaitNode waits until node i's frontend answers for the default namespace.
func (w *world) awaitNode(ctx context.Context, i int, limit time.Duration) error {
	addr := fmt.Sprintf("127.0.0.1:%d", w.nodePorts[i])
	c, err := dial.Dial(ctx, client.Options{HostPort: addr, Namespace: "default", Logger: logging.Discard}, limit, nil)
	if err != nil {
		return fmt.Errorf("%s did not serve: %w\n%s", w.nodes[i].name, err, tailFile(w.nodes[i].logPath, 15))
	}
	c.Close()
	return nil
}

func (w *world) awaitDoor(ctx context.Context, i int, limit time.Duration) error {
	for deadline := time.Now().Add(limit); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(w.doorURLs[i] + "/v1/models"); err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s did not answer on %s:\n%s", w.doors[i].name, w.doorURLs[i], tailFile(w.doors[i].logPath, 15))
		}
	}
}

// awaitWorkers runs a ping through the shared queue.
func (w *world) awaitWorkers(ctx context.Context, limit time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	run, err := w.client.ExecuteWorkflow(pctx, client.StartWorkflowOptions{ID: fmt.Sprintf("chaos-ping-%d", time.Now().UnixNano()), TaskQueue: taskQueue},
		workflows.PingWorkflowName, workflows.PingInput{Message: "chaos"})
	if err == nil {
		err = run.Get(pctx, nil)
	}
	if err != nil {
		return fmt.Errorf("no worker answered a ping: %w\n%s", err, tailFile(w.workers[0].logPath, 15))
	}
	return nil
}

// down stops everything; the databases stay for a look afterwards unless drop.
func (w *world) down(ctx context.Context, drop bool) {
	for _, group := range [][2]*proc{w.doors, w.workers} {
		var wg sync.WaitGroup
		for _, p := range group {
			if p != nil {
				wg.Add(1)
				go func() { defer wg.Done(); p.shutdown() }()
			}
		}
		wg.Wait()
	}
	if w.client != nil {
		w.client.Close()
	}
	for _, p := range w.nodes {
		if p != nil {
			p.shutdown()
		}
	}
	if w.store != nil {
		w.store.Close()
	}
	if w.fake != nil {
		w.fake.Close()
	}
	if drop && w.temporal != "" {
		name := lab.DatabaseName(w.temporal)
		for _, db := range []string{name, name + "_visibility", name + "_store"} {
			if err := lab.DropDatabase(ctx, w.opts.Postgres, db); err != nil {
				w.progress("dropping database %s: %v", db, err)
			}
		}
	}
}

// freePort is a free loopback port below the ephemeral range (lab.FreeHostPort).
func freePort() (int, error) {
	addr, err := lab.FreeHostPort()
	if err != nil {
		return 0, err
	}
	_, port, _ := strings.Cut(addr, ":")
	return strconv.Atoi(port)
}

// tailFile is the last n lines of a log.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
