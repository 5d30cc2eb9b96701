package policy

import (
	"testing"
	"time"

	"github.com/batonhq/baton/provider"
)

func TestParseRetryHint(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		headers map[string]string
		body    string
		want    RetryHint
	}{
		{"Retry-After in seconds", map[string]string{"Retry-After": "2"}, "", RetryHint{After: 2 * time.Second, HasAfter: true}},
		{"Retry-After 0 is a hint to retry at once", map[string]string{"retry-after": "0"}, "", RetryHint{HasAfter: true}},
		{"retry-after-ms wins over Retry-After", map[string]string{"retry-after-ms": "1500", "retry-after": "9"}, "", RetryHint{After: 1500 * time.Millisecond, HasAfter: true}},
		{"Retry-After as an HTTP date", map[string]string{"Retry-After": "Thu, 01 Jan 2026 00:01:00 GMT"}, "", RetryHint{After: time.Minute, HasAfter: true}},
		{"a date in the past waits nothing", map[string]string{"Retry-After": "Wed, 31 Dec 2025 00:00:00 GMT"}, "", RetryHint{HasAfter: true}},
		{"garbage is no hint", map[string]string{"Retry-After": "soon"}, "", RetryHint{}},
		{"a negative value is no hint", map[string]string{"Retry-After": "-5"}, "", RetryHint{}},
		{"a huge value is capped", map[string]string{"Retry-After": "1e30"}, "", RetryHint{After: maxHint, HasAfter: true}},
		{"a Codex usage-limit body with resets_in_seconds", nil, `{"error":{"type":"usage_limit_reached","resets_in_seconds":3600}}`, RetryHint{ResetAt: now.Add(time.Hour)}},
		{"a body with resets_at", nil, `{"error":{"resets_at":1767229200}}`, RetryHint{ResetAt: time.Unix(1767229200, 0).UTC()}},
		{"Anthropic's unified reset header", map[string]string{"anthropic-ratelimit-unified-reset": "1767229200"}, "", RetryHint{ResetAt: time.Unix(1767229200, 0).UTC()}},
		{"nothing", nil, `{"error":{"message":"x"}}`, RetryHint{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The provider layer reads the headers and the body once; the policy reads that at now.
			e := (&provider.Error{Headers: c.headers}).Parse([]byte(c.body))
			got := RetryHintAt(RetryInfo(e.Retry), now)
			if got.After != c.want.After || got.HasAfter != c.want.HasAfter || !got.ResetAt.Equal(c.want.ResetAt) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
