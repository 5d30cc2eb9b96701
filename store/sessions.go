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
		return Session{}, fmt.Errorf("session %q %w: %w", key, ErrSessionUnreadable, err)
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

// ErrSessionUnreadable is a session row whose data does not decode: no retry reads it better.
var ErrSessionUnreadable = errors.New("unreadable")

// CompareAndSetModel writes next's fallback-owned fields (policy.WithFallbackOwned) only if the
// session still holds expected's: a fallback never overwrites a choice made meanwhile. It returns
// ErrSessionMoved otherwise.
func (s *Store) CompareAndSetModel(ctx context.Context, key, agent string, expected, next policy.SessionModel, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, agent, now, func(sess *Session) error {
		if policy.SameFallbackOwned(sess.Model, next) {
			return ErrUnchanged // already written (a retried activity): written once
		}
		// The same write made at another time is this reply's own, run again after the workflow
		// task that made it first was lost: it is written with this run's time, so that the
		// reply's rollback finds exactly what it wrote.
		if !policy.SameFallbackOwned(sess.Model, expected) && !policy.SameFallbackWrite(sess.Model, next) {
			return ErrSessionMoved
		}
		sess.Model = policy.WithFallbackOwned(sess.Model, next)
		return nil
	})
}

// RollbackModel restores each field a failed fallback wrote, only where it still holds what the
// fallback wrote (policy.NarrowRollback).
func (s *Store) RollbackModel(ctx context.Context, key string, before, written policy.SessionModel, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, "", now, func(sess *Session) error {
		rolled := policy.NarrowRollback(sess.Model, before, written)
		if policy.SameFallbackOwned(rolled, sess.Model) {
			return ErrUnchanged
		}
		sess.Model = rolled
		return nil
	})
}

// SetUserModel is /model: a user's exact choice (policy.UserChoice), optionally with a profile of
// ref's provider, and a pending live switch for a running reply.
func (s *Store) SetUserModel(ctx context.Context, key, agent string, ref policy.ModelRef, profile string, now time.Time) (Session, error) {
	if err := policy.CheckUserChoice(ref, profile); err != nil {
		return Session{}, err
	}
	return s.UpdateSession(ctx, key, agent, now, func(sess *Session) error {
		sess.SessionState = sess.SessionState.ChooseModel(ref, profile, now)
		return nil
	})
}

// ResetSession is /new and /reset (policy.SessionState.Reset): auto overrides, the profile pin,
// notice state and the compaction count go; a user's model override stays.
func (s *Store) ResetSession(ctx context.Context, key string, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, "", now, func(sess *Session) error {
		sess.SessionState = sess.SessionState.Reset()
		return nil
	})
}

// CompactSession bumps the compaction count, which makes an auto profile pin stale.
func (s *Store) CompactSession(ctx context.Context, key string, now time.Time) (Session, error) {
	return s.UpdateSession(ctx, key, "", now, func(sess *Session) error {
		sess.SessionState = sess.SessionState.Compact()
		return nil
	})
}

// patchFields are the fields sessions.patch sets.
const patchFields = "model, providerOverride, modelOverride, authProfileOverride"

// PatchSession is sessions.patch: named fields set by a user. Model fields are the user's choice
// of the model they name, exactly as /model makes it (policy.SessionState.ChooseModel: source
// user, a pending live switch); "model" (or "modelOverride") "" clears the override. An
// authProfileOverride alone pins that profile as the user's ("" unpins). An unknown field is an
// error naming it.
func (s *Store) PatchSession(ctx context.Context, key, agent string, patch map[string]string, now time.Time) (Session, error) {
	for k := range patch {
		switch k {
		case "model", "providerOverride", "modelOverride", "authProfileOverride":
		default:
			return Session{}, fmt.Errorf("unknown session field %q (%s)", k, patchFields)
		}
	}
	return s.UpdateSession(ctx, key, agent, now, func(sess *Session) error {
		profile, pin := patch["authProfileOverride"]
		ref, chosen, err := patchedModel(sess.Model, patch)
		if err != nil {
			return err
		}
		if chosen {
			if err := policy.CheckUserChoice(ref, profile); err != nil {
				return fmt.Errorf("authProfileOverride: %w", err)
			}
			sess.SessionState = sess.SessionState.ChooseModel(ref, profile, now)
		}
		if pin && (!chosen || profile == "") {
			sess.Model = policy.UserPin(sess.Model, profile)
		}
		return nil
	})
}

// patchedModel is the model a patch's model fields choose: "model" (provider/model, or "" for
// none) first, then providerOverride and modelOverride over the session's or the patch's. chosen
// is false when the patch names no model field.
func patchedModel(m policy.SessionModel, patch map[string]string) (ref policy.ModelRef, chosen bool, err error) {
	provider, model := m.ProviderOverride, m.ModelOverride
	if v, ok := patch["model"]; ok {
		chosen, provider, model = true, "", ""
		if v != "" {
			r, err := policy.ParseModelRef(v)
			if err != nil {
				return policy.ModelRef{}, false, fmt.Errorf("model: %w", err)
			}
			provider, model = r.Provider, r.Model
		}
	}
	if v, ok := patch["providerOverride"]; ok {
		chosen, provider = true, policy.NormalizeProvider(v)
	}
	if v, ok := patch["modelOverride"]; ok {
		chosen, model = true, v
	}
	if !chosen || model == "" {
		return policy.ModelRef{}, chosen, nil
	}
	// The session's own reading: an old entry keeps "provider/model" in modelOverride alone.
	r, ok := policy.SessionModel{ProviderOverride: provider, ModelOverride: model}.Override()
	if !ok {
		return policy.ModelRef{}, false, fmt.Errorf("modelOverride %q has no providerOverride", model)
	}
	return r, true, nil
}
