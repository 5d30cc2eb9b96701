package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/tracing"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/serve"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it keeps every span it is sent.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	Name, TraceID, Service string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				o.spans = append(o.spans, receivedSpan{Name: s.GetName(), TraceID: fmt.Sprintf("%x", s.GetTraceId()), Service: service})
			}
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// `baton serve` as an operator runs it: it answers /healthz and /readyz, takes the durable wait
// from a request field or header, and with OTEL_EXPORTER_OTLP_ENDPOINT a reply is one trace, from
// the HTTP request through the workflow (on the shared worker) to a span per attempt (on serve's
// own worker), all reaching an OTLP receiver.
func TestServeTracesAReplyAndAnswersHealthAndTheDurableWait(t *testing.T) {
	rcv := &otlpReceiver{}
	collector := httptest.NewServer(rcv)
	defer collector.Close()
	t.Setenv(tracing.EnvEndpoint, collector.URL)
	t.Setenv(tracing.EnvProtocol, "http/protobuf")

	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-trace-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-trace-b"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 404, Body: `{"error":{"message":"The model does not exist"}}`}}},
			{Respond: []fakeprovider.Response{{Text: "traced"}}}})
	cfgFile := filepath.Join(t.TempDir(), "baton.json5")
	if err := os.WriteFile(cfgFile, []byte(`{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}, models: `+
		lab.ModelsConfig(w.Config.Get())+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	// The shared worker, traced as baton-worker is when the same variable is set.
	workerTracing, err := tracing.Setup(context.Background(), "baton-worker", os.LookupEnv)
	if err != nil || workerTracing == nil {
		t.Fatalf("tracing: %v", err)
	}
	traced, err := client.NewClientFromExisting(srv.Client(), client.Options{Interceptors: workerTracing.ClientInterceptors()})
	if err != nil {
		t.Fatal(err)
	}
	defer traced.Close()
	testsuite.StartWorker(t, traced, tq, w.Acts)

	listen, _ := lab.FreeHostPort()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var serveErr bytes.Buffer
	go func() {
		done <- runServe(ctx, []string{"--listen", listen, "--address", srv.HostPort(), "--task-queue", tq,
			"--store", w.StoreURL, "--config", cfgFile}, io.Discard, &serveErr)
	}()
	base := "http://" + listen
	var code int
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if code, body = get(t, base+"/readyz"); code == http.StatusOK {
			break
		}
	}
	if code != http.StatusOK || !strings.Contains(body, "temporal: ok") || !strings.Contains(body, "store: ok") {
		t.Fatalf("/readyz: %d %s (%s)", code, body, serveErr.String())
	}
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}

	post := func(header, value string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions",
			strings.NewReader(`{"model":"openai/gpt-5","messages":[{"role":"user","content":"trace me"}]}`))
		req.Header.Set("Content-Type", "application/json")
		if header != "" {
			req.Header.Set(header, value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, b := post(serve.WaitHeader, "soon"); resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, serve.WaitHeader) {
		t.Errorf("a bad %s: %d %s", serve.WaitHeader, resp.StatusCode, b)
	}
	resp, b := post(serve.WaitHeader, "10m")
	if resp.StatusCode != http.StatusOK || !strings.Contains(b, "traced") {
		t.Fatalf("reply: %d %s", resp.StatusCode, b)
	}
	// The caller has its answer first; the reply's bookkeeping completes after it.
	if err := srv.Client().GetWorkflow(context.Background(), resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id")).Get(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// The durable wait reached the workflow's input.
	hist, err := testsuite.FetchHistory(context.Background(), srv.Client(), resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id"))
	if err != nil {
		t.Fatal(err)
	}
	var in workflows.ReplyRequest
	first := hist.GetEvents()[0]
	if first.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED ||
		converter.GetDefaultDataConverter().FromPayload(first.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0], &in) != nil ||
		in.WaitForCooldown != 10*time.Minute {
		t.Errorf("the reply's input waits %v, want 10m", in.WaitForCooldown)
	}
	// Eager start: serve's own worker ran the reply's first workflow task, handed back with the
	// start, and the unstreamed answer's attempts, handed back with the workflow task that
	// scheduled them (the test's worker polls the same queue and would otherwise take them as often).
	firstTask, attempts := "", 0
	for _, e := range hist.GetEvents() {
		if a := e.GetWorkflowTaskStartedEventAttributes(); a != nil && firstTask == "" {
			firstTask = a.GetIdentity()
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetTaskQueue().GetName() != tq {
			t.Errorf("an attempt went to task queue %q, want the shared %q (an unstreamed answer needs no door)", a.GetTaskQueue().GetName(), tq)
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil {
			attempts++
			if !strings.HasPrefix(a.GetIdentity(), "serve/") {
				t.Errorf("attempt %d ran on %q, want serve's worker (eager activity)", attempts, a.GetIdentity())
			}
		}
	}
	if !strings.HasPrefix(firstTask, "serve/") || attempts != 2 {
		t.Errorf("the first workflow task ran on %q, want serve's worker (eager start); %d attempts, want 2", firstTask, attempts)
	}

	cancel()
	if c := <-done; c != 0 {
		t.Errorf("serve exited %d: %s", c, serveErr.String())
	}
	_ = workerTracing.Shutdown(context.Background())
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	trace := ""
	for _, s := range rcv.spans {
		if s.Service == "baton-serve" && s.Name == "POST /v1/chat/completions" {
			trace = s.TraceID // the last: the successful request
		}
	}
	count := map[string]int{}
	services := map[string]bool{}
	for _, s := range rcv.spans {
		if s.TraceID == trace {
			count[s.Name]++
			services[s.Service] = true
		}
	}
	if trace == "" || count["StartWorkflow:Reply"] != 1 || count["RunWorkflow:Reply"] < 1 || count["RunActivity:Attempt"] != 2 ||
		!services["baton-serve"] {
		t.Errorf("trace %s: spans %v from %v, want the request, the workflow and one RunActivity:Attempt per attempt (2); all spans: %+v",
			trace, count, services, rcv.spans)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// An unstreamed caller holds nothing before the whole answer: a primary cut midway is a plain
// failover to a fresh answer, even under streaming.midStream "error" (which is for a caller
// holding part of an answer). serve runs the reply alone here, attempts included.
// serve's own workers count the replies they run on its /metrics, as baton-worker's do.
func TestAnUnstreamedCallerGetsAFreshFailoverForACutAnswer(t *testing.T) {
	three := 3
	const config = `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}, streaming: {midStream: "error"}}`
	w := testsuite.NewWorld(t, config,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-quiet-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-quiet-b"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "The quick brown fox jumps over the lazy dog.", CutAfterChunks: &three}}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "a fresh answer."}}}})
	cfgFile := filepath.Join(t.TempDir(), "baton.json5")
	if err := os.WriteFile(cfgFile, []byte(strings.TrimSuffix(config, "}")+`, models: `+lab.ModelsConfig(w.Config.Get())+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testsuite.SharedServer(t)
	base := startServeCommand(t, w, cfgFile)
	resp, body := testsuite.Post(t, base+"/v1/chat/completions", `{"model":"openai/gpt-5","messages":[{"role":"user","content":"x"}]}`, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"content":"a fresh answer."`) || resp.Header.Get("x-baton-attempts") != "2" {
		t.Errorf("%d %s (attempts %s)", resp.StatusCode, body, resp.Header.Get("x-baton-attempts"))
	}
	var sent struct{ Messages []struct{ Role string } }
	calls := w.Fake.Calls()
	_ = json.Unmarshal(calls[len(calls)-1].Body, &sent)
	if n := len(sent.Messages); n == 0 || sent.Messages[n-1].Role != "user" {
		t.Errorf("the fallback was asked to continue a cut answer nobody held: %s", calls[len(calls)-1].Body)
	}
	// The caller has its answer first; the reply counts its fallback when it completes.
	if err := srv.Client().GetWorkflow(context.Background(), resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id")).Get(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{`provider="openai",reason="timeout",result="failed"`, `provider="anthropic",reason="",result="succeeded"`, "baton_fallbacks_total"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("serve's /metrics lacks %s:\n%s", want, grepLines(metrics, "baton_"))
		}
	}
}

// startServeCommand runs `baton serve` on w's store with the config file, on a queue of its own,
// until the test ends; it returns its URL once /readyz answers.
func startServeCommand(t *testing.T, w *testsuite.World, cfgFile string) string {
	t.Helper()
	srv := testsuite.SharedServer(t)
	listen, _ := lab.FreeHostPort()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var serveErr bytes.Buffer
	go func() {
		done <- runServe(ctx, []string{"--listen", listen, "--address", srv.HostPort(), "--task-queue", testsuite.TaskQueue(t),
			"--store", w.StoreURL, "--config", cfgFile}, io.Discard, &serveErr)
	}()
	t.Cleanup(func() { cancel(); <-done })
	base := "http://" + listen
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if code, _ := get(t, base+"/readyz"); code == http.StatusOK {
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready: %s", serveErr.String())
		}
	}
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
