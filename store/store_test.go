package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

func TestProfilesAndSecrets(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		creds := []Credential{
			{ID: "openai:a", Provider: "openai", Type: policy.TypeAPIKey, Key: "sk-secret-a"},
			{ID: "openai:me@example.com", Provider: "openai", Type: policy.TypeOAuth, Access: "acc-secret", Refresh: "ref-secret",
				Expires: t0.Add(time.Hour), Email: "me@example.com"},
			{ID: "x:tok", Provider: "x", Type: policy.TypeToken, Token: "tok-secret"},
		}
		for _, c := range creds {
			if err := s.PutCredential(ctx, "main", c); err != nil {
				t.Fatal(err)
			}
		}
		list, err := s.ListProfiles(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 || list[0].ID != "openai:a" || list[1].Type != policy.TypeOAuth || !list[1].Expires.Equal(t0.Add(time.Hour)) || list[1].Email != "me@example.com" {
			t.Fatalf("listing (in stored order) = %+v", list)
		}
		data, _ := json.Marshal(list)
		for _, secret := range []string{"sk-secret-a", "acc-secret", "ref-secret", "tok-secret"} {
			if strings.Contains(string(data), secret) {
				t.Errorf("a listing carries the secret %q", secret)
			}
		}
		got, err := s.Secret(ctx, "main", "openai:me@example.com")
		if err != nil || got.Access != "acc-secret" || got.Refresh != "ref-secret" {
			t.Errorf("secret = %+v, %v", got, err)
		}
		if _, err := s.Secret(ctx, "other-agent", "openai:a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("profiles are per agent: %v", err)
		}
		// Replacing a credential keeps its place in the stored order.
		if err := s.PutCredential(ctx, "main", Credential{ID: "openai:a", Provider: "openai", Type: policy.TypeAPIKey, Key: "sk-new"}); err != nil {
			t.Fatal(err)
		}
		list, _ = s.ListProfiles(ctx, "main")
		if list[0].ID != "openai:a" {
			t.Errorf("order after replace: %+v", list)
		}
		if err := s.RemoveProfile(ctx, "main", "x:tok"); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveProfile(ctx, "main", "x:tok"); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleting twice: %v", err)
		}
	})
}

func TestBadCredentialsAreRefused(t *testing.T) {
	s := open(t, "sqlite://"+filepath.Join(t.TempDir(), "b.db"), nil)
	cases := map[string]Credential{
		"without a key":          {ID: "openai:a", Provider: "openai", Type: policy.TypeAPIKey},
		"with an unknown type":   {ID: "openai:a", Provider: "openai", Type: "password", Key: "k"},
		"whose id is another's":  {ID: "anthropic:a", Provider: "openai", Type: policy.TypeAPIKey, Key: "k"},
		"with an upper provider": {ID: "OpenAI:a", Provider: "OpenAI", Type: policy.TypeAPIKey, Key: "k"},
	}
	for name, c := range cases {
		if err := s.PutCredential(ctx, "main", c); err == nil {
			t.Errorf("a credential %s was stored", name)
		} else if strings.Contains(err.Error(), "k\"") {
			t.Errorf("error echoes the key: %v", err)
		}
	}
}

func TestEnvironmentKeysAppearAsEnvProfiles(t *testing.T) {
	s := open(t, "sqlite://"+filepath.Join(t.TempDir(), "e.db"), map[string]string{"OPENAI_API_KEY": "sk-env", "ANTHROPIC_API_KEY": ""})
	list, err := s.ListProfiles(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "openai:env" || list[0].Source != "env" || list[0].Provider != "openai" {
		t.Fatalf("listing = %+v", list)
	}
	if c, err := s.Secret(ctx, "main", "openai:env"); err != nil || c.Key != "sk-env" {
		t.Errorf("secret = %+v, %v", c, err)
	}
}

func TestRecordOutcomeUnderConcurrency(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		// Dozens of replies fail on one profile at the same moment: one outage, one ladder step.
		const n = 40
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.RecordOutcome(ctx, "main", "openai:a", func(st policy.ProfileStats) policy.ProfileStats {
					return policy.RecordFailure(st, policy.Outcome{Reason: policy.ReasonRateLimit, Model: "gpt-5", Provider: "openai"}, policy.DefaultCooldowns(), t0)
				})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		st, err := s.Stats(ctx, "main", "openai:a")
		if err != nil {
			t.Fatal(err)
		}
		if st.ErrorCount != 1 || !st.CooldownUntil.Equal(t0.Add(time.Minute)) || st.CooldownModel != "gpt-5" {
			t.Errorf("after %d concurrent failures: %+v", n, st)
		}

		// No lost update: every increment lands.
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = s.RecordOutcome(ctx, "main", "openai:b", func(st policy.ProfileStats) policy.ProfileStats {
					st.ErrorCount++
					return st
				})
			}()
		}
		wg.Wait()
		if st, _ := s.Stats(ctx, "main", "openai:b"); st.ErrorCount != n {
			t.Errorf("lost updates: errorCount %d, want %d", st.ErrorCount, n)
		}
	})
}

