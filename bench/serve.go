package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// serveHappy times non-streamed session replies through `baton serve` answered by their primary
// against the same call made directly (raw serve_direct_p50_ms, serve_happy_p50_ms), and records
// the last one's events as "serve_happy".
func (b *bench) serveHappy(ctx context.Context, res *Results) error {
	b.progress("happy path through baton serve: %d direct calls and %d non-streamed replies, interleaved", b.opts.Samples, b.opts.Samples)
	direct, served, last, err := b.sideBySide(ctx, func() (replied, error) {
		return b.serveReply(ctx, agentHappy, b.session("serve"))
	})
	if err != nil {
		return err
	}
	b.raw["serve_direct_p50_ms"], b.raw["serve_happy_p50_ms"] = p(direct, 50), p(served, 50)
	_, err = b.record(ctx, res, "serve_happy", last)
	return err
}

// serveReply is a non-streamed session reply through `baton serve` (OpenAI's wire), timed from the
// request to the whole answer.
func (b *bench) serveReply(ctx context.Context, agent, session string) (replied, error) {
	req, err := b.chatRequest(ctx, `{"model":"agent:`+agent+`","messages":[{"role":"user","content":"hello"}]}`, session)
	if err != nil {
		return replied{}, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return replied{}, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		return replied{}, fmt.Errorf("baton serve answered %d %s (%v)\n%s", resp.StatusCode, answer, err, tailFile(b.serveLog.Name(), 20))
	}
	r := servedReply(resp)
	r.took = took
	return r, nil
}

// chatRequest is a chat completion request to `baton serve`, on session unless it is "".
func (b *bench) chatRequest(ctx context.Context, body, session string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.serveURL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("x-baton-session", session)
	}
	return req, nil
}

// servedReply names the reply `baton serve` answered with (its workflow ID and run).
func servedReply(resp *http.Response) replied {
	return replied{id: resp.Header.Get("x-baton-workflow-id"), runID: resp.Header.Get("x-baton-run-id")}
}
