package activities

import (
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

func TestReasonOfStreamFaultsAndBodies(t *testing.T) {
	cases := []struct {
		name string
		e    provider.Error
		want policy.Reason
	}{
		{"a cut stream", provider.Error{Stream: provider.FaultCut, Message: "the stream ended before the protocol's terminator"}, policy.ReasonTimeout},
		{"a stall", provider.Error{Stream: provider.FaultStall}, policy.ReasonTimeout},
		{"no response headers", provider.Error{Stream: provider.FaultResponseTimeout, Net: "timeout"}, policy.ReasonTimeout},
		{"a first-token timeout", provider.Error{Stream: provider.FaultFirstToken}, policy.ReasonTimeout},
		{"a malformed chunk", provider.Error{Stream: provider.FaultMalformed}, policy.ReasonTimeout},
		{"an empty 200", provider.Error{Stream: provider.FaultEmpty}, policy.ReasonEmptyResponse},
		{"a reset before headers", provider.Error{Net: "reset", Message: "read: connection reset by peer"}, policy.ReasonTimeout},
		{"an in-band overloaded event", provider.Error{Stream: provider.FaultInBandError, Type: "overloaded_error", Message: "Overloaded"}, policy.ReasonOverloaded},
		{"an in-band rate limit", provider.Error{Stream: provider.FaultInBandError, Message: "Rate limit reached for requests"}, policy.ReasonRateLimit},
		{"a 429 body", provider.Error{Status: 429, Message: "Rate limit reached", Code: "rate_limit_exceeded"}, policy.ReasonRateLimit},
		{"a 402", provider.Error{Status: 402, Message: "Payment Required"}, policy.ReasonBilling},
		{"a failed OAuth refresh", provider.Error{Code: provider.CodeOAuthRefreshFailed, Message: "OAuth refresh failed: invalid_grant"}, policy.ReasonAuthPermanent},
	}
	for _, c := range cases {
		if got := ReasonOf("openai", &c.e); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	h := HintOf(&provider.Error{Headers: map[string]string{"retry-after": "2"}}, time.Unix(0, 0))
	if !h.HasAfter || h.After != 2*time.Second {
		t.Errorf("hint %+v", h)
	}
}
