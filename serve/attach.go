package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batonhq/baton/internal/wire"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
	"go.temporal.io/sdk/client"
)

// Printer is what Attach hands a reply's answer to, piece by piece.
type Printer interface {
	Text(delta string)
	ToolCall(call provider.ToolCall)
}

// Attach hands a reply's answer to p from its start, whichever door started it: a reply with an
// event log (a stored Responses reply: logKey) as its log grows, then what of the answer was not
// logged; any other reply whole, once it ends. It returns the answer, or the error the reply
// ended with.
func Attach(ctx context.Context, c client.Client, rs ResponseStore, workflowID, runID, logKey string, p Printer) (provider.Answer, error) {
	run := c.GetWorkflow(ctx, workflowID, runID)
	pw := &printerStream{p: p}
	out := &liveOut{w: pw}
	if logKey == "" || rs == nil {
		var res policy.ReplyResult
		if err := run.Get(ctx, &res); err != nil {
			return provider.Answer{}, err
		}
		a, err := answerOf(res)
		if err != nil {
			return a, err
		}
		out.finish(a, "")
		return a, nil
	}
	page, err := rs.ReplyLog(ctx, logKey, 0)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return provider.Answer{}, err
	}
	f, err := tailLog(ctx, rs, logKey, page, run, nil, time.Hour, func() {}, out.send)
	switch {
	case err != nil:
		return provider.Answer{}, err
	case f == nil:
		return provider.Answer{}, ctx.Err()
	}
	out.end(*f)
	if f.Answer == nil {
		return provider.Answer{}, pw.err
	}
	return *f.Answer, nil
}

// printerStream is a Printer as a wire stream, so that Attach tells an answer as a door does.
type printerStream struct {
	p     Printer
	calls []provider.ToolCall
	err   error
}

func (s *printerStream) Text(delta string) { s.p.Text(delta) }
func (s *printerStream) ToolCall(index int, id, name string) {
	s.calls = append(s.calls, provider.ToolCall{ID: id, Name: name})
}
func (s *printerStream) ToolArgs(index int, delta string) {
	if index < len(s.calls) {
		s.calls[index].Arguments += delta
		s.p.ToolCall(s.calls[index])
	}
}
func (s *printerStream) Finish(string, provider.Usage) {}
func (s *printerStream) Error(e *wire.Error) {
	s.err = fmt.Errorf("%s (%s)", e.Message, e.Code)
}
func (s *printerStream) Err() error { return nil }
