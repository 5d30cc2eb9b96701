package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
)

// A reply's event log: what a reply has streamed so far, so that a caller that lost its
// connection can resume the reply from any front door, not only the one whose worker holds the
// stream. The attempt appends its deltas in batches (one row a batch, never one a token) and ends
// the log with a small final record; a front door reads every entry from the caller's position,
// and whether the log is finished, with one query.
//
// A log is a head row (reply_logs: how many batches, entries and bytes, whether it is finished,
// when it was last written), which each append locks, and one row a batch (reply_log_batches).
// Batch rows are sealed as content is (content.go: the same key and AEAD), named by the reply,
// the batch number, its first entry's index, its entry count and whether it is the final record,
// so that a row moved to another reply or place does not open. Logs go with the content retention
// (DeleteContentBefore), each one whole once it has not been written for that long.

// MaxReplyLogBytes bounds a log's entries and final record together: a reply as large as the
// largest request a front door takes (serve.DefaultMaxRequestBytes, 32 MiB).
const MaxReplyLogBytes = 32 << 20

var (
	// ErrReplyLogFinished: an append of new entries to a log whose final record is written.
	ErrReplyLogFinished = errors.New("the log is finished: no entry may follow its final record")
	// ErrTooLarge: a reply log or a response over its size limit. Writing it again will not help.
	ErrTooLarge = errors.New("too large")
	// ErrContentUnsealed: a reply log or response row stored plain while this store has a key.
	ErrContentUnsealed = errors.New("stored unsealed, yet BATON_PAYLOAD_KEY is set (written by a process without the key?)")
)

// ReplyLogGapError is an append that would leave entries missing: its first entry, From, is past
// Next, the index the log's next entry takes. The appender resends from Next.
type ReplyLogGapError struct {
	Reply      string
	From, Next int
}

func (e *ReplyLogGapError) Error() string {
	return fmt.Sprintf("entries from %d would leave a gap: the log holds %d, so the next must be entry %d", e.From, e.Next, e.Next)
}

// ReplyLogPage is what ReplyLog read.
type ReplyLogPage struct {
	// Entries are the log's entries from the index asked for to its end, in order.
	Entries [][]byte
	// Next is the index after the last entry returned: where the next read starts.
	Next int
	// Done says the log is finished: no entry follows Entries. Final is its final record.
	Done  bool
	Final []byte
	// Batches is how many rows the log is, its final record's included.
	Batches int
}

// AppendReplyLog appends entries to the log of reply as one batch; from is the index of the first
// of them (0 for a log's first). It is idempotent: entries already stored (an activity run again)
// are skipped, so a batch overlapping the log's end stores only its new tail and a batch the log
// already holds writes nothing. An append starting past the log's end is a *ReplyLogGapError; new
// entries after FinishReplyLog are ErrReplyLogFinished; a log over MaxReplyLogBytes is ErrTooLarge.
// An append of no entries at the log's end creates the log, so a reader can tell a reply that has
// streamed nothing yet from an unknown one.
func (s *Store) AppendReplyLog(ctx context.Context, reply string, from int, entries [][]byte) error {
	if reply == "" {
		return errors.New("appending to a reply log: the reply id is empty")
	}
	if from < 0 {
		return fmt.Errorf("appending to reply log %s: the first entry's index %d is negative", reply, from)
	}
	err := s.write(ctx, func(t *tx) error {
		h, err := s.lockReplyLog(ctx, t, reply)
		if err != nil {
			return err
		}
		switch {
		case int64(from) > h.entries:
			return &ReplyLogGapError{Reply: reply, From: from, Next: int(h.entries)}
		case int64(from+len(entries)) <= h.entries:
			return nil // all stored already: a retried append
		}
		tail := entries[h.entries-int64(from):]
		if h.done {
			return fmt.Errorf("new entries from entry %d on: %w", h.entries, ErrReplyLogFinished)
		}
		size := 0
		for _, e := range tail {
			size += len(e)
		}
		if err := h.fits(size); err != nil {
			return err
		}
		return s.putReplyBatch(ctx, t, reply, h, len(tail), false, encodeEntries(tail, size), size)
	})
	if err != nil {
		return fmt.Errorf("appending to reply log %s: %w", reply, err)
	}
	return nil
}

