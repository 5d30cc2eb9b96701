// Package node assembles what every process that runs replies holds: the store with its keys,
// the config source with its watch and reachability check, the limits, the metrics (registry and
// the SDK's handler), tracing, and the workers with baton's registrations. baton-worker, `baton
// serve` and `baton reply` all call it, so that a reply runs the same way, is counted the same
// way and refuses the same config whichever process runs it.
package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/internal/dial"
	"github.com/batonhq/baton/internal/env"
	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/internal/metrics"
	"github.com/batonhq/baton/internal/tracing"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/registry"
	"github.com/batonhq/baton/store"
	"github.com/sethvargo/go-envconfig"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// Options say where a node's parts come from. The names (StoreName, ConfigName) are how the
// process's user sets them, for errors that say what to fix ("BATON_STORE", "--store / BATON_STORE").
type Options struct {
	Service    string // the tracing service name: baton-worker, baton-serve, baton
	Store      string // the store's URL
	StoreName  string
	ConfigFile string // "" : the built-in defaults
	ConfigName string
	// Config, when set, is used instead of reading ConfigFile (baton reply's already loaded one).
	Config *policy.Config
	// Lookup reads the environment (BATON_PAYLOAD_KEY, BATON_SECRET_KEY, the limits, OTEL_*).
	Lookup func(string) (string, bool)
	Logger *zap.Logger // nil: none
	// NoTracing leaves tracing off whatever the environment says (a short-lived command).
	NoTracing bool
}

// Node is one process's assembly. Close it when done.
type Node struct {
	Store   *store.Store
	Config  *activities.ConfigSource
	Limits  activities.Limits
	Metrics *metrics.Registry
	Tracing *tracing.Tracing
	Logger  *zap.Logger
	// Warning is a setting that still left a working default (a bad skip cache TTL): the process
	// says it and goes on.
	Warning error
	// Link watches the connections of the client made with Client or DialOption (nil before
	// either): a finished attempt of this node reports at once while one is open.
	Link *dial.Link

	configFile string
	loaded     time.Time
}

// usageError is an error in what the user set (exit 2), as opposed to a failure to reach
// something (exit 1).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// IsUsage reports an error in what the user set.
func IsUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// Open assembles a node. A config naming a model no reply could reach is refused here, as its
// reload is refused later (Watch).
func Open(ctx context.Context, o Options) (*Node, error) {
	if o.Lookup == nil {
		o.Lookup = os.LookupEnv
	}
	n := &Node{Logger: o.Logger, configFile: o.ConfigFile}
	if n.Logger == nil {
		n.Logger = zap.NewNop()
	}
	e, err := env.LoadLimits(ctx, envconfig.LookuperFunc(o.Lookup))
	if err != nil {
		return nil, usage(err)
	}
	n.Limits, n.Warning = activities.LimitsFrom(e)
	cfg := o.Config
	if cfg == nil {
		if cfg, n.loaded, err = activities.LoadConfigFile(o.ConfigFile); err != nil {
			return nil, usage(fmt.Errorf("%s: %w", o.ConfigName, err))
		}
	}
	n.Config = activities.StaticConfig(cfg)
	keys, err := Keys(o.Lookup)
	if err != nil {
		return nil, usage(err)
	}
	if err := env.ValidateStore(o.Store); err != nil {
		return nil, usage(fmt.Errorf("%s: %w", o.StoreName, err))
	}
	if n.Store, err = store.Open(ctx, o.Store, keys); err != nil {
		return nil, fmt.Errorf("%s: %w", o.StoreName, err)
	}
	if problems := activities.Unreachable(ctx, n.Store, cfg); len(problems) > 0 {
		n.Store.Close()
		var msgs []error
		for _, p := range problems {
			msgs = append(msgs, fmt.Errorf("%s %s: %w", o.ConfigName, o.ConfigFile, p))
		}
		return nil, usage(errors.Join(msgs...))
	}
	if !o.NoTracing { // a short-lived command exports no spans of its own
		if n.Tracing, err = tracing.Setup(ctx, o.Service, o.Lookup); err != nil {
			n.Store.Close()
			return nil, usage(err)
		}
	}
	n.Metrics = metrics.New()
	if err := n.Metrics.Register(&profileStates{st: n.Store, src: n.Config, logger: n.Logger}); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// Keys are the store's keys from the environment: turn content sealed with the payload key, as
// the history's payloads are; credential secrets with BATON_SECRET_KEY.
func Keys(lookup func(string) (string, bool)) (store.Options, error) {
	var o store.Options
	if k, _ := lookup(codec.EnvKey); k != "" {
		key, err := codec.ParseKey(k)
		if err != nil {
			return o, fmt.Errorf("%s: %w", codec.EnvKey, err)
		}
		o.ContentKey = key
	}
	if k, _ := lookup(store.SecretKeyEnv); k != "" {
		key, err := codec.ParseKey(k)
		if err != nil {
			return o, fmt.Errorf("%s: %w", store.SecretKeyEnv, err)
		}
		o.SecretKey = key
	}
	if v, _ := lookup(store.MaxConnsEnv); strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return o, fmt.Errorf("%s: %q is not a number of connections (1 or more)", store.MaxConnsEnv, v)
		}
		o.MaxConns = n
	}
	return o, nil
}

