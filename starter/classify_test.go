package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestClassifyWritesOneLinePerInputAndGoesOnAfterBadJSON(t *testing.T) {
	in := strings.Join([]string{
		`{"message":"Too Many Requests","status":429}`,
		`{"message":"Provider returned error","provider":"openrouter"}`,
		`not json`,
		`{"message":"LLM request failed with an unknown error."}`,
		`{"message":"Key limit exceeded","provider":"openrouter","status":403,"code":"","type":""}`,
	}, "\n")
	var out, errOut bytes.Buffer
	if code := classifyStream(strings.NewReader(in), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{`{"reason":"rate_limit"}`, `{"reason":"timeout"}`, `{"error":"line 3: `, `{"reason":"none"}`, `{"reason":"billing"}`}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines: %q", len(lines), out.String())
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d = %s, want %s…", i+1, lines[i], want[i])
		}
	}
}
