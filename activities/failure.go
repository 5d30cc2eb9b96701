package activities

import (
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// FailureOf is an adapter's failure, parsed once by the provider layer (provider.Error.Parse), as
// the policy reads it: the one mapping between the two records.
func FailureOf(providerID string, e *provider.Error) policy.Failure {
	return policy.Failure{
		Provider: providerID, Status: e.Status, Code: e.Code, Type: e.Type,
		Message: e.Message, Wrapped: e.Wrapped, Detail: e.Detail, Body: e.BodyPreview,
		Page: e.Page, DetailPage: e.DetailPage, Net: policy.NetErrorKind(e.Net), Stream: policy.StreamFault(e.Stream),
		Retry: policy.RetryInfo(e.Retry), // the same shape, field for field
	}
}

// ReasonOf classifies a failed attempt (policy.AttemptReason: stream faults by their kind, a
// transport failure without an answer as a timeout, anything else by the classifier).
func ReasonOf(providerID string, e *provider.Error) policy.Reason {
	return policy.AttemptReason(FailureOf(providerID, e))
}

// HintOf reads the retry hints of a failure at now.
func HintOf(e *provider.Error, now time.Time) policy.RetryHint {
	return policy.RetryHintAt(FailureOf("", e).Retry, now)
}
