package serve

import (
	"net/http"

	"github.com/batonhq/baton/internal/wire"
	"github.com/batonhq/baton/workflows"
)

// WaitHeader is the header a caller asks for the durable wait with (as the body's
// wait_for_cooldown, which it overrides): a duration ("10m") or seconds.
const WaitHeader = "x-baton-wait-for-cooldown"

// applyWait sets the reply's durable wait (`baton reply --wait`) from the body's
// wait_for_cooldown, or from the header, which wins as x-baton-session does over the body.
func applyWait(h http.Header, wr wire.Request, req *workflows.ReplyRequest) *wire.Error {
	req.WaitForCooldown = wr.WaitForCooldown
	if v := h.Get(WaitHeader); v != "" {
		d, err := wire.ParseWait(v)
		if err != nil {
			return wire.BadRequest(WaitHeader, "%s: %v", WaitHeader, err)
		}
		req.WaitForCooldown = d
	}
	return nil
}
