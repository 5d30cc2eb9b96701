package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/batonhq/baton/policy"
)

// GetSession returns a session; a session never written comes back empty with Version 0.
func (s *Store) GetSession(ctx context.Context, key string) (Session, error) {
	var raw string
	var version, updated int64
	err := s.queryRow(ctx, `SELECT data_json, version, updated_at_ms FROM sessions WHERE key = ?`, key).Scan(&raw, &version, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{Key: key}, nil
	}
	if err != nil {
		return Session{}, err
	}
	return decodeSession(key, raw, version, updated)
}

func decodeSession(key, raw string, version, updated int64) (Session, error) {
	var sess Session
	if err := json.Unmarshal([]byte(raw), &sess); err != nil {
		return Session{}, fmt.Errorf("session %q unreadable: %w", key, err)
	}
	sess.Key, sess.Version, sess.UpdatedAt = key, version, fromMS(updated)
	return sess, nil
}

// UpdateSession is the read-modify-write every session operation uses: in one transaction it
// reads the freshest session, lets fn change it (fn may return ErrUnchanged to write nothing), and
// writes it back with the version bumped. agent names the session's agent when it is new.
func (s *Store) UpdateSession(ctx context.Context, key, agent string, now time.Time, fn func(*Session) error) (Session, error) {
	if key == "" {
		return Session{}, errors.New("session key is empty")
	}
	var out Session
	err := s.write(ctx, func(t *tx) error {
		var raw string
		var version, updated int64
		err := t.queryRow(ctx, `SELECT data_json, version, updated_at_ms FROM sessions WHERE key = ?`+t.d.lockRow, key).Scan(&raw, &version, &updated)
		sess := Session{Key: key, Agent: agent}
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if sess, err = decodeSession(key, raw, version, updated); err != nil {
				return err
			}
		}
		if err := fn(&sess); err != nil {
			out = sess
			return err
		}
		sess.Version, sess.UpdatedAt = version+1, now
		data, err := json.Marshal(sess)
		if err != nil {
			return err
		}
		if version == 0 {
			_, err = t.exec(ctx, `INSERT INTO sessions (key, agent, data_json, version, updated_at_ms) VALUES (?, ?, ?, ?, ?)`,
				key, sess.Agent, string(data), sess.Version, ms(now))
		} else {
			_, err = t.exec(ctx, `UPDATE sessions SET agent = ?, data_json = ?, version = ?, updated_at_ms = ? WHERE key = ?`,
				sess.Agent, string(data), sess.Version, ms(now), key)
		}
		out = sess
		return err
	})
	if errors.Is(err, ErrUnchanged) {
		return out, nil
	}
	return out, err
}

// ErrUnchanged lets an UpdateSession callback leave the session as it is.
var ErrUnchanged = errors.New("unchanged")

// ErrSessionMoved means the session no longer holds what the caller loaded.
var ErrSessionMoved = errors.New("session changed since it was loaded")

// fallbackOwned are the fields a fallback writes, compared for compare-and-set.
func fallbackOwned(m policy.SessionModel) policy.SessionModel {
	return policy.SessionModel{
		ProviderOverride: m.ProviderOverride, ModelOverride: m.ModelOverride, ModelOverrideSource: m.ModelOverrideSource,
		AuthProfileOverride: m.AuthProfileOverride, AuthProfileOverrideSource: m.AuthProfileOverrideSource,
		AuthProfileOverrideCompactionCount:  m.AuthProfileOverrideCompactionCount,
		ModelOverrideFallbackOriginProvider: m.ModelOverrideFallbackOriginProvider,
		ModelOverrideFallbackOriginModel:    m.ModelOverrideFallbackOriginModel,
	}
}

func sameOwned(a, b policy.SessionModel) bool {
	x, y := fallbackOwned(a), fallbackOwned(b)
	if (x.AuthProfileOverrideCompactionCount == nil) != (y.AuthProfileOverrideCompactionCount == nil) ||
		(x.AuthProfileOverrideCompactionCount != nil && *x.AuthProfileOverrideCompactionCount != *y.AuthProfileOverrideCompactionCount) {
		return false
	}
	x.AuthProfileOverrideCompactionCount, y.AuthProfileOverrideCompactionCount = nil, nil
	return x == y
}

