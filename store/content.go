package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Turn content by reference. Temporal refuses payloads over 2 MB (and warns at 512 KB), yet a turn
// can carry a long conversation or a 10 MB image; so its content lives here, content-addressed, and
// workflow inputs and activity arguments carry only the ref. The starter puts it, the worker's
// attempt gets it, and the worker deletes content untouched for longer than the retention.
//
// A ref is "sha256:<hex>" of the content, or, with a content key, "hmac:<hex>" of an HMAC-SHA256
// under a key derived from it, so that a ref in a workflow's history reveals nothing about the
// content (not even whether two stores hold the same text). The scheme of the ref also says how the
// row is stored: sha256 rows hold the plaintext, hmac rows hold it sealed:
//
//	version (1 byte) | key id (4 bytes: sha256(key)[:4], as the payload codec) | nonce (12) | AES-256-GCM ciphertext
//
// with the header and the ref as additional data, so a row copied under another ref does not open.

// Ref schemes.
const (
	RefSHA256 = "sha256:"
	RefHMAC   = "hmac:"
)

const (
	sealVersion = 1
	keyIDLen    = 4
	sealHeader  = 1 + keyIDLen
)

// Why content that exists cannot be returned. GetContent wraps them with the ref.
var (
	// ErrContentEncrypted: the content is sealed and this store has no key.
	ErrContentEncrypted = errors.New("encrypted: set BATON_PAYLOAD_KEY")
	// ErrContentWrongKey: the content is sealed with a key other than this store's.
	ErrContentWrongKey = errors.New("encrypted with another key")
	// ErrContentCorrupt: the stored bytes do not give back the content the ref names.
	ErrContentCorrupt = errors.New("corrupted")
)

// contentKey holds what is derived from BATON_PAYLOAD_KEY for content.
type contentKey struct {
	aead cipher.AEAD // sealing, under HMAC-SHA256(key, "baton content seal")
	ref  []byte      // HMAC key of refs: HMAC-SHA256(key, "baton content ref")
	id   [keyIDLen]byte
}

