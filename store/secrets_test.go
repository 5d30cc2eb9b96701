package store

import (
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/batonhq/baton/policy"
)

var (
	keyA = []byte(strings.Repeat("a", 32))
	keyB = []byte(strings.Repeat("b", 32))
)

func openWithKey(t *testing.T, url string, key []byte) (*Store, error) {
	t.Helper()
	s, err := Open(ctx, url, Options{LookupEnv: func(string) (string, bool) { return "", false }, SecretKey: key})
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// rawSecrets reads secret_json as it lies in the database.
func rawSecrets(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.query(ctx, `SELECT secret_json FROM auth_profiles ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func schemaVersion(t *testing.T, s *Store) int {
	t.Helper()
	var v int
	if err := s.queryRow(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return v
}

// With BATON_SECRET_KEY the secret column holds no secret; the credential round-trips; a store
// opened without the key, or with another, is refused naming the key it needs, and writes nothing.
func TestSecretsAtRestRoundTripAndRefuseTheWrongKey(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			s, err := openWithKey(t, b.url, keyA)
			if err != nil {
				t.Fatal(err)
			}
			c := Credential{ID: "openai:a", Provider: "openai", Type: policy.TypeOAuth, Access: "acc-sealed-secret", Refresh: "ref-sealed-secret", Email: "a@example.com"}
			if err := s.PutCredential(ctx, "main", c); err != nil {
				t.Fatal(err)
			}
			for _, v := range rawSecrets(t, s) {
				if strings.Contains(v, "sealed-secret") || !strings.HasPrefix(v, sealedPrefix+s.SecretKeyID()+":") {
					t.Errorf("secret_json holds %q", v)
				}
			}
			got, err := s.Secret(ctx, "main", "openai:a")
			if err != nil || got.Access != c.Access || got.Refresh != c.Refresh || got.Email != c.Email {
				t.Fatalf("Secret = %+v, %v", got, err)
			}
			// A sealed value moved to another profile does not open there.
			if err := s.PutCredential(ctx, "main", Credential{ID: "openai:b", Provider: "openai", Type: policy.TypeAPIKey, Key: "sk-b"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.ExecContext(ctx, s.d.rebind(`UPDATE auth_profiles SET secret_json = (SELECT secret_json FROM auth_profiles WHERE id = 'openai:a') WHERE id = 'openai:b'`)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Secret(ctx, "main", "openai:b"); err == nil || strings.Contains(err.Error(), "sealed-secret") {
				t.Errorf("a moved secret opened, or the error shows it: %v", err)
			}
			version := schemaVersion(t, s)
			idA := s.SecretKeyID()
			s.Close()

			for name, key := range map[string][]byte{"no key": nil, "another key": keyB} {
				_, err := openWithKey(t, b.url, key)
				if err == nil || !errors.Is(err, ErrSecretKey) || !strings.Contains(err.Error(), idA) || !strings.Contains(err.Error(), SecretKeyEnv) {
					t.Errorf("%s: Open = %v, want a refusal naming key %s and %s", name, err, idA, SecretKeyEnv)
				}
			}
			// The refusal comes before the migrations: roll the schema back one version and
			// check that a refused Open leaves it there.
			raw, err := sql.Open(map[string]string{"sqlite": "sqlite", "postgres": "pgx"}[b.name], dsnOf(b.url))
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(`UPDATE schema_version SET version = version - 1`); err != nil {
				t.Fatal(err)
			}
			if _, err := openWithKey(t, b.url, nil); err == nil {
				t.Fatal("opened without the key")
			}
			var v int
			if err := raw.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil || v != version-1 {
				t.Errorf("a refused Open migrated: version %d (%v), want %d", v, err, version-1)
			}
			if _, err := raw.Exec(`UPDATE schema_version SET version = version + 1`); err != nil {
				t.Fatal(err)
			}
			s2, err := openWithKey(t, b.url, keyA)
			if err != nil {
				t.Fatalf("the right key: %v", err)
			}
			if got, err := s2.Secret(ctx, "main", "openai:a"); err != nil || got.Access != c.Access {
				t.Errorf("after reopening: %+v, %v", got, err)
			}
		})
	}
}

// dsnOf is what Open hands database/sql for a store URL (the SQLite path, or the PostgreSQL URL).
func dsnOf(url string) string {
	if p, ok := strings.CutPrefix(url, "sqlite://"); ok {
		return p
	}
	return url
}

// Rekey re-seals plain and sealed secrets under a new key in one transaction; a secret that does
// not open fails it whole.
func TestRekey(t *testing.T) {
	eachBackend(t, func(t *testing.T, plain *Store) {
		if err := plain.PutCredential(ctx, "main", Credential{ID: "openai:a", Provider: "openai", Type: policy.TypeAPIKey, Key: "sk-rekey-a"}); err != nil {
			t.Fatal(err)
		}
		n, err := plain.Rekey(ctx, keyA)
		if err != nil || n != 1 {
			t.Fatalf("rekey from plain: %d, %v", n, err)
		}
		if err := plain.PutCredential(ctx, "ops", Credential{ID: "anthropic:b", Provider: "anthropic", Type: policy.TypeToken, Token: "tok-rekey-b"}); err != nil {
			t.Fatal(err)
		}
		idA := plain.SecretKeyID()
		for _, v := range rawSecrets(t, plain) {
			if sealedKeyID(v) != idA {
				t.Errorf("after rekey to A: %q", v)
			}
		}
		n, err = plain.Rekey(ctx, keyB)
		if err != nil || n != 2 {
			t.Fatalf("rekey A to B: %d, %v", n, err)
		}
		idB, _ := SecretKeyID(keyB)
		for _, v := range rawSecrets(t, plain) {
			if sealedKeyID(v) != idB {
				t.Errorf("after rekey to B: %q", v)
			}
		}
		if c, err := plain.Secret(ctx, "ops", "anthropic:b"); err != nil || c.Token != "tok-rekey-b" {
			t.Errorf("after rekey: %+v %v", c, err)
		}
		// A row the store cannot open (sealed under A, which it no longer has) fails the rekey
		// whole: the other row keeps its key B.
		sealed, _ := newSecretKey(keyA)
		v, _ := sealSecret(sealed, "main", "openai:a", []byte(`{"key":"sk-rekey-a"}`))
		if _, err := plain.db.ExecContext(ctx, plain.d.rebind(`UPDATE auth_profiles SET secret_json = ? WHERE id = 'openai:a'`), v); err != nil {
			t.Fatal(err)
		}
		if _, err := plain.Rekey(ctx, keyA); err == nil || !errors.Is(err, ErrSecretKey) {
			t.Fatalf("rekey over an unopenable row: %v", err)
		}
		raws := rawSecrets(t, plain)
		if sealedKeyID(raws[0]) != idB || sealedKeyID(raws[1]) != idA {
			t.Errorf("a failed rekey wrote: %v", raws)
		}
	})
}

// A manual disable keeps a profile out of ListProfiles (so out of every chain) whatever the
// ladder does, until enabled; RemoveProfile drops everything about a profile.
func TestManualDisableAndRemove(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		for _, id := range []string{"openai:a", "openai:b"} {
			if err := s.PutCredential(ctx, "main", Credential{ID: id, Provider: "openai", Type: policy.TypeAPIKey, Key: "sk-" + id}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DisableProfile(ctx, "main", "openai:a", "leaked", t0); err != nil {
			t.Fatal(err)
		}
		// The ladder clearing every cooldown leaves the manual state alone.
		if _, err := s.RecordOutcome(ctx, "main", "openai:a", policy.ClearCooldown); err != nil {
			t.Fatal(err)
		}
		ids := func(list []Profile) (out []string) {
			for _, p := range list {
				out = append(out, p.ID)
			}
			return out
		}
		usable, _ := s.ListProfiles(ctx, "main")
		all, _ := s.ListAllProfiles(ctx, "main")
		if strings.Join(ids(usable), ",") != "openai:b" || len(all) != 2 || all[0].Manual == nil || all[0].Manual.Note != "leaked" || !all[0].Manual.At.Equal(t0) {
			t.Fatalf("usable %v, all %+v", ids(usable), all)
		}
		if ok, err := s.EnableProfile(ctx, "main", "openai:a"); !ok || err != nil {
			t.Fatalf("enable: %v %v", ok, err)
		}
		if ok, _ := s.EnableProfile(ctx, "main", "openai:a"); ok {
			t.Error("enabled twice")
		}
		if usable, _ := s.ListProfiles(ctx, "main"); len(usable) != 2 {
			t.Errorf("after enable: %v", ids(usable))
		}

		if err := s.SetOrder(ctx, "main", "openai", []string{"openai:a", "openai:b"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetLastGood(ctx, "main", "openai", "openai:a"); err != nil {
			t.Fatal(err)
		}
		_ = s.DisableProfile(ctx, "main", "openai:a", "", t0)
		if err := s.RemoveProfile(ctx, "main", "openai:a"); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveProfile(ctx, "main", "openai:a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("removing twice: %v", err)
		}
		orders, _ := s.Orders(ctx, "main")
		last, _ := s.LastGood(ctx, "main")
		manual, _ := s.ManualDisables(ctx, "main")
		stats, _ := s.Stats(ctx, "main", "openai:a")
		if strings.Join(orders["openai"], ",") != "openai:b" || last["openai"] != "" || len(manual) != 0 || !stats.IsZero() {
			t.Errorf("left behind: order %v, last good %v, manual %v, stats %+v", orders, last, manual, stats)
		}
	})
}
