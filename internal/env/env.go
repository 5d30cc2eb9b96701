// Package env reads baton's settings from the environment. Every error names the variable, so a
// worker with a bad setting stops at start with a line that says what to fix.
package env

import (
	"context"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/internal/logging"
	"github.com/sethvargo/go-envconfig"
	"go.temporal.io/sdk/client"
)

// Temporal says where the Temporal frontend is and which task queue baton's workers poll.
type Temporal struct {
	Address   string `env:"TEMPORAL_ADDRESS, default=127.0.0.1:7233"`
	Namespace string `env:"TEMPORAL_NAMESPACE, default=default"`
	TaskQueue string `env:"BATON_TASK_QUEUE, default=baton"`
	// Compression is the gRPC compression to Temporal (see Compression): auto, gzip or none.
	Compression string `env:"BATON_GRPC_COMPRESSION, default=auto"`
}

// GrpcCompression is the client's compression under BATON_GRPC_COMPRESSION for its address.
func (t Temporal) GrpcCompression() (client.GrpcCompression, error) {
	return Compression(t.Compression, t.Address)
}

// DefaultStore is where baton keeps secrets, auth state and sessions when BATON_STORE is unset.
const DefaultStore = "sqlite://./.baton/baton.db"

// Worker is everything baton-worker reads from its environment.
type Worker struct {
	Temporal
	Store      string `env:"BATON_STORE, default=sqlite://./.baton/baton.db"`
	ConfigFile string `env:"BATON_CONFIG"`
	LogLevel   string `env:"LOG_LEVEL, default=info"`
	LogFormat  string `env:"LOG_FORMAT, default=json"`
	Limits
	// MetricsListen serves Prometheus metrics on host:port when set.
	MetricsListen string `env:"BATON_METRICS_LISTEN"`
	// PayloadKey encrypts workflow payloads (AES-256-GCM) when set.
	PayloadKey string `env:"BATON_PAYLOAD_KEY"`
	// ContentRetention is how long a turn's content stays in the store (a Go duration or Nd).
	ContentRetention string `env:"BATON_CONTENT_RETENTION, default=7d"`
}

// Limits bound a reply's waits and streams. Every process that runs replies reads them: the
// worker, and serve, which runs replies too.
type Limits struct {
	// RetryMaxWaitSeconds caps a Retry-After that a reply waits out (DESIGN.md).
	RetryMaxWaitSeconds int `env:"BATON_RETRY_MAX_WAIT_SECONDS, default=60"`
	// SkipTTL is BATON_FALLBACK_SKIP_TTL_MS, also read as OPENCLAW_FALLBACK_SKIP_TTL_MS.
	SkipTTLMs       string `env:"BATON_FALLBACK_SKIP_TTL_MS"`
	OpenClawSkipTTL string `env:"OPENCLAW_FALLBACK_SKIP_TTL_MS"`
	// FirstTokenMs is the first-token timeout of a plain request (seconds: a fast model's stall
	// fails over quickly); ReasoningFirstTokenMs that of a request that asks for reasoning or a
	// reasoning model (it thinks before its first token). A model's catalog entry may set its own.
	FirstTokenMs          int `env:"BATON_FIRST_TOKEN_TIMEOUT_MS, default=10000"`
	ReasoningFirstTokenMs int `env:"BATON_REASONING_FIRST_TOKEN_TIMEOUT_MS, default=60000"`
	IdleMs                int `env:"BATON_IDLE_TIMEOUT_MS, default=60000"`
	// AttemptMs bounds a whole attempt, from the request to its last chunk (0: no bound beyond
	// the others); a model's catalog entry may set its own (attemptTimeoutMs).
	AttemptMs int `env:"BATON_ATTEMPT_TIMEOUT_MS, default=0"`
	// ResponseMs bounds the wait for a provider's response headers.
	ResponseMs int `env:"BATON_RESPONSE_TIMEOUT_MS, default=10000"`
	// InfraRetries bounds the runs again of an attempt whose worker was lost.
	InfraRetries int `env:"BATON_INFRA_RETRIES, default=3"`
}

