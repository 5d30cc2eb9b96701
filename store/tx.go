package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// dialect holds what differs between SQLite and PostgreSQL.
type dialect struct {
	name string
	// lockRow is appended to a SELECT that reads a row about to be rewritten.
	lockRow string
	// bigint is the column type of epoch milliseconds.
	bigint string
	// blob is the column type of raw bytes.
	blob string
}

var (
	sqliteDialect   = dialect{name: "sqlite", lockRow: "", bigint: "INTEGER", blob: "BLOB"}
	postgresDialect = dialect{name: "postgres", lockRow: " FOR UPDATE", bigint: "BIGINT", blob: "BYTEA"}
)

// rebind turns ? placeholders into $1, $2, … for PostgreSQL.
func (d dialect) rebind(q string) string {
	if d.name != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tx is one write transaction. On SQLite it starts with BEGIN IMMEDIATE, so that concurrent
// writers queue for the lock up front (under busy_timeout) instead of failing at commit; on
// PostgreSQL rows are locked with SELECT … FOR UPDATE.
type tx struct {
	d    dialect
	conn *sql.Conn // SQLite
	tx   *sql.Tx   // PostgreSQL
	// failed is the first error of a write joined to this transaction (Together): the whole
	// transaction rolls back even if that write's caller carries on.
	failed error
}

func (t *tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q = t.d.rebind(q)
	if t.tx != nil {
		return t.tx.ExecContext(ctx, q, args...)
	}
	return t.conn.ExecContext(ctx, q, args...)
}

func (t *tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	q = t.d.rebind(q)
	if t.tx != nil {
		return t.tx.QueryRowContext(ctx, q, args...)
	}
	return t.conn.QueryRowContext(ctx, q, args...)
}

func (t *tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q = t.d.rebind(q)
	if t.tx != nil {
		return t.tx.QueryContext(ctx, q, args...)
	}
	return t.conn.QueryContext(ctx, q, args...)
}

// beforeCommit lets the crash-safety test kill the process between writing and committing.
var beforeCommit func()

// txKey carries the transaction Together opened for a store.
type txKey struct{ s *Store }

// Together runs fn with a context under which every write of this store joins one transaction,
// committed when fn returns nil: all of them land, or none (an error of any of them rolls back
// the others, even if its caller carries on; ErrUnchanged, which writes nothing, does not). A commit per step is most of what a step costs.
// Reads outside a write do not see the writes before the commit.
func (s *Store) Together(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{s}).(*tx); ok {
		return fn(ctx)
	}
	return s.write(ctx, func(t *tx) error {
		if err := fn(context.WithValue(ctx, txKey{s}, t)); err != nil {
			return err
		}
		return t.failed
	})
}

// write runs fn in one transaction and commits it, or rolls everything back on error; under
// Together, in Together's transaction.
func (s *Store) write(ctx context.Context, fn func(*tx) error) (err error) {
	if t, ok := ctx.Value(txKey{s}).(*tx); ok {
		if err = fn(t); err != nil && t.failed == nil && !errors.Is(err, ErrUnchanged) {
			t.failed = err
		}
		return err
	}
	t := &tx{d: s.d}
	if s.d.name == "postgres" {
		if t.tx, err = s.db.BeginTx(ctx, nil); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				_ = t.tx.Rollback()
			}
		}()
		if err = fn(t); err != nil {
			return err
		}
		if beforeCommit != nil {
			beforeCommit()
		}
		return t.tx.Commit()
	}

	if t.conn, err = s.db.Conn(ctx); err != nil {
		return err
	}
	defer t.conn.Close()
	if _, err = t.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_, _ = t.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err = fn(t); err != nil {
		return err
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	_, err = t.conn.ExecContext(ctx, "COMMIT")
	return err
}

// read runs a query outside any write transaction.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q = s.d.rebind(q)
	if st := s.prepared(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, q, args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	q = s.d.rebind(q)
	if st := s.prepared(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, q, args...)
}

// maxStatements bounds the prepared statements a store keeps (a query built from a filter may
// be new at every call; those beyond it are parsed each time, as before).
const maxStatements = 128

// statements caches SQLite's prepared read statements, by their text: the driver parses a
// statement again at every call, which was most of a read's cost (8 % of the worker's CPU with
// 1,000 replies in flight). database/sql prepares each on the connections that run it. PostgreSQL's
// driver (pgx) keeps a cache of its own.
type statements struct {
	m sync.Map // query → *sql.Stmt
	n atomic.Int32
}

// prepared is q's cached statement, or nil when it is not to be cached or does not prepare (the
// query itself then says what is wrong).
func (s *Store) prepared(ctx context.Context, q string) *sql.Stmt {
	if s.d.name != "sqlite" {
		return nil
	}
	if v, ok := s.stmts.m.Load(q); ok {
		return v.(*sql.Stmt)
	}
	if s.stmts.n.Load() >= maxStatements {
		return nil
	}
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	if v, loaded := s.stmts.m.LoadOrStore(q, st); loaded {
		_ = st.Close()
		return v.(*sql.Stmt)
	}
	s.stmts.n.Add(1)
	return st
}

// closeStatements closes the cached statements (Close).
func (s *Store) closeStatements() {
	s.stmts.m.Range(func(q, st any) bool {
		_ = st.(*sql.Stmt).Close()
		s.stmts.m.Delete(q)
		return true
	})
	s.stmts.n.Store(0)
}
