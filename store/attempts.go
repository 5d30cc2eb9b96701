package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// An attempt's outcome (or a checkpoint of its streamed answer so far) is kept under the attempt's
// identity before the attempt reports to Temporal, so that an attempt run again after a lost worker
// or an unreachable server returns what the first run bought instead of calling the provider
// again. The record itself is content (sealed under BATON_PAYLOAD_KEY like a turn); the row maps
// the identity to it, and goes with the content retention.

// PutAttemptOutcome keeps data (the outcome's JSON) under key; final false marks a checkpoint.
func (s *Store) PutAttemptOutcome(ctx context.Context, key string, data []byte, final bool) error {
	f := 0
	if final {
		f = 1
	}
	err := s.Together(ctx, func(ctx context.Context) error {
		ref, err := s.PutContent(ctx, data)
		if err != nil {
			return err
		}
		return s.write(ctx, func(t *tx) error {
			_, err := t.exec(ctx, `INSERT INTO attempt_outcomes (key, ref, final, touched_ms) VALUES (?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET ref = excluded.ref, final = excluded.final, touched_ms = excluded.touched_ms`, key, ref, f, ms(s.now()))
			return err
		})
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

// KeptOutcome is one attempt's kept record, as KeptOutcomes lists it.
type KeptOutcome struct {
	Key   string
	Final bool
	// At is when it was last written.
	At   time.Time
	Data []byte
}

// KeptOutcomes lists the attempt records written at or after since, oldest first: what an
// audit (baton chaos) compares with the provider calls that followed them.
func (s *Store) KeptOutcomes(ctx context.Context, since time.Time) ([]KeptOutcome, error) {
	rows, err := s.query(ctx, `SELECT key, ref, final, touched_ms FROM attempt_outcomes WHERE touched_ms >= ? ORDER BY touched_ms, key`, ms(since))
	if err != nil {
		return nil, fmt.Errorf("listing kept attempt outcomes: %w", err)
	}
	type row struct {
		k   KeptOutcome
		ref string
	}
	var list []row
	for rows.Next() {
		var r row
		var f int
		var at int64
		if err := rows.Scan(&r.k.Key, &r.ref, &f, &at); err != nil {
			rows.Close()
			return nil, fmt.Errorf("listing kept attempt outcomes: %w", err)
		}
		r.k.Final, r.k.At = f == 1, time.UnixMilli(at)
		list = append(list, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing kept attempt outcomes: %w", err)
	}
	out := make([]KeptOutcome, 0, len(list))
	for _, r := range list {
		data, err := s.GetContent(ctx, r.ref)
		if err != nil {
			return nil, fmt.Errorf("reading the kept outcome of attempt %s: %w", r.k.Key, err)
		}
		r.k.Data = data
		out = append(out, r.k)
	}
	return out, nil
}
