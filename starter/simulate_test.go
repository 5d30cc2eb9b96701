package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// simulate --check plays a scenario that bounds a whole attempt (timeouts.attemptMs) and finds
// it matches its expect.
func TestSimulateCheckAcceptsAnAttemptBound(t *testing.T) {
	file := filepath.Join("..", "testsuite", "scenarios", "own", "15-attempt-bound.json")
	code, stdout, stderr := baton(t, "simulate", "--check", file)
	if code != 0 || !strings.Contains(stderr, "matches expect") || !strings.Contains(stdout, `"reason": "timeout"`) {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}
