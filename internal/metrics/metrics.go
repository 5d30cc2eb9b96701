// Package metrics is a small Prometheus text-format registry: the Temporal SDK's metrics go
// through it (it implements the SDK's metrics handler) and so do baton's own.
package metrics

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	sdkmetrics "go.temporal.io/sdk/client"
)

// Registry holds every series. The zero value is not usable: use New.
type Registry struct {
	mu       sync.Mutex
	series   map[string]*series // by name and labels
	help     map[string]string
	kinds    map[string]string // counter | gauge | histogram
	onScrape []func(*Registry)
}

type series struct {
	name    string
	labels  map[string]string
	value   float64   // counter, gauge
	buckets []float64 // histogram: cumulative counts per bound
	count   uint64
	sum     float64
}

// Bounds of every histogram, in seconds.
var bounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400}

// New returns an empty registry.
func New() *Registry {
	return &Registry{series: map[string]*series{}, help: map[string]string{}, kinds: map[string]string{}}
}

// Describe sets a metric's HELP text.
func (r *Registry) Describe(name, help string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.help[name] = help
}

// OnScrape runs fn before each scrape (gauges computed from the store, say).
func (r *Registry) OnScrape(fn func(*Registry)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onScrape = append(r.onScrape, fn)
}

func key(name string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + labels[k])
	}
	return b.String()
}

func (r *Registry) get(kind, name string, labels map[string]string) *series {
	k := key(name, labels)
	s := r.series[k]
	if s == nil {
		s = &series{name: name, labels: labels}
		if kind == "histogram" {
			s.buckets = make([]float64, len(bounds))
		}
		r.series[k] = s
		r.kinds[name] = kind
	}
	return s
}

// Add adds v to a counter.
func (r *Registry) Add(name string, labels map[string]string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.get("counter", name, labels).value += v
}

// Set sets a gauge.
func (r *Registry) Set(name string, labels map[string]string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.get("gauge", name, labels).value = v
}

// Observe records a value (seconds) in a histogram.
func (r *Registry) Observe(name string, labels map[string]string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.get("histogram", name, labels)
	s.count++
	s.sum += v
	for i, b := range bounds {
		if v <= b {
			s.buckets[i]++
		}
	}
}

// Reset drops a metric's series (gauges recomputed at each scrape).
func (r *Registry) Reset(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, s := range r.series {
		if s.name == name {
			delete(r.series, k)
		}
	}
}

// WriteText writes the Prometheus text exposition format.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	hooks := append([]func(*Registry){}, r.onScrape...)
	r.mu.Unlock()
	for _, h := range hooks {
		h(r)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	byName := map[string][]*series{}
	for _, s := range r.series {
		byName[s.name] = append(byName[s.name], s)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if h := r.help[n]; h != "" {
			fmt.Fprintf(w, "# HELP %s %s\n", n, h)
		}
		fmt.Fprintf(w, "# TYPE %s %s\n", n, r.kinds[n])
		list := byName[n]
		sort.Slice(list, func(i, j int) bool { return key("", list[i].labels) < key("", list[j].labels) })
		for _, s := range list {
			if r.kinds[n] != "histogram" {
				fmt.Fprintf(w, "%s%s %s\n", n, labelText(s.labels, "", ""), num(s.value))
				continue
			}
			for i, b := range bounds {
				fmt.Fprintf(w, "%s_bucket%s %s\n", n, labelText(s.labels, "le", num(b)), num(s.buckets[i]))
			}
			fmt.Fprintf(w, "%s_bucket%s %d\n", n, labelText(s.labels, "le", "+Inf"), s.count)
			fmt.Fprintf(w, "%s_sum%s %s\n", n, labelText(s.labels, "", ""), num(s.sum))
			fmt.Fprintf(w, "%s_count%s %d\n", n, labelText(s.labels, "", ""), s.count)
		}
	}
	return nil
}

func num(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return fmt.Sprintf("%g", v)
}

func labelText(labels map[string]string, extraK, extraV string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", sanitize(k), labels[k]))
	}
	if extraK != "" {
		parts = append(parts, fmt.Sprintf("%s=%q", extraK, extraV))
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// Handler serves /metrics.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_ = r.WriteText(w)
	})
}

// SDK adapts the registry to the Temporal SDK's metrics handler; SDK metric names get the
// "temporal_" prefix they have in Temporal's own exporters.
func (r *Registry) SDK() sdkmetrics.MetricsHandler { return sdkHandler{r: r} }

type sdkHandler struct {
	r    *Registry
	tags map[string]string
}

func (h sdkHandler) WithTags(tags map[string]string) sdkmetrics.MetricsHandler {
	merged := map[string]string{}
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return sdkHandler{r: h.r, tags: merged}
}

func (h sdkHandler) name(n string) string {
	n = sanitize(n)
	if strings.HasPrefix(n, "baton_") || strings.HasPrefix(n, "temporal_") {
		return n
	}
	return "temporal_" + n
}

func (h sdkHandler) Counter(name string) sdkmetrics.MetricsCounter {
	return counter{h, h.name(name)}
}
func (h sdkHandler) Gauge(name string) sdkmetrics.MetricsGauge { return gauge{h, h.name(name)} }
func (h sdkHandler) Timer(name string) sdkmetrics.MetricsTimer { return timer{h, h.name(name)} }

type counter struct {
	h    sdkHandler
	name string
}

func (c counter) Inc(v int64) { c.h.r.Add(c.name, c.h.tags, float64(v)) }

type gauge struct {
	h    sdkHandler
	name string
}

func (g gauge) Update(v float64) { g.h.r.Set(g.name, g.h.tags, v) }

type timer struct {
	h    sdkHandler
	name string
}

func (t timer) Record(d time.Duration) { t.h.r.Observe(t.name, t.h.tags, d.Seconds()) }
