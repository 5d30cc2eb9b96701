package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// An attempt's outcome (or a checkpoint of its streamed answer so far) is kept under the attempt's
// identity before the attempt reports to Temporal, so that an attempt run again after a lost worker
// or an unreachable server returns what the first run bought instead of calling the provider
// again. The record itself is content (sealed under BATON_PAYLOAD_KEY like a turn); the row maps
// the identity to it, and goes with the content retention.

// PutAttemptOutcome keeps data (the outcome's JSON) under key; final false marks a checkpoint.
func (s *Store) PutAttemptOutcome(ctx context.Context, key string, data []byte, final bool) error {
	ref, err := s.PutContent(ctx, data)
	if err != nil {
		return err
	}
	f := 0
	if final {
		f = 1
	}
	now := ms(s.now())
	err = s.write(ctx, func(t *tx) error {
		_, err := t.exec(ctx, `INSERT INTO attempt_outcomes (key, ref, final, touched_ms) VALUES (?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET ref = excluded.ref, final = excluded.final, touched_ms = excluded.touched_ms`, key, ref, f, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("keeping the outcome of attempt %s: %w", key, err)
	}
	return nil
}

// GetAttemptOutcome returns what PutAttemptOutcome kept under key, and whether it was final;
// ErrNotFound when the attempt kept nothing.
func (s *Store) GetAttemptOutcome(ctx context.Context, key string) (data []byte, final bool, err error) {
	var ref string
	var f int
	err = s.queryRow(ctx, `SELECT ref, final FROM attempt_outcomes WHERE key = ?`, key).Scan(&ref, &f)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, ErrNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the outcome of attempt %s: %w", key, err)
	}
	data, err = s.GetContent(ctx, ref)
	return data, f == 1, err
}
