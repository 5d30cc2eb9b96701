package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/batonhq/baton/policy"
)

// secretFields is what secret_json holds: only the credential material.
type secretFields struct {
	Key           string `json:"key,omitempty"`
	Access        string `json:"access,omitempty"`
	Refresh       string `json:"refresh,omitempty"`
	Token         string `json:"token,omitempty"`
	ProjectID     string `json:"projectId,omitempty"`
	EnterpriseURL string `json:"enterpriseUrl,omitempty"`
	// The clouds' own (aws_keys, service_account).
	AccessKeyID     string `json:"accessKeyId,omitempty"`
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
	SessionToken    string `json:"sessionToken,omitempty"`
	ServiceAccount  string `json:"serviceAccount,omitempty"`
}

// PutCredential adds or replaces a profile's credential. A new profile goes last in stored order.
func (s *Store) PutCredential(ctx context.Context, agent string, c Credential) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return s.write(ctx, func(t *tx) error { return s.putCredential(ctx, t, agent, c) })
}

func (s *Store) putCredential(ctx context.Context, t *tx, agent string, c Credential) error {
	plain, err := json.Marshal(secretFields{Key: c.Key, Access: c.Access, Refresh: c.Refresh, Token: c.Token,
		ProjectID: c.ProjectID, EnterpriseURL: c.EnterpriseURL, AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey,
		SessionToken: c.SessionToken, ServiceAccount: c.ServiceAccount})
	if err != nil {
		return err
	}
	secret, err := sealSecret(s.secret, agent, c.ID, plain) // plain without BATON_SECRET_KEY
	if err != nil {
		return err
	}
	var seq int64
	if err := t.queryRow(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM auth_profiles WHERE agent = ?`, agent).Scan(&seq); err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO auth_profiles (agent, id, provider, type, email, expires_ms, secret_json, seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent, id) DO UPDATE SET provider = excluded.provider, type = excluded.type,
			email = excluded.email, expires_ms = excluded.expires_ms, secret_json = excluded.secret_json`,
		agent, c.ID, c.Provider, c.Type, c.Email, ms(c.Expires), string(secret), seq)
	return err
}

// Secret returns one profile's credential: the only call that reads secrets.
func (s *Store) Secret(ctx context.Context, agent, id string) (Credential, error) {
	if provider := policy.ProviderOfProfile(id); id == provider+EnvProfileSuffix {
		if name, ok := envKeys[provider]; ok {
			if key, set := s.lookup(name); set && key != "" {
				return Credential{ID: id, Provider: provider, Type: policy.TypeAPIKey, Key: key}, nil
			}
		}
	}
	var c Credential
	var secret string
	var expires int64
	err := s.queryRow(ctx, `SELECT id, provider, type, email, expires_ms, secret_json FROM auth_profiles WHERE agent = ? AND id = ?`,
		agent, id).Scan(&c.ID, &c.Provider, &c.Type, &c.Email, &expires, &secret)
	if errors.Is(err, sql.ErrNoRows) {
		return Credential{}, fmt.Errorf("profile %q of agent %q: %w", id, agent, ErrNotFound)
	}
	if err != nil {
		return Credential{}, err
	}
	plain, err := openSecret(s.secret, agent, id, secret)
	if err != nil {
		return Credential{}, err
	}
	var f secretFields
	if err := json.Unmarshal(plain, &f); err != nil {
		return Credential{}, fmt.Errorf("profile %q: stored secret unreadable", id) // never echo the secret
	}
	c.Expires = fromMS(expires)
	c.Key, c.Access, c.Refresh, c.Token, c.ProjectID, c.EnterpriseURL = f.Key, f.Access, f.Refresh, f.Token, f.ProjectID, f.EnterpriseURL
	c.AccessKeyID, c.SecretAccessKey, c.SessionToken, c.ServiceAccount = f.AccessKeyID, f.SecretAccessKey, f.SessionToken, f.ServiceAccount
	return c, nil
}

