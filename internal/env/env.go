// Package env reads baton's settings from the environment. Every error names the variable, so a
// worker with a bad setting stops at start with a line that says what to fix.
package env

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/batonhq/baton/internal/logging"
	"github.com/sethvargo/go-envconfig"
)

// Temporal says where the Temporal frontend is and which task queue baton's workers poll.
type Temporal struct {
	Address   string `env:"TEMPORAL_ADDRESS, default=127.0.0.1:7233"`
	Namespace string `env:"TEMPORAL_NAMESPACE, default=default"`
	TaskQueue string `env:"BATON_TASK_QUEUE, default=baton"`
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
	return envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: l})
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
	return nil
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
	if _, err := logging.New(w.LogLevel, "json"); err != nil {
		return fmt.Errorf("LOG_LEVEL: %q is not one of %s", w.LogLevel, strings.Join(logging.Levels, ", "))
	}
	if _, err := logging.New("info", w.LogFormat); err != nil {
		return fmt.Errorf("LOG_FORMAT: %q is not one of %s", w.LogFormat, strings.Join(logging.Formats, ", "))
	}
	return nil
}

// ValidateAddress accepts host:port with a numeric port.
func ValidateAddress(addr string) error {
	if addr == "" {
		return fmt.Errorf("empty (want host:port)")
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
