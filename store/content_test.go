package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

var (
	contentKeyA = bytes.Repeat([]byte{0xa1}, 32)
	contentKeyB = bytes.Repeat([]byte{0xb2}, 32)
)

// openContent opens url with a content key (nil: none) and a clock the test moves.
func openContent(t *testing.T, url string, key []byte, now *time.Time) *Store {
	t.Helper()
	s, err := Open(ctx, url, Options{LookupEnv: func(string) (string, bool) { return "", false }, ContentKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if now != nil {
		s.now = func() time.Time { return *now }
	}
	return s
}

// eachContentBackend runs fn against a fresh database of each backend; fn opens its stores.
func eachContentBackend(t *testing.T, fn func(t *testing.T, url string)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { fn(t, b.url) })
	}
}

// rawContent reads a content row as stored.
func rawContent(t *testing.T, s *Store, ref string) (data []byte, size, created, touched int64) {
	t.Helper()
	err := s.db.QueryRow(s.d.rebind(`SELECT data, size, created_ms, touched_ms FROM contents WHERE ref = ?`), ref).Scan(&data, &size, &created, &touched)
	if err != nil {
		t.Fatalf("row of %s: %v", ref, err)
	}
	return data, size, created, touched
}

func setRawContent(t *testing.T, s *Store, ref string, data []byte) {
	t.Helper()
	if _, err := s.db.Exec(s.d.rebind(`UPDATE contents SET data = ? WHERE ref = ?`), data, ref); err != nil {
		t.Fatal(err)
	}
}

func countContent(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM contents`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestContentRoundTripAndIdempotentPut(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		now := t0
		s := openContent(t, url, nil, &now)
		text := []byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}`)
		ref, err := s.PutContent(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(text)
		if ref != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("ref = %s, want the content's sha256", ref)
		}
		got, err := s.GetContent(ctx, ref)
		if err != nil || !bytes.Equal(got, text) {
			t.Fatalf("get = %q, %v", got, err)
		}

		// The same content again: the same ref, one row, its touched time refreshed.
		now = t0.Add(time.Hour)
		again, err := s.PutContent(ctx, append([]byte(nil), text...))
		if err != nil || again != ref {
			t.Fatalf("second put = %s, %v; want %s", again, err, ref)
		}
		if n := countContent(t, s); n != 1 {
			t.Errorf("%d rows after putting the same content twice", n)
		}
		data, size, created, touched := rawContent(t, s, ref)
		if !bytes.Equal(data, text) || size != int64(len(text)) || created != ms(t0) || touched != ms(t0.Add(time.Hour)) {
			t.Errorf("row: %q size %d created %v touched %v", data, size, fromMS(created), fromMS(touched))
		}

		// Empty content is content.
		empty, err := s.PutContent(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetContent(ctx, empty); err != nil || got == nil || len(got) != 0 {
			t.Errorf("empty content = %#v, %v", got, err)
		}
	})
}

func TestContentNotFoundAndBadRefs(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, nil, nil)
		missing := "sha256:" + strings.Repeat("ab", 32)
		_, err := s.GetContent(ctx, missing)
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "retention") || !strings.Contains(err.Error(), missing) {
			t.Errorf("missing content: %v", err)
		}
		for _, ref := range []string{"", "md5:abc", "sha256:xyz", "sha256:" + strings.Repeat("AB", 32), "hmac:" + strings.Repeat("ab", 31)} {
			if _, err := s.GetContent(ctx, ref); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "content ref") {
				t.Errorf("ref %q: %v", ref, err)
			}
		}
	})
}