// FinishReplyLog ends the log of reply with final (the reply's outcome, small): readers then see
// Done and know no entry follows. Finishing a finished log writes nothing: the first final record
// stands, so a retried finish is harmless. Finishing a log no append created creates it (a reply
// that failed before streaming anything).
func (s *Store) FinishReplyLog(ctx context.Context, reply string, final []byte) error {
	if reply == "" {
		return errors.New("finishing a reply log: the reply id is empty")
	}
	err := s.write(ctx, func(t *tx) error {
		h, err := s.lockReplyLog(ctx, t, reply)
		if err != nil || h.done {
			return err
		}
		if err := h.fits(len(final)); err != nil {
			return err
		}
		return s.putReplyBatch(ctx, t, reply, h, 0, true, final, len(final))
	})
	if err != nil {
		return fmt.Errorf("finishing reply log %s: %w", reply, err)
	}
	return nil
}

// ReplyLog reads the log of reply from entry from (0 for all of it) to its end, with one query.
// An unknown log, or one past its retention, is ErrNotFound; from past the log's end is an error
// (a reader can only have seen entries the log holds).
func (s *Store) ReplyLog(ctx context.Context, reply string, from int) (ReplyLogPage, error) {
	page := ReplyLogPage{Next: from}
	if from < 0 {
		return page, fmt.Errorf("reading reply log %s: the index %d to read from is negative", reply, from)
	}
	// The head says the log exists and how long it is even when no batch is left to read; the
	// final record's row comes whatever from is.
	rows, err := s.query(ctx, `SELECT h.entries, h.batches, b.batch, b.first_entry, b.entry_count, b.final, b.data
		FROM reply_logs h LEFT JOIN reply_log_batches b
			ON b.reply = h.reply AND (b.first_entry + b.entry_count > ? OR b.final = 1)
		WHERE h.reply = ? ORDER BY b.batch`, from, reply)
	if err != nil {
		return page, fmt.Errorf("reading reply log %s: %w", reply, err)
	}
	defer rows.Close()
	found, read := false, false
	var length, batches int64
	for rows.Next() {
		var batch, first, count, final sql.NullInt64
		var row []byte
		if err := rows.Scan(&length, &batches, &batch, &first, &count, &final, &row); err != nil {
			return page, fmt.Errorf("reading reply log %s: %w", reply, err)
		}
		found = true
		if !batch.Valid {
			continue // no batch from here: the log is not finished and from is its end
		}
		what := fmt.Sprintf("reply log %s batch %d", reply, batch.Int64)
		plain, err := s.openRecord(what, replyBatchName(reply, batch.Int64, first.Int64, count.Int64, final.Int64 == 1), row)
		if err != nil {
			return page, err
		}
		if final.Int64 == 1 {
			page.Done, page.Final = true, plain
			continue
		}
		// Only the first batch read may start before from; each later one starts where the last ended.
		if first.Int64 > int64(page.Next) || (read && first.Int64 != int64(page.Next)) {
			return page, fmt.Errorf("%s is %w: it starts at entry %d, the entry after what was read is %d", what, ErrContentCorrupt, first.Int64, page.Next)
		}
		entries, err := decodeEntries(plain, count.Int64)
		if err != nil {
			return page, fmt.Errorf("%s is %w: %v", what, ErrContentCorrupt, err)
		}
		page.Entries = append(page.Entries, entries[int64(page.Next)-first.Int64:]...)
		page.Next = int(first.Int64 + count.Int64)
		read = true
	}
	if err := rows.Err(); err != nil {
		return page, fmt.Errorf("reading reply log %s: %w", reply, err)
	}
	page.Batches = int(batches)
	switch {
	case !found:
		return page, fmt.Errorf("reply log %s: %w (it may have passed its retention)", reply, ErrNotFound)
	case int64(from) > length:
		return page, fmt.Errorf("reading reply log %s from entry %d: the log holds %d", reply, from, length)
	case int64(page.Next) != length:
		return page, fmt.Errorf("reply log %s is %w: its batches end at entry %d, its head says %d", reply, ErrContentCorrupt, page.Next, length)
	}
	return page, nil
}

// replyLogHead is a log's head row.
type replyLogHead struct {
	batches, entries, bytes int64
	done                    bool
}

// fits says whether size more bytes keep the log within MaxReplyLogBytes.
func (h replyLogHead) fits(size int) error {
	if h.bytes+int64(size) > MaxReplyLogBytes {
		return fmt.Errorf("%w: %d bytes more would make it %d, over the limit of %d bytes (MaxReplyLogBytes)", ErrTooLarge, size, h.bytes+int64(size), MaxReplyLogBytes)
	}
	return nil
}

