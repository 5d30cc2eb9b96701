package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/batonhq/baton/testsuite"
)

func TestMain(m *testing.M) { testsuite.Main(m) }

func baton(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadInputExits2WithOneLineNamingIt(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"ping", "--bogus"}, "-bogus"},
		{[]string{"ping", "--timeout", "soon"}, "-timeout"},
		{[]string{"ping", "--timeout", "-1s"}, "--timeout must be positive"},
		{[]string{"ping", "--address", "nohost"}, "--address"},
		{[]string{"ping", "extra"}, `unexpected argument "extra"`},
		{[]string{"version", "x"}, `unexpected argument "x"`},
		{[]string{"cron", "add", "digest", "--cron", "0 9 * * *", "--budget-per-day", "-1", "the digest"}, "--budget-per-day -1 is not an amount of US dollars"},
	}
	for _, c := range cases {
		code, _, stderr := baton(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("baton %v: exit %d, stderr %q; want exit 2 and one line naming %q", c.args, code, stderr, c.want)
		}
	}
}

func TestHelpListsCommands(t *testing.T) {
	code, stdout, _ := baton(t, "help")
	if code != 0 || !strings.Contains(stdout, "ping") || !strings.Contains(stdout, "version") {
		t.Errorf("help: exit %d, %q", code, stdout)
	}
}

func TestPingAnswersThroughARealWorker(t *testing.T) {
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, nil)

	code, stdout, stderr := baton(t, "ping", "--address", srv.HostPort(), "--task-queue", tq, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Worker, TaskQueue, WorkflowID string
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--json output %q: %v", stdout, err)
	}
	if res.Worker != "test-worker" || res.TaskQueue != tq || !strings.HasPrefix(res.WorkflowID, "ping-") {
		t.Errorf("got %+v", res)
	}
}

func TestPingSaysWhenNoWorkerAnswers(t *testing.T) {
	srv := testsuite.SharedServer(t)
	code, _, stderr := baton(t, "ping", "--address", srv.HostPort(), "--task-queue", testsuite.TaskQueue(t), "--timeout", "2s")
	if code != exitFailure || !strings.Contains(stderr, "no worker answered on task queue") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
