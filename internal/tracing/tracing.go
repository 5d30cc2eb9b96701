// Package tracing is baton's OpenTelemetry tracing: the Temporal SDK's tracing interceptor, so
// that a reply is one trace from the request that started it (serve's HTTP span) through the
// workflow to each attempt, exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Unset, it is off and costs nothing.
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// Variables of the OpenTelemetry specification this package reads itself; the exporters read
// the rest (headers, TLS, timeouts) as the specification says.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
)

// Tracing is the process's tracer provider and the SDK interceptor on it. A nil *Tracing is
// tracing off: every method is then a no-op.
type Tracing struct {
	provider    *sdktrace.TracerProvider
	interceptor interceptor.Interceptor
}

// Setup starts tracing for service (the resource's service.name, unless OTEL_SERVICE_NAME says
// otherwise) when lookup finds an OTLP endpoint; it returns nil when none is set. The protocol is
// http/protobuf (the specification's default) or grpc.
func Setup(ctx context.Context, service string, lookup func(string) (string, bool)) (*Tracing, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	if get(EnvEndpoint) == "" && get(EnvTracesEndpoint) == "" {
		return nil, nil
	}
	protocol := get(EnvTracesProtocol)
	if protocol == "" {
		protocol = get(EnvProtocol)
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%s: %q is not http/protobuf or grpc", EnvProtocol, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvEndpoint, err)
	}
	// Later sources win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over baton's default.
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", service)), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	// W3C trace context in and out of HTTP, so that a caller's trace continues into the reply.
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(prop)
	ic, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("github.com/batonhq/baton")})
	if err != nil {
		_ = tp.Shutdown(ctx)
		return nil, err
	}
	return &Tracing{provider: tp, interceptor: ic}, nil
}

// ClientInterceptors go in client.Options.Interceptors; the SDK applies them to the workers made
// from that client too, so the workflow and its activities are traced as well.
func (t *Tracing) ClientInterceptors() []interceptor.ClientInterceptor {
	if t == nil {
		return nil
	}
	return []interceptor.ClientInterceptor{t.interceptor}
}

// WorkerInterceptors are for a worker whose client was made without ClientInterceptors.
func (t *Tracing) WorkerInterceptors() []interceptor.WorkerInterceptor {
	if t == nil {
		return nil
	}
	return []interceptor.WorkerInterceptor{t.interceptor}
}

// Handler wraps an HTTP handler in a server span per request, named by method and path (the
// root of a reply's trace, or a child of the caller's traceparent).
func (t *Tracing) Handler(h http.Handler, operation string) http.Handler {
	if t == nil {
		return h
	}
	return otelhttp.NewHandler(h, operation, otelhttp.WithTracerProvider(t.provider),
		otelhttp.WithPropagators(otel.GetTextMapPropagator()),
		// "POST /v1/chat/completions": the path says which door the reply came through.
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }))
}

// Shutdown flushes the spans not yet exported.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}
