package logging

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestNewRejectsUnknownLevelAndFormat(t *testing.T) {
	cases := []struct {
		level, format, wantErr string
	}{
		{"info", "json", ""},
		{"debug", "console", ""},
		{"verbose", "json", `log level "verbose"`},
		{"info", "xml", `log format "xml"`},
		{"", "json", `log level ""`},
	}
	for _, c := range cases {
		_, err := New(c.level, c.format)
		if c.wantErr == "" && err != nil {
			t.Errorf("New(%q, %q): unexpected error %v", c.level, c.format, err)
		}
		if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("New(%q, %q) = %v, want error containing %q", c.level, c.format, err, c.wantErr)
		}
	}
}

func TestSDKAdapterKeepsKeyValuesAndLevels(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	l := SDK(zap.New(core)).(sdkLogger)
	l.With("Namespace", "default").Warn("poll failed", "Attempt", 3)
	l.Debug("d")

	entries := logs.All()
	if len(entries) != 2 {
		t.Fatalf("got %d entries, want 2", len(entries))
	}
	if e := entries[0]; e.Level != zap.WarnLevel || e.Message != "poll failed" ||
		e.ContextMap()["Namespace"] != "default" || e.ContextMap()["Attempt"] != int64(3) {
		t.Errorf("unexpected entry %+v %v", e.Entry, e.ContextMap())
	}
	if entries[1].Level != zap.DebugLevel {
		t.Errorf("second entry level %v, want debug", entries[1].Level)
	}
}
