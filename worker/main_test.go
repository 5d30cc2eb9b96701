package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/sethvargo/go-envconfig"
	"go.uber.org/zap"
)

func TestRunRefusesBadInputWithExit2(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		env     map[string]string
		wantOut string
	}{
		{"an argument", []string{"--port", "1"}, nil, `unknown argument "--port"`},
		{"a bad log level", nil, map[string]string{"LOG_LEVEL": "loud"}, "LOG_LEVEL"},
		{"a bad address", nil, map[string]string{"TEMPORAL_ADDRESS": "nope"}, "TEMPORAL_ADDRESS"},
		{"a bad store", nil, map[string]string{"BATON_STORE": "redis://x"}, "BATON_STORE"},
		{"a bad connect timeout", nil, map[string]string{"BATON_CONNECT_TIMEOUT": "soon"}, "BATON_CONNECT_TIMEOUT"},
		{"a bad secret key", nil, map[string]string{"BATON_SECRET_KEY": "short"}, "BATON_SECRET_KEY"},
		{"old payload keys without a key", nil, map[string]string{"BATON_PAYLOAD_KEYS": strings.Repeat("ab", 32)}, "BATON_PAYLOAD_KEY"},
		{"a bad OTLP protocol", nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(c.args, envconfig.MapLookuper(c.env), &stderr, make(chan any))
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			out := stderr.String()
			if !strings.Contains(out, c.wantOut) || strings.Count(out, "\n") != 1 {
				t.Errorf("stderr %q: want one line naming %q", out, c.wantOut)
			}
		})
	}
}

func TestRunSaysWhereTemporalIsNotReachable(t *testing.T) {
	var stderr bytes.Buffer
	// Port 1 on loopback refuses at once.
	start := time.Now()
	code := run(nil, envconfig.MapLookuper(map[string]string{"TEMPORAL_ADDRESS": "127.0.0.1:1", "LOG_LEVEL": "error",
		"BATON_STORE": "sqlite://" + t.TempDir() + "/baton.db", "BATON_CONNECT_TIMEOUT": "2s"}),
		&stderr, make(chan any))
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	// It waited (BATON_CONNECT_TIMEOUT) instead of giving up at the first refusal.
	if d := time.Since(start); d < 1500*time.Millisecond || d > 15*time.Second {
		t.Errorf("gave up after %s, want about 2 s", d)
	}
	if !strings.Contains(stderr.String(), "cannot connect to Temporal at 127.0.0.1:1 (TEMPORAL_ADDRESS)") ||
		!strings.Contains(stderr.String(), "BATON_CONNECT_TIMEOUT") {
		t.Errorf("stderr %q does not say which address failed and how long it waited", stderr.String())
	}
}

func TestRunSaysWhenTheStoreCannotOpen(t *testing.T) {
	var stderr bytes.Buffer
	code := run(nil, envconfig.MapLookuper(map[string]string{"LOG_LEVEL": "error",
		"BATON_STORE": "postgres://baton:secret@127.0.0.1:1/baton?connect_timeout=2"}), &stderr, make(chan any))
	if code != exitFailure || !strings.Contains(stderr.String(), "BATON_STORE") || strings.Contains(stderr.String(), "secret") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestRunNamesTheConfigFileThatDoesNotParse(t *testing.T) {
	path := t.TempDir() + "/openclaw.json5"
	if err := os.WriteFile(path, []byte("{agents: {defaults: {model: 5}}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := run(nil, envconfig.MapLookuper(map[string]string{"BATON_CONFIG": path}), &stderr, make(chan any))
	if code != exitUsage || !strings.Contains(stderr.String(), "BATON_CONFIG: "+path+": agents.defaults.model (line 1, column 29)") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestConfigReloadKeepsTheLastGoodOne(t *testing.T) {
	path := t.TempDir() + "/openclaw.json5"
	write := func(s string, mod time.Time) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = os.Chtimes(path, mod, mod)
	}
	base := time.Now().Add(-time.Hour)
	write(`{agents: {defaults: {model: "openai/gpt-5"}}}`, base)
	cfg, loaded, err := activities.LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := &activities.ConfigSource{}
	src.Set(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Watch(ctx, path, loaded, 10*time.Millisecond, nil, zap.NewNop())

	write(`{agents: {defaults: {model: "anthropic/claude"}}}`, base.Add(time.Minute))
	waitFor(t, func() bool { return src.Get().Model.Primary.Provider == "anthropic" })
	write(`{agents: {defaults: {model: `, base.Add(2*time.Minute)) // broken
	time.Sleep(100 * time.Millisecond)
	if got := src.Get().Model.Primary.String(); got != "anthropic/claude" {
		t.Errorf("a broken file replaced the config: %s", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A model whose provider has neither a models.providers entry nor a stored profile is refused at
// start with its key and line (a reload that brings one keeps the last good config: ConfigSource.Watch).
func TestAnUnreachableModelIsRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "openclaw.json5")
	if err := os.WriteFile(cfgFile, []byte("{\n  agents: {defaults: {model: \"xai/grok-4\"}}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BATON_STORE": "sqlite://" + filepath.Join(dir, "baton.db"), "BATON_CONFIG": cfgFile, "TEMPORAL_ADDRESS": "127.0.0.1:1"}
	var stderr strings.Builder
	code := run(nil, envconfig.MapLookuper(env), &stderr, make(chan any))
	if code != exitUsage || !strings.Contains(stderr.String(), `agents.defaults.model (line 2, column 30): xai/grok-4: provider "xai" has no models.providers entry and no stored profile`) {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}