// listProfiles returns an agent's profiles in stored order, with their usage stats and without
// secrets, followed by provider:env for each provider key set in the environment (ListProfiles
// and ListAllProfiles, manual.go, tell the manually disabled apart).
func (s *Store) listProfiles(ctx context.Context, agent string) ([]Profile, error) {
	rows, err := s.query(ctx, `SELECT p.id, p.provider, p.type, p.email, p.expires_ms, COALESCE(st.stats_json, '')
		FROM auth_profiles p LEFT JOIN auth_stats st ON st.agent = p.agent AND st.profile_id = p.id
		WHERE p.agent = ? ORDER BY p.seq`, agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Profile
	seen := map[string]bool{}
	for rows.Next() {
		var p Profile
		var expires int64
		var stats string
		if err := rows.Scan(&p.ID, &p.Provider, &p.Type, &p.Email, &expires, &stats); err != nil {
			return nil, err
		}
		p.Expires, p.Source = fromMS(expires), "store"
		if p.Stats, err = decodeStats(stats); err != nil {
			return nil, fmt.Errorf("profile %q: %w", p.ID, err)
		}
		seen[p.ID] = true
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	providers := make([]string, 0, len(envKeys))
	for provider := range envKeys {
		providers = append(providers, provider)
	}
	sort.Strings(providers)
	for _, provider := range providers {
		id := provider + EnvProfileSuffix
		if key, set := s.lookup(envKeys[provider]); !set || key == "" || seen[id] {
			continue
		}
		stats, err := s.Stats(ctx, agent, id)
		if err != nil {
			return nil, err
		}
		out = append(out, Profile{StoredProfile: policy.StoredProfile{ID: id, Provider: provider, Type: policy.TypeAPIKey, Stats: stats}, Source: "env"})
	}
	return out, nil
}

func decodeStats(raw string) (policy.ProfileStats, error) {
	var st policy.ProfileStats
	if raw == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return st, fmt.Errorf("usage stats unreadable: %w", err)
	}
	return st, nil
}

// Stats returns one profile's usage stats (zero when none).
func (s *Store) Stats(ctx context.Context, agent, id string) (policy.ProfileStats, error) {
	var raw string
	err := s.queryRow(ctx, `SELECT stats_json FROM auth_stats WHERE agent = ? AND profile_id = ?`, agent, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return policy.ProfileStats{}, nil
	}
	if err != nil {
		return policy.ProfileStats{}, err
	}
	return decodeStats(raw)
}

// RecordOutcome applies an outcome to a profile's usage stats in one transaction: it reads the
// freshest row under a write lock, applies fn (policy's arithmetic) and writes the result back,
// so concurrent replies failing on one profile never lose an update.
func (s *Store) RecordOutcome(ctx context.Context, agent, id string, fn func(policy.ProfileStats) policy.ProfileStats) (policy.ProfileStats, error) {
	var next policy.ProfileStats
	err := s.write(ctx, func(t *tx) error {
		if _, err := t.exec(ctx, `INSERT INTO auth_stats (agent, profile_id, stats_json) VALUES (?, ?, '') ON CONFLICT (agent, profile_id) DO NOTHING`, agent, id); err != nil {
			return err
		}
		var raw string
		if err := t.queryRow(ctx, `SELECT stats_json FROM auth_stats WHERE agent = ? AND profile_id = ?`+t.d.lockRow, agent, id).Scan(&raw); err != nil {
			return err
		}
		cur, err := decodeStats(raw)
		if err != nil {
			return fmt.Errorf("profile %q: %w", id, err)
		}
		next = fn(cur)
		data, err := json.Marshal(next)
		if err != nil {
			return err
		}
		_, err = t.exec(ctx, `UPDATE auth_stats SET stats_json = ? WHERE agent = ? AND profile_id = ?`, string(data), agent, id)
		return err
	})
	return next, err
}

// SetOrder stores the agent's order override for a provider (empty clears it).
func (s *Store) SetOrder(ctx context.Context, agent, provider string, ids []string) error {
	provider = policy.NormalizeProvider(provider)
	return s.write(ctx, func(t *tx) error { return setOrder(ctx, t, agent, provider, ids) })
}

func setOrder(ctx context.Context, t *tx, agent, provider string, ids []string) error {
	if len(ids) == 0 {
		_, err := t.exec(ctx, `DELETE FROM auth_order WHERE agent = ? AND provider = ?`, agent, provider)
		return err
	}
	data, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO auth_order (agent, provider, ids_json) VALUES (?, ?, ?)
		ON CONFLICT (agent, provider) DO UPDATE SET ids_json = excluded.ids_json`, agent, provider, string(data))
	return err
}

// Orders returns the agent's stored order overrides by provider.
func (s *Store) Orders(ctx context.Context, agent string) (map[string][]string, error) {
	rows, err := s.query(ctx, `SELECT provider, ids_json FROM auth_order WHERE agent = ?`, agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var provider, raw string
		if err := rows.Scan(&provider, &raw); err != nil {
			return nil, err
		}
		var ids []string
		if err := json.Unmarshal([]byte(raw), &ids); err != nil {
			return nil, fmt.Errorf("order of %s unreadable: %w", provider, err)
		}
		out[provider] = ids
	}
	return out, rows.Err()
}

// SetLastGood records the profile that last answered for a provider.
func (s *Store) SetLastGood(ctx context.Context, agent, provider, id string) error {
	return s.write(ctx, func(t *tx) error { return setLastGood(ctx, t, agent, provider, id) })
}

func setLastGood(ctx context.Context, t *tx, agent, provider, id string) error {
	_, err := t.exec(ctx, `INSERT INTO auth_last_good (agent, provider, profile_id) VALUES (?, ?, ?)
		ON CONFLICT (agent, provider) DO UPDATE SET profile_id = excluded.profile_id`, agent, provider, id)
	return err
}

// LastGood returns the agent's last good profile by provider.
func (s *Store) LastGood(ctx context.Context, agent string) (map[string]string, error) {
	rows, err := s.query(ctx, `SELECT provider, profile_id FROM auth_last_good WHERE agent = ?`, agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var provider, id string
		if err := rows.Scan(&provider, &id); err != nil {
			return nil, err
		}
		out[provider] = id
	}
	return out, rows.Err()
}

// TryProbe claims the provider's probe slot at now if policy.ProbeSlotOpen allows it:
// at most one cooldown probe per provider per policy.ProbeThrottle across every reply and host.
func (s *Store) TryProbe(ctx context.Context, agent, provider string, now time.Time) (bool, error) {
	claimed := false
	err := s.write(ctx, func(t *tx) error {
		if _, err := t.exec(ctx, `INSERT INTO probe_throttle (agent, provider, last_probe_ms) VALUES (?, ?, 0) ON CONFLICT (agent, provider) DO NOTHING`, agent, provider); err != nil {
			return err
		}
		var last int64
		if err := t.queryRow(ctx, `SELECT last_probe_ms FROM probe_throttle WHERE agent = ? AND provider = ?`+t.d.lockRow, agent, provider).Scan(&last); err != nil {
			return err
		}
		if last != 0 && !policy.ProbeSlotOpen(fromMS(last), now) {
			return nil
		}
		claimed = true
		_, err := t.exec(ctx, `UPDATE probe_throttle SET last_probe_ms = ? WHERE agent = ? AND provider = ?`, ms(now), agent, provider)
		return err
	})
	return claimed, err
}
