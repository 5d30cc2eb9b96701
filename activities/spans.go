package activities

import (
	"context"
	"errors"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	// v1.41.0 is the newest semconv package in our otel module that still has the GenAI group
	// (v1.42.0 and v1.43.0 of otel v1.47 leave it out).
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/temporal"
)

// baton's own span attributes, for what the GenAI conventions have no name for.
const (
	attrProfile = attribute.Key("baton.profile") // the profile's ID ("openai:work"), never its secret
	attrResult  = attribute.Key("baton.result")  // succeeded, failed, mismatched, prefill_rejected, error
	attrReason  = attribute.Key("baton.reason")  // policy.Reason of a failed call
	attrFault   = attribute.Key("baton.fault")   // the stream fault (provider.Fault*) of a stream that broke
	attrNet     = attribute.Key("baton.net")     // the network error kind of a call that got no answer
)

// traceAttempt describes an attempt on its span: the one Temporal's tracing interceptor starts
// for the activity (internal/tracing), so a reply's trace shows which route each attempt took
// and how it ended. Only IDs, counts and classifications: never a secret, a prompt or an answer
// (the provider's error message may quote either, so it stays out too).
func traceAttempt(ctx context.Context, req workflows.AttemptRequest, out policy.AttemptOutcome, err error) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return // tracing off: build nothing
	}
	// gen_ai.provider.name is baton's provider ID, which is the conventions' own value for the
	// well-known ones (openai, anthropic) and the config's name for the rest. No
	// gen_ai.response.model: the providers' answers do not carry it up to here.
	span.SetAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(req.Provider),
		semconv.GenAIRequestModel(req.Model), attrProfile.String(req.Profile))
	result := "failed"
	switch {
	case err != nil:
		result = "error"
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	case out.OK:
		result = "succeeded"
		span.SetAttributes(semconv.GenAIUsageInputTokensKey.Int64(out.Input), semconv.GenAIUsageOutputTokensKey.Int64(out.Output))
		if out.CachedInput > 0 {
			span.SetAttributes(semconv.GenAIUsageCacheReadInputTokensKey.Int64(out.CachedInput))
		}
		if out.FinishReason != "" {
			span.SetAttributes(semconv.GenAIResponseFinishReasons(out.FinishReason))
		}
	case out.Mismatch:
		result = "mismatched" // another answer than the caller holds: not a fault of the call
	case out.PrefillRejected:
		result = "prefill_rejected" // a capability, not a fault
	default:
		// A failed call is data to the reply, not an error of the activity: the span says so itself.
		errType := string(out.Reason)
		if out.Reason == policy.ReasonNone {
			errType = semconv.ErrorTypeOther.Value.AsString() // not the provider's answer (a missing base URL)
		} else {
			span.SetAttributes(attrReason.String(string(out.Reason)))
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		if out.StreamFault != "" {
			span.SetAttributes(attrFault.String(out.StreamFault))
		}
		if out.Net != "" {
			span.SetAttributes(attrNet.String(out.Net))
		}
		span.SetStatus(codes.Error, errType)
	}
	if out.Status != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(out.Status))
	}
	span.SetAttributes(attrResult.String(result))
}

// errorType names an activity error by its Temporal type (policy.ErrWorkerShutdown,
// policy.ErrAborted, ErrTurnContentMissing), else by the conventions' fallback: a message is not a
// class.
func errorType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() != "" {
		return app.Type()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return semconv.ErrorTypeOther.Value.AsString()
}
