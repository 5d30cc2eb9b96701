package store

import "context"

// ListSessions returns the most recently updated sessions first, of one agent (or all when agent
// is ""), at most limit of them.
func (s *Store) ListSessions(ctx context.Context, agent string, limit int) ([]Session, error) {
	q, args := `SELECT key, data_json, version, updated_at_ms FROM sessions`, []any{}
	if agent != "" {
		q, args = q+` WHERE agent = ?`, append(args, agent)
	}
	rows, err := s.query(ctx, q+` ORDER BY updated_at_ms DESC, key LIMIT ?`, append(args, limit)...)
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
			return nil, err
		}
		out = append(out, sess)
	}
	return out, rows.Err()
}