func TestSealedContent(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, contentKeyA, nil)
		secret := []byte("the patient's diagnosis is confidential; " + strings.Repeat("lorem ipsum ", 20))
		ref, err := s.PutContent(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(secret)
		if !strings.HasPrefix(ref, "hmac:") || strings.Contains(ref, hex.EncodeToString(sum[:])) {
			t.Errorf("a keyed ref %s should not be the content's sha256", ref)
		}
		if plainRef, _ := openContent(t, url, nil, nil).PutContent(ctx, []byte("x")); plainRef == s.contentRef([]byte("x")) {
			t.Error("a keyed ref equals the plain one")
		}
		data, size, _, _ := rawContent(t, s, ref)
		if bytes.Contains(data, secret[:20]) || bytes.Contains(data, []byte("lorem ipsum")) || size != int64(len(secret)) {
			t.Errorf("the row carries the plaintext (or a wrong size %d)", size)
		}
		if data[0] != sealVersion || len(data) != sealHeader+12+len(secret)+16 {
			t.Errorf("sealed row: version %d, %d bytes", data[0], len(data))
		}
		got, err := s.GetContent(ctx, ref)
		if err != nil || !bytes.Equal(got, secret) {
			t.Fatalf("get with the key = %q, %v", got, err)
		}
		// The same content again: the same ref (sealing is randomized, the ref is not), one row.
		if again, err := s.PutContent(ctx, secret); err != nil || again != ref {
			t.Errorf("second put = %s, %v", again, err)
		}
		if again, _ := openContent(t, url, contentKeyA, nil).PutContent(ctx, secret); again != ref {
			t.Error("another store with the same key names the content differently")
		}

		// Without the key, or with another: a clear error, never garbage.
		_, err = openContent(t, url, nil, nil).GetContent(ctx, ref)
		if !errors.Is(err, ErrContentEncrypted) || !strings.Contains(err.Error(), "BATON_PAYLOAD_KEY") || !strings.Contains(err.Error(), ref) {
			t.Errorf("without the key: %v", err)
		}
		_, err = openContent(t, url, contentKeyB, nil).GetContent(ctx, ref)
		if !errors.Is(err, ErrContentWrongKey) || !strings.Contains(err.Error(), hex.EncodeToString(s.content.id[:])) {
			t.Errorf("with another key: %v", err)
		}
		for _, k := range [][]byte{contentKeyA, contentKeyB} {
			if strings.Contains(err.Error(), hex.EncodeToString(k)[:16]) {
				t.Errorf("an error carries a key: %v", err)
			}
		}

		// Content put before the key was set still reads with it.
		plain := openContent(t, url, nil, nil)
		plainRef, err := plain.PutContent(ctx, []byte("from before the key"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetContent(ctx, plainRef); err != nil || string(got) != "from before the key" {
			t.Errorf("plain content through a keyed store = %q, %v", got, err)
		}
	})
}

func TestContentKeyMustBe32Bytes(t *testing.T) {
	_, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "k.db"), Options{ContentKey: []byte("sixteen byte key")})
	if err == nil || !strings.Contains(err.Error(), "32 bytes") || strings.Contains(err.Error(), "sixteen") {
		t.Errorf("a 16-byte key: %v", err)
	}
}

func TestCorruptedContentIsDetected(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		plain := openContent(t, url, nil, nil)
		sealed := openContent(t, url, contentKeyA, nil)
		for name, s := range map[string]*Store{"plain": plain, "sealed": sealed} {
			ref, err := s.PutContent(ctx, []byte(name+" content, soon damaged"))
			if err != nil {
				t.Fatal(err)
			}
			data, _, _, _ := rawContent(t, s, ref)
			damaged := append([]byte(nil), data...)
			damaged[len(damaged)-1] ^= 1
			setRawContent(t, s, ref, damaged)
			if got, err := s.GetContent(ctx, ref); !errors.Is(err, ErrContentCorrupt) || got != nil {
				t.Errorf("%s: a flipped bit: %q, %v", name, got, err)
			}
			setRawContent(t, s, ref, data[:3])
			if _, err := s.GetContent(ctx, ref); !errors.Is(err, ErrContentCorrupt) {
				t.Errorf("%s: a truncated row: %v", name, err)
			}
		}
		// A sealed row copied under another ref does not open: the ref is bound into the seal.
		a, _ := sealed.PutContent(ctx, []byte("content a"))
		b, _ := sealed.PutContent(ctx, []byte("content b"))
		rowA, _, _, _ := rawContent(t, sealed, a)
		setRawContent(t, sealed, b, rowA)
		if got, err := sealed.GetContent(ctx, b); !errors.Is(err, ErrContentCorrupt) {
			t.Errorf("a's row under b's ref: %q, %v", got, err)
		}
	})
}

func TestDeleteContentBefore(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		now := t0
		s := openContent(t, url, nil, &now)
		old, _ := s.PutContent(ctx, []byte("old, never put again"))
		reused, _ := s.PutContent(ctx, []byte("old, but put again later"))
		now = t0.Add(48 * time.Hour)
		if again, err := s.PutContent(ctx, []byte("old, but put again later")); err != nil || again != reused {
			t.Fatal(again, err)
		}
		fresh, _ := s.PutContent(ctx, []byte("new"))

		if n, err := s.DeleteContentBefore(ctx, time.Time{}); err != nil || n != 0 {
			t.Errorf("a zero cutoff deleted %d, %v", n, err)
		}
		n, err := s.DeleteContentBefore(ctx, t0.Add(24*time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("deleted %d, %v; want 1", n, err)
		}
		if _, err := s.GetContent(ctx, old); !errors.Is(err, ErrNotFound) {
			t.Errorf("old content: %v", err)
		}
		for _, ref := range []string{reused, fresh} {
			if _, err := s.GetContent(ctx, ref); err != nil {
				t.Errorf("%s was deleted: %v", ref, err)
			}
		}
		// The cutoff is exclusive, and deleting again finds nothing.
		if n, err := s.DeleteContentBefore(ctx, t0.Add(48*time.Hour)); err != nil || n != 0 {
			t.Errorf("at the touched time itself: deleted %d, %v", n, err)
		}
		// Deleted content put again is stored again.
		if _, err := s.PutContent(ctx, []byte("old, never put again")); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetContent(ctx, old); err != nil || string(got) != "old, never put again" {
			t.Errorf("put after delete = %q, %v", got, err)
		}
	})
}

