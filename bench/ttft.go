package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/batonhq/baton/provider"
)

// ttft times the first content of a streamed answer, called directly and through `baton serve`
// (raw ttft_direct_p50_ms, ttft_serve_p50_ms), and records the last served reply's events as
// "streamed": it gives how many there are.
func (b *bench) ttft(ctx context.Context, res *Results) (int, error) {
	n := b.opts.Samples
	b.progress("time to first token: %d streamed answers (%d chunks over %v) directly and through baton serve", n, streamWords, streamWords*streamGap)
	var direct, served []float64
	var last replied
	for range n {
		d, err := b.ttftDirect(ctx)
		if err != nil {
			return 0, err
		}
		sv, r, err := b.ttftServe(ctx)
		if err != nil {
			return 0, err
		}
		direct, served, last = append(direct, ms(d)), append(served, ms(sv)), r
	}
	b.raw["ttft_direct_p50_ms"], b.raw["ttft_serve_p50_ms"] = p(direct, 50), p(served, 50)
	return b.record(ctx, res, "streamed", last)
}

// ttftDirect is the time to the first content delta of the streamed answer, called directly.
func (b *bench) ttftDirect(ctx context.Context) (time.Duration, error) {
	req, err := b.directRequest(ctx, "zeta", profileLive, "count")
	if err != nil {
		return 0, err
	}
	var first time.Duration
	start := time.Now()
	req.OnDelta = func(d provider.Delta) {
		if d.Text != "" && first == 0 {
			first = time.Since(start)
		}
	}
	if _, err := provider.Complete(ctx, req); err != nil {
		return 0, fmt.Errorf("direct streamed call: %w", err)
	}
	return first, nil
}

// ttftServe is the time to the first content byte of the same answer through `baton serve`, and
// the reply (its workflow ID and run; not its time, which the timeline leaves out).
func (b *bench) ttftServe(ctx context.Context) (time.Duration, replied, error) {
	req, err := b.chatRequest(ctx, `{"model":"agent:stream","stream":true,"messages":[{"role":"user","content":"count"}]}`, "")
	if err != nil {
		return 0, replied{}, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, replied{}, err
	}
	defer resp.Body.Close()
	var first time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if first == 0 && strings.Contains(sc.Text(), `"content":"word`) {
			first = time.Since(start)
		}
	}
	if resp.StatusCode != http.StatusOK || first == 0 {
		return 0, replied{}, fmt.Errorf("baton serve answered %d with no content\n%s", resp.StatusCode, tailFile(b.serveLog.Name(), 20))
	}
	return first, servedReply(resp), nil
}
