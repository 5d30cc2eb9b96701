package activities

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// The attempt's span, made by the same Temporal interceptor the worker uses, names the route and
// the outcome in the GenAI conventions' words, and carries no secret, prompt or answer.
func TestAttemptSpanNamesRouteAndOutcome(t *testing.T) {
	const (
		secret = "sk-span-test-0123456789"
		prompt = "a prompt that must not be traced"
		answer = "an answer that must not be traced"
		reply  = "Rate limit reached for requests"
	)
	acts, _ := attemptsOn(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Model: "limited"}, Respond: []fakeprovider.Response{{Status: 429,
			Headers: map[string]string{"retry-after": "3600"},
			Body:    `{"error":{"message":"` + reply + `","type":"requests","code":"rate_limit_exceeded"}}`}}},
		{Match: fakeprovider.Match{}, Respond: []fakeprovider.Response{{Text: answer, Finish: "stop",
			Usage: &fakeprovider.Usage{Input: 12, Output: 3}}}},
	}, secret, "openai:work")
	ctx := context.Background()

	cases := []struct {
		name, model string
		want        map[string]any
		absent      []string
		failed      bool
	}{
		{"success", "gpt-5", map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-5",
			"baton.profile": "openai:work", "baton.result": "succeeded",
			"gen_ai.usage.input_tokens": int64(12), "gen_ai.usage.output_tokens": int64(3),
			"gen_ai.response.finish_reasons": []string{"stop"},
		}, []string{"error.type", "baton.reason", "http.response.status_code"}, false},
		{"a rate limit", "limited", map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "limited",
			"baton.profile": "openai:work", "baton.result": "failed",
			"error.type": "rate_limit", "baton.reason": "rate_limit", "http.response.status_code": int64(429),
		}, []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons", "baton.fault"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(ctx)
			ic, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("test")})
			if err != nil {
				t.Fatal(err)
			}
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{ic}})
			env.RegisterActivity(acts)
			val, err := env.ExecuteActivity(acts.Attempt, workflows.AttemptRequest{Agent: "main", Provider: "openai", Model: c.model,
				Profile: "openai:work", Message: prompt, Now: time.Now(), RetryMaxWait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var out policy.AttemptOutcome
			if err := val.Get(&out); err != nil {
				t.Fatal(err)
			}
			if out.OK == c.failed {
				t.Fatalf("outcome %+v", out)
			}

			spans := exp.GetSpans()
			i := slices.IndexFunc(spans, func(s tracetest.SpanStub) bool { return s.Name == "RunActivity:Attempt" })
			if i < 0 {
				t.Fatalf("no attempt span among %d", len(spans))
			}
			span := spans[i]
			got := map[string]any{}
			texts := []string{"status: " + span.Status.Description}
			for _, kv := range span.Attributes {
				got[string(kv.Key)] = kv.Value.AsInterface()
				if kv.Value.Type() == attribute.STRING {
					texts = append(texts, string(kv.Key)+": "+kv.Value.AsString())
				}
			}
			for _, text := range texts {
				for _, leak := range []string{secret, prompt, answer, reply} {
					if strings.Contains(text, leak) {
						t.Errorf("%s carries %q", text, leak)
					}
				}
			}
			for k, w := range c.want {
				switch g := got[k].(type) {
				case []string:
					if !slices.Equal(g, w.([]string)) {
						t.Errorf("%s = %q, want %q", k, g, w)
					}
				default:
					if g != w {
						t.Errorf("%s = %#v, want %#v", k, g, w)
					}
				}
			}
			for _, k := range c.absent {
				if v, ok := got[k]; ok {
					t.Errorf("%s = %v, want none", k, v)
				}
			}
			if failed := span.Status.Code == codes.Error; failed != c.failed {
				t.Errorf("status %v, failed %v", span.Status, c.failed)
			}
		})
	}
}