// Watch reloads the config file when it changes, refusing a reload that names a model no reply
// could reach (the running config stays). It returns when ctx ends.
func (n *Node) Watch(ctx context.Context) {
	n.Config.Watch(ctx, n.configFile, n.loaded, 2*time.Second, activities.ReachableCheck(n.Store), n.Logger)
}

// Client sets the node's parts on a Temporal client's options: the SDK's metrics, the tracing
// interceptors, the log.
func (n *Node) Client(o client.Options) client.Options {
	o.MetricsHandler = n.Metrics.SDK()
	o.Interceptors = append(o.Interceptors, n.Tracing.ClientInterceptors()...)
	o.ConnectionOptions.DialOptions = append(o.ConnectionOptions.DialOptions, n.DialOption())
	return o
}

// DialOption lets n.Link watch the connections of the client it goes on.
func (n *Node) DialOption() grpc.DialOption {
	if n.Link == nil {
		n.Link = &dial.Link{}
	}
	return n.Link.DialOption()
}

// Activities are the node's activities, named identity in histories.
func (n *Node) Activities(identity string) activities.Activities {
	return activities.Activities{Identity: identity, Logger: cmp.Or(n.Logger, zap.NewNop()), Store: n.Store, Config: n.Config,
		Limits: n.Limits, Metrics: n.Metrics, ServerUp: func() bool { return n.Link.Up() }}
}

// Worker is a worker of the shared task queue with every workflow and activity registered, not
// started. streams, when set, lets an attempt of this process's caller that the shared worker
// runs stream live too.
func (n *Node) Worker(c client.Client, queue, identity string, stopTimeout time.Duration, streams *live.Hub) worker.Worker {
	acts := n.Activities(identity)
	if streams != nil {
		acts.Streams = streams
	}
	w := worker.New(c, queue, registry.WorkerOptions(stopTimeout))
	registry.Register(w, &acts)
	return w
}

// Door is a front door's own worker: it runs the attempts of the callers this process holds, on
// a task queue of its own, so that each delta reaches its caller in memory as the provider
// sends it (docs/DECISIONS.md: live streaming). A reply whose front door is gone has its
// attempts taken by the shared queue.
type Door struct {
	Hub   *live.Hub
	Queue string
	w     worker.Worker
}

// Door starts the front door's worker beside the shared queue sharedQueue.
func (n *Node) Door(c client.Client, sharedQueue string) (*Door, error) {
	host, _ := os.Hostname()
	queue := fmt.Sprintf("%s/door/%s-%d-%s", sharedQueue, host, os.Getpid(), live.NewKey()[:8])
	hub := live.NewHub()
	acts := n.Activities("door@" + host)
	acts.Streams = hub
	w := worker.New(c, queue, registry.WorkerOptions(10*time.Second))
	registry.RegisterAttempts(w, &acts)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("starting the worker for live attempts on %s: %w", queue, err)
	}
	return &Door{Hub: hub, Queue: queue, w: w}, nil
}

// Stop stops the door's worker (attempts in flight get its stop timeout).
func (d *Door) Stop() {
	if d != nil {
		d.w.Stop()
	}
}

// Close flushes the spans not yet exported (within 5 s) and closes the store.
func (n *Node) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n.Tracing != nil {
		_ = n.Tracing.Shutdown(ctx)
	}
	if n.Store != nil {
		n.Store.Close()
	}
}

func usage(err error) error { return usageError{err} }