func TestOrderLastGoodAndProbeThrottle(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		if err := s.SetOrder(ctx, "main", "OpenAI", []string{"openai:b", "openai:a"}); err != nil {
			t.Fatal(err)
		}
		orders, err := s.Orders(ctx, "main")
		if err != nil || len(orders["openai"]) != 2 || orders["openai"][0] != "openai:b" {
			t.Errorf("orders = %v, %v", orders, err)
		}
		if err := s.SetOrder(ctx, "main", "openai", nil); err != nil {
			t.Fatal(err)
		}
		if orders, _ := s.Orders(ctx, "main"); len(orders) != 0 {
			t.Errorf("an empty order clears it: %v", orders)
		}
		if err := s.SetLastGood(ctx, "main", "openai", "openai:a"); err != nil {
			t.Fatal(err)
		}
		if lg, _ := s.LastGood(ctx, "main"); lg["openai"] != "openai:a" {
			t.Errorf("lastGood = %v", lg)
		}

		// Ten replies want to probe at once: exactly one may.
		var wg sync.WaitGroup
		var mu sync.Mutex
		claimed := 0
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.TryProbe(ctx, "main", "openai", t0)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					claimed++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if claimed != 1 {
			t.Errorf("%d probes claimed the slot, want 1", claimed)
		}
		if ok, _ := s.TryProbe(ctx, "main", "openai", t0.Add(29*time.Second)); ok {
			t.Error("a probe inside 30 s")
		}
		if ok, _ := s.TryProbe(ctx, "main", "openai", t0.Add(30*time.Second)); !ok {
			t.Error("no probe after 30 s")
		}
		// The claim at 30 s is the new last probe: the slot opens again 30 s after it.
		if ok, _ := s.TryProbe(ctx, "main", "openai", t0.Add(59*time.Second)); ok {
			t.Error("a probe 29 s after the last claim")
		}
		if ok, _ := s.TryProbe(ctx, "main", "openai", t0.Add(60*time.Second)); !ok {
			t.Error("no probe 30 s after the last claim")
		}
	})
}

func TestSessions(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		empty, err := s.GetSession(ctx, "s1")
		if err != nil || empty.Version != 0 || empty.Model.ModelOverride != "" {
			t.Fatalf("a new session: %+v, %v", empty, err)
		}
		written := policy.FallbackWrite(empty.Model, policy.ModelRef{Provider: "anthropic", Model: "claude"}, policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "anthropic:a", t0)
		sess, err := s.CompareAndSetModel(ctx, "s1", "main", empty.Model, written, t0)
		if err != nil || sess.Version != 1 || sess.Model.ModelOverrideSource != policy.SourceAuto || sess.Agent != "main" {
			t.Fatalf("compare-and-set: %+v, %v", sess, err)
		}
		// The same write again (a retried activity) changes nothing.
		if again, err := s.CompareAndSetModel(ctx, "s1", "main", empty.Model, written, t0); err != nil || again.Version != 1 {
			t.Errorf("a repeated write: %+v, %v", again, err)
		}
		// A user's /model lands; a fallback that loaded the old state may no longer write.
		if _, err := s.SetUserModel(ctx, "s1", "main", policy.ModelRef{Provider: "google", Model: "gemini"}, "", t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		other := policy.FallbackWrite(written, policy.ModelRef{Provider: "xai", Model: "grok"}, policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "", t0)
		if _, err := s.CompareAndSetModel(ctx, "s1", "main", written, other, t0.Add(2*time.Second)); !errors.Is(err, ErrSessionMoved) {
			t.Errorf("a stale compare-and-set: %v", err)
		}
		// The failed fallback's rollback leaves the user's choice alone.
		sess, err = s.RollbackModel(ctx, "s1", empty.Model, written, t0.Add(3*time.Second))
		if err != nil || sess.Model.ModelOverride != "gemini" || sess.Model.ModelOverrideSource != policy.SourceUser || !sess.LiveModelSwitchPending {
			t.Errorf("rollback: %+v, %v", sess.Model, err)
		}
		if sess.Model.AuthProfileOverride != "" {
			t.Errorf("the pin the fallback wrote should be rolled back: %+v", sess.Model)
		}
		if sess, err = s.CompactSession(ctx, "s1", t0); err != nil || sess.Model.CompactionCount != 1 {
			t.Errorf("compact: %+v, %v", sess.Model, err)
		}
		if sess, err = s.PatchSession(ctx, "s1", "main", map[string]string{"authProfileOverride": "google:b"}, t0); err != nil || sess.Model.AuthProfileOverrideSource != policy.SourceUser {
			t.Errorf("patch: %+v, %v", sess.Model, err)
		}
		if _, err := s.PatchSession(ctx, "s1", "main", map[string]string{"colour": "blue"}, t0); err == nil || !strings.Contains(err.Error(), `"colour"`) {
			t.Errorf("an unknown field: %v", err)
		}
		sess, err = s.ResetSession(ctx, "s1", t0)
		if err != nil || sess.Model.ModelOverride != "gemini" || sess.Model.AuthProfileOverride != "" || sess.Model.CompactionCount != 0 || sess.LiveModelSwitchPending {
			t.Errorf("reset keeps the user's model and drops the rest: %+v, %v", sess, err)
		}
	})
}

func TestSchemaNewerThanTheBinaryIsRefused(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := open(t, b.url, nil)
			if _, err := s.db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
				t.Fatal(err)
			}
			s.Close()
			_, err := Open(ctx, b.url, Options{})
			if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "version 99") {
				t.Errorf("got %v", err)
			}
		})
	}
}

func TestSQLiteFileIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "baton.db")
	open(t, "sqlite://"+path, nil)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("mode %v, want 0600", mode)
	}
}

func TestOpenNamesWhatIsWrong(t *testing.T) {
	for url, want := range map[string]string{
		"mysql://db":                          `unknown scheme "mysql"`,
		"./baton.db":                          "want sqlite://PATH",
		"postgres://u:hunter2@127.0.0.1:1/db": "u:***@",
	} {
		_, err := Open(ctx, url, Options{})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) = %v, want …%s… and no password", url, err, want)
		}
	}
}
