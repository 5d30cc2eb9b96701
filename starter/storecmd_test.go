package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctorImportsAndAuthListShowsNoSecret(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "baton.db")
	state := filepath.Join("..", "store", "testdata", "openclaw-state")

	code, stdout, stderr := baton(t, "doctor", "--state-dir", state, "--store", url)
	if code != 0 || !strings.Contains(stdout, "Would import") || !strings.Contains(stdout, "--fix") {
		t.Fatalf("report: exit %d %s %s", code, stdout, stderr)
	}
	// A report writes nothing: not even the store's file.
	if code, stdout, stderr = baton(t, "auth", "list", "--store", url, "--json"); code != exitFailure || !strings.Contains(stderr, "does not exist") {
		t.Fatalf("a report without --fix wrote something: exit %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr = baton(t, "doctor", "--fix", "--state-dir", state, "--store", url); code != 0 {
		t.Fatalf("--fix: exit %d %s", code, stderr)
	}
	code, stdout, _ = baton(t, "auth", "list", "--store", url, "--json")
	var rows []struct{ ID, Type, State string }
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || code != 0 || len(rows) != 5 {
		t.Fatalf("auth list --json: %v %s", err, stdout)
	}
	for _, secret := range []string{"sk-ant-legacy-1", "acc-legacy", "ref-legacy", "sk-openai-legacy", "ga-acc"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("auth list shows a secret")
		}
	}

	stdin = strings.NewReader("sk-from-stdin\n")
	defer func() { stdin = os.Stdin }()
	if code, stdout, stderr = baton(t, "auth", "add", "--store", url, "--provider", "xai"); code != 0 || !strings.Contains(stdout, "xai:default") {
		t.Errorf("auth add: %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr = baton(t, "auth", "order", "set", "--store", url, "openai", "openai:api-key-backup"); code != 0 {
		t.Errorf("order set: %s", stderr)
	}
	if code, _, stderr = baton(t, "auth", "clear-cooldown", "--store", url, "anthropic:default"); code != 0 {
		t.Errorf("clear-cooldown: %s", stderr)
	}
	_, stdout, _ = baton(t, "auth", "list", "--store", url)
	if !strings.Contains(stdout, "xai:default") || strings.Contains(stdout, "sk-from-stdin") {
		t.Errorf("table: %s", stdout)
	}
}

func TestAuthAndDoctorRefuseBadInput(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "baton.db")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"doctor"}, exitUsage, "--state-dir is required"},
		{[]string{"doctor", "--state-dir", "/nonexistent", "--store", url}, exitFailure, "nothing written"},
		{[]string{"auth"}, exitUsage, "want a subcommand"},
		{[]string{"auth", "frob"}, exitUsage, `unknown subcommand "frob"`},
		{[]string{"auth", "add", "--store", url}, exitUsage, "--provider is required"},
		{[]string{"auth", "add", "--store", url, "--provider", "openai", "--type", "password", "--key", "k"}, exitUsage, `type "password"`},
		{[]string{"auth", "add", "--store", url, "--provider", "openai", "--key", "k", "--expires", "tomorrow"}, exitUsage, "--expires"},
		{[]string{"auth", "order", "set", "--store", url, "openai", "anthropic:a"}, exitUsage, "not a openai profile"},
		{[]string{"auth", "clear-cooldown", "--store", url, "openai:nope"}, exitFailure, `no profile "openai:nope"`},
		{[]string{"auth", "list", "--store", "mysql://x"}, exitFailure, "BATON_STORE"},
	}
	for _, c := range cases {
		code, _, stderr := baton(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("baton %v: exit %d, %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

func TestSessionCommands(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "baton.db")
	if code, stdout, _ := baton(t, "session", "model", "s1", "google/gemini@google:work", "--store", url); code != 0 ||
		!strings.Contains(stdout, "selected: google/gemini (your /model choice: strict, no fallback)") || !strings.Contains(stdout, "google:work (user pin)") {
		t.Errorf("session model: %s", stdout)
	}
	if code, stdout, _ := baton(t, "session", "compact", "s1", "--store", url); code != 0 || !strings.Contains(stdout, "compactions: 1") {
		t.Errorf("session compact: %s", stdout)
	}
	if code, stdout, _ := baton(t, "session", "reset", "s1", "--store", url); code != 0 || strings.Contains(stdout, "pin") || !strings.Contains(stdout, "google/gemini") {
		t.Errorf("session reset keeps the user's model and drops the pin: %s", stdout)
	}
	if code, stdout, _ := baton(t, "session", "patch", "s1", "model=openai/gpt-5", "--store", url, "--json"); code != 0 || !strings.Contains(stdout, `"modelOverride": "gpt-5"`) {
		t.Errorf("session patch: %s", stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"session"}, "want a subcommand"},
		{[]string{"session", "frob", "s1"}, `unknown subcommand "frob"`},
		{[]string{"session", "model", "s1"}, "want SESSION provider/model[@profile]"},
		{[]string{"session", "model", "s1", "gpt-5"}, `"gpt-5" is not provider/model`},
		{[]string{"session", "model", "s1", "openai/gpt-5@anthropic:x"}, "not a openai profile"},
		{[]string{"session", "patch", "s1", "colour=blue"}, `unknown field "colour"`},
		{[]string{"session", "patch", "s1", "novalue"}, "is not field=value"},
	} {
		if code, _, stderr := baton(t, append(c.args, "--store", url)...); code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("baton %v: exit %d %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

func TestAReadOnlyCommandOnAStoreThatDoesNotExistSaysSo(t *testing.T) {
	missing := "sqlite://" + filepath.Join(t.TempDir(), "nope", "baton.db")
	for _, args := range [][]string{{"auth", "list"}, {"session", "status", "s1"}, {"session", "list"}} {
		code, _, stderr := baton(t, append(args, "--store", missing)...)
		if code != exitFailure || !strings.Contains(stderr, "does not exist, so there is nothing to read") {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
	if _, err := os.Stat(strings.TrimPrefix(missing, "sqlite://")); err == nil {
		t.Error("a read-only command created the store")
	}
}
