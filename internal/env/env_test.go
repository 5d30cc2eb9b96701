package env

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
)

func TestLoadWorkerDefaults(t *testing.T) {
	w, err := LoadWorker(context.Background(), envconfig.MapLookuper(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Worker{
		Temporal:         Temporal{Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "baton", Compression: "auto"},
		Store:            DefaultStore,
		LogLevel:         "info",
		LogFormat:        "json",
		Limits:           Limits{RetryMaxWaitSeconds: 60, FirstTokenMs: 10000, ReasoningFirstTokenMs: 60000, IdleMs: 60000, ResponseMs: 10000, InfraRetries: 3},
		ContentRetention: "7d",
	}
	if w != want || w.Retention() != 7*24*time.Hour {
		t.Errorf("got %+v, want %+v", w, want)
	}
}

func TestLoadWorkerNamesTheBadVariable(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "openclaw.json5")
	if err := os.WriteFile(existing, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		env     map[string]string
		wantErr string // "" means valid
	}{
		{"a full valid environment", map[string]string{
			"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_NAMESPACE": "agents", "BATON_TASK_QUEUE": "q",
			"BATON_STORE": "postgres://u@db/baton", "BATON_CONFIG": existing, "LOG_LEVEL": "debug", "LOG_FORMAT": "console",
		}, ""},
		{"an address without a port", map[string]string{"TEMPORAL_ADDRESS": "localhost"}, "TEMPORAL_ADDRESS"},
		{"a retention in hours", map[string]string{"BATON_CONTENT_RETENTION": "36h"}, ""},
		{"a retention that is no duration", map[string]string{"BATON_CONTENT_RETENTION": "a week"}, "BATON_CONTENT_RETENTION"},
		{"a retention too short to outlive a reply", map[string]string{"BATON_CONTENT_RETENTION": "10s"}, "BATON_CONTENT_RETENTION"},
		{"an address with a bad port", map[string]string{"TEMPORAL_ADDRESS": "localhost:http"}, "TEMPORAL_ADDRESS"},
		{"an empty address", map[string]string{"TEMPORAL_ADDRESS": ""}, "TEMPORAL_ADDRESS: empty"},
		{"a list with an empty entry", map[string]string{"TEMPORAL_ADDRESS": "a:7233,"}, "TEMPORAL_ADDRESS: an empty entry"},
		{"a list with a bad entry", map[string]string{"TEMPORAL_ADDRESS": "a:7233,b"}, "TEMPORAL_ADDRESS"},
		{"an empty namespace", map[string]string{"TEMPORAL_NAMESPACE": " "}, "TEMPORAL_NAMESPACE"},
		{"an empty task queue", map[string]string{"BATON_TASK_QUEUE": ""}, "BATON_TASK_QUEUE"},
		{"a compression gRPC has not", map[string]string{"BATON_GRPC_COMPRESSION": "zstd"}, `BATON_GRPC_COMPRESSION: "zstd" is not auto, gzip or none`},
		{"no compression", map[string]string{"BATON_GRPC_COMPRESSION": "none"}, ""},
		{"a store with an unknown scheme", map[string]string{"BATON_STORE": "mysql://db"}, `BATON_STORE: unknown scheme "mysql"`},
		{"a store that is a bare path", map[string]string{"BATON_STORE": "./baton.db"}, "BATON_STORE"},
		{"a store with no database", map[string]string{"BATON_STORE": "sqlite://"}, "BATON_STORE"},
		{"a config file that does not exist", map[string]string{"BATON_CONFIG": "/nonexistent/openclaw.json"}, "BATON_CONFIG"},
		{"an unknown log level", map[string]string{"LOG_LEVEL": "loud"}, `LOG_LEVEL: "loud"`},
		{"an unknown log format", map[string]string{"LOG_FORMAT": "xml"}, `LOG_FORMAT: "xml"`},
		{"a retry cap that is not a number", map[string]string{"BATON_RETRY_MAX_WAIT_SECONDS": "soon"}, "BATON_RETRY_MAX_WAIT_SECONDS"},
		{"a negative retry cap", map[string]string{"BATON_RETRY_MAX_WAIT_SECONDS": "-1"}, "BATON_RETRY_MAX_WAIT_SECONDS"},
		{"a first-token timeout too short", map[string]string{"BATON_FIRST_TOKEN_TIMEOUT_MS": "5"}, "BATON_FIRST_TOKEN_TIMEOUT_MS"},
		{"a reasoning first-token timeout", map[string]string{"BATON_REASONING_FIRST_TOKEN_TIMEOUT_MS": "120000"}, ""},
		{"a reasoning first-token timeout too short", map[string]string{"BATON_REASONING_FIRST_TOKEN_TIMEOUT_MS": "0"}, "BATON_REASONING_FIRST_TOKEN_TIMEOUT_MS"},
		{"a reasoning first-token timeout that is not a number", map[string]string{"BATON_REASONING_FIRST_TOKEN_TIMEOUT_MS": "1m"}, "BATON_REASONING_FIRST_TOKEN_TIMEOUT_MS"},
		{"an attempt bound", map[string]string{"BATON_ATTEMPT_TIMEOUT_MS": "120000"}, ""},
		{"no attempt bound", map[string]string{"BATON_ATTEMPT_TIMEOUT_MS": "0"}, ""},
		{"an attempt bound too short", map[string]string{"BATON_ATTEMPT_TIMEOUT_MS": "50"}, "BATON_ATTEMPT_TIMEOUT_MS"},
		{"a negative attempt bound", map[string]string{"BATON_ATTEMPT_TIMEOUT_MS": "-1"}, "BATON_ATTEMPT_TIMEOUT_MS"},
		{"an attempt bound over an hour", map[string]string{"BATON_ATTEMPT_TIMEOUT_MS": "3600001"}, "BATON_ATTEMPT_TIMEOUT_MS"},
		{"an attempt bound that is not a number", map[string]string{"BATON_ATTEMPT_TIMEOUT_MS": "2m"}, "BATON_ATTEMPT_TIMEOUT_MS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadWorker(context.Background(), envconfig.MapLookuper(c.env))
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case c.wantErr != "" && err == nil:
				t.Errorf("accepted; want an error naming %q", c.wantErr)
			case c.wantErr != "" && !strings.HasPrefix(err.Error(), c.wantErr):
				t.Errorf("error %q does not start with %q", err, c.wantErr)
			}
		})
	}
}
