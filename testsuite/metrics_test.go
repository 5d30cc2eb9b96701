package testsuite_test

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/logging"
	"github.com/batonhq/baton/internal/metrics"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.temporal.io/sdk/client"
)

// A reply that fails over shows in the metrics a worker serves: the SDK's own, and baton's.
func TestMetricsAreScraped(t *testing.T) {
	reg := metrics.New()
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{rateLimited()}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "counted"}}},
	})
	w.Acts.Metrics = reg
	c, err := client.NewClientFromExisting(testsuite.Client(t), client.Options{MetricsHandler: reg.SDK(), Logger: logging.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName,
		workflows.ReplyRequest{Agent: "main", Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	var text string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text = string(b)
		if strings.Contains(text, "baton_fallbacks_total") && strings.Contains(text, "temporal_workflow_completed") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{
		`baton_attempts_total{model="gpt-5",provider="openai",reason="rate_limit",result="failed"} 6`,
		`baton_attempts_total{model="claude-sonnet-4-5",provider="anthropic",reason="",result="succeeded"} 1`,
		"# TYPE baton_fallbacks_total counter",
		`baton_reply_latency_count{`,
		`baton_cooldown_seconds_bucket{provider="openai",reason="rate_limit",le="60"} 2`,
		"temporal_workflow_completed",
		"# HELP baton_fallbacks_total Replies answered by a fallback",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The page is valid Prometheus exposition, as the standard client's parser reads it, with
	// each family of the kind a dashboard expects.
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	for name, kind := range map[string]dto.MetricType{"baton_attempts_total": dto.MetricType_COUNTER, "baton_fallbacks_total": dto.MetricType_COUNTER,
		"baton_cooldown_seconds": dto.MetricType_HISTOGRAM, "baton_reply_latency": dto.MetricType_HISTOGRAM,
		"temporal_workflow_completed": dto.MetricType_COUNTER, "go_goroutines": dto.MetricType_GAUGE} {
		if f := fams[name]; f == nil || f.GetType() != kind {
			t.Errorf("%s: %v, want a %v", name, f.GetType(), kind)
		}
	}
	if t.Failed() || os.Getenv("BATON_SHOW_METRICS") != "" {
		t.Log(text)
	}
}
