package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// migrations are applied in order; the schema's version is how many have run. Append only:
// never edit one that has shipped.
var migrations = [][]string{
	{ // 1: profiles, auth state, sessions
		`CREATE TABLE auth_profiles (
			agent TEXT NOT NULL, id TEXT NOT NULL, provider TEXT NOT NULL, type TEXT NOT NULL,
			email TEXT NOT NULL DEFAULT '', expires_ms {bigint} NOT NULL DEFAULT 0,
			secret_json TEXT NOT NULL, seq {bigint} NOT NULL,
			PRIMARY KEY (agent, id))`,
		`CREATE TABLE auth_order (agent TEXT NOT NULL, provider TEXT NOT NULL, ids_json TEXT NOT NULL, PRIMARY KEY (agent, provider))`,
		`CREATE TABLE auth_last_good (agent TEXT NOT NULL, provider TEXT NOT NULL, profile_id TEXT NOT NULL, PRIMARY KEY (agent, provider))`,
		`CREATE TABLE auth_stats (agent TEXT NOT NULL, profile_id TEXT NOT NULL, stats_json TEXT NOT NULL, PRIMARY KEY (agent, profile_id))`,
		`CREATE TABLE probe_throttle (agent TEXT NOT NULL, provider TEXT NOT NULL, last_probe_ms {bigint} NOT NULL, PRIMARY KEY (agent, provider))`,
		`CREATE TABLE sessions (
			key TEXT PRIMARY KEY, agent TEXT NOT NULL, data_json TEXT NOT NULL,
			version {bigint} NOT NULL, updated_at_ms {bigint} NOT NULL)`,
	},
	{ // 2: turn content by reference (see content.go)
		`CREATE TABLE contents (
			ref TEXT PRIMARY KEY, data {blob} NOT NULL, size {bigint} NOT NULL,
			created_ms {bigint} NOT NULL, touched_ms {bigint} NOT NULL)`,
		`CREATE INDEX contents_touched ON contents (touched_ms)`,
	},
	{ // 3: attempts' outcomes and checkpoints, so that an answer is never bought twice (attempts.go)
		`CREATE TABLE attempt_outcomes (
			key TEXT PRIMARY KEY, ref TEXT NOT NULL, final INTEGER NOT NULL, touched_ms {bigint} NOT NULL)`,
		`CREATE INDEX attempt_outcomes_touched ON attempt_outcomes (touched_ms)`,
	},
	{ // 4: profiles an operator disabled (`baton auth disable`, manual.go)
		`CREATE TABLE auth_manual (agent TEXT NOT NULL, profile_id TEXT NOT NULL, at_ms {bigint} NOT NULL,
			note TEXT NOT NULL DEFAULT '', PRIMARY KEY (agent, profile_id))`,
	},
	{ // 5: replies' event logs, to resume a reply from any front door, and stored responses for
		// previous_response_id (replylog.go, responses.go). The head row of a log is what an append
		// locks and what the retention goes by; each batch of entries is one sealed row.
		`CREATE TABLE reply_logs (
			reply TEXT PRIMARY KEY, batches {bigint} NOT NULL, entries {bigint} NOT NULL, bytes {bigint} NOT NULL,
			done INTEGER NOT NULL, touched_ms {bigint} NOT NULL)`,
		`CREATE INDEX reply_logs_touched ON reply_logs (touched_ms)`,
		`CREATE TABLE reply_log_batches (
			reply TEXT NOT NULL, batch {bigint} NOT NULL, first_entry {bigint} NOT NULL, entry_count {bigint} NOT NULL,
			final INTEGER NOT NULL, data {blob} NOT NULL, PRIMARY KEY (reply, batch))`,
		`CREATE TABLE responses (
			id TEXT PRIMARY KEY, data {blob} NOT NULL, size {bigint} NOT NULL, created_ms {bigint} NOT NULL)`,
		`CREATE INDEX responses_created ON responses (created_ms)`,
	},
	{ // 6: what each provider call spent, for budgets and the replies' costs (spend.go). Cost in
		// billionths of a dollar: integer sums stay exact on both databases.
		`CREATE TABLE spend (
			key TEXT PRIMARY KEY, reply TEXT NOT NULL, agent TEXT NOT NULL, job TEXT NOT NULL, day TEXT NOT NULL,
			provider TEXT NOT NULL, model TEXT NOT NULL, input {bigint} NOT NULL, output {bigint} NOT NULL,
			cached {bigint} NOT NULL, cache_write {bigint} NOT NULL, cost_nanos {bigint} NOT NULL, priced INTEGER NOT NULL,
			at_ms {bigint} NOT NULL)`,
		`CREATE INDEX spend_agent_day ON spend (agent, day)`,
		`CREATE INDEX spend_job_day ON spend (job, day)`,
		`CREATE INDEX spend_reply ON spend (reply)`,
	},
}

// SchemaVersion is the schema this binary writes.
func SchemaVersion() int { return len(migrations) }

// ErrSchemaTooNew means the database was written by a newer baton.
var ErrSchemaTooNew = errors.New("schema is newer than this baton knows")

func (s *Store) migrate(ctx context.Context) error {
	return s.write(ctx, func(t *tx) error {
		if s.d.name == "postgres" {
			// Workers starting together on several hosts migrate one at a time.
			if _, err := t.exec(ctx, `SELECT pg_advisory_xact_lock(7233)`); err != nil {
				return err
			}
		}
		if _, err := t.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("schema_version: %w", err)
		}
		var version int
		err := t.queryRow(ctx, `SELECT version FROM schema_version`).Scan(&version)
		if errors.Is(err, sql.ErrNoRows) {
			if _, err := t.exec(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
				return err
			}
		} else if err != nil {
			return fmt.Errorf("reading schema version: %w", err)
		}
		if version > len(migrations) {
			return fmt.Errorf("%w: the database is at version %d, this baton knows %d: upgrade baton", ErrSchemaTooNew, version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			for _, stmt := range migrations[v] {
				stmt = strings.NewReplacer("{bigint}", s.d.bigint, "{blob}", s.d.blob).Replace(stmt)
				if _, err := t.exec(ctx, stmt); err != nil {
					return fmt.Errorf("migration %d: %w", v+1, err)
				}
			}
		}
		if version < len(migrations) {
			if _, err := t.exec(ctx, `UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
				return err
			}
		}
		return nil
	})
}
