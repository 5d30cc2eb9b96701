package node

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/internal/health"
	"github.com/batonhq/baton/store"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
)

// ServeMetrics serves /metrics (the SDK's metrics, baton's counters and histograms, and each
// profile's state read from the store at scrape time), /healthz and /readyz (Temporal reachable
// through the client once connected holds it, and the store answering) on addr: a worker's own
// listener (serve mounts the same registry on its mux).
func (n *Node) ServeMetrics(addr string, connected *atomic.Pointer[client.Client]) (func(), error) {
	st, reg, logger := n.Store, n.Metrics, n.Logger
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg.Handler())
	health.Mount(mux,
		health.Check{Name: "temporal", Fn: func(ctx context.Context) error {
			c := connected.Load()
			if c == nil {
				return errors.New("not connected yet")
			}
			return health.Temporal(*c).Fn(ctx)
		}},
		health.Check{Name: "store", Fn: st.Ping})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	logger.Info("metrics served", zap.String("BATON_METRICS_LISTEN", l.Addr().String()))
	return func() { _ = srv.Close() }, nil
}

var profileStateDesc = prometheus.NewDesc("baton_profile_state",
	"1 for each auth profile's current state: available, cooldown (model names the model of a model-scoped one), disabled, or manual (an operator's `baton auth disable`).",
	[]string{"agent", "profile", "provider", "state", "model"}, nil)

// profileStates is baton_profile_state, computed from the store at each scrape.
type profileStates struct {
	st     *store.Store
	src    *activities.ConfigSource
	logger *zap.Logger
}

func (p *profileStates) Describe(ch chan<- *prometheus.Desc) { ch <- profileStateDesc }

func (p *profileStates) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	agents := []string{"main"}
	for _, a := range p.src.Get().Agents {
		if a.ID != "main" {
			agents = append(agents, a.ID)
		}
	}
	now := time.Now()
	for _, agent := range agents {
		profiles, err := p.st.ListAllProfiles(ctx, agent)
		if err != nil {
			p.logger.Warn("metrics: listing profiles", zap.Error(err))
			continue
		}
		for _, prof := range profiles {
			state, model := profileState(prof, now)
			ch <- prometheus.MustNewConstMetric(profileStateDesc, prometheus.GaugeValue, 1, agent, prof.ID, prof.Provider, state, model)
		}
	}
}

// profileState is a profile's state and, for a cooldown or usage block scoped to one model, that
// model (a model-scoped cooldown is a cooldown too: the profile still serves other models).
func profileState(p store.Profile, now time.Time) (state, model string) {
	s := p.Stats
	switch {
	case p.Manual != nil:
		return "manual", ""
	case now.Before(s.DisabledUntil):
		return "disabled", ""
	case now.Before(s.CooldownUntil):
		return "cooldown", s.CooldownModel
	case now.Before(s.BlockedUntil):
		return "cooldown", s.BlockedModel
	}
	return "available", ""
}
