// Package activities holds everything in baton that does I/O, as methods on one struct that
// holds the dependencies. The worker registers each method under the name the workflows use.
package activities

import (
	"context"
	"net/http"
	"time"

	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/internal/metrics"
	"github.com/batonhq/baton/store"
	"go.temporal.io/sdk/activity"
	"go.uber.org/zap"
)

// Activities are the I/O steps of baton's workflows.
type Activities struct {
	// Identity names this worker process, as its Temporal client does.
	Identity string
	Logger   *zap.Logger
	// Store holds secrets, auth state and sessions (BATON_STORE).
	Store *store.Store
	// Config is the current OpenClaw-shaped config (BATON_CONFIG).
	Config *ConfigSource
	// Limits bound waits and streams; zero means DESIGN.md's defaults.
	Limits Limits
	// HTTPClient replaces the providers' default transport (tests).
	HTTPClient *http.Client
	// Metrics receives baton_attempts_total and baton_cooldown_seconds (nil: none).
	Metrics *metrics.Registry
	// Now stamps what an attempt records itself (time.Now when nil; simulate's scenario clock).
	Now func() time.Time
	// Streams holds the live callers of a front door that runs attempts itself (serve, baton
	// reply); nil in the shared worker.
	Streams *live.Hub
	// ServerUp, when it says so, lets a finished attempt report at once: its client has a
	// connection to the server open (dial.Link), or there is no server to wait for (NoServer).
	// Otherwise (or when nil) the attempt asks the server's health first, and waits for it.
	ServerUp func() bool
}

// NoServer is ServerUp where activities run without a server to ask (simulate's SDK test
// environment): a finished attempt never waits.
func NoServer() bool { return true }

func (a *Activities) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Ping answers with the identity of the worker that ran it.
func (a *Activities) Ping(ctx context.Context, message string) (string, error) {
	info := activity.GetInfo(ctx)
	a.logger().Debug("ping", zap.String("message", message), zap.String("workflowId", info.WorkflowExecution.ID))
	return a.Identity, nil
}

func (a *Activities) logger() *zap.Logger {
	if a.Logger == nil {
		return zap.NewNop()
	}
	return a.Logger
}
