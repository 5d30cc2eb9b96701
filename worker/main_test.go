package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
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
	code := run(nil, envconfig.MapLookuper(map[string]string{"TEMPORAL_ADDRESS": "127.0.0.1:1", "LOG_LEVEL": "error",
		"BATON_STORE": "sqlite://" + t.TempDir() + "/baton.db"}),
		&stderr, make(chan any))
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	if !strings.Contains(stderr.String(), "cannot connect to Temporal at 127.0.0.1:1 (TEMPORAL_ADDRESS)") {
		t.Errorf("stderr %q does not say which address failed", stderr.String())
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