// LoadLimits reads the reply limits from l (the process environment if nil).
func LoadLimits(ctx context.Context, l envconfig.Lookuper) (Limits, error) {
	var lim Limits
	if err := process(ctx, l, &lim); err != nil {
		return lim, err
	}
	return lim, lim.Validate()
}

// Retention is BATON_CONTENT_RETENTION as a duration (validated by Validate).
func (w Worker) Retention() time.Duration {
	d, _ := ParseRetention(w.ContentRetention)
	return d
}

// ParseRetention reads a retention period: a Go duration (36h) or whole days (7d).
func ParseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (36h) or a number of days (7d)", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration (36h) or a number of days (7d)", s)
		}
	}
	if d < time.Minute {
		return 0, fmt.Errorf("%q is shorter than a minute: a reply's turn must outlive the reply", s)
	}
	return d, nil
}

// LoadTemporal reads the Temporal connection settings from l (the process environment if nil).
func LoadTemporal(ctx context.Context, l envconfig.Lookuper) (Temporal, error) {
	var t Temporal
	if err := process(ctx, l, &t); err != nil {
		return t, err
	}
	return t, t.Validate()
}

// LoadWorker reads the worker's settings from l (the process environment if nil).
func LoadWorker(ctx context.Context, l envconfig.Lookuper) (Worker, error) {
	var w Worker
	if err := process(ctx, l, &w); err != nil {
		return w, err
	}
	return w, w.Validate()
}

func process(ctx context.Context, l envconfig.Lookuper, target any) error {
	if l == nil {
		l = envconfig.OsLookuper()
	}
	err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: l})
	if err == nil {
		return nil
	}
	// go-envconfig names the struct field; say which variable instead.
	msg := err.Error()
	for field, name := range envNames(reflect.TypeOf(target).Elem()) {
		if rest, ok := strings.CutPrefix(msg, field+": "); ok {
			return fmt.Errorf("%s: %s", name, rest)
		}
	}
	return err
}

// envNames maps struct field names to their environment variables.
func envNames(t reflect.Type) map[string]string {
	out := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k, v := range envNames(f.Type) {
				out[k] = v
				out[f.Name+": "+k] = v // go-envconfig names the embedded struct first
			}
			continue
		}
		if tag := f.Tag.Get("env"); tag != "" {
			name, _, _ := strings.Cut(tag, ",")
			out[f.Name] = strings.TrimSpace(name)
		}
	}
	return out
}

// Validate checks each setting and names the variable of the first bad one.
func (t Temporal) Validate() error {
	if err := ValidateAddress(t.Address); err != nil {
		return fmt.Errorf("TEMPORAL_ADDRESS: %w", err)
	}
	if strings.TrimSpace(t.Namespace) == "" {
		return fmt.Errorf("TEMPORAL_NAMESPACE: empty")
	}
	if strings.TrimSpace(t.TaskQueue) == "" {
		return fmt.Errorf("BATON_TASK_QUEUE: empty")
	}
	_, err := t.GrpcCompression()
	return err
}

