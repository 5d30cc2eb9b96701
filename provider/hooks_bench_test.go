package provider

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"
)

// What baton's own code adds per chunk on top of the SDK: re-arming the watchdog and spotting
// [DONE] and keep-alive comments as the bytes pass. (The SDK's decoding of each chunk is measured, with this, by
// BenchmarkStream1000Tokens.) Goal: well under 5 µs.
func BenchmarkPerChunkHooks(b *testing.B) {
	chunk := []byte(`data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"token "},"finish_reason":null}]}` + "\n\n")
	_, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	w := &watchdog{cancel: cancel}
	defer w.stop()
	spot := &doneSpotter{ReadCloser: io.NopCloser(bytes.NewReader(nil)), cap: &capture{}, onComment: func() {}}
	buf := make([]byte, len(chunk))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.arm(time.Minute, errStall)
		spot.ReadCloser = io.NopCloser(bytes.NewReader(chunk))
		_, _ = spot.Read(buf)
	}
}
