package main

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `baton explain FILE --svg OUT.svg` prints the same timeline and draws it: a well-formed SVG
// with a bar per attempt, the fallback's write and the numbered steps.
func TestExplainDrawsTheTimelineAsSVG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "incident.svg")
	code, stdout, stderr := baton(t, "explain", filepath.Join("..", "workflows", "testdata", "reply-rate-limit-fallback.json"), "--svg", out)
	if code != 0 {
		t.Fatal(stderr)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "explain-reply-rate-limit-fallback.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(want) {
		t.Errorf("with --svg the text changed:\n%s", stdout)
	}
	if !strings.Contains(stderr, out) {
		t.Errorf("stderr does not name the file: %q", stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(data)
	if !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg"`) {
		t.Fatalf("not an SVG document: %.200s", svg)
	}
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
	}
	for want, n := range map[string]int{`class="bt-step bt-attempt`: 7, `data-auth-profile="openai:a"`: 3, `data-auth-profile="openai:b"`: 3,
		`class="bt-step bt-write"`: 1, `class="bt-list`: 8, "Model Fallback: anthropic/claude-sonnet-4-5": 1} {
		if got := strings.Count(svg, want); got != n {
			t.Errorf("%q appears %d times, want %d", want, got, n)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*"))
	if len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

func TestExplainSVGNeedsAFileName(t *testing.T) {
	code, _, stderr := baton(t, "explain", filepath.Join("..", "workflows", "testdata", "reply-rate-limit-fallback.json"), "--svg", "")
	if code != exitUsage || !strings.Contains(stderr, "--svg") {
		t.Errorf("got %d %q", code, stderr)
	}
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "x.svg")
	code, _, stderr = baton(t, "explain", filepath.Join("..", "workflows", "testdata", "reply-rate-limit-fallback.json"), "--svg", missing)
	if code != exitFailure || !strings.Contains(stderr, "--svg "+missing) {
		t.Errorf("got %d %q", code, stderr)
	}
}
