package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// PostgresEnv names the database the PostgreSQL half of the suite runs against; `make test`
// sets it through scripts/test-postgres.sh.
const PostgresEnv = "BATON_TEST_POSTGRES"

var schemaSeq atomic.Int64

type backend struct {
	name string
	url  string
}

// backends returns a fresh, empty store URL for each backend. In CI a missing PostgreSQL fails
// the test; elsewhere it is skipped with the reason.
func backends(t *testing.T) []backend {
	t.Helper()
	out := []backend{{"sqlite", "sqlite://" + filepath.Join(t.TempDir(), "baton.db")}}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: `make test` starts PostgreSQL through scripts/test-postgres.sh", PostgresEnv)
		}
		t.Logf("%s not set: PostgreSQL half skipped (make test runs it)", PostgresEnv)
		return out
	}
	// Each test gets its own schema, so tests never see each other's rows.
	schema := fmt.Sprintf("t_%d_%d", time.Now().UnixNano(), schemaSeq.Add(1))
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("creating schema on %s: %v", redact(base), err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err == nil {
			_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return append(out, backend{"postgres", base + sep + "search_path=" + schema})
}

// eachBackend runs fn against a fresh store of each backend.
func eachBackend(t *testing.T, fn func(t *testing.T, s *Store)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := open(t, b.url, nil)
			fn(t, s)
		})
	}
}

func open(t testing.TB, url string, env map[string]string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
