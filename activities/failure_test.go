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
		{"an attempt past its bound", provider.Error{Stream: provider.FaultAttemptTimeout}, policy.ReasonTimeout},
		{"a stream under its throughput floor", provider.Error{Stream: provider.FaultSlow, Partial: true}, policy.ReasonTimeout},
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
	h := HintOf((&provider.Error{Headers: map[string]string{"retry-after": "2"}}).Parse(nil), time.Unix(0, 0))
	if !h.HasAfter || h.After != 2*time.Second {
		t.Errorf("hint %+v", h)
	}
}

// The provider layer's stream faults and the policy's are the same words: a fault the policy did
// not know would be classified like a body instead of decided by its kind.
func TestStreamFaultsAreThePolicysWords(t *testing.T) {
	for p, want := range map[string]policy.StreamFault{
		provider.FaultResponseTimeout: policy.FaultResponseTimeout, provider.FaultCut: policy.FaultCut,
		provider.FaultStall: policy.FaultStall, provider.FaultFirstToken: policy.FaultFirstToken,
		provider.FaultMalformed: policy.FaultMalformed, provider.FaultInBandError: policy.FaultInBandError,
		provider.FaultEmpty: policy.FaultEmpty, provider.FaultAttemptTimeout: policy.FaultAttemptTimeout, provider.FaultSlow: policy.FaultSlow,
	} {
		if got := FailureOf("openai", &provider.Error{Stream: p}).Stream; got != want {
			t.Errorf("provider fault %q is policy fault %q, want %q", p, got, want)
		}
	}
}

// FailureOf hands the policy everything the provider layer parsed: a body's error object, a
// wrapper's, and the retry hints.
func TestFailureOfCarriesTheParse(t *testing.T) {
	e := (&provider.Error{Status: 429, Headers: map[string]string{"Retry-After": "3"}}).
		Parse([]byte(`{"error":{"message":"429 {\"error\":{\"message\":\"slow down\",\"code\":\"rate_limit_exceeded\"}}","type":"requests"}}`))
	f := FailureOf("openai", e)
	if f.Message != "slow down" || f.Code != "rate_limit_exceeded" || f.Type != "requests" || f.Wrapped == "" || f.Detail == "" || f.Body == "" {
		t.Errorf("failure %+v", f)
	}
	if h := HintOf(e, time.Unix(0, 0)); !h.HasAfter || h.After != 3*time.Second {
		t.Errorf("hint %+v", h)
	}
	if r := ReasonOf("openai", e); r != policy.ReasonRateLimit {
		t.Errorf("reason %s", r)
	}
}
