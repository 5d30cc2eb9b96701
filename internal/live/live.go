// Package live carries an answer's deltas from an attempt to the caller that waits for it, in
// memory: a front door (serve, baton reply) runs a worker on a task queue of its own, the reply
// schedules its attempts there, and the attempt hands each delta to the caller's stream as the
// provider sends it. Nothing here is durable: the reply's result is the answer of record.
package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/batonhq/baton/provider"
)

// Delta is a piece of an answer: text, reasoning text, or one complete tool call.
type Delta struct {
	Text      string
	Reasoning string
	ToolCall  *provider.ToolCall
	// ReasoningPart is a whole thinking block with its signature (after its Reasoning deltas).
	ReasoningPart *provider.Part
	// Model is the candidate (provider/model) whose stream it came from.
	Model string
	// Final, on the last delta of a reply, is its whole answer, handed over the moment the attempt
	// has it and has kept it (answer first): the front door finishes its caller without waiting
	// for the reply's bookkeeping. Nothing follows it.
	Final *Final `json:",omitempty"`
}

// Final is a reply's whole answer as its caller gets it, and what the caller is told of the reply
// at that moment.
type Final struct {
	Answer provider.Answer
	// Model is the candidate (provider/model) that finished the answer.
	Model string
	// Attempts counts the reply's attempts, this one included; FallbackReason is why it last
	// failed over ("": it did not).
	Attempts       int
	FallbackReason string
}

// Hub holds the streams of the callers this process serves.
type Hub struct {
	mu      sync.Mutex
	streams map[string]*Stream
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{streams: map[string]*Stream{}} }

// Open registers a caller's stream under key; ctx is the caller's (its end cancels the attempts
// that write to the stream). Close it when the caller is done.
func (h *Hub) Open(ctx context.Context, key string) *Stream {
	s := &Stream{ctx: ctx, notify: make(chan struct{}, 1), hub: h, key: key}
	h.mu.Lock()
	h.streams[key] = s
	h.mu.Unlock()
	return s
}

// Watch registers a caller who waits for the whole answer (an unstreamed request) under key: its
// going away still ends the attempts at once, but no delta is sent to it, so an answer cut midway
// reached nobody and the reply fails over as if nothing had been delivered.
func (h *Hub) Watch(ctx context.Context, key string) *Stream {
	s := h.Open(ctx, key)
	s.quiet = true
	return s
}

// Get returns the stream of key, if this process holds it.
func (h *Hub) Get(key string) (*Stream, bool) {
	if h == nil || key == "" {
		return nil, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.streams[key]
	return s, ok
}

// Stream is one caller's: attempts append, the caller reads. Appends never block (a slow caller
// must not slow the provider's stream, whose watchdog would call it a stall).
type Stream struct {
	ctx    context.Context
	hub    *Hub
	key    string
	mu     sync.Mutex
	buf    []Delta
	notify chan struct{}
	closed bool
	quiet  bool // Watch: the caller takes no deltas
}

// Context is the caller's: done when the caller went away.
func (s *Stream) Context() context.Context { return s.ctx }

// Send appends a delta; false when the stream was closed or takes no deltas (Watch: it takes
// only the final one).
func (s *Stream) Send(d Delta) bool {
	s.mu.Lock()
	if s.closed || s.quiet && d.Final == nil {
		s.mu.Unlock()
		return false
	}
	s.buf = append(s.buf, d)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return true
}

// Ready is signalled after a Send.
func (s *Stream) Ready() <-chan struct{} { return s.notify }

// Take returns the deltas sent since the last Take.
func (s *Stream) Take() []Delta {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.buf
	s.buf = nil
	return out
}

// Close removes the stream from its hub; later sends are dropped.
func (s *Stream) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.hub.mu.Lock()
	delete(s.hub.streams, s.key)
	s.hub.mu.Unlock()
}

// NewKey names a caller's stream (or a door's queue): random, so that no other caller can read it.
func NewKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// EncodeDelta is a delta as a reply's event log keeps it (the attempt writes it, any front door
// reads it back); DecodeDelta reads it.
func EncodeDelta(d Delta) []byte {
	b, _ := json.Marshal(d) // plain data: cannot fail
	return b
}

// DecodeDelta reads a delta EncodeDelta wrote.
func DecodeDelta(b []byte) (Delta, error) {
	var d Delta
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("a reply log entry: %w", err)
	}
	return d, nil
}
