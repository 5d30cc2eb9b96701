package testsuite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func TestMain(m *testing.M) { testsuite.Main(m) }

const (
	stateQuery   = "state"
	renameUpdate = "rename"
)

// greetWorkflow is the smallest workflow that uses everything baton's replies use: a query,
// an update with a validator, and an activity.
func greetWorkflow(ctx workflow.Context, greeting string) (string, error) {
	state, name := "waiting", ""
	if err := workflow.SetQueryHandler(ctx, stateQuery, func() (string, error) { return state, nil }); err != nil {
		return "", err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, renameUpdate,
		func(ctx workflow.Context, n string) (string, error) { name = n; return "renamed to " + n, nil },
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, n string) error {
			if n == "" {
				return errors.New("empty name")
			}
			return nil
		}},
	); err != nil {
		return "", err
	}
	if err := workflow.Await(ctx, func() bool { return name != "" }); err != nil {
		return "", err
	}
	state = "greeting"
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	if err := workflow.ExecuteActivity(ctx, "greet", greeting, name).Get(ctx, &out); err != nil {
		return "", err
	}
	state = "done"
	return out, nil
}

// greetWorkflowChanged decides differently (a timer before the activity): replaying an old
// history against it must fail.
func greetWorkflowChanged(ctx workflow.Context, greeting string) (string, error) {
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return "", err
	}
	return greetWorkflow(ctx, greeting)
}

func greet(_ context.Context, greeting, name string) (string, error) {
	return greeting + ", " + name, nil
}

func registerGreet(r worker.Registry) {
	r.RegisterWorkflowWithOptions(greetWorkflow, workflow.RegisterOptions{Name: "greet"})
	r.RegisterActivityWithOptions(greet, activity.RegisterOptions{Name: "greet"})
}

func TestDevServerRunsWorkflowUpdateQueryScheduleAndReplay(t *testing.T) {
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, nil, registerGreet)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-" + tq, TaskQueue: tq}, "greet", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if got := queryState(t, ctx, c, run.GetID()); got != "waiting" {
		t.Errorf("state before the update = %q, want waiting", got)
	}
	if _, err := update(ctx, c, run.GetID(), ""); err == nil || !strings.Contains(err.Error(), "empty name") {
		t.Errorf("an empty name passed the validator: %v", err)
	}
	if got, err := update(ctx, c, run.GetID(), "baton"); err != nil || got != "renamed to baton" {
		t.Fatalf("update = %q, %v", got, err)
	}
	var result string
	if err := run.Get(ctx, &result); err != nil || result != "hello, baton" {
		t.Fatalf("result = %q, %v; want hello, baton", result, err)
	}
	if got := queryState(t, ctx, c, run.GetID()); got != "done" {
		t.Errorf("state after completion = %q, want done", got)
	}

	// The recorded history replays against the same code, and fails against changed code.
	hist, err := testsuite.FetchHistory(ctx, c, run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	same := worker.NewWorkflowReplayer()
	same.RegisterWorkflowWithOptions(greetWorkflow, workflow.RegisterOptions{Name: "greet"})
	if err := same.ReplayWorkflowHistory(nil, hist); err != nil {
		t.Errorf("replay against the same code: %v", err)
	}
	changed := worker.NewWorkflowReplayer()
	changed.RegisterWorkflowWithOptions(greetWorkflowChanged, workflow.RegisterOptions{Name: "greet"})
	// TMPRL1100 is the SDK's code for a nondeterministic replay.
	if err := changed.ReplayWorkflowHistory(nil, hist); err == nil || !strings.Contains(err.Error(), "TMPRL1100") {
		t.Errorf("replay against changed code = %v, want a nondeterminism error", err)
	}

	// A schedule starts the same workflow.
	sched, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:                 "greet-schedule-" + tq,
		Spec:               client.ScheduleSpec{CronExpressions: []string{"0 9 * * *"}},
		Action:             &client.ScheduleWorkflowAction{ID: "greet-scheduled-" + tq, Workflow: "greet", Args: []any{"good morning"}, TaskQueue: tq},
		TriggerImmediately: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sched.Delete(context.Background()) }()
	scheduledID := waitForScheduledRun(t, ctx, sched)
	if _, err := update(ctx, c, scheduledID, "cron"); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, scheduledID, "").Get(ctx, &result); err != nil || result != "good morning, cron" {
		t.Fatalf("scheduled result = %q, %v", result, err)
	}
}

