package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/registry"
	"github.com/batonhq/baton/store"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
)

// liveDoor is a front door's own worker: it runs the attempts of the callers this process holds,
// on a task queue of its own, so that each delta reaches its caller in memory as the provider
// sends it (docs/DECISIONS.md: live streaming). A reply whose front door is gone has its
// attempts taken by the shared queue.
type liveDoor struct {
	hub   *live.Hub
	queue string
	w     worker.Worker
}

// startLiveDoor starts the worker; the attempts it runs read the same store and config as the
// shared worker's.
func startLiveDoor(c client.Client, sharedQueue string, st *store.Store, cfg *policy.Config, logger *zap.Logger) (*liveDoor, error) {
	host, _ := os.Hostname()
	queue := fmt.Sprintf("%s/door/%s-%d-%s", sharedQueue, host, os.Getpid(), newStreamKey()[:8])
	src := &activities.ConfigSource{}
	src.Set(cfg)
	if logger == nil {
		logger = zap.NewNop()
	}
	hub := live.NewHub()
	w := worker.New(c, queue, registry.WorkerOptions(10*time.Second))
	registry.RegisterAttempts(w, &activities.Activities{Identity: "door@" + host, Logger: logger, Store: st, Config: src, Streams: hub})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("starting the worker for live attempts on %s: %w", queue, err)
	}
	return &liveDoor{hub: hub, queue: queue, w: w}, nil
}

// Stop stops the worker (attempts in flight get its stop timeout).
func (l *liveDoor) Stop() {
	if l != nil {
		l.w.Stop()
	}
}

// newStreamKey names a caller's stream: random, so that no other caller can read it.
func newStreamKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
