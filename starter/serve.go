package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batonhq/baton/internal/health"
	"github.com/batonhq/baton/internal/logging"
	"github.com/batonhq/baton/node"
	"github.com/batonhq/baton/serve"
	"github.com/batonhq/baton/ui"
	"google.golang.org/grpc"
)

// runServe is `baton serve`: the front door (package serve) with its flags, and the workers it
// runs replies on (package node, as baton-worker assembles them).
func runServe(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on")
	configPath := fs.String("config", os.Getenv("BATON_CONFIG"), "OpenClaw-shaped config, the workers' (reloaded on change; env BATON_CONFIG)")
	timeout := fs.Duration("timeout", serve.DefaultTimeout, "the longest a request waits for its reply")
	storeURL := storeFlag(fs)
	sharedWorker := fs.Bool("shared-worker", os.Getenv("BATON_SERVE_SHARED_WORKER") != "false",
		"also run the shared task queue's replies here, as baton-worker does (env BATON_SERVE_SHARED_WORKER); false beside baton-workers: a front door that is redeployed takes no background reply with it")
	webUI := fs.String("web-ui", os.Getenv("BATON_WEB_UI"), "the Temporal Web UI's base URL, for the operator page's links (env BATON_WEB_UI)")
	set, code, ok := parseFlags(fs, args, errOut)
	if !ok {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(errOut, "baton serve: "+format+"\n", a...)
		return code
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, "unexpected argument %q", fs.Arg(0))
	}
	if err := tf.validate(set); err != nil {
		return fail(exitUsage, "%v", err)
	}
	token := os.Getenv("BATON_SERVE_TOKEN")
	if err := checkServeAuth(*listen, token); err != nil {
		return fail(exitUsage, "%v", err)
	}
	// serve runs workflows and attempts too: it logs as baton-worker does.
	logger, err := logging.New(cmp.Or(os.Getenv("LOG_LEVEL"), "info"), cmp.Or(os.Getenv("LOG_FORMAT"), "json"))
	if err != nil {
		return fail(exitUsage, "LOG_LEVEL / LOG_FORMAT: %v", err)
	}
	defer func() { _ = logger.Sync() }()
	opts := serve.Options{TaskQueue: tf.TaskQueue, Namespace: tf.Namespace, Token: token, Timeout: *timeout, Logger: logger, Identity: serveIdentity()}
	if v := os.Getenv("BATON_SERVE_MAX_INFLIGHT"); v != "" {
		if opts.MaxInflight, err = strconv.Atoi(v); err != nil || opts.MaxInflight < 1 {
			return fail(exitUsage, "BATON_SERVE_MAX_INFLIGHT: %q is not a positive number", v)
		}
	}
	if v := os.Getenv("BATON_MAX_REQUEST_BYTES"); v != "" {
		if opts.MaxBody, err = strconv.ParseInt(v, 10, 64); err != nil || opts.MaxBody < 1024 {
			return fail(exitUsage, "BATON_MAX_REQUEST_BYTES: %q is not a number of bytes (at least 1024)", v)
		}
	}
	if opts.KeepAlive, err = serve.ParseKeepAlive(os.Getenv("BATON_SERVE_KEEPALIVE")); err != nil {
		return fail(exitUsage, "%v", err)
	}
	// The store with its keys, the config (reloaded on change), the limits, metrics and tracing
	// (a reply is one trace from this request to each attempt): as baton-worker assembles them.
	n, err := node.Open(ctx, node.Options{Service: "baton-serve", Store: *storeURL, StoreName: "--store / BATON_STORE",
		ConfigFile: *configPath, ConfigName: "--config / BATON_CONFIG", Logger: logger})
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(errOut, "baton serve: %s\n", line)
		}
		if node.IsUsage(err) {
			return exitUsage
		}
		return exitFailure
	}
	defer n.Close()
	if n.Warning != nil {
		fmt.Fprintf(errOut, "baton serve: %v (the default is used)\n", n.Warning)
	}
	go n.Watch(ctx)
	tf.identity, tf.logger = opts.Identity, logger
	tf.interceptors, tf.metrics, tf.dialOptions = n.Tracing.ClientInterceptors(), n.Metrics.SDK(), []grpc.DialOption{n.DialOption()}
	// A server that is not up yet is waited for (BATON_CONNECT_TIMEOUT), saying so.
	c, err := tf.dialWaiting(ctx, func(msg string) { fmt.Fprintln(errOut, "baton serve: "+msg) })
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	defer c.Close()
	// serve runs replies as baton-worker does: its callers' attempts on a queue of its own (live
	// deltas in memory), and the shared queue's workflow tasks and attempts, so that a reply it
	// starts begins here without a trip through the server's matching (eager start;
	// docs/DECISIONS.md: serve runs replies).
	door, err := n.Door(c, tf.TaskQueue)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	defer door.Stop()
	if *sharedWorker {
		// An attempt of this process's caller that the shared worker runs here streams too.
		shared := n.Worker(c, tf.TaskQueue, opts.Identity, 30*time.Second, door.Hub)
		if err := shared.Start(); err != nil {
			return fail(exitFailure, "starting the worker for the shared task queue %s: %v", tf.TaskQueue, err)
		}
		defer shared.Stop()
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail(exitFailure, "--listen %s: %v", *listen, err)
	}
	st := n.Store
	opts.Client, opts.Config, opts.Content, opts.Streams, opts.StreamQueue, opts.Responses = c, n.Config, st, door.Hub, door.Queue, st
	opts.HasProfile = func(ctx context.Context, provider string) bool {
		providers, err := st.ProfileProviders(ctx)
		return err != nil || providers[provider] // the store's trouble is not the request's mistake
	}
	mux := http.NewServeMux()
	// The operator page: the same token, as a bearer token or typed once into its sign-in form.
	mux.Handle(ui.Prefix, ui.RequireToken(token, ui.New(ui.Options{Client: c, Namespace: tf.Namespace, Store: st,
		Config: n.Config.Get, WebUIURL: *webUI})))
	health.Mount(mux, health.Temporal(c), health.Check{Name: "store", Fn: st.Ping})
	// The replies this process runs are counted as baton-worker counts its own (same token as /v1).
	mux.Handle("/metrics", serve.RequireToken(token, n.Metrics.Handler()))
	mux.Handle("/", serve.New(opts))
	srv := &http.Server{Handler: n.Tracing.Handler(mux, "baton serve"), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "baton serve: OpenAI (Chat Completions, Responses) and Anthropic-compatible endpoints on http://%s/v1 (task queue %s); the operator page on http://%s/ui/\n",
		l.Addr(), tf.TaskQueue, l.Addr())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(exitFailure, "%v", err)
	}
	return 0
}

// checkServeAuth requires BATON_SERVE_TOKEN when the endpoint is reachable from other hosts.
func checkServeAuth(listen, token string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--listen: %q is not host:port", listen)
	}
	if token != "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s is not a loopback address: set BATON_SERVE_TOKEN, which clients then send as a bearer token", listen)
}

// serveIdentity names serve's client and workers in histories: an eagerly started workflow
// task is recorded as started by the client that started the reply.
func serveIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("serve/%d@%s", os.Getpid(), host)
}
