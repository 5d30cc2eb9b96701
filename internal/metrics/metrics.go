// Package metrics is baton's Prometheus registry, on the standard client (client_golang): baton's
// own series are client_golang vectors, and the Temporal SDK's metrics (temporal_*, and what the
// workflow emits through its replay-safe handler: baton_fallbacks_total, baton_reply_latency) reach
// the same registry through the SDK's OpenTelemetry bridge and OpenTelemetry's Prometheus exporter.
package metrics

import (
	"net/http"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// Bounds of every histogram, in seconds: from a fast reply to a day-long disable.
var Bounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400}

// help is the HELP text of baton's own series; a series not named here still works, without one.
var help = map[string]string{
	"baton_attempts_total":   "Provider calls by provider, model, result and reason.",
	"baton_cooldown_seconds": "Length of the cooldowns and disables failures opened.",
	"baton_tokens_total":     "Tokens provider calls consumed, by provider, model and kind (input, output, cached_input, cache_write).",
	"baton_cost_total":       "US dollars provider calls cost, by provider and model, at the catalog's prices (unpriced models add nothing).",
}

// sdkHelp is the HELP text of what the workflow emits through the SDK's replay-safe handler.
var sdkHelp = map[string]string{
	"baton_fallbacks_total": "Replies answered by a fallback rather than the selected model.",
	"baton_reply_latency":   "Reply latency in seconds, by outcome.",
}

// declared are baton's own series, made at start so that a scrape shows them before their first
// value (label names fixed here).
var declared = []struct {
	name, kind string
	labels     []string
}{
	{"baton_attempts_total", "counter", []string{"model", "provider", "reason", "result"}},
	{"baton_cooldown_seconds", "histogram", []string{"provider", "reason"}},
	{"baton_tokens_total", "counter", []string{"kind", "model", "provider"}},
	{"baton_cost_total", "counter", []string{"model", "provider"}},
}

// Registry holds every series. The zero value is not usable: use New.
type Registry struct {
	reg *prometheus.Registry
	sdk client.MetricsHandler

	mu         sync.Mutex
	counters   map[string]*prometheus.CounterVec
	histograms map[string]*prometheus.HistogramVec
	labels     map[string][]string // each vector's label names, fixed at its first use
}

// New returns a registry with the Go runtime's and the process's collectors, and the SDK's
// metrics bridged into it.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry(), counters: map[string]*prometheus.CounterVec{},
		histograms: map[string]*prometheus.HistogramVec{}, labels: map[string][]string{}}
	r.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// The SDK's names are kept as they are (temporal_workflow_completed, baton_reply_latency): no
	// unit or _total suffixes, no OpenTelemetry scope labels, so dashboards built on Temporal's
	// own exporters keep working.
	exp, err := otelprom.New(otelprom.WithRegisterer(r.reg),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithoutSuffixes),
		otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo(),
		otelprom.WithAggregationSelector(func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
			if k == sdkmetric.InstrumentKindHistogram {
				return sdkmetric.AggregationExplicitBucketHistogram{Boundaries: Bounds}
			}
			return sdkmetric.DefaultAggregationSelector(k)
		}))
	if err != nil {
		panic(err) // only a duplicate registration fails, and the registry is new
	}
	for _, d := range declared {
		r.labels[d.name] = d.labels
		if d.kind == "counter" {
			r.counters[d.name] = prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.name, Help: helpOf(d.name)}, d.labels)
			r.reg.MustRegister(r.counters[d.name])
		} else {
			r.histograms[d.name] = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: d.name, Help: helpOf(d.name), Buckets: Bounds}, d.labels)
			r.reg.MustRegister(r.histograms[d.name])
		}
	}
	// The workflow's own series come through the SDK, which gives them no description.
	var views []sdkmetric.View
	for name, h := range sdkHelp {
		views = append(views, sdkmetric.NewView(sdkmetric.Instrument{Name: name}, sdkmetric.Stream{Description: h}))
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithView(views...))
	r.sdk = temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter: provider.Meter("go.temporal.io/sdk"), UseMonotonicCounters: true,
		OnError: func(error) {}, // a metric that cannot be recorded must never stop a workflow
	})
	return r
}

// Prometheus is the underlying registry, for collectors of one's own (Register) and for tests.
func (r *Registry) Prometheus() *prometheus.Registry { return r.reg }

// Register adds a collector, such as one that reads gauges from the store at scrape time.
func (r *Registry) Register(c prometheus.Collector) error { return r.reg.Register(c) }

// Handler serves /metrics in the format the scraper asks for.
func (r *Registry) Handler() http.Handler {
	// One family failing to gather must not blank the page: the rest is still served.
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{Registry: r.reg, ErrorHandling: promhttp.ContinueOnError})
}

// SDK is the Temporal SDK's metrics handler on this registry (client.Options.MetricsHandler).
func (r *Registry) SDK() client.MetricsHandler { return r.sdk }

func names(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for k := range labels {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Add adds v to a counter. A counter's label names are fixed by its first use; a later call with
// other names is dropped rather than failing the activity that counts.
func (r *Registry) Add(name string, labels map[string]string, v float64) {
	r.mu.Lock()
	vec := r.counters[name]
	if vec == nil {
		r.labels[name] = names(labels)
		vec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: helpOf(name)}, r.labels[name])
		if err := r.reg.Register(vec); err != nil {
			r.mu.Unlock()
			return
		}
		r.counters[name] = vec
	}
	r.mu.Unlock()
	if c, err := vec.GetMetricWith(labels); err == nil {
		c.Add(v)
	}
}

// Observe records a value (seconds) in a histogram, as Add does for counters.
func (r *Registry) Observe(name string, labels map[string]string, v float64) {
	r.mu.Lock()
	vec := r.histograms[name]
	if vec == nil {
		r.labels[name] = names(labels)
		vec = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: helpOf(name), Buckets: Bounds}, r.labels[name])
		if err := r.reg.Register(vec); err != nil {
			r.mu.Unlock()
			return
		}
		r.histograms[name] = vec
	}
	r.mu.Unlock()
	if o, err := vec.GetMetricWith(labels); err == nil {
		o.Observe(v)
	}
}

func helpOf(name string) string {
	if h := help[name]; h != "" {
		return h
	}
	return name
}
