package store

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// deltas are entries i..j-1 as the caller stores them: JSON-encoded deltas.
func deltas(i, j int) [][]byte {
	var out [][]byte
	for ; i < j; i++ {
		out = append(out, fmt.Appendf(nil, `{"type":"text","text":"piece %d of the answer "}`, i))
	}
	return out
}

func sameEntries(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: entry %d = %q, want %q", what, i, got[i], want[i])
		}
	}
}

func countBatches(t *testing.T, s *Store, reply string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(s.d.rebind(`SELECT COUNT(*) FROM reply_log_batches WHERE reply = ?`), reply).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func rawBatch(t *testing.T, s *Store, reply string, batch int) []byte {
	t.Helper()
	var row []byte
	if err := s.db.QueryRow(s.d.rebind(`SELECT data FROM reply_log_batches WHERE reply = ? AND batch = ?`), reply, batch).Scan(&row); err != nil {
		t.Fatalf("row of %s batch %d: %v", reply, batch, err)
	}
	return row
}

func setRawBatch(t *testing.T, s *Store, reply string, batch int, row []byte) {
	t.Helper()
	if _, err := s.db.Exec(s.d.rebind(`UPDATE reply_log_batches SET data = ? WHERE reply = ? AND batch = ?`), row, reply, batch); err != nil {
		t.Fatal(err)
	}
}

// countQueries points s at a database that counts the queries run through it (Exec is not
// counted), so that a test can hold a read to one query.
func countQueries(t *testing.T, s *Store, url string) *atomic.Int64 {
	t.Helper()
	n := new(atomic.Int64)
	old := s.db
	s.db = sql.OpenDB(countingConnector{drv: old.Driver(), dsn: dsnOf(url), n: n})
	s.closeStatements() // prepared on the old database
	t.Cleanup(func() { old.Close() })
	return n
}

type countingConnector struct {
	drv driver.Driver
	dsn string
	n   *atomic.Int64
}

func (c countingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	// Without QueryerContext database/sql would prepare each query, and none would be counted.
	for _, ok := range []bool{is[driver.QueryerContext](conn), is[driver.ExecerContext](conn), is[driver.ConnBeginTx](conn), is[driver.ConnPrepareContext](conn)} {
		if !ok {
			conn.Close()
			return nil, fmt.Errorf("counting queries: driver %T lacks an interface the counter relies on", conn)
		}
	}
	return countingConn{conn, c.n}, nil
}

func (c countingConnector) Driver() driver.Driver { return c.drv }

func is[T any](v any) bool { _, ok := v.(T); return ok }

type countingConn struct {
	driver.Conn
	n *atomic.Int64
}

func (c countingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.n.Add(1)
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

// PrepareContext counts the queries of a prepared statement too (the store prepares SQLite's).
func (c countingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return countingStmt{st, c.n}, nil
}

type countingStmt struct {
	driver.Stmt
	n *atomic.Int64
}

func (s countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.n.Add(1)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

func (s countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c countingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (c countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c countingConn) CheckNamedValue(v *driver.NamedValue) error {
	if nc, ok := c.Conn.(driver.NamedValueChecker); ok {
		return nc.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

func TestReplyLogAppendsInBatchesAndReadsInOneQuery(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		for name, key := range map[string][]byte{"plain": nil, "sealed": contentKeyA} {
			t.Run(name, func(t *testing.T) {
				s := openContent(t, url, key, nil)
				reply := "run-" + name
				all := deltas(0, 100)
				for from := 0; from < len(all); from += 7 {
					if err := s.AppendReplyLog(ctx, reply, from, all[from:min(from+7, len(all))]); err != nil {
						t.Fatal(err)
					}
				}
				if n := countBatches(t, s, reply); n != 15 {
					t.Errorf("%d rows for 100 entries in batches of 7, want 15", n)
				}
				queries := countQueries(t, s, url)
				for _, from := range []int{0, 1, 37, 42, 99, 100} {
					before := queries.Load()
					page, err := s.ReplyLog(ctx, reply, from)
					if err != nil {
						t.Fatalf("from %d: %v", from, err)
					}
					if q := queries.Load() - before; q != 1 {
						t.Errorf("from %d: %d queries, want 1", from, q)
					}
					sameEntries(t, fmt.Sprintf("from %d", from), page.Entries, all[from:])
					if page.Next != 100 || page.Done || page.Final != nil {
						t.Errorf("from %d: next %d, done %v, final %q", from, page.Next, page.Done, page.Final)
					}
				}
				if _, err := s.ReplyLog(ctx, reply, 101); err == nil || !strings.Contains(err.Error(), "from entry 101: the log holds 100") {
					t.Errorf("from past the end: %v", err)
				}
				if _, err := s.ReplyLog(ctx, reply, -1); err == nil || !strings.Contains(err.Error(), "negative") {
					t.Errorf("from -1: %v", err)
				}
				if _, err := s.ReplyLog(ctx, "no-such-run", 0); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no-such-run") {
					t.Errorf("an unknown log: %v", err)
				}

				// An append of nothing creates the log: a reply that has streamed nothing yet is not unknown.
				quiet := "quiet-" + name
				if err := s.AppendReplyLog(ctx, quiet, 0, nil); err != nil {
					t.Fatal(err)
				}
				if page, err := s.ReplyLog(ctx, quiet, 0); err != nil || len(page.Entries) != 0 || page.Next != 0 || page.Done {
					t.Errorf("an empty log: %+v, %v", page, err)
				}
				// Empty entries are entries.
				if err := s.AppendReplyLog(ctx, quiet, 0, [][]byte{{}, nil, []byte("x")}); err != nil {
					t.Fatal(err)
				}
				if page, err := s.ReplyLog(ctx, quiet, 0); err != nil || page.Next != 3 || page.Entries[0] == nil || len(page.Entries[1]) != 0 || string(page.Entries[2]) != "x" {
					t.Errorf("empty entries: %q, %v", page.Entries, err)
				}
			})
		}
	})
}

func TestReplyLogAppendIsIdempotentAndRefusesAGap(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, contentKeyA, nil)
		all := deltas(0, 20)
		if err := s.AppendReplyLog(ctx, "r", 0, all[:10]); err != nil {
			t.Fatal(err)
		}
		// The same batch again (an activity run again), and a part of it: nothing written.
		for _, b := range [][2]int{{0, 10}, {3, 7}, {9, 10}} {
			if err := s.AppendReplyLog(ctx, "r", b[0], all[b[0]:b[1]]); err != nil {
				t.Fatalf("re-append %v: %v", b, err)
			}
		}
		if n := countBatches(t, s, "r"); n != 1 {
			t.Errorf("%d rows after re-appending the first batch, want 1", n)
		}
		// A batch overlapping the end keeps only its tail.
		if err := s.AppendReplyLog(ctx, "r", 6, all[6:15]); err != nil {
			t.Fatal(err)
		}
		if n := countBatches(t, s, "r"); n != 2 {
			t.Errorf("%d rows after an overlapping batch, want 2", n)
		}
		page, err := s.ReplyLog(ctx, "r", 0)
		if err != nil {
			t.Fatal(err)
		}
		sameEntries(t, "after the overlap", page.Entries, all[:15])

		// A gap is refused and names where the next batch must start.
		err = s.AppendReplyLog(ctx, "r", 17, all[17:20])
		var gap *ReplyLogGapError
		if !errors.As(err, &gap) || gap.From != 17 || gap.Next != 15 || gap.Reply != "r" ||
			!strings.Contains(err.Error(), "reply log r") || !strings.Contains(err.Error(), "from 17 would leave a gap") || !strings.Contains(err.Error(), "entry 15") {
			t.Errorf("a gap: %v", err)
		}
		if err := s.AppendReplyLog(ctx, "fresh", 1, all[1:2]); !errors.As(err, &gap) || gap.Next != 0 {
			t.Errorf("a first batch from 1: %v", err)
		}
		if _, err := s.ReplyLog(ctx, "fresh", 0); !errors.Is(err, ErrNotFound) {
			t.Errorf("a refused first append left a log: %v", err)
		}
		if err := s.AppendReplyLog(ctx, "r", -1, all[:1]); err == nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("from -1: %v", err)
		}
		if err := s.AppendReplyLog(ctx, "", 0, all[:1]); err == nil || !strings.Contains(err.Error(), "reply id is empty") {
			t.Errorf("no reply id: %v", err)
		}
		page, err = s.ReplyLog(ctx, "r", 0)
		if err != nil || page.Next != 15 {
			t.Fatalf("after the refusals: next %d, %v", page.Next, err)
		}
	})
}

