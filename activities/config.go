package activities

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/internal/env"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"go.uber.org/zap"
)

// ConfigSource hands out the current config (reloaded on change by Watch).
type ConfigSource struct{ v atomic.Pointer[policy.Config] }

// Set replaces the current config.
func (c *ConfigSource) Set(cfg *policy.Config) { c.v.Store(cfg) }

// Get returns the current config, or the default one.
func (c *ConfigSource) Get() *policy.Config {
	if c == nil {
		return policy.DefaultConfig()
	}
	if cfg := c.v.Load(); cfg != nil {
		return cfg
	}
	return policy.DefaultConfig()
}

// StaticConfig is a source that holds cfg and is never reloaded.
func StaticConfig(cfg *policy.Config) *ConfigSource {
	src := &ConfigSource{}
	src.Set(cfg)
	return src
}

// LoadConfigFile reads BATON_CONFIG; an empty path is the default config. loaded is the file's
// modification time, from which Watch looks for a change.
func LoadConfigFile(path string) (cfg *policy.Config, loaded time.Time, err error) {
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
	if cfg, err = config.ParseConfig(data); err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, info.ModTime(), nil
}

// Watch reloads path into c when it changes, until ctx ends; a file that no longer parses (or
// that check refuses) is reported and the last good config stays in force. Every process that
// runs replies watches the same file, so they decide on the same config.
func (c *ConfigSource) Watch(ctx context.Context, path string, loaded time.Time, every time.Duration,
	check func(*policy.Config) error, logger *zap.Logger) {
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
		cfg, _, err := LoadConfigFile(path)
		if err == nil && check != nil {
			err = check(cfg)
		}
		if err != nil {
			logger.Error("config not reloaded; keeping the last good one", zap.String("BATON_CONFIG", path), zap.Error(err))
			continue
		}
		c.Set(cfg)
		logger.Info("config reloaded", zap.String("BATON_CONFIG", path))
	}
}

// LimitsFrom turns the environment's limits into a reply's; a bad skip TTL is reported in err
// (named by its variable) while the limits keep the default TTL.
func LimitsFrom(e env.Limits) (Limits, error) {
	lim := DefaultLimits()
	lim.RetryMaxWait = time.Duration(e.RetryMaxWaitSeconds) * time.Second
	lim.FirstTokenTimeout = time.Duration(e.FirstTokenMs) * time.Millisecond
	lim.ReasoningFirstTokenTimeout = time.Duration(e.ReasoningFirstTokenMs) * time.Millisecond
	lim.AttemptTimeout = time.Duration(e.AttemptMs) * time.Millisecond
	lim.IdleTimeout = time.Duration(e.IdleMs) * time.Millisecond
	lim.ResponseTimeout = time.Duration(e.ResponseMs) * time.Millisecond
	lim.InfraRetries = e.InfraRetries
	raw, name := e.SkipTTLMs, "BATON_FALLBACK_SKIP_TTL_MS"
	if raw == "" && e.OpenClawSkipTTL != "" {
		raw, name = e.OpenClawSkipTTL, "OPENCLAW_FALLBACK_SKIP_TTL_MS"
	}
	ttl, err := policy.ParseSkipTTL(raw, raw != "")
	lim.SkipTTL = ttl
	if err != nil {
		return lim, fmt.Errorf("%s: %w", name, err)
	}
	return lim, nil
}

// Unreachable names the config's model refs whose provider has neither a models.providers entry
// nor a profile in the store (main's, or an agent's own): a mistake to name at start, and a
// reload every process that runs replies refuses alike.
func Unreachable(ctx context.Context, st *store.Store, cfg *policy.Config) []*config.ConfigError {
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

// ReachableCheck is Watch's check against Unreachable: the first model no reply could reach.
func ReachableCheck(st *store.Store) func(*policy.Config) error {
	return func(c *policy.Config) error {
		if problems := Unreachable(context.Background(), st, c); len(problems) > 0 {
			return problems[0]
		}
		return nil
	}
}
