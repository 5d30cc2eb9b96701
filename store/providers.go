package store

import (
	"context"

	"github.com/batonhq/baton/policy"
)

// ProfileProviders returns the providers the given agents (and main, whose profiles an agent
// without its own inherits) hold a stored or environment profile of: what decides whether a
// model ref is reachable at all (config.Unreachable). Disabled profiles count: a disable
// is an operator's state, not a config mistake.
func (s *Store) ProfileProviders(ctx context.Context, agents ...string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, agent := range append([]string{"main"}, agents...) {
		ps, err := s.ListAllProfiles(ctx, agent)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out[policy.NormalizeProvider(p.Provider)] = true
		}
	}
	return out, nil
}