func TestConcurrentAppendsOfTheSameBatchStoreItOnce(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, contentKeyA, nil)
		all := deltas(0, 64)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for from := 0; from < 64; from += 16 {
					errs <- s.AppendReplyLog(ctx, "raced", from, all[from:from+16])
				}
			}()
		}
		go func() { wg.Wait(); close(errs) }()
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		page, err := s.ReplyLog(ctx, "raced", 0)
		if err != nil {
			t.Fatal(err)
		}
		sameEntries(t, "after racing appends", page.Entries, all)
		if n := countBatches(t, s, "raced"); n != 4 {
			t.Errorf("%d rows, want 4", n)
		}
	})
}

func TestAFinishedReplyLogSaysSo(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, contentKeyA, nil)
		all := deltas(0, 40)
		for from := 0; from < 40; from += 10 {
			if err := s.AppendReplyLog(ctx, "r", from, all[from:from+10]); err != nil {
				t.Fatal(err)
			}
		}
		final := []byte(`{"finish_reason":"stop","usage":{"input_tokens":12,"output_tokens":40}}`)
		if err := s.FinishReplyLog(ctx, "r", final); err != nil {
			t.Fatal(err)
		}
		queries := countQueries(t, s, url)
		for _, from := range []int{0, 25, 40} {
			before := queries.Load()
			page, err := s.ReplyLog(ctx, "r", from)
			if err != nil {
				t.Fatal(err)
			}
			if q := queries.Load() - before; q != 1 {
				t.Errorf("from %d: %d queries, want 1", from, q)
			}
			sameEntries(t, fmt.Sprintf("finished, from %d", from), page.Entries, all[from:])
			if !page.Done || !bytes.Equal(page.Final, final) || page.Next != 40 {
				t.Errorf("from %d: done %v, final %q, next %d", from, page.Done, page.Final, page.Next)
			}
		}
		// A retried finish and a retried last batch are harmless; new entries are refused.
		if err := s.FinishReplyLog(ctx, "r", []byte(`{"another":"final"}`)); err != nil {
			t.Errorf("a second finish: %v", err)
		}
		if err := s.AppendReplyLog(ctx, "r", 30, all[30:40]); err != nil {
			t.Errorf("a retried last batch: %v", err)
		}
		if err := s.AppendReplyLog(ctx, "r", 35, deltas(35, 45)); !errors.Is(err, ErrReplyLogFinished) || !strings.Contains(err.Error(), "reply log r") {
			t.Errorf("new entries after the finish: %v", err)
		}
		page, err := s.ReplyLog(ctx, "r", 0)
		if err != nil || !bytes.Equal(page.Final, final) || page.Next != 40 {
			t.Errorf("after the retries: final %q, next %d, %v", page.Final, page.Next, err)
		}
		// A reply that failed before streaming anything finishes a log no append created.
		if err := s.FinishReplyLog(ctx, "silent", nil); err != nil {
			t.Fatal(err)
		}
		if page, err := s.ReplyLog(ctx, "silent", 0); err != nil || !page.Done || page.Final == nil || len(page.Entries) != 0 {
			t.Errorf("a log finished empty: %+v, %v", page, err)
		}
	})
}