func newContentKey(key []byte) (*contentKey, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("content key: want 32 bytes, got %d", len(key)) // never echo the key
	}
	block, err := aes.NewCipher(deriveKey(key, "baton content seal"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	k := &contentKey{aead: aead, ref: deriveKey(key, "baton content ref")}
	sum := sha256.Sum256(key)
	copy(k.id[:], sum[:keyIDLen])
	return k, nil
}

// deriveKey gives each use of the content key its own sub-key.
func deriveKey(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// contentRef names data: its keyed HMAC with a key, its SHA-256 without.
func (s *Store) contentRef(data []byte) string {
	if s.content == nil {
		sum := sha256.Sum256(data)
		return RefSHA256 + hex.EncodeToString(sum[:])
	}
	m := hmac.New(sha256.New, s.content.ref)
	m.Write(data)
	return RefHMAC + hex.EncodeToString(m.Sum(nil))
}

// PutContent stores data and returns its ref. Putting content already stored writes nothing but
// its touched time, so content still in use outlives the retention; it is idempotent.
func (s *Store) PutContent(ctx context.Context, data []byte) (ref string, err error) {
	if data == nil {
		data = []byte{} // NULL is not content
	}
	ref = s.contentRef(data)
	now := ms(s.now())
	err = s.write(ctx, func(t *tx) error {
		res, err := t.exec(ctx, `UPDATE contents SET touched_ms = ? WHERE ref = ?`, now, ref)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		row, err := s.seal(ref, data)
		if err != nil {
			return err
		}
		// DO NOTHING: a concurrent put of the same content (PostgreSQL) has just written it.
		_, err = t.exec(ctx, `INSERT INTO contents (ref, data, size, created_ms, touched_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING`,
			ref, row, int64(len(data)), now, now)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("storing content %s: %w", ref, err)
	}
	return ref, nil
}

// seal returns the row of data: the plaintext for a sha256 ref, sealed for an hmac ref.
func (s *Store) seal(ref string, data []byte) ([]byte, error) {
	if !strings.HasPrefix(ref, RefHMAC) {
		return data, nil
	}
	return s.content.sealRow(ref, data)
}

// sealRow seals data with the row's header and name as additional data, so that a row copied
// under another name does not open. Content rows are named by their ref; the reply log's and
// stored responses' rows by names of their own (replylog.go), which never look like a ref.
func (k *contentKey) sealRow(name string, data []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	row := make([]byte, sealHeader+n, sealHeader+n+len(data)+k.aead.Overhead())
	row[0] = sealVersion
	copy(row[1:sealHeader], k.id[:])
	if _, err := rand.Read(row[sealHeader:]); err != nil {
		return nil, err
	}
	return k.aead.Seal(row, row[sealHeader:], data, sealAD(row[:sealHeader], name)), nil
}

func sealAD(header []byte, name string) []byte {
	return append(append([]byte(nil), header...), name...)
}

// GetContent returns the content a ref names, checked against the ref. Content that is gone is
// ErrNotFound; content that is there but cannot be read is ErrContentEncrypted (no key),
// ErrContentWrongKey or ErrContentCorrupt, never garbage.
func (s *Store) GetContent(ctx context.Context, ref string) ([]byte, error) {
	scheme, sum, err := parseContentRef(ref)
	if err != nil {
		return nil, err
	}
	var row []byte
	err = s.queryRow(ctx, `SELECT data FROM contents WHERE ref = ?`, ref).Scan(&row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("content %s: %w (it may have passed its retention)", ref, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading content %s: %w", ref, err)
	}
	if scheme == RefSHA256 {
		got := sha256.Sum256(row)
		if !hmac.Equal(got[:], sum) {
			return nil, fmt.Errorf("content %s is %w: its bytes do not match its ref", ref, ErrContentCorrupt)
		}
		if row == nil {
			row = []byte{}
		}
		return row, nil
	}
	return s.open(ref, sum, row)
}

// open unseals the row of an hmac ref.
func (s *Store) open(ref string, sum, row []byte) ([]byte, error) {
	k := s.content
	plain, err := k.openRow("content "+ref, ref, row)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, k.ref)
	m.Write(plain)
	if !hmac.Equal(m.Sum(nil), sum) {
		// The row decrypts but is not this ref's content: only a key-id collision gets here.
		return nil, fmt.Errorf("content %s is %w: its bytes do not match its ref", ref, ErrContentCorrupt)
	}
	if plain == nil {
		plain = []byte{}
	}
	return plain, nil
}

// openRow opens a row sealRow sealed under name; what names the row in errors. A nil key (no
// BATON_PAYLOAD_KEY) is ErrContentEncrypted.
func (k *contentKey) openRow(what, name string, row []byte) ([]byte, error) {
	if len(row) < sealHeader {
		return nil, fmt.Errorf("%s is %w: %d bytes, shorter than a sealed header", what, ErrContentCorrupt, len(row))
	}
	if row[0] != sealVersion {
		return nil, fmt.Errorf("%s is %w: unknown seal version %d", what, ErrContentCorrupt, row[0])
	}
	id := row[1:sealHeader]
	if k == nil {
		return nil, fmt.Errorf("%s is %w (sealed with key %x)", what, ErrContentEncrypted, id)
	}
	if !hmac.Equal(id, k.id[:]) {
		return nil, fmt.Errorf("%s is %w: sealed with key %x, BATON_PAYLOAD_KEY is key %x", what, ErrContentWrongKey, id, k.id)
	}
	n := k.aead.NonceSize()
	if len(row) < sealHeader+n+k.aead.Overhead() {
		return nil, fmt.Errorf("%s is %w: %d bytes, shorter than a sealed row", what, ErrContentCorrupt, len(row))
	}
	plain, err := k.aead.Open(nil, row[sealHeader:sealHeader+n], row[sealHeader+n:], sealAD(row[:sealHeader], name))
	if err != nil {
		return nil, fmt.Errorf("%s is %w: it does not decrypt", what, ErrContentCorrupt)
	}
	return plain, nil
}

// parseContentRef splits a ref into its scheme and its 32-byte digest.
func parseContentRef(ref string) (scheme string, sum []byte, err error) {
	var rest string
	switch {
	case strings.HasPrefix(ref, RefSHA256):
		scheme, rest = RefSHA256, ref[len(RefSHA256):]
	case strings.HasPrefix(ref, RefHMAC):
		scheme, rest = RefHMAC, ref[len(RefHMAC):]
	default:
		return "", nil, fmt.Errorf("content ref %q: want sha256:<64 hex digits> or hmac:<64 hex digits>", ref)
	}
	sum, err = hex.DecodeString(rest)
	if err != nil || len(sum) != sha256.Size || hex.EncodeToString(sum) != rest {
		return "", nil, fmt.Errorf("content ref %q: want %s<64 lower-case hex digits>", ref, scheme)
	}
	return scheme, sum, nil
}

// DeleteContentBefore deletes the content last put before cutoff and returns how many it deleted.
// What lives under the same retention goes with it: attempts' outcomes, reply logs last written
// before cutoff (each log whole, so a reader never finds one with its start missing) and responses
// created before it.
func (s *Store) DeleteContentBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(t *tx) error {
		for _, q := range []string{
			`DELETE FROM attempt_outcomes WHERE touched_ms < ?`,
			`DELETE FROM reply_log_batches WHERE reply IN (SELECT reply FROM reply_logs WHERE touched_ms < ?)`,
			`DELETE FROM reply_logs WHERE touched_ms < ?`,
			`DELETE FROM responses WHERE created_ms < ?`,
		} {
			if _, err := t.exec(ctx, q, ms(cutoff)); err != nil {
				return err
			}
		}
		res, err := t.exec(ctx, `DELETE FROM contents WHERE touched_ms < ?`, ms(cutoff))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("deleting content before %s: %w", cutoff.UTC().Format(time.RFC3339), err)
	}
	return n, nil
}
