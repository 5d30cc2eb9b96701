package store

import (
	"context"
)

// Read-only listings for the operator page (ui/): which agents hold auth state, and the
// sessions most recently changed.

// AuthAgents lists the agents that have stored profiles or usage stats, sorted; "main" (whose
// profiles every agent without its own uses) is always first.
func (s *Store) AuthAgents(ctx context.Context) ([]string, error) {
	rows, err := s.query(ctx, `SELECT agent FROM auth_profiles UNION SELECT agent FROM auth_stats ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{"main"}
	for rows.Next() {
		var agent string
		if err := rows.Scan(&agent); err != nil {
			return nil, err
		}
		if agent != "main" {
			out = append(out, agent)
		}
	}
	return out, rows.Err()
}

// OverriddenSessions returns up to limit sessions that hold a model override (a fallback's or a
// user's), the most recently updated first.
func (s *Store) OverriddenSessions(ctx context.Context, limit int) ([]Session, error) {
	if limit <= 0 {
		limit = 200
	}
	// The session is JSON written by encoding/json: a set override is the key with a value.
	return s.sessions(ctx, `WHERE data_json LIKE '%"modelOverride":%'`, nil, limit)
}
