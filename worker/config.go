package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/internal/env"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"go.uber.org/zap"
)

// loadConfigFile reads BATON_CONFIG; an empty path is the default config.
func loadConfigFile(path string) (*policy.Config, time.Time, error) {
	if path == "" {
		return policy.DefaultConfig(), time.Time{}, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	cfg, err := config.ParseConfig(data)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, info.ModTime(), nil
}

// watchConfig reloads BATON_CONFIG when it changes; a file that no longer parses is reported and
// the last good config stays in force.
func watchConfig(ctx context.Context, path string, loaded time.Time, src *activities.ConfigSource, logger *zap.Logger, every time.Duration,
	check func(*policy.Config) error) {
	if path == "" {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		info, err := os.Stat(path)
		if err != nil || info.ModTime().Equal(loaded) {
			continue
		}
		loaded = info.ModTime()
		cfg, _, err := loadConfigFile(path)
		if err == nil && check != nil {
			err = check(cfg)
		}
		if err != nil {
			logger.Error("config not reloaded; keeping the last good one", zap.String("BATON_CONFIG", path), zap.Error(err))
			continue
		}
		src.Set(cfg)
		logger.Info("config reloaded", zap.String("BATON_CONFIG", path))
	}
}

// limitsOf turns the worker's environment into reply limits, reporting a bad skip TTL.
func limitsOf(cfg env.Worker, logger *zap.Logger) activities.Limits {
	lim := activities.DefaultLimits()
	lim.RetryMaxWait = time.Duration(cfg.RetryMaxWaitSeconds) * time.Second
	lim.FirstTokenTimeout = time.Duration(cfg.FirstTokenMs) * time.Millisecond
	lim.IdleTimeout = time.Duration(cfg.IdleMs) * time.Millisecond
	lim.ResponseTimeout = time.Duration(cfg.ResponseMs) * time.Millisecond
	lim.InfraRetries = cfg.InfraRetries
	raw, name := cfg.SkipTTLMs, "BATON_FALLBACK_SKIP_TTL_MS"
	if raw == "" && cfg.OpenClawSkipTTL != "" {
		raw, name = cfg.OpenClawSkipTTL, "OPENCLAW_FALLBACK_SKIP_TTL_MS"
	}
	ttl, err := policy.ParseSkipTTL(raw, raw != "")
	if err != nil {
		logger.Warn("bad skip cache TTL", zap.String("variable", name), zap.Error(err))
	}
	lim.SkipTTL = ttl
	return lim
}

// unreachable names the config's model refs whose provider has neither a models.providers entry
// nor a profile in the store (main's, or an agent's own).
func unreachable(ctx context.Context, st *store.Store, cfg *policy.Config) []*config.ConfigError {
	var agents []string
	for _, a := range cfg.Agents {
		agents = append(agents, a.ID)
	}
	providers, err := st.ProfileProviders(ctx, agents...)
	if err != nil {
		return nil // the store's trouble is reported where it matters, not as a config mistake
	}
	return config.Unreachable(cfg, func(p string) bool { return providers[p] })
}
