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

func TestKeptOutcomesListWhatWasWrittenSince(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		start := time.Now().Add(-time.Second)
		_ = s.PutAttemptOutcome(ctx, "wf/a/1", []byte(`{"partial":"An"}`), false)
		_ = s.PutAttemptOutcome(ctx, "wf/b/1", []byte(`{"ok":true,"text":"Two"}`), true)
		list, err := s.KeptOutcomes(ctx, start)
		if err != nil || len(list) != 2 {
			t.Fatalf("%+v %v", list, err)
		}
		byKey := map[string]KeptOutcome{}
		for _, k := range list {
			byKey[k.Key] = k
		}
		if a, b := byKey["wf/a/1"], byKey["wf/b/1"]; a.Final || string(a.Data) != `{"partial":"An"}` || !b.Final || string(b.Data) != `{"ok":true,"text":"Two"}` || b.At.Before(start) {
			t.Errorf("%+v", byKey)
		}
		if later, err := s.KeptOutcomes(ctx, time.Now().Add(time.Minute)); err != nil || len(later) != 0 {
			t.Errorf("since a later time: %+v %v", later, err)
		}
	})
}