// Validate checks each setting and names the variable of the first bad one.
func (w Worker) Validate() error {
	if err := w.Temporal.Validate(); err != nil {
		return err
	}
	if err := ValidateStore(w.Store); err != nil {
		return fmt.Errorf("BATON_STORE: %w", err)
	}
	if w.ConfigFile != "" {
		if _, err := os.Stat(w.ConfigFile); err != nil {
			return fmt.Errorf("BATON_CONFIG: %w", err)
		}
	}
	if err := w.Limits.Validate(); err != nil {
		return err
	}
	if w.MetricsListen != "" {
		if err := ValidateAddress(w.MetricsListen); err != nil {
			return fmt.Errorf("BATON_METRICS_LISTEN: %w", err)
		}
	}
	if w.PayloadKey != "" {
		if _, err := codec.ParseKey(w.PayloadKey); err != nil {
			return fmt.Errorf("BATON_PAYLOAD_KEY: %w", err) // never echo the key
		}
	}
	if _, err := ParseRetention(w.ContentRetention); err != nil {
		return fmt.Errorf("BATON_CONTENT_RETENTION: %w", err)
	}
	if _, err := logging.New(w.LogLevel, "json"); err != nil {
		return fmt.Errorf("LOG_LEVEL: %q is not one of %s", w.LogLevel, strings.Join(logging.Levels, ", "))
	}
	if _, err := logging.New("info", w.LogFormat); err != nil {
		return fmt.Errorf("LOG_FORMAT: %q is not one of %s", w.LogFormat, strings.Join(logging.Formats, ", "))
	}
	return nil
}

// ValidateAddress accepts host:port with a numeric port, or several separated by commas (the
// frontends of one cluster's nodes).
func ValidateAddress(addr string) error {
	if addr == "" {
		return fmt.Errorf("empty (want host:port)")
	}
	if strings.Contains(addr, ",") {
		for _, a := range strings.Split(addr, ",") {
			if err := validateHostPort(strings.TrimSpace(a)); err != nil {
				return err
			}
		}
		return nil
	}
	return validateHostPort(addr)
}

func validateHostPort(addr string) error {
	if addr == "" {
		return fmt.Errorf("an empty entry in the list (want host:port,host:port)")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if host == "" {
		return fmt.Errorf("%q has no host", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q has no valid port", addr)
	}
	return nil
}

// ValidateStore accepts sqlite://PATH and postgres://… (or postgresql://…).
func ValidateStore(url string) error {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return fmt.Errorf("%q is not sqlite://PATH or postgres://…", url)
	}
	switch scheme {
	case "sqlite", "postgres", "postgresql":
	default:
		return fmt.Errorf("unknown scheme %q (want sqlite or postgres)", scheme)
	}
	if rest == "" {
		return fmt.Errorf("%q names no database", url)
	}
	return nil
}

// Validate checks each limit and names the variable of the first bad one.
func (l Limits) Validate() error {
	if l.RetryMaxWaitSeconds < 0 || l.RetryMaxWaitSeconds > 3600 {
		return fmt.Errorf("BATON_RETRY_MAX_WAIT_SECONDS: %d is not 0..3600", l.RetryMaxWaitSeconds)
	}
	if l.FirstTokenMs < 100 || l.FirstTokenMs > 3600000 {
		return fmt.Errorf("BATON_FIRST_TOKEN_TIMEOUT_MS: %d is not 100..3600000", l.FirstTokenMs)
	}
	if l.InfraRetries < 1 || l.InfraRetries > 100 {
		return fmt.Errorf("BATON_INFRA_RETRIES: %d is not 1..100", l.InfraRetries)
	}
	if l.ResponseMs < 100 || l.ResponseMs > 3600000 {
		return fmt.Errorf("BATON_RESPONSE_TIMEOUT_MS: %d is not 100..3600000", l.ResponseMs)
	}
	if l.IdleMs < 100 || l.IdleMs > 3600000 {
		return fmt.Errorf("BATON_IDLE_TIMEOUT_MS: %d is not 100..3600000", l.IdleMs)
	}
	if l.ReasoningFirstTokenMs < 100 || l.ReasoningFirstTokenMs > 3600000 {
		return fmt.Errorf("BATON_REASONING_FIRST_TOKEN_TIMEOUT_MS: %d is not 100..3600000", l.ReasoningFirstTokenMs)
	}
	if l.AttemptMs != 0 && (l.AttemptMs < 100 || l.AttemptMs > 3600000) {
		return fmt.Errorf("BATON_ATTEMPT_TIMEOUT_MS: %d is not 0 (no bound) or 100..3600000", l.AttemptMs)
	}
	return nil
}