func TestReplyLogRowsAreSealed(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, contentKeyA, nil)
		secret := []byte(`{"type":"text","text":"the patient's diagnosis is confidential"}`)
		for _, reply := range []string{"a", "b"} {
			if err := s.AppendReplyLog(ctx, reply, 0, [][]byte{secret, []byte("second")}); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendReplyLog(ctx, reply, 2, [][]byte{[]byte("third"), []byte("fourth")}); err != nil {
				t.Fatal(err)
			}
			if err := s.FinishReplyLog(ctx, reply, []byte(`{"final":"`+reply+`"}`)); err != nil {
				t.Fatal(err)
			}
		}
		row0 := rawBatch(t, s, "a", 0)
		if bytes.Contains(row0, []byte("diagnosis")) || bytes.Contains(row0, []byte("second")) || row0[0] != sealVersion {
			t.Errorf("the row carries the plaintext, or is not sealed: %q", row0)
		}

		// Without the key, or with another: a clear error, never garbage.
		if _, err := openContent(t, url, nil, nil).ReplyLog(ctx, "a", 0); !errors.Is(err, ErrContentEncrypted) || !strings.Contains(err.Error(), "reply log a batch 0") {
			t.Errorf("without the key: %v", err)
		}
		if _, err := openContent(t, url, contentKeyB, nil).ReplyLog(ctx, "a", 0); !errors.Is(err, ErrContentWrongKey) {
			t.Errorf("with another key: %v", err)
		}

		// A row moved to another batch, another reply, or in place of the final record does not open.
		row1 := rawBatch(t, s, "a", 1)
		for _, m := range []struct {
			name  string
			reply string
			batch int
			row   []byte
		}{
			{"batch 0 as batch 1", "a", 1, row0},
			{"a's batch 1 as b's", "b", 1, row1},
			{"a batch as the final record", "a", 2, row1},
			{"b's final record as a's", "a", 2, rawBatch(t, s, "b", 2)},
		} {
			keep := rawBatch(t, s, m.reply, m.batch)
			setRawBatch(t, s, m.reply, m.batch, m.row)
			if page, err := s.ReplyLog(ctx, m.reply, 0); !errors.Is(err, ErrContentCorrupt) {
				t.Errorf("%s: %q, %v", m.name, page.Entries, err)
			}
			setRawBatch(t, s, m.reply, m.batch, keep)
		}

		// A moved first-entry column does not open either: it is bound into the seal.
		if _, err := s.db.Exec(s.d.rebind(`UPDATE reply_log_batches SET first_entry = 1 WHERE reply = ? AND batch = 0`), "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReplyLog(ctx, "a", 1); !errors.Is(err, ErrContentCorrupt) {
			t.Errorf("a moved first entry: %v", err)
		}

		// A plain row in a keyed store is refused: nothing would check it.
		plain := openContent(t, url, nil, nil)
		if err := plain.AppendReplyLog(ctx, "plain", 0, [][]byte{[]byte("written without the key")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReplyLog(ctx, "plain", 0); !errors.Is(err, ErrContentUnsealed) || !strings.Contains(err.Error(), "reply log plain batch 0") {
			t.Errorf("a plain row through a keyed store: %v", err)
		}
		if page, err := plain.ReplyLog(ctx, "plain", 0); err != nil || string(page.Entries[0]) != "written without the key" {
			t.Errorf("a plain row through a plain store: %q, %v", page.Entries, err)
		}
	})
}

