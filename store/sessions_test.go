package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

// storedSession is a session as the store wrote it before policy.SessionState was embedded:
// every field set.
const storedSession = `{"key":"s1","agent":"main","model":{"providerOverride":"anthropic","modelOverride":"claude","modelOverrideSource":"auto","authProfileOverride":"anthropic:a","authProfileOverrideSource":"auto","authProfileOverrideCompactionCount":2,"modelOverrideFallbackOriginProvider":"openai","modelOverrideFallbackOriginModel":"gpt-5","modelOverrideUpdatedAt":"2026-01-02T03:04:05.0000006Z","compactionCount":2},"liveModelSwitchPending":true,"notice":{"selected":"openai/gpt-5","active":"anthropic/claude"},"skipMarks":[{"model":"xai/grok","profile":"xai:a","reason":"auth","until":"2026-01-02T03:05:05.0000006Z"}],"fallbackReason":"rate_limit","lastReprobeAt":"2026-01-02T03:09:05.0000006Z","updatedAt":"2026-01-02T03:04:05.0000006Z","version":7}`

func TestStoredSessionJSONIsUnchanged(t *testing.T) {
	for _, raw := range []string{storedSession, `{"key":"s2","agent":"main","model":{},"notice":{},"version":0}`} {
		var sess Session
		if err := json.Unmarshal([]byte(raw), &sess); err != nil {
			t.Fatal(err)
		}
		again, err := json.Marshal(sess)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != raw {
			t.Errorf("re-encoded differently:\n got  %s\nwant %s", again, raw)
		}
	}
	var sess Session
	_ = json.Unmarshal([]byte(storedSession), &sess)
	if sess.Model.AuthProfileOverride != "anthropic:a" || !sess.LiveModelSwitchPending || sess.Notice.Active != "anthropic/claude" ||
		len(sess.SkipMarks) != 1 || sess.FallbackReason != "rate_limit" || sess.LastReprobeAt.IsZero() {
		t.Errorf("decoded %+v", sess)
	}
}

func TestStoredSessionRowReadsAndWritesBack(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		if _, err := s.db.Exec(s.d.rebind(`INSERT INTO sessions (key, agent, data_json, version, updated_at_ms) VALUES (?, ?, ?, ?, ?)`),
			"s1", "main", storedSession, 7, ms(t0)); err != nil {
			t.Fatal(err)
		}
		before, err := s.GetSession(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		after, err := s.UpdateSession(ctx, "s1", "", t0, func(*Session) error { return nil })
		if err != nil || after.Version != 8 || !reflect.DeepEqual(after.SessionState, before.SessionState) {
			t.Errorf("written back: %+v, %v", after, err)
		}
	})
}

