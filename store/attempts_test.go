package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAnAttemptsOutcomeIsKeptUnderItsIdentity(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		{
			ctx := context.Background()
			if _, _, err := s.GetAttemptOutcome(ctx, "wf/run/1"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("an attempt that kept nothing: %v", err)
			}
			if err := s.PutAttemptOutcome(ctx, "wf/run/1", []byte(`{"partial":"The quick"}`), false); err != nil {
				t.Fatal(err)
			}
			if data, final, err := s.GetAttemptOutcome(ctx, "wf/run/1"); err != nil || final || string(data) != `{"partial":"The quick"}` {
				t.Fatalf("checkpoint: %s %v %v", data, final, err)
			}
			if err := s.PutAttemptOutcome(ctx, "wf/run/1", []byte(`{"ok":true,"text":"The quick brown fox"}`), true); err != nil {
				t.Fatal(err)
			}
			if data, final, err := s.GetAttemptOutcome(ctx, "wf/run/1"); err != nil || !final || string(data) != `{"ok":true,"text":"The quick brown fox"}` {
				t.Fatalf("outcome: %s %v %v", data, final, err)
			}
			if _, err := s.DeleteContentBefore(ctx, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.GetAttemptOutcome(ctx, "wf/run/1"); !errors.Is(err, ErrNotFound) {
				t.Errorf("an outcome past the retention stays: %v", err)
			}
		}
	})
}