func TestRetentionDeletesWholeReplyLogs(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		now := t0
		s := openContent(t, url, contentKeyA, &now)
		all := deltas(0, 20)
		for _, reply := range []string{"old", "long"} {
			if err := s.AppendReplyLog(ctx, reply, 0, all[:10]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.FinishReplyLog(ctx, "old", nil); err != nil {
			t.Fatal(err)
		}
		now = t0.Add(48 * time.Hour)
		// The long reply is written again: its first batch, older than the cutoff, stays with it.
		if err := s.AppendReplyLog(ctx, "long", 10, all[10:]); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteContentBefore(ctx, t0.Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReplyLog(ctx, "old", 0); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "retention") {
			t.Errorf("a log past its retention: %v", err)
		}
		if n := countBatches(t, s, "old"); n != 0 {
			t.Errorf("%d rows of the deleted log remain", n)
		}
		page, err := s.ReplyLog(ctx, "long", 0)
		if err != nil {
			t.Fatal(err)
		}
		sameEntries(t, "the log written within the retention", page.Entries, all)
	})
}

func TestReplyLogSizeIsBounded(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, nil, nil)
		if err := s.AppendReplyLog(ctx, "r", 0, [][]byte{make([]byte, 100)}); err != nil {
			t.Fatal(err)
		}
		// Over by one byte with the first batch counted: refused before anything is written.
		big := make([]byte, MaxReplyLogBytes-100)
		err := s.AppendReplyLog(ctx, "r", 1, [][]byte{big, {0}})
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("limit of %d bytes (MaxReplyLogBytes)", MaxReplyLogBytes)) ||
			!strings.Contains(err.Error(), fmt.Sprint(MaxReplyLogBytes+1)) {
			t.Errorf("over the limit: %v", err)
		}
		if err := s.AppendReplyLog(ctx, "r", 1, [][]byte{make([]byte, MaxReplyLogBytes)}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("one entry over the limit: %v", err)
		}
		if page, err := s.ReplyLog(ctx, "r", 0); err != nil || page.Next != 1 {
			t.Errorf("after the refusals: next %d, %v", page.Next, err)
		}
		// The final record counts too.
		if err := s.FinishReplyLog(ctx, "r", append(big, 0)); !errors.Is(err, ErrTooLarge) {
			t.Errorf("a final record over the limit: %v", err)
		}
		if err := s.FinishReplyLog(ctx, "r", []byte("{}")); err != nil {
			t.Errorf("a small final record: %v", err)
		}
	})
}