func TestLargeContent(t *testing.T) {
	if testing.Short() {
		t.Skip("12 MB blobs")
	}
	blob := make([]byte, 12<<20)
	rng := rand.NewChaCha8([32]byte{7})
	_, _ = rng.Read(blob)
	eachContentBackend(t, func(t *testing.T, url string) {
		for _, key := range [][]byte{nil, contentKeyA} {
			s := openContent(t, url, key, nil)
			ref, err := s.PutContent(ctx, blob)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := s.PutContent(ctx, blob); err != nil || again != ref {
				t.Fatalf("second put of 12 MB = %s, %v", again, err)
			}
			got, err := s.GetContent(ctx, ref)
			if err != nil || !bytes.Equal(got, blob) {
				t.Fatalf("12 MB (key %v): %d bytes back, %v", key != nil, len(got), err)
			}
		}
		if path, ok := strings.CutPrefix(url, "sqlite://"); ok {
			for _, p := range []string{path, path + "-wal"} {
				info, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if mode := info.Mode().Perm(); mode != 0o600 {
					t.Errorf("%s: mode %v, want 0600", filepath.Base(p), mode)
				}
			}
		}
	})
}

func TestConcurrentPutsOfTheSameContent(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, contentKeyA, nil)
		data := bytes.Repeat([]byte("a turn "), 50000)
		const n = 12
		refs := make(chan string, n)
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			go func() {
				ref, err := s.PutContent(ctx, data)
				refs <- ref
				errs <- err
			}()
		}
		first := ""
		for i := 0; i < n; i++ {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			if ref := <-refs; first == "" {
				first = ref
			} else if ref != first {
				t.Errorf("refs differ: %s, %s", first, ref)
			}
		}
		if c := countContent(t, s); c != 1 {
			t.Errorf("%d rows after %d concurrent puts", c, n)
		}
		if got, err := s.GetContent(ctx, first); err != nil || !bytes.Equal(got, data) {
			t.Errorf("get: %d bytes, %v", len(got), err)
		}
	})
}

func TestAVersion1DatabaseGainsContents(t *testing.T) {
	eachContentBackend(t, func(t *testing.T, url string) {
		s := openContent(t, url, nil, nil)
		if _, err := s.SetUserModel(ctx, "s1", "main", policyRef, "", t0); err != nil {
			t.Fatal(err)
		}
		// Back to what a version-1 baton wrote: every table a later migration made goes.
		var back []string
		for _, m := range migrations[1:] {
			for _, stmt := range m {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(stmt), "CREATE TABLE "); ok {
					back = append(back, "DROP TABLE "+strings.Fields(rest)[0])
				}
			}
		}
		for _, q := range append(back, `UPDATE schema_version SET version = 1`) {
			if _, err := s.db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		s = openContent(t, url, nil, nil)
		var v int
		if err := s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil || v != SchemaVersion() || v < 2 {
			t.Fatalf("version %d, %v", v, err)
		}
		if sess, err := s.GetSession(ctx, "s1"); err != nil || sess.Model.ModelOverride != policyRef.Model {
			t.Errorf("the session did not survive: %+v, %v", sess.Model, err)
		}
		ref, err := s.PutContent(ctx, []byte("after the upgrade"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetContent(ctx, ref); err != nil || string(got) != "after the upgrade" {
			t.Errorf("get = %q, %v", got, err)
		}
	})
}

var policyRef = policy.ModelRef{Provider: "openai", Model: "gpt-5"}

// TestContentErrorMessages shows the messages an operator reads (go test -v -run Messages).
func TestContentErrorMessages(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "m.db")
	s := openContent(t, url, contentKeyA, nil)
	ref, _ := s.PutContent(ctx, []byte("x"))
	_, noKey := openContent(t, url, nil, nil).GetContent(ctx, ref)
	_, wrongKey := openContent(t, url, contentKeyB, nil).GetContent(ctx, ref)
	_, missing := s.GetContent(ctx, "sha256:"+strings.Repeat("0", 64))
	row, _, _, _ := rawContent(t, s, ref)
	row[len(row)-1] ^= 1
	setRawContent(t, s, ref, row)
	_, corrupt := s.GetContent(ctx, ref)
	for _, err := range []error{noKey, wrongKey, missing, corrupt} {
		if err == nil {
			t.Fatal("no error")
		}
		t.Log(err)
	}
}
