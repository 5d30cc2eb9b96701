// Package codec encrypts workflow payloads with AES-GCM (BATON_PAYLOAD_KEY), so that prompts,
// answers and failure messages are unreadable in the server's history. Off unless the key is set.
// Old keys (BATON_PAYLOAD_KEYS) still decrypt what they encrypted, so a key can be rotated
// without losing the histories written before.
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
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Metadata of an encrypted payload.
const (
	EncodingEncrypted = "binary/encrypted"
	metaKeyID         = "encryption-key-id"
)

// EnvKey names the environment variable that holds the key new payloads are encrypted with.
const EnvKey = "BATON_PAYLOAD_KEY"

// EnvOldKeys names the variable holding earlier keys (comma-separated), which only decrypt.
const EnvOldKeys = "BATON_PAYLOAD_KEYS"

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

type aeadKey struct {
	aead cipher.AEAD
	id   string
}

func newKey(key []byte) (*aeadKey, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(key)
	return &aeadKey{aead: aead, id: hex.EncodeToString(sum[:4])}, nil
}

// Codec is an AES-256-GCM PayloadCodec: it encrypts with one key and decrypts with it or any
// older key it was given.
type Codec struct {
	enc  *aeadKey
	keys map[string]*aeadKey // by id: the current key and the old ones
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a codec that encrypts with key and also decrypts what the old keys encrypted.
func New(key []byte, old ...[]byte) (*Codec, error) {
	enc, err := newKey(key)
	if err != nil {
		return nil, err
	}
	c := &Codec{enc: enc, keys: map[string]*aeadKey{enc.id: enc}}
	for _, o := range old {
		k, err := newKey(o)
		if err != nil {
			return nil, err
		}
		c.keys[k.id] = k
	}
	return c, nil
}

// KeyID is the id of the key new payloads are encrypted with (a hash prefix: it reveals nothing).
func (c *Codec) KeyID() string { return c.enc.id }

// Encode encrypts each payload whole (metadata included).
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, c.enc.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(EncodingEncrypted), metaKeyID: []byte(c.enc.id)},
			Data:     c.enc.aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// Decode decrypts the payloads this codec (or one of its old keys) encrypted and passes others
// through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[metaKeyID])
		k := c.keys[id]
		if k == nil {
			return nil, fmt.Errorf("payload encrypted with key %s, this codec has key %s (add the old key to %s)", id, c.ids(), EnvOldKeys)
		}
		n := k.aead.NonceSize()
		if len(p.GetData()) < n {
			return nil, errors.New("encrypted payload too short")
		}
		plain, err := k.aead.Open(nil, p.GetData()[:n], p.GetData()[n:], nil)
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

func (c *Codec) ids() string {
	ids := []string{c.enc.id}
	for id := range c.keys {
		if id != c.enc.id {
			ids = append(ids, id)
		}
	}
	return strings.Join(ids, ", ")
}

// Parse builds a codec from the variables' values: key encrypts, old (comma-separated) only
// decrypts. Both empty is no codec (nil, nil); old keys without a current key are refused.
func Parse(key, old string) (*Codec, error) {
	if strings.TrimSpace(key) == "" {
		if strings.TrimSpace(old) != "" {
			return nil, fmt.Errorf("%s is set without %s: set the current key too", EnvOldKeys, EnvKey)
		}
		return nil, nil
	}
	k, err := ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvKey, err)
	}
	var olds [][]byte
	for i, o := range strings.Split(old, ",") {
		if strings.TrimSpace(o) == "" {
			continue
		}
		ok, err := ParseKey(o)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", EnvOldKeys, i+1, err)
		}
		olds = append(olds, ok)
	}
	return New(k, olds...)
}

// FromEnv is Parse of BATON_PAYLOAD_KEY and BATON_PAYLOAD_KEYS as lookup reads them.
func FromEnv(lookup func(string) (string, bool)) (*Codec, error) {
	key, _ := lookup(EnvKey)
	old, _ := lookup(EnvOldKeys)
	return Parse(key, old)
}

// Converters are what a client needs to read and write encrypted histories. The zero value
// (no key) leaves the SDK's defaults in place.
type Converters struct {
	Codec   *Codec
	Data    converter.DataConverter
	Failure converter.FailureConverter
}

// Converters returns the data converter and a failure converter that moves every failure's
// message and stack trace into an encoded attribute: a provider's error text would otherwise
// sit in plain text in the history. A nil codec gives the zero Converters.
func (c *Codec) Converters() Converters {
	if c == nil {
		return Converters{}
	}
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
	return Converters{Codec: c, Data: dc, Failure: temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: dc, EncodeCommonAttributes: true,
	})}
}

// ConvertersFromEnv is FromEnv(lookup).Converters().
func ConvertersFromEnv(lookup func(string) (string, bool)) (Converters, error) {
	c, err := FromEnv(lookup)
	if err != nil {
		return Converters{}, err
	}
	return c.Converters(), nil
}

// DataConverter is the default converter with encryption when key is non-empty (old keys only
// decrypt).
func DataConverter(key string, old ...string) (converter.DataConverter, error) {
	c, err := Parse(key, strings.Join(old, ","))
	if err != nil || c == nil {
		return nil, err
	}
	return c.Converters().Data, nil
}

var failureName = (&failurepb.Failure{}).ProtoReflect().Descriptor().FullName()

// DecodeFailures restores, in place, the message and stack trace of every failure in msg (a
// history, an event) that a failure converter with encoded attributes moved into a payload, so
// that code reading failure messages straight from the proto (explain, the operator page) sees
// them. Failures it cannot decode are left as they are.
func DecodeFailures(msg proto.Message, dc converter.DataConverter) {
	if dc == nil || msg == nil {
		return
	}
	walk(msg.ProtoReflect(), func(m protoreflect.Message) {
		if f, ok := m.Interface().(*failurepb.Failure); ok && f.GetEncodedAttributes() != nil {
			converter.DecodeCommonFailureAttributes(dc, f)
			f.EncodedAttributes = nil
		}
	})
}

var payloadName = (&commonpb.Payload{}).ProtoReflect().Descriptor().FullName()

// DecodePayloads decrypts, in place, every payload in msg (a history) that c encrypted, so that
// the history reads without the key (`baton history export --decode`). It stops at the first
// payload it cannot decrypt, naming the key it needs.
func (c *Codec) DecodePayloads(msg proto.Message) error {
	var err error
	walk(msg.ProtoReflect(), func(m protoreflect.Message) {
		p, ok := m.Interface().(*commonpb.Payload)
		if !ok || err != nil || string(p.GetMetadata()[converter.MetadataEncoding]) != EncodingEncrypted {
			return
		}
		var out []*commonpb.Payload
		if out, err = c.Decode([]*commonpb.Payload{p}); err == nil {
			proto.Reset(p)
			proto.Merge(p, out[0])
		}
	})
	return err
}

// walk calls fn on every failure and payload under m, a failure before what it holds (its
// cause, its encoded attributes).
func walk(m protoreflect.Message, fn func(protoreflect.Message)) {
	if name := m.Descriptor().FullName(); name == failureName || name == payloadName {
		fn(m)
		if name == payloadName {
			return
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walk(l.Get(i).Message(), fn)
			}
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					walk(mv.Message(), fn)
					return true
				})
			}
		default:
			walk(v.Message(), fn)
		}
		return true
	})
}
