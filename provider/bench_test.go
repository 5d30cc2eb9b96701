package provider_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/provider"
)

// A streamed 1,000-token answer through each adapter against the fake provider on loopback. Each
// iteration also reads the same stream the plainest way (a line scanner and encoding/json into a
// minimal chunk struct: what any client must do), so overhead-ns/chunk is what the adapter — the
// official SDK's decoding plus baton's watchdog and terminator check — adds per chunk. Goal:
// under 5 µs.
func BenchmarkStream1000Tokens(b *testing.B) {
	for _, p := range []string{"openai", "anthropic"} {
		b.Run(p, func(b *testing.B) {
			fp := benchFake(b)
			anthropic := p == "anthropic"
			req := provider.Request{Provider: p, Model: "m", BaseURL: fp.BaseURL(p, anthropic),
				Credential: provider.Credential{Key: "sk-bench"}, Turn: provider.TextTurn("go")}
			rawURL, rawBody := fp.BaseURL(p, anthropic)+"/chat/completions", `{"model":"m","stream":true,"messages":[]}`
			if anthropic {
				rawURL, rawBody = fp.BaseURL(p, anthropic)+"/v1/messages", `{"model":"m","stream":true,"max_tokens":5,"messages":[]}`
			}
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
				Delta struct {
					Text string `json:"text"`
				} `json:"delta"`
			}
			benchStream(b, req, rawURL, rawBody, &chunk)
		})
	}
}

// benchText is the benchmarks' answer: 1,000 tokens.
var benchText = strings.TrimSpace(strings.Repeat("token ", 1000))

// benchFake is a fake provider that answers benchText, with no key to check.
func benchFake(b *testing.B) *fakeprovider.Server {
	fp := fakeprovider.New([]fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: benchText}}}}, nil)
	if err := fp.Start("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fp.Close() })
	return fp
}

// benchStream times req's answer against a plain read of the same stream (rawBody posted to
// rawURL, each data line decoded into chunk, the wire's minimal event struct).
func benchStream(b *testing.B, req provider.Request, rawURL, rawBody string, chunk any) {
	var adapter, raw time.Duration
	chunks := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		resp, err := provider.Complete(context.Background(), req)
		adapter += time.Since(t0)
		if err != nil || len(resp.Answer.Text) != len(benchText) {
			b.Fatalf("%v (%d bytes)", err, len(resp.Answer.Text))
		}
		chunks += resp.Chunks
		t1 := time.Now()
		readRaw(b, rawURL, rawBody, chunk)
		raw += time.Since(t1)
	}
	b.ReportMetric(float64(adapter.Nanoseconds())/float64(chunks), "ns/chunk")
	b.ReportMetric(float64((adapter-raw).Nanoseconds())/float64(chunks), "overhead-ns/chunk")
}

func readRaw(b *testing.B, url, body string, chunk any) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && data[0] == '{' {
			_ = json.Unmarshal(data, chunk)
		}
	}
}
