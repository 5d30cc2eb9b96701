package main

import (
	"context"
	"net/http"
	"time"

	"github.com/batonhq/baton/internal/tracing"
	"github.com/batonhq/baton/internal/wire"
	"github.com/batonhq/baton/policy"
)

// waitHeader is the header a caller asks for the durable wait with (as the body's
// wait_for_cooldown, which it overrides): a duration ("10m") or seconds.
const waitHeader = "x-baton-wait-for-cooldown"

// applyWait sets the reply's durable wait (`baton reply --wait`) from the body's
// wait_for_cooldown, or from the header, which wins as x-baton-session does over the body.
func applyWait(h http.Header, wr wire.Request, req *policy.ReplyRequest) *wire.Error {
	req.WaitForCooldown = wr.WaitForCooldown
	if v := h.Get(waitHeader); v != "" {
		d, err := wire.ParseWait(v)
		if err != nil {
			return wire.BadRequest(waitHeader, "%s: %v", waitHeader, err)
		}
		req.WaitForCooldown = d
	}
	return nil
}

// shutdownTracing flushes the spans not yet exported, within 5 s.
func shutdownTracing(t *tracing.Tracing) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.Shutdown(ctx)
}
