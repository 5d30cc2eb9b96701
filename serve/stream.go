package serve

import (
	"fmt"
	"net/http"
	"time"

	"github.com/batonhq/baton/internal/wire"
	"go.temporal.io/sdk/client"
)

// DefaultServeKeepAlive is how long a streamed caller goes without a byte before it gets a
// keep-alive, unless BATON_SERVE_KEEPALIVE says otherwise: under the idle timeouts of common
// proxies and load balancers (30 to 60 s).
const DefaultServeKeepAlive = 15 * time.Second

// liveTrailers are the headers a stream sends after its answer, whose outcome is not known when
// its headers go out.
const liveTrailers = "x-baton-attempts, x-baton-fallback-reason, x-baton-model"

// ParseKeepAlive reads BATON_SERVE_KEEPALIVE: a positive Go duration ("" is the default).
func ParseKeepAlive(v string) (time.Duration, error) {
	if v == "" {
		return DefaultServeKeepAlive, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("BATON_SERVE_KEEPALIVE: %q is not a positive duration (such as 15s)", v)
	}
	return d, nil
}

// keepAliveEvery is the server's keep-alive interval (0: the default).
func (s *server) keepAliveEvery() time.Duration {
	if s.keepAlive > 0 {
		return s.keepAlive
	}
	return DefaultServeKeepAlive
}

// openStream sends a streamed caller's headers once its reply has started, before anything of
// the answer is known: a proxy with an idle timeout then sees a live response (keep-alives
// follow), and the reply's attempt count and failover reason come as trailers.
func openStream(w http.ResponseWriter, flush func()) {
	startSSE(w)
	w.Header().Set("Trailer", liveTrailers)
	w.WriteHeader(http.StatusOK)
	flush()
}

// gaveUp is the error a caller gets when serve's own --timeout ends its wait. The reply is
// aborted as a hang-up aborts it, so that no later attempt buys an answer nobody receives;
// follow is true for a reply that may wait durably for a cooldown longer than the timeout
// (wait_for_cooldown): it is left running, and the error says how to follow it.
func (s *server) gaveUp(run client.WorkflowRun, wait time.Duration) (e *wire.Error, follow bool) {
	id, runID := run.GetID(), run.GetRunID()
	if wait > s.timeout {
		return &wire.Error{Status: http.StatusGatewayTimeout, Type: "server_error", Code: "reply_still_running", Message: fmt.Sprintf(
			"no answer within baton serve's --timeout of %s; the reply was not cancelled: it may wait up to %s for a cooldown "+
				"(wait_for_cooldown) and goes on durably as workflow %s, run %s. Follow it with `temporal workflow show --workflow-id %s --run-id %s --follow`; "+
				"stop it with `baton reply cancel %s`", s.timeout, wait, id, runID, id, runID, id)}, true
	}
	s.abort(run)
	return &wire.Error{Status: http.StatusGatewayTimeout, Type: "server_error", Code: "timeout", Message: fmt.Sprintf(
		"no answer within baton serve's --timeout of %s: the reply (workflow %s, run %s) was cancelled, as when a caller hangs up: "+
			"nothing more is tried and the fallback written for its attempt is rolled back", s.timeout, id, runID)}, false
}

// countingWriter counts the bytes that went out to the caller: a keep-alive is due after a
// silence, and a delta its wire does not write (reasoning text on Anthropic's, which sends each
// thinking block whole) breaks none.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}
