package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/batonhq/baton/provider"
)

func TestKeepAlivesAreWhatTheWiresSkip(t *testing.T) {
	var o, a bytes.Buffer
	if err := OpenAIKeepAlive(&o); err != nil || o.String() != ": keep-alive\n\n" {
		t.Errorf("OpenAI keep-alive %q, %v: want an SSE comment", o.String(), err)
	}
	if err := AnthropicKeepAlive(&a); err != nil || a.String() != "event: ping\ndata: {\"type\": \"ping\"}\n\n" {
		t.Errorf("Anthropic keep-alive %q, %v: want its ping event", a.String(), err)
	}
}

// A stream cannot carry a Retry-After header once its headers went out: its message says it.
func TestAStreamsErrorEventSaysItsRetryAfter(t *testing.T) {
	e := &Error{Status: 429, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "every candidate is rate-limited", RetryAfter: 12}
	var o, a bytes.Buffer
	NewOpenAIStream(&o, nil, "id", "m", 0, false).Error(e)
	NewAnthropicStream(&a, nil, "id", "m", provider.Usage{}).Error(e)
	if want := `data: {"error":{"message":"every candidate is rate-limited (retry after 12 s)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`; strings.TrimSpace(o.String()) != want {
		t.Errorf("OpenAI:\n%s\nwant\n%s", o.String(), want)
	}
	if want := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"every candidate is rate-limited (retry after 12 s)\"}}"; strings.TrimSpace(a.String()) != want {
		t.Errorf("Anthropic:\n%s\nwant\n%s", a.String(), want)
	}
	if e.Message != "every candidate is rate-limited" {
		t.Errorf("the error itself changed: %q", e.Message)
	}
}