// CompareAndSetModel writes next's fallback-owned fields only if the session still holds
// expected's: a fallback never overwrites a choice made meanwhile. It returns ErrSessionMoved
// otherwise.
func (s *Store) CompareAndSetModel(ctx context.Context, key, agent string, expected, next policy.SessionModel, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, agent, now, func(sess *Session) error {
		if sameOwned(sess.Model, next) && sess.Model.ModelOverrideUpdatedAt.Equal(next.ModelOverrideUpdatedAt) {
			return ErrUnchanged // already written (a retried activity): written once
		}
		if !sameOwned(sess.Model, expected) {
			return ErrSessionMoved
		}
		compaction := sess.Model.CompactionCount
		sess.Model = next
		sess.Model.CompactionCount = compaction
		return nil
	})
}

// RollbackModel restores each field a failed fallback wrote, only where it still holds what the
// fallback wrote (policy.NarrowRollback).
func (s *Store) RollbackModel(ctx context.Context, key string, before, written policy.SessionModel, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, "", now, func(sess *Session) error {
		rolled := policy.NarrowRollback(sess.Model, before, written)
		if rolled == sess.Model {
			return ErrUnchanged
		}
		sess.Model = rolled
		return nil
	})
}

// SetUserModel is /model: a user's exact choice (source user), optionally with a profile, and a
// pending live switch for a running reply.
func (s *Store) SetUserModel(ctx context.Context, key, agent string, ref policy.ModelRef, profile string, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, agent, now, func(sess *Session) error {
		m := &sess.Model
		m.ProviderOverride, m.ModelOverride, m.ModelOverrideSource = ref.Provider, ref.Model, policy.SourceUser
		m.ModelOverrideFallbackOriginProvider, m.ModelOverrideFallbackOriginModel = "", ""
		m.ModelOverrideUpdatedAt = now
		if profile != "" {
			m.AuthProfileOverride, m.AuthProfileOverrideSource = profile, policy.SourceUser
			c := m.CompactionCount
			m.AuthProfileOverrideCompactionCount = &c
		} else if m.AuthProfileOverride != "" && policy.ProviderOfProfile(m.AuthProfileOverride) != ref.Provider {
			m.AuthProfileOverride, m.AuthProfileOverrideSource, m.AuthProfileOverrideCompactionCount = "", "", nil
		}
		sess.LiveModelSwitchPending = true
		return nil
	})
}

// ResetSession is /new and /reset: auto overrides, the profile pin, notice state and the
// compaction count go; a user's model override stays.
func (s *Store) ResetSession(ctx context.Context, key string, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, "", now, func(sess *Session) error {
		sess.Model = policy.Reset(sess.Model)
		sess.Notice = policy.NoticeState{}
		sess.FallbackReason = ""
		sess.SkipMarks = nil
		sess.LiveModelSwitchPending = false
		sess.LastReprobeAt = time.Time{}
		return nil
	})
}

// CompactSession bumps the compaction count, which makes an auto profile pin stale.
func (s *Store) CompactSession(ctx context.Context, key string, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, "", now, func(sess *Session) error {
		sess.Model.CompactionCount++
		return nil
	})
}

// PatchSession is sessions.patch: named fields set by a user. Model fields make the override the
// user's (source user) and mark a pending live switch. An unknown field is an error naming it.
func (s *Store) PatchSession(ctx context.Context, key, agent string, patch map[string]string, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, agent, now, func(sess *Session) error {
		m := &sess.Model
		for k, v := range patch {
			switch k {
			case "model":
				if v == "" {
					m.ProviderOverride, m.ModelOverride = "", ""
					continue
				}
				ref, err := policy.ParseModelRef(v)
				if err != nil {
					return fmt.Errorf("model: %w", err)
				}
				m.ProviderOverride, m.ModelOverride = ref.Provider, ref.Model
			case "providerOverride":
				m.ProviderOverride = policy.NormalizeProvider(v)
			case "modelOverride":
				m.ModelOverride = v
			case "authProfileOverride":
				m.AuthProfileOverride = v
				m.AuthProfileOverrideSource = ""
				if v != "" {
					m.AuthProfileOverrideSource = policy.SourceUser
					c := m.CompactionCount
					m.AuthProfileOverrideCompactionCount = &c
				}
			default:
				return fmt.Errorf("unknown session field %q (model, providerOverride, modelOverride, authProfileOverride)", k)
			}
		}
		if _, ok := patch["model"]; ok || patch["providerOverride"] != "" || patch["modelOverride"] != "" {
			m.ModelOverrideSource = policy.SourceUser
			m.ModelOverrideFallbackOriginProvider, m.ModelOverrideFallbackOriginModel = "", ""
			m.ModelOverrideUpdatedAt = now
			if m.ModelOverride == "" {
				m.ModelOverrideSource = ""
			}
			sess.LiveModelSwitchPending = true
		}
		return nil
	})
}
