package chaos

import "testing"

// A caller tries again where a retry mends it (a door gone, a reply that could not start, a door
// with no room) and stops at an error that names its cause.
func TestACallerRetriesOnlyWhatARetryMends(t *testing.T) {
	for _, c := range []struct {
		name string
		r    result
		want bool
	}{
		{"answered", result{Answered: true}, false},
		{"no door", result{Fail: "connection", ErrMessage: "connection refused"}, true},
		{"a stream cut without a word", result{Fail: "connection", Partial: true}, true},
		{"the reply could not start", result{Fail: "http", Status: 503, ErrType: "server_error"}, true},
		{"no room on the door", result{Fail: "http", Status: 429, ErrCode: "server_busy"}, true},
		{"every candidate failed", result{Fail: "http", Status: 502, ErrCode: "overloaded"}, false},
		{"a rate limit of the chain", result{Fail: "http", Status: 429, ErrType: "rate_limit_error"}, false},
		{"an error event mid-answer", result{Fail: "stream_error", Status: 200, ErrCode: "timeout"}, false},
	} {
		if got := retryable(c.r); got != c.want {
			t.Errorf("%s: retryable = %v, want %v", c.name, got, c.want)
		}
	}
}
