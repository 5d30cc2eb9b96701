package main

import (
	"database/sql"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/server/common/log"
	pgschema "go.temporal.io/server/schema/postgresql/v12"
	sqltool "go.temporal.io/server/tools/sql"
)

// testPostgres is the URL of the PostgreSQL server for the tests: they fail without one, unless
// -short.
func testPostgres(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping a test on PostgreSQL")
	}
	base := os.Getenv("BATON_TEST_POSTGRES")
	if base == "" {
		t.Fatal(`BATON_TEST_POSTGRES is not set: run with BATON_TEST_POSTGRES="$(scripts/test-postgres.sh)" ` +
			`(from the repository root; it prints the URL of a local PostgreSQL, starting one if needed), or pass -short to skip`)
	}
	return base
}

// freshDatabase returns base with a new database name (made by whoever connects first), and
// drops the database and its _visibility twin at the end.
func freshDatabase(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("BATON_TEST_POSTGRES: not a URL")
	}
	name := "temporal_test_" + randomSuffix()
	t.Cleanup(func() {
		db, err := sql.Open("postgres", base)
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		for _, n := range []string{name, name + "_visibility"} {
			// FORCE (PostgreSQL 13+) ends the connections a killed node left behind.
			if _, err := db.Exec(`DROP DATABASE IF EXISTS ` + n + ` WITH (FORCE)`); err != nil {
				if _, err := db.Exec(`DROP DATABASE IF EXISTS ` + n); err != nil {
					t.Errorf("dropping %s: %v", n, err)
				}
			}
		}
	})
	u.Path = "/" + name
	return u.String()
}

// Two nodes creating the databases at once both succeed; a new database gets the schema, an old
// one is updated, a current one is left alone.
func TestPostgresSchemaSetupAndUpdate(t *testing.T) {
	p, err := parsePostgresURL(freshDatabase(t, testPostgres(t)))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = p.ensureDatabase(t.Context(), []string{p.name, p.visibilityName()}[i%2]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("racing creations: %v", err)
		}
	}

	logger := log.NewNoopLogger()
	conf := p.sqlConfig(p.name, 1, 1)
	version := func() string {
		t.Helper()
		conn, err := sqltool.NewConnection(conf, logger)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		v, err := conn.ReadSchemaVersion()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := migrateSchema(conf, pgSchemaMain, "1.10", logger); err != nil {
		t.Fatal(err)
	}
	if v := version(); v != "1.10" {
		t.Fatalf("set up to version %s, want 1.10", v)
	}
	for range 2 { // an update, then nothing to do
		if err := migrateSchema(conf, pgSchemaMain, pgschema.Version, logger); err != nil {
			t.Fatal(err)
		}
		if v := version(); v != pgschema.Version {
			t.Fatalf("updated to version %s, want %s", v, pgschema.Version)
		}
	}
	visConf := p.sqlConfig(p.visibilityName(), 1, 1)
	if err := migrateSchema(visConf, pgSchemaVisibility, pgschema.VisibilityVersion, logger); err != nil {
		t.Fatal(err)
	}
}

// A database with tables of something else is refused, not filled with Temporal's.
func TestPostgresRefusesAForeignDatabase(t *testing.T) {
	p, err := parsePostgresURL(freshDatabase(t, testPostgres(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ensureDatabase(t.Context(), p.name); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("postgres", p.dsn(p.name))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE sessions (id TEXT)`); err != nil {
		t.Fatal(err)
	}
	err = migrateSchema(p.sqlConfig(p.name, 1, 1), pgSchemaMain, pgschema.Version, log.NewNoopLogger())
	if err == nil || !strings.Contains(err.Error(), "tables (sessions, …) but no Temporal schema version") {
		t.Errorf("migrating a foreign database: %v", err)
	}
}
