package store

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func rawResponse(t *testing.T, s *Store, id string) (row []byte, size, created int64) {
	t.Helper()
	if err := s.db.QueryRow(s.d.rebind(`SELECT data, size, created_ms FROM responses WHERE id = ?`), id).Scan(&row, &size, &created); err != nil {
		t.Fatalf("row of %s: %v", id, err)
	}
	return row, size, created
}

func TestResponsesPutGetAndNotFound(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		for name, key := range map[string][]byte{"plain": nil, "sealed": contentKeyA} {
			t.Run(name, func(t *testing.T) {
				s := openContent(t, url, key, nil)
				id := "resp_" + name
				// A background reply's identity first, its output when it ends.
				started := []byte(`{"workflow":"wf-1","run":"run-1","model":"openai/gpt-5","input":[{"role":"user","content":"hi"}]}`)
				if err := s.PutResponse(ctx, id, started, t0); err != nil {
					t.Fatal(err)
				}
				if got, err := s.GetResponse(ctx, id); err != nil || !bytes.Equal(got, started) {
					t.Fatalf("get = %q, %v", got, err)
				}
				done := append(bytes.TrimSuffix(started, []byte("}")), `,"output":[{"type":"message","content":"hello"}]}`...)
				if err := s.PutResponse(ctx, id, done, t0); err != nil {
					t.Fatal(err)
				}
				if got, err := s.GetResponse(ctx, id); err != nil || !bytes.Equal(got, done) {
					t.Errorf("get after the second put = %q, %v", got, err)
				}
				if _, size, created := rawResponse(t, s, id); size != int64(len(done)) || created != ms(t0) {
					t.Errorf("row: size %d, created %v", size, fromMS(created))
				}
				if err := s.PutResponse(ctx, id+"-empty", nil, t0); err != nil {
					t.Fatal(err)
				}
				if got, err := s.GetResponse(ctx, id+"-empty"); err != nil || got == nil || len(got) != 0 {
					t.Errorf("an empty record = %#v, %v", got, err)
				}

				_, err := s.GetResponse(ctx, "resp_missing")
				if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "resp_missing") {
					t.Errorf("a missing id: %v", err)
				}
				if err := s.PutResponse(ctx, "", started, t0); err == nil || !strings.Contains(err.Error(), "id is empty") {
					t.Errorf("no id: %v", err)
				}
			})
		}
	})
}

func TestResponsesAreSealed(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, contentKeyA, nil)
		secret := []byte(`{"input":"the patient's diagnosis is confidential"}`)
		for _, id := range []string{"resp_a", "resp_b"} {
			if err := s.PutResponse(ctx, id, secret, t0); err != nil {
				t.Fatal(err)
			}
		}
		rowA, _, _ := rawResponse(t, s, "resp_a")
		if bytes.Contains(rowA, []byte("diagnosis")) || rowA[0] != sealVersion {
			t.Errorf("the row carries the plaintext, or is not sealed: %q", rowA)
		}
		// a's row under b's id does not open, though both hold the same record.
		if _, err := s.db.Exec(s.d.rebind(`UPDATE responses SET data = ? WHERE id = ?`), rowA, "resp_b"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetResponse(ctx, "resp_b"); !errors.Is(err, ErrContentCorrupt) || got != nil {
			t.Errorf("a's row under b's id: %q, %v", got, err)
		}
		if _, err := openContent(t, url, nil, nil).GetResponse(ctx, "resp_a"); !errors.Is(err, ErrContentEncrypted) || !strings.Contains(err.Error(), "response resp_a") {
			t.Errorf("without the key: %v", err)
		}
		if _, err := openContent(t, url, contentKeyB, nil).GetResponse(ctx, "resp_a"); !errors.Is(err, ErrContentWrongKey) {
			t.Errorf("with another key: %v", err)
		}
		if err := openContent(t, url, nil, nil).PutResponse(ctx, "resp_plain", secret, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetResponse(ctx, "resp_plain"); !errors.Is(err, ErrContentUnsealed) {
			t.Errorf("a plain row through a keyed store: %v", err)
		}
	})
}

func TestRetentionDeletesExpiredResponses(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		now := t0.Add(48 * time.Hour)
		s := openContent(t, url, contentKeyA, &now)
		if err := s.PutResponse(ctx, "resp_old", []byte(`{"old":true}`), t0); err != nil {
			t.Fatal(err)
		}
		if err := s.PutResponse(ctx, "resp_new", []byte(`{"new":true}`), t0.Add(47*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutResponse(ctx, "resp_now", []byte(`{"now":true}`), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteContentBefore(ctx, t0.Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetResponse(ctx, "resp_old"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "retention") {
			t.Errorf("an expired response: %v", err)
		}
		for _, id := range []string{"resp_new", "resp_now"} {
			if _, err := s.GetResponse(ctx, id); err != nil {
				t.Errorf("%s: %v", id, err)
			}
		}
		if _, _, created := rawResponse(t, s, "resp_now"); created != ms(now) {
			t.Errorf("a zero creation time is stored as %v, want now", fromMS(created))
		}
	})
}

func TestResponseSizeIsBounded(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, nil, nil)
		err := s.PutResponse(ctx, "resp_big", make([]byte, MaxResponseBytes+1), t0)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("limit of %d bytes (MaxResponseBytes)", MaxResponseBytes)) {
			t.Errorf("over the limit: %v", err)
		}
		if _, err := s.GetResponse(ctx, "resp_big"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a refused response was stored: %v", err)
		}
	})
}
