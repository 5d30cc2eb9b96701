package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Stored responses, for previous_response_id: a response id maps to an opaque record (the caller
// keeps the response's input and output there, and for a background reply its workflow, run,
// creation time, model and request echo). Rows are sealed as content is, named by the id so that
// a row moved under another id does not open, and go with the content retention
// (DeleteContentBefore) once created longer ago than it.

// MaxResponseBytes bounds a stored response: a request's input, as large as the largest request
// a front door takes (32 MiB), and its output, as large as a reply log (MaxReplyLogBytes).
const MaxResponseBytes = 64 << 20

// PutResponse stores rec under id, created at at (now when zero). Putting an id again replaces
// its record, so a background reply's record can gain its output when the reply ends. A record
// over MaxResponseBytes is ErrTooLarge.
func (s *Store) PutResponse(ctx context.Context, id string, rec []byte, at time.Time) error {
	if id == "" {
		return errors.New("storing a response: the response id is empty")
	}
	if len(rec) > MaxResponseBytes {
		return fmt.Errorf("storing response %s: %w: %d bytes, over the limit of %d bytes (MaxResponseBytes)", id, ErrTooLarge, len(rec), MaxResponseBytes)
	}
	if at.IsZero() {
		at = s.now()
	}
	row, err := s.sealRecord(responseName(id), rec)
	if err != nil {
		return fmt.Errorf("storing response %s: %w", id, err)
	}
	err = s.write(ctx, func(t *tx) error {
		_, err := t.exec(ctx, `INSERT INTO responses (id, data, size, created_ms) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET data = excluded.data, size = excluded.size, created_ms = excluded.created_ms`,
			id, row, len(rec), ms(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("storing response %s: %w", id, err)
	}
	return nil
}

// GetResponse returns the record stored under id. A missing id, or one past its retention, is
// ErrNotFound; a record that cannot be read is ErrContentEncrypted (no key), ErrContentWrongKey,
// ErrContentUnsealed or ErrContentCorrupt, never garbage.
func (s *Store) GetResponse(ctx context.Context, id string) ([]byte, error) {
	var row []byte
	err := s.queryRow(ctx, `SELECT data FROM responses WHERE id = ?`, id).Scan(&row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("response %s: %w (it may have passed its retention)", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading response %s: %w", id, err)
	}
	return s.openRecord("response "+id, responseName(id), row)
}

// responseName names a response's row in its seal, with a prefix no content ref or reply log
// batch has.
func responseName(id string) string { return "response:" + id }
