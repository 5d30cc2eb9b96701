package testsuite

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
)

// World is everything a reply runs against in a test: a fresh SQLite store holding the
// credentials, a config whose providers all point at a scripted fake provider, and the
// activities wired to both.
type World struct {
	// StoreURL is where Store lives, for commands that open it themselves.
	StoreURL string
	Fake     *fakeprovider.Server
	Store    *store.Store
	Config   *activities.ConfigSource
	Acts     *activities.Activities
}

// NewWorld builds a World from an OpenClaw-shaped config, stored credentials and provider rules.
func NewWorld(t testing.TB, configSrc string, creds []store.Credential, rules []fakeprovider.Rule) *World {
	t.Helper()
	return NewWorldOn(t, "sqlite://"+filepath.Join(t.TempDir(), "baton.db"), configSrc, creds, rules)
}

// NewWorldOn is NewWorld on the store at storeURL (a fresh one).
func NewWorldOn(t testing.TB, storeURL, configSrc string, creds []store.Credential, rules []fakeprovider.Rule) *World {
	t.Helper()
	cfg, err := config.ParseConfig([]byte(configSrc))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	secrets := map[string]string{}
	for _, c := range creds {
		secrets[c.Key+c.Token+c.Access] = c.ID
		RegisterSecret(c.Key, c.Token, c.Access, c.Refresh)
	}
	fake := fakeprovider.New(rules, secrets)
	if err := fake.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	lab.PointAtFake(cfg, fake, creds)

	st, err := store.Open(context.Background(), storeURL, store.Options{
		LookupEnv: func(string) (string, bool) { return "", false },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, c := range creds {
		if err := st.PutCredential(context.Background(), "main", c); err != nil {
			t.Fatal(err)
		}
	}
	src := &activities.ConfigSource{}
	src.Set(cfg)
	return &World{StoreURL: storeURL, Fake: fake, Store: st, Config: src,
		Acts: &activities.Activities{Identity: "test-worker", Logger: Logger(), Store: st, Config: src}}
}

// PostgresEnv names the PostgreSQL database tests use; `make test` sets it.
const PostgresEnv = "BATON_TEST_POSTGRES"

// FreshPostgres returns a URL of an empty schema in the test PostgreSQL, dropped when the test
// ends. In CI a missing PostgreSQL fails the test; elsewhere it is skipped, saying why.
func FreshPostgres(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL: `make test` runs it")
	}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: `make test` starts PostgreSQL through scripts/test-postgres.sh", PostgresEnv)
		}
		t.Skipf("%s not set: the PostgreSQL case runs under make test", PostgresEnv)
	}
	schema := fmt.Sprintf("w_%d", time.Now().UnixNano())
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("creating a schema: %v", err)
	}
	t.Cleanup(func() {
		if db, err := sql.Open("pgx", base); err == nil {
			_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// ClosedAndAlone waits for the first provider call to end and checks that it ended within about a
// second of since and that nothing was tried after it (an abort's promise).
func ClosedAndAlone(t *testing.T, fake *fakeprovider.Server, since time.Time, after string) {
	t.Helper()
	var ended time.Time
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && ended.IsZero(); time.Sleep(50 * time.Millisecond) {
		ended = fake.Calls()[0].EndedAt
	}
	if ended.IsZero() || ended.Sub(since) > 1500*time.Millisecond {
		t.Errorf("the provider connection closed %v after %s, want within about a second", ended.Sub(since), after)
	}
	if n := len(fake.Calls()); n != 1 {
		t.Errorf("%d provider calls after %s, want 1: nothing is tried after an abort", n, after)
	}
}

// Post sends body as JSON with headers and returns the response and its body.
func Post(t *testing.T, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}
