package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ManualDisable is an operator's `baton auth disable`: a state of its own, apart from the usage
// stats, so that no success, probe or cleared cooldown of the ladder ever lifts it.
type ManualDisable struct {
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
}

// ListProfiles returns the profiles a reply may use: an agent's profiles in stored order, with
// their usage stats and without secrets, then provider:env for each provider key set in the
// environment, less those an operator disabled.
func (s *Store) ListProfiles(ctx context.Context, agent string) ([]Profile, error) {
	all, err := s.ListAllProfiles(ctx, agent)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(p Profile) bool { return p.Manual != nil }), nil
}

// ListAllProfiles is ListProfiles with the manually disabled profiles too (Manual set), for
// listings: `baton auth list`, the metrics, the operator page.
func (s *Store) ListAllProfiles(ctx context.Context, agent string) ([]Profile, error) {
	list, err := s.listProfiles(ctx, agent)
	if err != nil {
		return nil, err
	}
	manual, err := s.ManualDisables(ctx, agent)
	if err != nil || len(manual) == 0 {
		return list, err
	}
	for i := range list {
		if m, ok := manual[list[i].ID]; ok {
			list[i].Manual = &m
		}
	}
	return list, nil
}

// ManualDisables returns the agent's manually disabled profiles by id.
func (s *Store) ManualDisables(ctx context.Context, agent string) (map[string]ManualDisable, error) {
	rows, err := s.query(ctx, `SELECT profile_id, at_ms, note FROM auth_manual WHERE agent = ?`, agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]ManualDisable{}
	for rows.Next() {
		var id, note string
		var at int64
		if err := rows.Scan(&id, &at, &note); err != nil {
			return nil, err
		}
		out[id] = ManualDisable{At: fromMS(at), Note: note}
	}
	return out, rows.Err()
}

// DisableProfile keeps a profile out of every chain until EnableProfile. Disabling it again
// keeps the first time and replaces the note.
func (s *Store) DisableProfile(ctx context.Context, agent, id, note string, now time.Time) error {
	return s.write(ctx, func(t *tx) error {
		_, err := t.exec(ctx, `INSERT INTO auth_manual (agent, profile_id, at_ms, note) VALUES (?, ?, ?, ?)
			ON CONFLICT (agent, profile_id) DO UPDATE SET note = excluded.note`, agent, id, ms(now), note)
		return err
	})
}

// EnableProfile lifts a manual disable; it reports whether there was one.
func (s *Store) EnableProfile(ctx context.Context, agent, id string) (bool, error) {
	found := false
	err := s.write(ctx, func(t *tx) error {
		res, err := t.exec(ctx, `DELETE FROM auth_manual WHERE agent = ? AND profile_id = ?`, agent, id)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		found = n > 0
		return nil
	})
	return found, err
}

// RemoveProfile deletes a stored profile and everything about it (its secret, usage stats,
// manual disable, last-good mark and place in the order override), in one transaction.
func (s *Store) RemoveProfile(ctx context.Context, agent, id string) error {
	return s.write(ctx, func(t *tx) error {
		res, err := t.exec(ctx, `DELETE FROM auth_profiles WHERE agent = ? AND id = ?`, agent, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("profile %q of agent %q: %w", id, agent, ErrNotFound)
		}
		for _, q := range []string{
			`DELETE FROM auth_stats WHERE agent = ? AND profile_id = ?`,
			`DELETE FROM auth_manual WHERE agent = ? AND profile_id = ?`,
			`DELETE FROM auth_last_good WHERE agent = ? AND profile_id = ?`,
		} {
			if _, err := t.exec(ctx, q, agent, id); err != nil {
				return err
			}
		}
		rows, err := t.query(ctx, `SELECT provider, ids_json FROM auth_order WHERE agent = ?`+t.d.lockRow, agent)
		if err != nil {
			return err
		}
		orders := map[string][]string{}
		for rows.Next() {
			var provider, raw string
			if err := rows.Scan(&provider, &raw); err != nil {
				rows.Close()
				return err
			}
			var ids []string
			if json.Unmarshal([]byte(raw), &ids) == nil && slices.Contains(ids, id) {
				orders[provider] = slices.DeleteFunc(ids, func(x string) bool { return x == id })
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for provider, ids := range orders {
			if err := setOrder(ctx, t, agent, provider, ids); err != nil {
				return err
			}
		}
		return nil
	})
}
