package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/internal/dial"
	"github.com/batonhq/baton/internal/env"
	"github.com/batonhq/baton/internal/logging"
	"github.com/batonhq/baton/node"
	"github.com/batonhq/baton/schedules"
	"github.com/batonhq/baton/store"
	"github.com/sethvargo/go-envconfig"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
)

const (
	exitFailure = 1
	exitUsage   = 2
	// stopTimeout bounds the drain: a model call in flight may take a while to finish streaming.
	stopTimeout = 30 * time.Second
)

func main() {
	os.Exit(run(os.Args[1:], envconfig.OsLookuper(), os.Stderr, worker.InterruptCh()))
}

func run(args []string, lookup envconfig.Lookuper, stderr io.Writer, interrupt <-chan any) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			fmt.Fprint(stderr, usage)
			return 0
		}
		fmt.Fprintf(stderr, "baton-worker: unknown argument %q (it takes none; settings come from the environment, see --help)\n", args[0])
		return exitUsage
	}
	cfg, err := env.LoadWorker(context.Background(), lookup)
	if err != nil {
		fmt.Fprintf(stderr, "baton-worker: %v\n", err)
		return exitUsage
	}
	logger, err := logging.New(cfg.LogLevel, cfg.LogFormat)
	if err != nil { // validated above; kept for safety
		fmt.Fprintf(stderr, "baton-worker: %v\n", err)
		return exitUsage
	}
	defer func() { _ = logger.Sync() }()

	oldKeys, _ := lookup.Lookup(codec.EnvOldKeys)
	payloadCodec, err := codec.Parse(cfg.PayloadKey, oldKeys)
	if err != nil {
		fmt.Fprintf(stderr, "baton-worker: %v\n", err)
		return exitUsage
	}
	connectTimeout, err := dial.Timeout(lookup.Lookup)
	if err != nil {
		fmt.Fprintf(stderr, "baton-worker: %v\n", err)
		return exitUsage
	}
	// The store with its keys, the config (refused if it names a model no reply could reach),
	// the limits, metrics and tracing: assembled as serve and baton reply assemble them.
	n, err := node.Open(context.Background(), node.Options{Service: "baton-worker", Store: cfg.Store, StoreName: "BATON_STORE",
		ConfigFile: cfg.ConfigFile, ConfigName: "BATON_CONFIG", Lookup: lookup.Lookup, Logger: logger})
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "baton-worker: %s\n", line)
		}
		if node.IsUsage(err) {
			return exitUsage
		}
		logger.Error("cannot open the store", zap.Error(err))
		return exitFailure
	}
	defer n.Close()
	if n.Warning != nil {
		logger.Warn("bad skip cache TTL", zap.Error(n.Warning))
	}
	st := n.Store
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	go n.Watch(watchCtx)

	go pruneContent(watchCtx, st, cfg.Retention(), logger, time.Hour)

	identity := workerIdentity()
	conv := payloadCodec.Converters()
	// The metrics listener starts before Temporal is reached: /healthz answers at once, /readyz
	// once the client is connected and the store answers.
	var connected atomic.Pointer[client.Client]
	if cfg.MetricsListen != "" {
		stopMetrics, err := n.ServeMetrics(cfg.MetricsListen, &connected)
		if err != nil {
			fmt.Fprintf(stderr, "baton-worker: BATON_METRICS_LISTEN %s: %v\n", cfg.MetricsListen, err)
			return exitFailure
		}
		defer stopMetrics()
	}
	dialCtx, stopDial := context.WithCancel(context.Background())
	go func() { // an interrupt while waiting for the server stops the wait
		select {
		case <-interrupt:
			stopDial()
		case <-dialCtx.Done():
		}
	}()
	compression, _ := cfg.GrpcCompression() // checked with the rest of cfg
	c, err := dial.Dial(dialCtx, n.Client(client.Options{
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression},
		DataConverter:     conv.Data,
		FailureConverter:  conv.Failure,
		Identity:          identity,
		HostPort:          dial.Target(cfg.Address),
		Namespace:         cfg.Namespace,
		Logger:            logging.SDK(logger),
	}), connectTimeout, func(msg string) { logger.Warn(msg) })
	interrupted := dialCtx.Err() != nil
	stopDial()
	if err != nil {
		if interrupted {
			logger.Info("baton-worker stopped while waiting for Temporal")
			return 0
		}
		logger.Error("cannot connect to Temporal", zap.String("TEMPORAL_ADDRESS", cfg.Address),
			zap.String("TEMPORAL_NAMESPACE", cfg.Namespace), zap.Error(err))
		fmt.Fprintf(stderr, "baton-worker: %v\n", err)
		return exitFailure
	}
	defer c.Close()
	connected.Store(&c)

	// cron.jobs[] and heartbeats in the config become schedules (reconciled at every start).
	rctx, cancelReconcile := context.WithTimeout(context.Background(), time.Minute)
	rep, err := schedules.Reconcile(rctx, c, n.Config.Get(), cfg.TaskQueue, conv.Data)
	cancelReconcile()
	if err != nil {
		logger.Error("schedules from the config not fully reconciled", zap.Error(err))
	}
	logger.Info("schedules reconciled", zap.Strings("created", rep.Created), zap.Strings("updated", rep.Updated), zap.Strings("deleted", rep.Deleted))

	w := n.Worker(c, cfg.TaskQueue, identity, stopTimeout, nil)

	logger.Info("baton-worker polling", zap.String("address", cfg.Address),
		zap.String("namespace", cfg.Namespace), zap.String("taskQueue", cfg.TaskQueue))
	if err := w.Run(interrupt); err != nil {
		logger.Error("worker stopped", zap.Error(err))
		return exitFailure
	}
	logger.Info("baton-worker stopped")
	return 0
}