// TestTheUsersChoiceIsOneRule: /model (SetUserModel) and sessions.patch (PatchSession) leave the
// same session, the one policy.UserChoice makes, whatever the session held.
func TestTheUsersChoiceIsOneRule(t *testing.T) {
	two := 2
	seeds := map[string]policy.SessionModel{
		"new": {},
		"on a fallback": {ProviderOverride: "anthropic", ModelOverride: "claude", ModelOverrideSource: policy.SourceAuto,
			AuthProfileOverride: "anthropic:a", AuthProfileOverrideSource: policy.SourceAuto, AuthProfileOverrideCompactionCount: &two,
			ModelOverrideFallbackOriginProvider: "openai", ModelOverrideFallbackOriginModel: "gpt-5", ModelOverrideUpdatedAt: t0, CompactionCount: 2},
		"on a user's choice with a pin": {ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: policy.SourceUser,
			AuthProfileOverride: "google:work", AuthProfileOverrideSource: policy.SourceUser, AuthProfileOverrideCompactionCount: &two,
			ModelOverrideUpdatedAt: t0, CompactionCount: 3},
		"legacy": {ModelOverride: "openai/gpt-4"},
	}
	choices := []struct{ model, profile string }{
		{"openai/gpt-5", ""}, {"openai/gpt-5", "openai:b"}, {"google/gemini-pro", ""}, {"anthropic/claude-opus", "anthropic:b"},
	}
	eachBackend(t, func(t *testing.T, s *Store) {
		at := t0.Add(time.Minute)
		n := 0
		for name, seed := range seeds {
			for _, c := range choices {
				n++
				ref, _ := policy.ParseModelRef(c.model)
				keys := [3]string{fmt.Sprintf("model%d", n), fmt.Sprintf("patch%d", n), fmt.Sprintf("parts%d", n)}
				for _, key := range keys {
					if _, err := s.UpdateSession(ctx, key, "main", t0, func(sess *Session) error {
						sess.Model, sess.FallbackReason = seed, "rate_limit"
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
				byModel, err := s.SetUserModel(ctx, keys[0], "main", ref, c.profile, at)
				if err != nil {
					t.Fatal(err)
				}
				patch := map[string]string{"model": c.model}
				parts := map[string]string{"providerOverride": ref.Provider, "modelOverride": ref.Model}
				if c.profile != "" {
					patch["authProfileOverride"], parts["authProfileOverride"] = c.profile, c.profile
				}
				byPatch, err := s.PatchSession(ctx, keys[1], "main", patch, at)
				if err != nil {
					t.Fatal(err)
				}
				byParts, err := s.PatchSession(ctx, keys[2], "main", parts, at)
				if err != nil {
					t.Fatal(err)
				}
				want := policy.SessionState{Model: policy.UserChoice(seed, ref, c.profile, at), LiveModelSwitchPending: true, FallbackReason: "rate_limit"}
				for how, got := range map[string]Session{"/model": byModel, "sessions.patch model": byPatch, "sessions.patch providerOverride+modelOverride": byParts} {
					if !reflect.DeepEqual(got.SessionState, want) {
						t.Errorf("%s, %s %s@%s:\n got  %+v\nwant %+v", name, how, c.model, c.profile, got.SessionState, want)
					}
				}
			}
		}
	})
}

func TestPatchSessionFields(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		if _, err := s.SetUserModel(ctx, "s1", "main", policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "openai:a", t0); err != nil {
			t.Fatal(err)
		}
		// Clearing the model with "" goes back to the configured default; the pin stays.
		sess, err := s.PatchSession(ctx, "s1", "main", map[string]string{"model": ""}, t0.Add(time.Second))
		if _, ok := sess.Model.Override(); err != nil || ok || sess.Model.ModelOverrideSource != "" || sess.Model.AuthProfileOverride != "openai:a" || !sess.LiveModelSwitchPending {
			t.Errorf("model cleared: %+v, %v", sess, err)
		}
		// modelOverride alone keeps the provider.
		if _, err := s.SetUserModel(ctx, "s1", "main", policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "", t0); err != nil {
			t.Fatal(err)
		}
		sess, err = s.PatchSession(ctx, "s1", "main", map[string]string{"modelOverride": "gpt-5-mini"}, t0)
		if over, _ := sess.Model.Override(); err != nil || over.String() != "openai/gpt-5-mini" || sess.Model.ModelOverrideSource != policy.SourceUser {
			t.Errorf("modelOverride alone: %+v, %v", sess.Model, err)
		}
		// authProfileOverride "" unpins; alone it marks no live switch.
		if _, err := s.UpdateSession(ctx, "s1", "", t0, func(sess *Session) error { sess.LiveModelSwitchPending = false; return nil }); err != nil {
			t.Fatal(err)
		}
		sess, err = s.PatchSession(ctx, "s1", "main", map[string]string{"authProfileOverride": ""}, t0)
		if err != nil || sess.Model.AuthProfileOverride != "" || sess.Model.AuthProfileOverrideCompactionCount != nil || sess.LiveModelSwitchPending {
			t.Errorf("unpinned: %+v, %v", sess, err)
		}
		// With a model, authProfileOverride "" chooses the model and drops the pin.
		if _, err := s.PatchSession(ctx, "s1", "main", map[string]string{"authProfileOverride": "openai:a"}, t0); err != nil {
			t.Fatal(err)
		}
		sess, err = s.PatchSession(ctx, "s1", "main", map[string]string{"model": "openai/gpt-5", "authProfileOverride": ""}, t0)
		if err != nil || sess.Model.ModelOverride != "gpt-5" || sess.Model.AuthProfileOverride != "" {
			t.Errorf("model with no pin: %+v, %v", sess.Model, err)
		}
		before := sess
		for patch, want := range map[string]string{
			"model=openai/gpt-5 authProfileOverride=anthropic:x": `authProfileOverride: profile "anthropic:x" is not a openai profile`,
			"providerOverride=": `modelOverride "gpt-5" has no providerOverride`,
			"model=gpt-5":       `model: "gpt-5" is not provider/model`,
			"colour=blue":       `unknown session field "colour"`,
		} {
			fields := map[string]string{}
			for _, kv := range strings.Fields(patch) {
				k, v, _ := strings.Cut(kv, "=")
				fields[k] = v
			}
			if _, err := s.PatchSession(ctx, "s1", "main", fields, t0); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("patch %s: %v, want %s", patch, err, want)
			}
		}
		if after, _ := s.GetSession(ctx, "s1"); after.Version != before.Version {
			t.Errorf("a refused patch wrote the session: %+v", after)
		}
		if _, err := s.SetUserModel(ctx, "s1", "main", policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "anthropic:x", t0); err == nil ||
			!strings.Contains(err.Error(), `profile "anthropic:x" is not a openai profile`) {
			t.Errorf("/model with another provider's profile: %v", err)
		}
	})
}

