package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

func TestWritesTogetherLandTogetherOrNotAtAll(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
		spend := func(key string) SpendRow {
			return SpendRow{Key: key, Reply: "wf", Agent: "main", Provider: "openai", Model: "gpt-5", At: at,
				Spend: policy.Spend{Input: 10, Output: 20, Cost: 0.5, Priced: true}}
		}
		spent := func() float64 {
			sp, err := s.SpentOn(ctx, "main", "", at)
			if err != nil {
				t.Fatal(err)
			}
			return sp.Cost
		}

		// Both land.
		err := s.Together(ctx, func(ctx context.Context) error {
			if err := s.RecordSpend(ctx, spend("wf/1")); err != nil {
				return err
			}
			return s.PutAttemptOutcome(ctx, "wf/1", []byte(`{"ok":true}`), true)
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, final, err := s.GetAttemptOutcome(ctx, "wf/1"); err != nil || !final || spent() != 0.5 {
			t.Fatalf("after a transaction that succeeded: final %v, %v, spent %v", final, err, spent())
		}

		// A failed write rolls back the one before it, even when its caller carries on.
		err = s.Together(ctx, func(ctx context.Context) error {
			if err := s.RecordSpend(ctx, spend("wf/2")); err != nil {
				return err
			}
			_, _ = s.UpdateSession(ctx, "s1", "main", at, func(*Session) error { return errors.New("refused") }) // error ignored
			_, err := s.RecordOutcome(ctx, "main", "openai:a", func(p policy.ProfileStats) policy.ProfileStats {
				return policy.RecordSuccess(p, "gpt-5", at)
			})
			return err
		})
		if err == nil || err.Error() != "refused" {
			t.Fatalf("a transaction with a failed write: %v, want the write's error", err)
		}
		if spent() != 0.5 {
			t.Errorf("a transaction with a failed write landed its spend: spent %v", spent())
		}
		if st, err := s.Stats(ctx, "main", "openai:a"); err != nil || !st.LastUsed.IsZero() {
			t.Errorf("a transaction with a failed write landed its stats: %+v %v", st, err)
		}

		// ErrUnchanged writes nothing, and fails nothing.
		err = s.Together(ctx, func(ctx context.Context) error {
			if _, err := s.UpdateSession(ctx, "s1", "main", at, func(*Session) error { return ErrUnchanged }); err != nil {
				return err
			}
			return s.RecordSpend(ctx, spend("wf/3"))
		})
		if err != nil || spent() != 1.0 {
			t.Errorf("an unchanged session beside a spend: %v, spent %v", err, spent())
		}

		// fn's own error rolls back every write.
		boom := errors.New("boom")
		if err := s.Together(ctx, func(ctx context.Context) error {
			if err := s.RecordSpend(ctx, spend("wf/4")); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) || spent() != 1.0 {
			t.Errorf("fn failed: %v, spent %v", err, spent())
		}
	})
}

// SQLite's reads are prepared once and kept, up to a bound (a query built from a filter may be
// new each time); what is past it still runs.
func TestReadsArePreparedOnceUpToABound(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		for round := range 2 {
			for i := range maxStatements + 20 {
				var got int
				if err := s.queryRow(ctx, fmt.Sprintf("SELECT %d + ?", i), 1).Scan(&got); err != nil || got != i+1 {
					t.Fatalf("round %d, query %d: %d %v", round, i, got, err)
				}
			}
		}
		want := int32(maxStatements)
		if s.d.name != "sqlite" {
			want = 0 // pgx keeps its own
		}
		if n := s.stmts.n.Load(); n != want {
			t.Errorf("%d statements kept, want %d", n, want)
		}
		s.closeStatements()
		left := 0
		s.stmts.m.Range(func(any, any) bool { left++; return true })
		if left != 0 {
			t.Errorf("%d statements kept after closing them", left)
		}
	})
}
