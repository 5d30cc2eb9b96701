package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// SecretKeyEnv names the variable holding the key that seals credential secrets at rest.
const SecretKeyEnv = "BATON_SECRET_KEY"

// SecretKeyNewEnv names the variable `baton auth rekey` reads the new key from (an environment
// variable rather than a flag, to keep the key out of shell history and the process list).
const SecretKeyNewEnv = "BATON_SECRET_KEY_NEW"

// sealedPrefix starts a sealed secret_json value: "aes256gcm:<key id>:<base64 nonce+ciphertext>".
// A plain value is a JSON object, so the two never look alike.
const sealedPrefix = "aes256gcm:"

// ErrSecretKey means the store holds secrets sealed under a key this process does not have.
var ErrSecretKey = errors.New("secret key mismatch")

// secretKey seals credential secrets with AES-256-GCM. Its id (a hash prefix of the key, which
// reveals nothing of it) is written with every row, so a row names the key it needs.
type secretKey struct {
	aead cipher.AEAD
	id   string
}

func newSecretKey(key []byte) (*secretKey, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("%s: want 32 bytes, got %d", SecretKeyEnv, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("baton secret key id\x00"), key...))
	return &secretKey{aead: aead, id: hex.EncodeToString(sum[:4])}, nil
}

// SecretKeyID is the id a key's rows carry (what an error about a missing key names).
func SecretKeyID(key []byte) (string, error) {
	k, err := newSecretKey(key)
	if err != nil {
		return "", err
	}
	return k.id, nil
}

// aad binds a sealed secret to its row: a value copied to another profile does not open.
func aad(agent, id string) []byte { return []byte("baton-secret\x00" + agent + "\x00" + id) }

// sealSecret turns a credential's JSON into what secret_json holds: sealed under k, or plain
// when the store has no key.
func sealSecret(k *secretKey, agent, id string, plain []byte) (string, error) {
	if k == nil {
		return string(plain), nil
	}
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return sealedPrefix + k.id + ":" + base64.StdEncoding.EncodeToString(k.aead.Seal(nonce, nonce, plain, aad(agent, id))), nil
}

// sealedKeyID is the key id a stored value was sealed under ("" for a plain value).
func sealedKeyID(stored string) string {
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}

// openSecret is sealSecret's inverse. Its errors name keys, never the secret.
func openSecret(k *secretKey, agent, id, stored string) ([]byte, error) {
	rest, sealed := strings.CutPrefix(stored, sealedPrefix)
	if !sealed {
		return []byte(stored), nil
	}
	keyID, data, _ := strings.Cut(rest, ":")
	if k == nil {
		return nil, fmt.Errorf("profile %q: its secret is sealed under key %s: set %s to that key (%w)", id, keyID, SecretKeyEnv, ErrSecretKey)
	}
	if keyID != k.id {
		return nil, fmt.Errorf("profile %q: its secret is sealed under key %s, %s is key %s (%w)", id, keyID, SecretKeyEnv, k.id, ErrSecretKey)
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) < k.aead.NonceSize() {
		return nil, fmt.Errorf("profile %q: sealed secret malformed", id)
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], aad(agent, id))
	if err != nil {
		return nil, fmt.Errorf("profile %q: sealed secret does not open under key %s (altered, or moved from another profile)", id, k.id)
	}
	return plain, nil
}

// checkSecretKeys refuses a store whose secrets are sealed under a key this process lacks,
// before anything is written (Open calls it ahead of the migrations), naming the keys needed.
func (s *Store) checkSecretKeys(ctx context.Context) error {
	exists, err := s.tableExists(ctx, "auth_profiles")
	if err != nil || !exists {
		return err
	}
	rows, err := s.query(ctx, `SELECT DISTINCT secret_json FROM auth_profiles WHERE secret_json LIKE 'aes256gcm:%'`)
	if err != nil {
		return err
	}
	defer rows.Close()
	need := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		if id := sealedKeyID(v); s.secret == nil || id != s.secret.id {
			need[id] = true
		}
	}
	if err := rows.Err(); err != nil || len(need) == 0 {
		return err
	}
	ids := make([]string, 0, len(need))
	for id := range need {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	have := "none is set"
	if s.secret != nil {
		have = "the one set is key " + s.secret.id
	}
	return fmt.Errorf("its credential secrets are sealed under key %s: set %s to that key (%s); nothing was written (%w)",
		strings.Join(ids, ", "), SecretKeyEnv, have, ErrSecretKey)
}

func (s *Store) tableExists(ctx context.Context, name string) (bool, error) {
	var n int
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if s.d.name == "postgres" {
		q = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`
	}
	if err := s.queryRow(ctx, q, name).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// SecretKeyID is the id of the key this store seals secrets with ("" when it has none).
func (s *Store) SecretKeyID() string {
	if s.secret == nil {
		return ""
	}
	return s.secret.id
}

// Rekey re-seals every stored secret under newKey, in one transaction: plain ones and those
// sealed under the store's current key. A secret that does not open fails the whole rekey, and
// nothing is written. From then on the store seals with newKey. It returns how many it re-sealed.
func (s *Store) Rekey(ctx context.Context, newKey []byte) (int, error) {
	next, err := newSecretKey(newKey)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.write(ctx, func(t *tx) error {
		rows, err := t.query(ctx, `SELECT agent, id, secret_json FROM auth_profiles ORDER BY agent, id`+t.d.lockRow)
		if err != nil {
			return err
		}
		type row struct{ agent, id, value string }
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.agent, &r.id, &r.value); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range all {
			plain, err := openSecret(s.secret, r.agent, r.id, r.value)
			if err != nil {
				return err
			}
			sealed, err := sealSecret(next, r.agent, r.id, plain)
			if err != nil {
				return err
			}
			if _, err := t.exec(ctx, `UPDATE auth_profiles SET secret_json = ? WHERE agent = ? AND id = ?`, sealed, r.agent, r.id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.secret = next
	return n, nil
}
