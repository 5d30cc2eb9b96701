package main

import (
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/persistence/serialization"
)

// Temporal's SQLite visibility schema indexes 58 columns of executions_visibility: every
// system column, every predefined search attribute and every pre-allocated slot for custom ones
// (Keyword01…Keyword10, Int01…, and the CHASM slots), each ordered by close and start time. Each
// of a workflow's visibility writes (its start, each search attribute upsert, its close) updates
// all 58 and compiles a statement that names them all: ~11 ms of CPU per workflow on this
// machine, the dev server's largest single cost under load. An index never changes what a query
// returns, only how fast it finds it, so the lean set keeps the ones a list of a dev server's
// workflows orders or filters by (leanSystemIndexes) and those of the custom search attributes
// its namespaces use, and drops the rest; a query on a dropped column scans the table instead.

// leanSystemIndexes are kept: the default order (close time, start time), the execution time
// order, and the workflow ID, type and status filters.
var leanSystemIndexes = []string{"default_idx", "by_execution_time", "by_workflow_id", "by_workflow_type", "by_status"}

// indexedSlot is a pre-allocated custom search attribute column with an index of its own
// (Text and KeywordList slots are searched through full-text tables instead).
var indexedSlot = regexp.MustCompile(`^(Bool|Datetime|Double|Int|Keyword)(\d\d)$`)

// slotIndex is the name of the index of an indexed slot, as the schema names it (Keyword01:
// by_keyword_01), and the statement that makes it.
func slotIndex(slot string) (name, create string) {
	m := indexedSlot.FindStringSubmatch(slot)
	name = "by_" + strings.ToLower(m[1]) + "_" + m[2]
	create = fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON executions_visibility (namespace_id, %s, "+
		"(COALESCE(close_time, '9999-12-31 23:59:59+00:00')) DESC, start_time DESC, run_id)", name, slot)
	return name, create
}

// leanVisibilityIndexes drops the visibility indexes outside the lean set from the visibility
// database at visDSN and makes the missing ones of the slots that the namespaces at nsDSN use (a
// namespace of a kept file may have been given search attributes after its indexes were
// dropped). It runs before the server starts.
func leanVisibilityIndexes(nsDSN, visDSN string) error {
	ns, err := sql.Open("sqlite", nsDSN)
	if err != nil {
		return err
	}
	defer ns.Close()
	keep, create, err := usedSlotIndexes(ns)
	if err != nil {
		return err
	}
	db := ns
	if visDSN != nsDSN {
		if db, err = sql.Open("sqlite", visDSN); err != nil {
			return err
		}
		defer db.Close()
	}
	keep = append(keep, leanSystemIndexes...)
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("listing visibility indexes: %w", err)
	}
	var drop []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		if !slices.Contains(keep, name) {
			drop = append(drop, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	stmts := create
	for _, name := range drop {
		stmts = append(stmts, `DROP INDEX IF EXISTS "`+name+`"`)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// usedSlotIndexes names the indexes of the custom search attribute slots that some namespace
// maps an attribute to, with the statements that make them.
func usedSlotIndexes(db *sql.DB) (names, create []string, err error) {
	rows, err := db.Query(`SELECT data, data_encoding FROM namespaces`)
	if err != nil {
		return nil, nil, fmt.Errorf("reading namespaces: %w", err)
	}
	defer rows.Close()
	ser := serialization.NewSerializer()
	for rows.Next() {
		var data []byte
		var encoding string
		if err := rows.Scan(&data, &encoding); err != nil {
			return nil, nil, err
		}
		et, err := enumspb.EncodingTypeFromString(encoding)
		if err != nil {
			return nil, nil, fmt.Errorf("namespace encoding %q: %w", encoding, err)
		}
		detail, err := ser.NamespaceDetailFromBlob(&commonpb.DataBlob{EncodingType: et, Data: data})
		if err != nil {
			return nil, nil, fmt.Errorf("decoding a namespace: %w", err)
		}
		for slot := range detail.GetConfig().GetCustomSearchAttributeAliases() {
			if !indexedSlot.MatchString(slot) {
				continue
			}
			name, stmt := slotIndex(slot)
			if !slices.Contains(names, name) {
				names, create = append(names, name), append(create, stmt)
			}
		}
	}
	return names, create, rows.Err()
}
