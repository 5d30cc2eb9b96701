package main

import (
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
)

func TestCronJobFiresAndFailsOverOnTheRealServer(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "anthropic/claude", fallbacks: ["openai/gpt-5-mini"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-c-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-c-b"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5"}, Respond: []fakeprovider.Response{{Status: 429,
				Headers: map[string]string{"retry-after": "0"}, Body: `{"error":{"message":"Rate limit reached for gpt-5"}}`}}},
			{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5-mini"}, Respond: []fakeprovider.Response{{Text: "the daily digest"}}},
		})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	conn := []string{"--address", srv.HostPort(), "--task-queue", tq}
	job := "digest-" + tq[len(tq)-6:]
	run := func(args ...string) (int, string, string) {
		return baton(t, append(append([]string{"cron"}, args...), conn...)...)
	}

	if code, stdout, stderr := run("add", job, "--cron", "0 9 * * *", "--tz", "Europe/Berlin", "--model", "openai/gpt-5", "daily digest"); code != 0 ||
		!strings.Contains(stdout, `"0 9 * * *" (Europe/Berlin)`) {
		t.Fatalf("add: %d %s %s", code, stdout, stderr)
	}
	defer run("delete", job)
	if code, _, stderr := run("trigger", job); code != 0 {
		t.Fatal(stderr)
	}
	var described string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, described, _ = run("describe", job)
		if strings.Contains(described, "answered by") || time.Now().After(deadline) {
			break
		}
	}
	// payload.model is a job primary that uses the configured fallbacks: gpt-5 is rate-limited (a
	// cooldown for that model only), the configured fallback gpt-5-mini answers on the same key.
	if !strings.Contains(described, `answered by openai/gpt-5-mini: "the daily digest"`) || !strings.Contains(described, "cron:   0 9 * * * (Europe/Berlin)") {
		t.Fatalf("describe:\n%s", described)
	}
	if code, _, stderr := run("pause", job, "--note", "holiday"); code != 0 {
		t.Fatal(stderr)
	}
	// The list comes from visibility, which catches up a moment later.
	var listed string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, listed, _ = run("list")
		if strings.Contains(listed, job) && strings.Contains(listed, "true") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(listed, job) || !strings.Contains(listed, "0 9 * * *") || !strings.Contains(listed, "true") {
		t.Errorf("list after pause:\n%s", listed)
	}
	if _, stdout, _ := run("describe", job); !strings.Contains(stdout, "paused: true (holiday)") {
		t.Errorf("describe after pause:\n%s", stdout)
	}
	if code, _, stderr := run("resume", job); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := run("backfill", job, "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z"); code != 0 {
		t.Errorf("backfill: %s", stderr)
	}
	if code, _, stderr := run("delete", job); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := run("describe", job); code != exitFailure || !strings.Contains(stderr, job) {
		t.Errorf("describe after delete: %d %s", code, stderr)
	}
}

func TestCronRefusesWhatDoesNotParse(t *testing.T) {
	srv := testsuite.SharedServer(t)
	conn := []string{"--address", srv.HostPort()}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cron"}, exitUsage, "want a subcommand"},
		{[]string{"cron", "add", "j", "msg"}, exitUsage, "--cron: missing"},
		{[]string{"cron", "add", "j", "--cron", "0 9 * *", "msg"}, exitUsage, "has 4 fields"},
		{[]string{"cron", "add", "j", "--cron", "0 9 * * *", "--tz", "Mars/Olympus", "msg"}, exitUsage, `--tz: "Mars/Olympus" is not a time zone`},
		{[]string{"cron", "add", "j", "--cron", "0 9 * * *", "--overlap", "sometimes", "msg"}, exitUsage, "--overlap"},
		{[]string{"cron", "add", "j", "--cron", "0 9 * * *", "--fallbacks", "a/b", "--no-fallbacks", "--model", "x/y", "msg"}, exitUsage, "together"},
		{[]string{"cron", "add", "j", "--cron", "0 9 * * *", "--fallbacks", "a/b", "msg"}, exitUsage, "need --model"},
		{[]string{"cron", "add", "j", "--cron", "0 9 * * *"}, exitUsage, "want ID"},
		{[]string{"cron", "add", "bad-minute", "--cron", "99 9 * * *", "msg"}, exitFailure, "bad-minute"},
		{[]string{"cron", "backfill", "j", "--from", "yesterday", "--to", "2026-01-01T00:00:00Z"}, exitUsage, "--from"},
	}
	for _, c := range cases {
		code, _, stderr := baton(t, append(c.args, conn...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("baton %v: exit %d %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
