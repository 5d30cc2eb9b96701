package policy

import "testing"

// A failed attempt's reason, as DESIGN.md decides stream faults: what the stream did decides
// before any word of the failure; a transport failure with no answer at all is a timeout; an
// in-band error event is read like a body without a status.
func TestAttemptReason(t *testing.T) {
	cases := []classifyCase{
		{"a cut stream is a timeout", Failure{Stream: FaultCut, Message: "the stream ended before the protocol's terminator"}, ReasonTimeout},
		{"a stream that went silent is a timeout", Failure{Stream: FaultStall}, ReasonTimeout},
		{"no response headers in time is a timeout", Failure{Stream: FaultResponseTimeout, Net: NetTimeout}, ReasonTimeout},
		{"nothing before the first-token timeout is a timeout", Failure{Stream: FaultFirstToken}, ReasonTimeout},
		{"a chunk that is not JSON is a timeout", Failure{Stream: FaultMalformed}, ReasonTimeout},
		{"a cut stream is a timeout whatever the words say", Failure{Stream: FaultCut, Message: "insufficient credits"}, ReasonTimeout},
		{"an empty 200 is empty_response", Failure{Stream: FaultEmpty}, ReasonEmptyResponse},
		{"a reset before any answer is a timeout", Failure{Net: NetReset, Message: "read: connection reset by peer"}, ReasonTimeout},
		{"a refused connection is a timeout whatever it says", Failure{Net: NetRefused, Message: "invalid api key"}, ReasonTimeout},
		{"a TLS failure before any answer is a timeout", Failure{Net: NetTLS}, ReasonTimeout},
		{"an in-band overloaded event is read like a body", Failure{Stream: FaultInBandError, Type: "overloaded_error", Message: "Overloaded"}, ReasonOverloaded},
		{"an in-band rate limit is read like a body", Failure{Stream: FaultInBandError, Message: "Rate limit reached for requests"}, ReasonRateLimit},
		{"an in-band event that says nothing known is no signal", Failure{Stream: FaultInBandError, Message: "something odd"}, ReasonNone},
		{"a 429 is classified", Failure{Status: 429, Message: "Rate limit reached", Code: "rate_limit_exceeded"}, ReasonRateLimit},
		{"a 402 is classified", Failure{Status: 402, Message: "Payment Required"}, ReasonBilling},
		{"a failed OAuth refresh is auth_permanent", Failure{Code: "oauth_refresh_failed", Message: "OAuth refresh failed: invalid_grant"}, ReasonAuthPermanent},
		{"an answer with a status is classified, not a transport failure", Failure{Status: 503, Net: NetReset, Message: "Service Unavailable"}, ReasonOverloaded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := AttemptReason(parsed(c.f)); got != c.want {
				t.Errorf("AttemptReason(%+v) = %s, want %s", c.f, got, c.want)
			}
		})
	}
}