// Migration 5 upgrades a version-4 store in place, its rows kept.
func TestAVersion4DatabaseGainsReplyLogsAndResponses(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, nil, nil)
		ref, err := s.PutContent(ctx, []byte("from version 4"))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`DROP TABLE spend`, `DROP TABLE reply_log_batches`, `DROP TABLE reply_logs`, `DROP TABLE responses`, `UPDATE schema_version SET version = 4`} {
			if _, err := s.db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		s = openContent(t, url, nil, nil)
		var v int
		if err := s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil || v != SchemaVersion() || v < 5 {
			t.Fatalf("version %d, %v", v, err)
		}
		if got, err := s.GetContent(ctx, ref); err != nil || string(got) != "from version 4" {
			t.Errorf("content from version 4: %q, %v", got, err)
		}
		if err := s.AppendReplyLog(ctx, "r", 0, deltas(0, 3)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutResponse(ctx, "resp_1", []byte(`{}`), t0); err != nil {
			t.Fatal(err)
		}
	})
}

// TestReplyLogErrorMessages shows the messages an operator reads (go test -v -run Messages).
func TestReplyLogErrorMessages(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "m.db")
	s := openContent(t, url, contentKeyA, nil)
	_ = s.AppendReplyLog(ctx, "run-1", 0, deltas(0, 3))
	gap := s.AppendReplyLog(ctx, "run-1", 5, deltas(5, 6))
	large := s.AppendReplyLog(ctx, "run-1", 3, [][]byte{make([]byte, MaxReplyLogBytes)})
	_ = s.FinishReplyLog(ctx, "run-1", nil)
	finished := s.AppendReplyLog(ctx, "run-1", 3, deltas(3, 4))
	_, missing := s.ReplyLog(ctx, "run-2", 0)
	_, past := s.ReplyLog(ctx, "run-1", 9)
	_, noKey := openContent(t, url, nil, nil).ReplyLog(ctx, "run-1", 0)
	setRawBatch(t, s, "run-1", 0, rawBatch(t, s, "run-1", 1))
	_, moved := s.ReplyLog(ctx, "run-1", 0)
	for _, err := range []error{gap, large, finished, missing, past, noKey, moved} {
		if err == nil {
			t.Fatal("no error")
		}
		t.Log(err)
	}
}

// Reading a 2,000-entry log written in batches of 32, sealed, from its start (a caller resuming
// from the beginning: the worst case) and from its last batch.
func BenchmarkReplyLogRead(b *testing.B) {
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(b.TempDir(), "bench.db")}
	if pg := os.Getenv(PostgresEnv); pg != "" {
		urls["postgres"] = pg
	}
	all := deltas(0, 2000)
	for _, name := range []string{"sqlite", "postgres"} {
		url, ok := urls[name]
		if !ok {
			continue
		}
		s, err := Open(ctx, url, Options{LookupEnv: func(string) (string, bool) { return "", false }, ContentKey: contentKeyA})
		if err != nil {
			b.Fatal(err)
		}
		reply := fmt.Sprintf("bench-%d", time.Now().UnixNano())
		for from := 0; from < len(all); from += 32 {
			if err := s.AppendReplyLog(ctx, reply, from, all[from:min(from+32, len(all))]); err != nil {
				b.Fatal(err)
			}
		}
		for _, from := range []int{0, 1990} {
			b.Run(fmt.Sprintf("%s/from-%d", name, from), func(b *testing.B) {
				for b.Loop() {
					page, err := s.ReplyLog(ctx, reply, from)
					if err != nil || len(page.Entries) != len(all)-from {
						b.Fatalf("%d entries, %v", len(page.Entries), err)
					}
				}
			})
		}
		if name == "postgres" {
			// The shared database keeps no bench rows.
			_, _ = s.db.Exec(s.d.rebind(`DELETE FROM reply_log_batches WHERE reply = ?`), reply)
			_, _ = s.db.Exec(s.d.rebind(`DELETE FROM reply_logs WHERE reply = ?`), reply)
		}
		s.Close()
	}
}
