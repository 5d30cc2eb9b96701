package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/internal/env"
	"github.com/batonhq/baton/internal/live"
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

// startLiveDoor starts the worker; the attempts it runs read the store, config and limits of
// acts, as the shared worker's do.
func startLiveDoor(c client.Client, sharedQueue string, acts activities.Activities) (*liveDoor, error) {
	host, _ := os.Hostname()
	queue := fmt.Sprintf("%s/door/%s-%d-%s", sharedQueue, host, os.Getpid(), newStreamKey()[:8])
	if acts.Logger == nil {
		acts.Logger = zap.NewNop()
	}
	hub := live.NewHub()
	acts.Identity, acts.Streams = "door@"+host, hub
	w := worker.New(c, queue, registry.WorkerOptions(10*time.Second))
	registry.RegisterAttempts(w, &acts)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("starting the worker for live attempts on %s: %w", queue, err)
	}
	return &liveDoor{hub: hub, queue: queue, w: w}, nil
}

// startSharedWorker runs the shared queue's workflows and activities in this process, as
// baton-worker does: a reply this process starts then runs its first workflow task here at once
// (eager start), and the attempt it schedules too (eager activity).
func startSharedWorker(c client.Client, queue string, acts activities.Activities) (worker.Worker, error) {
	acts.Identity = serveIdentity()
	w := worker.New(c, queue, registry.WorkerOptions(30*time.Second))
	registry.Register(w, &acts)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("starting the worker for the shared task queue %s: %w", queue, err)
	}
	return w, nil
}

// serveIdentity names serve's client and workers in histories: an eagerly started workflow
// task is recorded as started by the client that started the reply.
func serveIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("serve/%d@%s", os.Getpid(), host)
}

// replyActivities are the activities a front door runs: on its store and config, with the
// limits of the environment (BATON_FIRST_TOKEN_TIMEOUT_MS and the rest, as baton-worker reads
// them). warn is a setting to report that still leaves a working default.
func replyActivities(st *store.Store, src *activities.ConfigSource) (acts activities.Activities, warn, err error) {
	e, err := env.LoadLimits(context.Background(), nil)
	if err != nil {
		return acts, nil, err
	}
	lim, warn := activities.LimitsFrom(e)
	return activities.Activities{Store: st, Config: src, Limits: lim}, warn, nil
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