// lockReplyLog reads the head of reply's log for rewriting, creating it when there is none.
func (s *Store) lockReplyLog(ctx context.Context, t *tx, reply string) (replyLogHead, error) {
	var h replyLogHead
	// Insert first: on PostgreSQL two first appends (an activity run again while the first run
	// still writes) then queue on the head instead of one failing on its key.
	if _, err := t.exec(ctx, `INSERT INTO reply_logs (reply, batches, entries, bytes, done, touched_ms) VALUES (?, 0, 0, 0, 0, ?)
		ON CONFLICT (reply) DO NOTHING`, reply, ms(s.now())); err != nil {
		return h, err
	}
	var done int
	err := t.queryRow(ctx, `SELECT batches, entries, bytes, done FROM reply_logs WHERE reply = ?`+t.d.lockRow, reply).
		Scan(&h.batches, &h.entries, &h.bytes, &done)
	h.done = done == 1
	return h, err
}

// putReplyBatch writes the log's next batch row (count entries, or the final record) and its head.
func (s *Store) putReplyBatch(ctx context.Context, t *tx, reply string, h replyLogHead, count int, final bool, plain []byte, size int) error {
	f := 0
	if final {
		f = 1
	}
	row, err := s.sealRecord(replyBatchName(reply, h.batches, h.entries, int64(count), final), plain)
	if err != nil {
		return err
	}
	if _, err := t.exec(ctx, `INSERT INTO reply_log_batches (reply, batch, first_entry, entry_count, final, data) VALUES (?, ?, ?, ?, ?, ?)`,
		reply, h.batches, h.entries, count, f, row); err != nil {
		return err
	}
	_, err = t.exec(ctx, `UPDATE reply_logs SET batches = ?, entries = ?, bytes = ?, done = ?, touched_ms = ? WHERE reply = ?`,
		h.batches+1, h.entries+int64(count), h.bytes+int64(size), f, ms(s.now()), reply)
	return err
}

// encodeEntries lays entries out as a length (uvarint) before each.
func encodeEntries(entries [][]byte, size int) []byte {
	b := make([]byte, 0, size+len(entries)*binary.MaxVarintLen32)
	for _, e := range entries {
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	return b
}

// decodeEntries reads what encodeEntries wrote, which must be count entries.
func decodeEntries(b []byte, count int64) ([][]byte, error) {
	entries := make([][]byte, 0, count)
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("entry %d's length does not fit the batch", len(entries))
		}
		b = b[k:]
		entries = append(entries, b[:n:n])
		b = b[n:]
	}
	if int64(len(entries)) != count {
		return nil, fmt.Errorf("%d entries, its row says %d", len(entries), count)
	}
	return entries, nil
}

// replyBatchName names a batch row in its seal: the reply, then fixed-width numbers, so that no
// two rows share a name, and a prefix no content ref or response name has.
func replyBatchName(reply string, batch, first, count int64, final bool) string {
	b := make([]byte, 0, len("reply log:")+len(reply)+25)
	b = append(append(b, "reply log:"...), reply...)
	b = binary.BigEndian.AppendUint64(b, uint64(batch))
	b = binary.BigEndian.AppendUint64(b, uint64(first))
	b = binary.BigEndian.AppendUint64(b, uint64(count))
	if final {
		return string(append(b, 1))
	}
	return string(append(b, 0))
}

// Rows of reply logs and responses start with a format byte: plainRecord, or sealVersion as the
// first byte of a sealed row (content.go). Content needs none: its ref's scheme says.
const plainRecord = 0

// sealRecord returns the row of a reply log batch or a response named name.
func (s *Store) sealRecord(name string, data []byte) ([]byte, error) {
	if s.content == nil {
		return append([]byte{plainRecord}, data...), nil
	}
	return s.content.sealRow(name, data)
}

// openRecord returns what sealRecord stored under name; what names the row in errors.
func (s *Store) openRecord(what, name string, row []byte) ([]byte, error) {
	var plain []byte
	if len(row) > 0 && row[0] == plainRecord {
		if s.content != nil {
			// A plain content row is checked by its sha256 ref; a plain record has nothing to be
			// checked by, so with a key set taking it would let whoever can write the database
			// write a reply.
			return nil, fmt.Errorf("%s is %w", what, ErrContentUnsealed)
		}
		plain = row[1:]
	} else {
		var err error
		if plain, err = s.content.openRow(what, name, row); err != nil {
			return nil, err
		}
	}
	if plain == nil {
		plain = []byte{}
	}
	return plain, nil
}
