package store

import (
	"context"
	"fmt"
)

// ListSessions returns the most recently updated sessions first, of one agent (or all when agent
// is ""), at most limit of them.
func (s *Store) ListSessions(ctx context.Context, agent string, limit int) ([]Session, error) {
	if agent != "" {
		return s.sessions(ctx, `WHERE agent = ?`, []any{agent}, limit)
	}
	return s.sessions(ctx, "", nil, limit)
}

// sessions lists the sessions a WHERE clause selects, the most recently updated first.
func (s *Store) sessions(ctx context.Context, where string, args []any, limit int) ([]Session, error) {
	rows, err := s.query(ctx, `SELECT key, data_json, version, updated_at_ms FROM sessions `+where+
		` ORDER BY updated_at_ms DESC, key LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var key, raw string
		var version, updated int64
		if err := rows.Scan(&key, &raw, &version, &updated); err != nil {
			return nil, err
		}
		sess, err := decodeSession(key, raw, version, updated)
		if err != nil {
			return nil, fmt.Errorf("listing sessions: %w", err)
		}
		out = append(out, sess)
	}
	return out, rows.Err()
}
