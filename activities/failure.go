package activities

import (
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// FailureOf is an adapter's failure as the classifier reads it.
func FailureOf(providerID string, e *provider.Error) policy.Failure {
	return policy.Failure{
		Provider: providerID, Status: e.Status, Code: e.Code, Type: e.Type,
		Message: e.Message, Body: e.BodyPreview, Net: policy.NetErrorKind(e.Net),
	}
}

// ReasonOf classifies a failed attempt. Stream faults are decided here, as DESIGN.md says: a cut,
// a stall, a first-token timeout and a malformed chunk are timeouts; an empty 200 is
// empty_response; an in-band error event is read like an HTTP body without a status.
func ReasonOf(providerID string, e *provider.Error) policy.Reason {
	switch e.Stream {
	case provider.FaultCut, provider.FaultStall, provider.FaultFirstToken, provider.FaultResponseTimeout, provider.FaultMalformed:
		return policy.ReasonTimeout
	case provider.FaultEmpty:
		return policy.ReasonEmptyResponse
	}
	if e.Status == 0 && e.Stream == "" && e.Net != "" {
		return policy.ReasonTimeout // no answer at all: reset, refused, DNS, TLS
	}
	return policy.Classify(FailureOf(providerID, e))
}

// HintOf reads the retry hints of a failure at now.
func HintOf(e *provider.Error, now time.Time) policy.RetryHint {
	return policy.ParseRetryHint(e.Headers, e.BodyPreview, now)
}
