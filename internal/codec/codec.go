// Package codec encrypts workflow payloads with AES-GCM (BATON_PAYLOAD_KEY), so that prompts and
// answers are unreadable in the server's history. Off unless the key is set.
package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Metadata of an encrypted payload.
const (
	EncodingEncrypted = "binary/encrypted"
	metaKeyID         = "encryption-key-id"
)

// EnvKey names the environment variable that holds the key.
const EnvKey = "BATON_PAYLOAD_KEY"

// ParseKey reads a 32-byte key given as 64 hex digits or as base64.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	return nil, errors.New("want 32 bytes as 64 hex digits or base64 (e.g. `openssl rand -hex 32`)")
}

// Codec is an AES-256-GCM PayloadCodec.
type Codec struct {
	aead  cipher.AEAD
	keyID string
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a codec for a 32-byte key.
func New(key []byte) (*Codec, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(key)
	return &Codec{aead: aead, keyID: hex.EncodeToString(sum[:4])}, nil
}

// Encode encrypts each payload whole (metadata included).
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, c.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(EncodingEncrypted), metaKeyID: []byte(c.keyID)},
			Data:     c.aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// Decode decrypts the payloads this codec encrypted and passes others through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		if id := string(p.GetMetadata()[metaKeyID]); id != c.keyID {
			return nil, fmt.Errorf("payload encrypted with key %s, this codec has key %s", id, c.keyID)
		}
		n := c.aead.NonceSize()
		if len(p.GetData()) < n {
			return nil, errors.New("encrypted payload too short")
		}
		plain, err := c.aead.Open(nil, p.GetData()[:n], p.GetData()[n:], nil)
		if err != nil {
			return nil, fmt.Errorf("decrypting a payload: %w", err)
		}
		var dec commonpb.Payload
		if err := proto.Unmarshal(plain, &dec); err != nil {
			return nil, err
		}
		out[i] = &dec
	}
	return out, nil
}

// DataConverter is the default converter with encryption when key is non-empty.
func DataConverter(key string) (converter.DataConverter, error) {
	if key == "" {
		return nil, nil
	}
	k, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	c, err := New(k)
	if err != nil {
		return nil, err
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c), nil
}