func TestDevServerRegistersProjectSearchAttributes(t *testing.T) {
	c := testsuite.Client(t)
	resp, err := c.OperatorService().ListSearchAttributes(context.Background(),
		&operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]enumspb.IndexedValueType{
		"BatonAgent":          enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"BatonSession":        enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"BatonFinalModel":     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"BatonFailoverReason": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"BatonAttempts":       enumspb.INDEXED_VALUE_TYPE_INT,
		"BatonUsedFallback":   enumspb.INDEXED_VALUE_TYPE_BOOL,
	}
	for name, typ := range want {
		if got, ok := resp.GetCustomAttributes()[name]; !ok || got != typ {
			t.Errorf("search attribute %s: got %v (present %v), want %v", name, got, ok, typ)
		}
	}
}

func TestDevServerRefusesAPortInUse(t *testing.T) {
	testsuite.NeedsServer(t) // the binary: `make test` builds it, `make check` runs without it
	path, err := lab.DevServerPath()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)

	var stderr bytes.Buffer
	cmd := exec.Command(path, "server", "start-dev", "--ip", "127.0.0.1", "--port", port, "--headless")
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() == 0 {
		t.Fatalf("dev server on a taken port: %v, want a non-zero exit", err)
	}
	if want := fmt.Sprintf("--port %s: 127.0.0.1:%s is not free", port, port); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not contain %q", stderr.String(), want)
	}
}

func TestDevServerRefusesUnknownFlags(t *testing.T) {
	testsuite.NeedsServer(t) // the binary: `make test` builds it, `make check` runs without it
	path, err := lab.DevServerPath()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(path, "server", "start-dev", "--no-such-flag")
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
		t.Fatalf("unknown flag: %v, want exit 2", err)
	}
	if !strings.Contains(stderr.String(), "no-such-flag") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr %q: want one line naming the flag", stderr.String())
	}
}

func queryState(t *testing.T, ctx context.Context, c client.Client, id string) string {
	t.Helper()
	v, err := c.QueryWorkflow(ctx, id, "", stateQuery)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := v.Get(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func update(ctx context.Context, c client.Client, id, name string) (string, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: renameUpdate, Args: []any{name}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return "", err
	}
	var out string
	err = h.Get(ctx, &out)
	return out, err
}

func waitForScheduledRun(t *testing.T, ctx context.Context, h client.ScheduleHandle) string {
	t.Helper()
	for {
		desc, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if runs := desc.Info.RecentActions; len(runs) > 0 {
			return runs[0].StartWorkflowResult.WorkflowID
		}
		select {
		case <-ctx.Done():
			t.Fatal("the schedule started no workflow")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// The credential scan that Main runs finds a key that reached a history or a log, and says where.
func TestTheCredentialScanFindsALeakedKey(t *testing.T) {
	const leaked = "sk-selftest-leak-7f3a" // not registered: Main's own scan must not trip on it
	srv := testsuite.SharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, nil)
	run, err := srv.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, workflows.PingWorkflowName,
		workflows.PingInput{Message: "my key is " + leaked})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	leaks, n, err := testsuite.ScanHistories(ctx, srv, []string{leaked})
	if err != nil || n == 0 {
		t.Fatalf("scanned %d histories: %v", n, err)
	}
	if len(leaks) != 1 || !strings.Contains(leaks[0].String(), run.GetID()) || strings.Contains(leaks[0].String(), leaked) {
		t.Errorf("leaks %v", leaks)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "worker.log"), []byte("{\"msg\":\"ok\"}\n{\"msg\":\"Bearer "+leaked+"\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	leaks, n, err = testsuite.ScanFiles(dir, []string{leaked, "sk-not-there"})
	if err != nil || n != 1 || len(leaks) != 1 || !strings.HasSuffix(leaks[0].Where, "worker.log:2") {
		t.Errorf("files %d, leaks %v, %v", n, leaks, err)
	}
}
