package main

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// visibilityIndexes lists the indexes of executions_visibility.
func visibilityIndexes(t *testing.T, dsn string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// The lean set keeps the system indexes and those of the slots the namespaces use, drops the
// rest, and makes again the index of a slot in use that a file lacks.
func TestLeanVisibilityIndexes(t *testing.T) {
	o, err := parseArgs([]string{"--db-filename", filepath.Join(t.TempDir(), "lean.db")})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := sqlConfig(o) // a new file: the schema is set up
	if err != nil {
		t.Fatal(err)
	}
	dsn := sideDSN(conf)
	all := visibilityIndexes(t, dsn)
	if len(all) < 40 {
		t.Fatalf("the schema has %d visibility indexes: %v", len(all), all)
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, "default", false, map[string]enumspb.IndexedValueType{
		"Agent": enumspb.INDEXED_VALUE_TYPE_KEYWORD, "Attempts": enumspb.INDEXED_VALUE_TYPE_INT,
		"Notes": enumspb.INDEXED_VALUE_TYPE_TEXT, // full-text: no index of its own
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(leanSystemIndexes)
	var keyword string
	for slot, alias := range ns.Detail.GetConfig().GetCustomSearchAttributeAliases() {
		if indexedSlot.MatchString(slot) {
			name, _ := slotIndex(slot)
			want = append(want, name)
			if alias == "Agent" {
				keyword = name
			}
		}
	}
	slices.Sort(want)
	if len(want) != len(leanSystemIndexes)+2 {
		t.Fatalf("slots in use: %v", ns.Detail.GetConfig().GetCustomSearchAttributeAliases())
	}
	if err := leanVisibilityIndexes(dsn, dsn); err != nil {
		t.Fatal(err)
	}
	if got := visibilityIndexes(t, dsn); !slices.Equal(got, want) {
		t.Errorf("lean indexes %v, want %v", got, want)
	}

	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP INDEX ` + keyword); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := leanVisibilityIndexes(dsn, dsn); err != nil {
		t.Fatal(err)
	}
	if got := visibilityIndexes(t, dsn); !slices.Equal(got, want) {
		t.Errorf("after a second start: %v, want %v", got, want)
	}
}
