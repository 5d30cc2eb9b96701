package main

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/internal/metrics"
	"github.com/batonhq/baton/store"
	"go.uber.org/zap"
)

// serveMetrics serves /metrics: the SDK's metrics, baton's counters and histograms, and each
// profile's state (available, cooldown, disabled) read from the store at scrape time.
func serveMetrics(addr string, reg *metrics.Registry, st *store.Store, src *activities.ConfigSource, logger *zap.Logger) (func(), error) {
	reg.Describe("baton_attempts_total", "Provider calls by provider, model, result and reason.")
	reg.Describe("baton_fallbacks_total", "Replies answered by a fallback rather than the selected model.")
	reg.Describe("baton_profile_state", "1 for each auth profile's current state: available, cooldown or disabled.")
	reg.Describe("baton_cooldown_seconds", "Length of the cooldowns and disables failures opened.")
	reg.Describe("baton_reply_latency", "Reply latency in seconds, by outcome.")
	reg.OnScrape(func(r *metrics.Registry) {
		r.Reset("baton_profile_state")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		agents := []string{"main"}
		for _, a := range src.Get().Agents {
			if a.ID != "main" {
				agents = append(agents, a.ID)
			}
		}
		now := time.Now()
		for _, agent := range agents {
			profiles, err := st.ListProfiles(ctx, agent)
			if err != nil {
				logger.Warn("metrics: listing profiles", zap.Error(err))
				continue
			}
			for _, p := range profiles {
				state := "available"
				switch {
				case now.Before(p.Stats.DisabledUntil):
					state = "disabled"
				case now.Before(p.Stats.CooldownUntil), now.Before(p.Stats.BlockedUntil):
					state = "cooldown"
				}
				r.Set("baton_profile_state", map[string]string{"agent": agent, "profile": p.ID, "provider": p.Provider, "state": state}, 1)
			}
		}
	})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	logger.Info("metrics served", zap.String("BATON_METRICS_LISTEN", l.Addr().String()))
	return func() { _ = srv.Close() }, nil
}