// pruneContent deletes turn content past its retention, at start and then every interval.
func pruneContent(ctx context.Context, st *store.Store, retention time.Duration, logger *zap.Logger, every time.Duration) {
	for {
		n, err := st.DeleteContentBefore(ctx, time.Now().Add(-retention))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("deleting turn content past its retention failed", zap.Error(err))
		case n > 0:
			logger.Info("turn content past its retention deleted", zap.Int64("rows", n), zap.Duration("retention", retention))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// workerIdentity is the SDK's default form, pid@host, made here so activities can report it.
func workerIdentity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return fmt.Sprintf("%d@%s", os.Getpid(), host)
}

const usage = `baton-worker runs baton's workflows and activities. It takes no arguments.

Environment:
  TEMPORAL_ADDRESS    Temporal frontend host:port, or several comma-separated (a cluster's
                      nodes: round-robin over those that answer; default 127.0.0.1:7233)
  TEMPORAL_NAMESPACE  namespace (default "default")
  BATON_TASK_QUEUE    task queue to poll (default "baton")
  BATON_GRPC_COMPRESSION  gRPC compression to Temporal: auto (default: none when every address
                      is this host or a private IP, gzip otherwise), gzip or none
  BATON_STORE         sqlite://PATH or postgres://... (default sqlite://./.baton/baton.db)
  BATON_STORE_MAX_CONNS  a PostgreSQL store's connections from this process (default 16)
  BATON_CONFIG        OpenClaw-shaped JSON5 config file (optional)
  BATON_CONTENT_RETENTION  how long turn content stays in the store (default 7d)
  BATON_METRICS_LISTEN host:port of /metrics, /healthz and /readyz (optional)
  BATON_PAYLOAD_KEY   encrypts workflow payloads and failure messages (optional)
  BATON_PAYLOAD_KEYS  earlier payload keys, comma-separated: they still decrypt
  BATON_SECRET_KEY    seals credential secrets in the store (optional)
  BATON_CONNECT_TIMEOUT how long to wait for Temporal at start (default 60s)
  OTEL_EXPORTER_OTLP_ENDPOINT  export traces over OTLP (optional)
  LOG_LEVEL           debug | info | warn | error (default info)
  LOG_FORMAT          json | console (default json)
`
