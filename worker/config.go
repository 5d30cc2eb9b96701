package main

import (
	"context"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
)

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
