package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
)

// Helpers every phase shares: a reply, a direct call, the two side by side, and the arithmetic.

type replied struct {
	res       policy.ReplyResult
	took      time.Duration
	id, runID string
}

func (r replied) servedBy(profile string) bool { return r.res.Served.Profile == profile }

// reply starts a reply as `baton reply` and `serve` do (workflows.StartReply: one turn at a time
// per session) and waits for its answer.
func (b *bench) reply(ctx context.Context, agent, session string) (replied, error) {
	start := time.Now()
	run, err := workflows.StartReply(ctx, b.c, taskQueue, workflows.ReplyRequest{Agent: agent, Session: session, Message: "hello"})
	if err != nil {
		return replied{}, fmt.Errorf("starting a reply of %s: %w", agent, err)
	}
	return b.wait(ctx, run, start)
}

func (b *bench) wait(ctx context.Context, run client.WorkflowRun, start time.Time) (replied, error) {
	var res policy.ReplyResult
	if err := run.Get(ctx, &res); err != nil {
		return replied{}, fmt.Errorf("reply %s: %w", run.GetID(), err)
	}
	return replied{res: res, took: time.Since(start), id: run.GetID(), runID: run.GetRunID()}, nil
}

func (b *bench) session(kind string) string {
	b.seq++
	return fmt.Sprintf("bench-%s-%d", kind, b.seq)
}

// directRequest is the call a reply's attempt makes with profile, to be made from this process.
func (b *bench) directRequest(ctx context.Context, providerID, profile, text string) (provider.Request, error) {
	cred, err := b.store.Secret(ctx, "main", profile)
	if err != nil {
		return provider.Request{}, err
	}
	req := activities.CallTo(b.config, policy.ModelRef{Provider: providerID, Model: "m"}, cred)
	req.Turn = provider.TextTurn(text)
	return req, nil
}

// direct makes the call a reply's attempt makes, from this process, and times it.
func (b *bench) direct(ctx context.Context, providerID, profile string) (time.Duration, error) {
	req, err := b.directRequest(ctx, providerID, profile, "hello")
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if _, err := provider.Complete(ctx, req); err != nil {
		return 0, fmt.Errorf("direct call to %s: %w", providerID, err)
	}
	return time.Since(start), nil
}

// sideBySide makes Samples happy direct calls and Samples replies, interleaved so that both see
// the same machine, and gives their times (ms) and the last reply.
func (b *bench) sideBySide(ctx context.Context, reply func() (replied, error)) (direct, replies []float64, last replied, err error) {
	for range b.opts.Samples {
		d, err := b.direct(ctx, "alpha", profileHappy)
		if err != nil {
			return nil, nil, replied{}, err
		}
		r, err := reply()
		if err != nil {
			return nil, nil, replied{}, err
		}
		direct, replies, last = append(direct, ms(d)), append(replies, ms(r.took)), r
	}
	return direct, replies, last, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// p is the q-th percentile (nearest rank) of xs.
func p(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s))*q/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
