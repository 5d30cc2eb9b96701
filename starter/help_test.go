package main

import (
	"sort"
	"strings"
	"testing"
)

// Every command and subcommand answers --help with its flags and an example, exit 0, without
// touching Temporal or a store.
func TestEveryCommandAnswersHelp(t *testing.T) {
	var lines [][]string
	for name := range commands {
		lines = append(lines, []string{name})
	}
	for _, sub := range []string{"list", "add", "order set", "clear-cooldown", "test", "disable", "enable", "remove", "rekey"} {
		lines = append(lines, append([]string{"auth"}, strings.Fields(sub)...))
	}
	for _, sub := range []string{"add", "list", "describe", "pause", "resume", "trigger", "backfill", "delete"} {
		lines = append(lines, []string{"cron", sub})
	}
	for _, sub := range []string{"list", "status", "model", "reset", "compact", "patch"} {
		lines = append(lines, []string{"session", sub})
	}
	lines = append(lines, []string{"history", "export"}, []string{"reply", "cancel"}, []string{"config", "check"})
	sort.Slice(lines, func(i, j int) bool { return strings.Join(lines[i], " ") < strings.Join(lines[j], " ") })
	for _, l := range lines {
		for _, h := range []string{"--help", "-h"} {
			code, stdout, stderr := baton(t, append(append([]string{}, l...), h)...)
			text := stdout + stderr
			if code != 0 || !strings.Contains(text, "Example") || !strings.Contains(text, "baton "+l[0]) {
				t.Errorf("baton %s %s: exit %d, want 0 with usage and an example:\n%s", strings.Join(l, " "), h, code, text)
			}
		}
		// A subcommand lists its flags (each has at least one, -h aside).
		if len(l) > 1 && l[0] != "history" {
			if _, stdout, stderr := baton(t, append(append([]string{}, l...), "--help")...); !strings.Contains(stdout+stderr, "  -") {
				t.Errorf("baton %s --help lists no flags", strings.Join(l, " "))
			}
		}
	}
}
