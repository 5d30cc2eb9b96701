package policy

import (
	"strings"
	"testing"
)

func TestAStreamFaultAfterTheCallerSawContent(t *testing.T) {
	cases := []struct {
		name               string
		mode               string
		delivered          bool
		partial            string
		toolCallsDelivered int
		want               string
	}{
		{"a failure before the first byte fails over unseen", MidStreamContinue, true, "", 0, afterFaultFailover},
		{"content no live caller saw fails over from scratch", MidStreamContinue, false, "The quick", 0, afterFaultFailover},
		{"continue: the next candidate continues the text", MidStreamContinue, true, "The quick", 0, afterFaultContinue},
		{"the default mode is continue", "", true, "The quick", 0, afterFaultContinue},
		{"error: the caller's stream ends with an error", MidStreamError, true, "The quick", 0, afterFaultStop},
		{"a tool call the caller holds cannot be continued", MidStreamContinue, true, "", 1, afterFaultStop},
	}
	for _, c := range cases {
		if got := midStreamAction(c.mode, c.delivered, c.partial, c.toolCallsDelivered); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if _, err := ParseConfig([]byte(`{streaming: {midStream: "retry"}}`)); err == nil || !strings.Contains(err.Error(), "streaming.midStream") {
		t.Errorf("a bad midStream is named: %v", err)
	}
	if cfg, err := ParseConfig([]byte(`{streaming: {midStream: "error"}}`)); err != nil || cfg.Streaming.MidStream != MidStreamError {
		t.Errorf("midStream error: %v %+v", err, cfg)
	}
}