func TestCompareAndSetWritesOnlyWhatAFallbackOwns(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		empty, _ := s.GetSession(ctx, "s1")
		written := policy.FallbackWrite(empty.Model, policy.ModelRef{Provider: "anthropic", Model: "claude"}, policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "anthropic:a", t0)
		written.CompactionCount = 9 // not the fallback's to write
		sess, err := s.CompareAndSetModel(ctx, "s1", "main", empty.Model, written, t0)
		if err != nil || sess.Model.CompactionCount != 0 || !policy.SameFallbackOwned(sess.Model, written) {
			t.Fatalf("compare-and-set: %+v, %v", sess.Model, err)
		}
		// A retried write finds what it wrote, even after a compaction.
		if _, err := s.CompactSession(ctx, "s1", t0); err != nil {
			t.Fatal(err)
		}
		if again, err := s.CompareAndSetModel(ctx, "s1", "main", empty.Model, written, t0); err != nil || again.Version != 2 {
			t.Errorf("a repeated write: %+v, %v", again, err)
		}
		// The rollback restores what the fallback wrote; the compaction stays.
		sess, err = s.RollbackModel(ctx, "s1", empty.Model, written, t0)
		if err != nil || sess.Model != (policy.SessionModel{CompactionCount: 1}) {
			t.Errorf("rollback: %+v, %v", sess.Model, err)
		}
		if again, err := s.RollbackModel(ctx, "s1", empty.Model, written, t0); err != nil || again.Version != sess.Version {
			t.Errorf("a repeated rollback wrote again: %+v, %v", again, err)
		}
		// The same write run again in a later workflow task (the first task's record was lost,
		// not its write) is the reply's own: it takes the later time, and its rollback undoes it.
		if _, err := s.CompareAndSetModel(ctx, "s1", "main", empty.Model, written, t0); err != nil {
			t.Fatal(err)
		}
		rerun := written
		rerun.ModelOverrideUpdatedAt = t0.Add(3 * time.Second)
		sess, err = s.CompareAndSetModel(ctx, "s1", "main", empty.Model, rerun, t0.Add(3*time.Second))
		if err != nil || !policy.SameFallbackOwned(sess.Model, rerun) {
			t.Fatalf("the write run again: %+v, %v", sess.Model, err)
		}
		if sess, err = s.RollbackModel(ctx, "s1", empty.Model, rerun, t0); err != nil || sess.Model != (policy.SessionModel{CompactionCount: 1}) {
			t.Errorf("the rerun's rollback: %+v, %v", sess.Model, err)
		}
		// A fallback that loaded what was since rolled back may not write.
		later := policy.FallbackWrite(written, policy.ModelRef{Provider: "xai", Model: "grok"}, policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "", t0.Add(time.Second))
		if _, err := s.CompareAndSetModel(ctx, "s1", "main", written, later, t0); !errors.Is(err, ErrSessionMoved) {
			t.Errorf("a stale compare-and-set: %v", err)
		}
	})
}
