package schedules

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/testsuite"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

func TestMain(m *testing.M) { testsuite.Main(m) }

func parse(t *testing.T, src string) *policy.Config {
	t.Helper()
	cfg, err := config.ParseConfig([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestFromConfig(t *testing.T) {
	cfg := parse(t, `{agents: {defaults: {heartbeat: {every: "30m", message: "tick"}},
	  list: [{id: "main"}, {id: "ops", heartbeat: {every: "1h", model: "openai/gpt-5-mini"}}]},
	  cron: {jobs: [{id: "digest", cron: "0 9 * * *", tz: "Europe/Berlin", message: "digest", payload: {model: "openai/gpt-5", fallbacks: [], waitForCooldown: "30m"}}]}}`)
	var got []string
	for _, d := range FromConfig(cfg) {
		s := d.ID + " " + strings.Join(d.Spec.CronExpressions, "") + d.Spec.TimeZoneName
		for _, iv := range d.Spec.Intervals {
			s += iv.Every.String()
		}
		if d.Request.Heartbeat != nil {
			s += " heartbeat(" + d.Request.Heartbeat.Model + ") session=" + d.Request.Session + " " + d.Request.Message
		}
		if d.Request.FixedChain != nil {
			s += " cron " + d.Request.FixedChain.Model.String()
		}
		if d.Request.WaitForCooldown > 0 {
			s += " wait " + d.Request.WaitForCooldown.String()
		}
		got = append(got, s)
	}
	want := []string{"baton-cron-digest 0 9 * * *Europe/Berlin cron openai/gpt-5 wait 30m0s",
		"baton-heartbeat-main 30m0s heartbeat() session=main tick",
		"baton-heartbeat-ops 1h0m0s heartbeat(openai/gpt-5-mini) session=ops tick"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestABadWaitForCooldownIsNamed(t *testing.T) {
	_, err := config.ParseConfig([]byte(`{cron: {jobs: [{id: "d", cron: "0 9 * * *", message: "m", payload: {waitForCooldown: "soon"}}]}}`))
	if err == nil || !strings.Contains(err.Error(), "cron.jobs[0].payload.waitForCooldown") {
		t.Errorf("got %v", err)
	}
}

func TestReconcileCreatesUpdatesAndDeletesOnlyWhatTheConfigManages(t *testing.T) {
	t.Run("plain", func(t *testing.T) { testReconcile(t, testsuite.Client(t), nil) })
	// With BATON_PAYLOAD_KEY the memos that mark config-managed schedules are encrypted: the
	// reconcile reads them through the worker's converter, or it would never delete a job.
	t.Run("encrypted", func(t *testing.T) {
		conv, err := codec.ConvertersFromEnv(func(k string) (string, bool) {
			return map[string]string{codec.EnvKey: strings.Repeat("ab", 32)}[k], true
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.NewClientFromExisting(testsuite.Client(t), client.Options{DataConverter: conv.Data, FailureConverter: conv.Failure})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		testReconcile(t, c, conv.Data)
	})
}

func testReconcile(t *testing.T, c client.Client, dc converter.DataConverter) {
	ctx := context.Background()
	tq := testsuite.TaskQueue(t)
	suffix := tq[len(tq)-8:]
	// A job made by hand (baton cron add) is not the config's to delete.
	manual := "baton-cron-manual-" + suffix
	if _, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: manual, Spec: client.ScheduleSpec{CronExpressions: []string{"@daily"}},
		Action: &client.ScheduleWorkflowAction{Workflow: "Reply", TaskQueue: tq}, Memo: map[string]any{"baton": "cron"}}); err != nil {
		t.Fatal(err)
	}
	defer c.ScheduleClient().GetHandle(ctx, manual).Delete(ctx)

	job := "job-" + suffix
	first := parse(t, `{cron: {jobs: [{id: "`+job+`", cron: "0 9 * * *", message: "m"}]}, agents: {list: [{id: "hb-`+suffix+`", heartbeat: {every: "1h"}}]}}`)
	rep, err := Reconcile(ctx, c, first, tq, dc)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(rep.Created)
	if len(rep.Created) != 2 || rep.Created[0] != "baton-cron-"+job || rep.Created[1] != "baton-heartbeat-hb-"+suffix {
		t.Fatalf("first reconcile: %+v", rep)
	}
	if rep, err = Reconcile(ctx, c, first, tq, dc); err != nil || len(rep.Updated) != 2 || len(rep.Created) != 0 {
		t.Fatalf("a second reconcile updates in place: %+v %v", rep, err)
	}
	d, err := c.ScheduleClient().GetHandle(ctx, "baton-heartbeat-hb-"+suffix).Describe(ctx)
	if err != nil || len(d.Schedule.Spec.Intervals) != 1 || d.Schedule.Spec.Intervals[0].Every != time.Hour {
		t.Fatalf("heartbeat schedule: %+v %v", d, err)
	}

	// The job leaves the config: the next reconcile deletes it (the list catches up eventually).
	second := parse(t, `{agents: {list: [{id: "hb-`+suffix+`", heartbeat: {every: "1h"}}]}}`)
	deadline := time.Now().Add(15 * time.Second)
	for {
		rep, err = Reconcile(ctx, c, second, tq, dc)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(rep.Deleted, "baton-cron-"+job) || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !slices.Contains(rep.Deleted, "baton-cron-"+job) || slices.Contains(rep.Deleted, manual) {
		t.Errorf("deleted %v", rep.Deleted)
	}
	if _, err := c.ScheduleClient().GetHandle(ctx, manual).Describe(ctx); err != nil {
		t.Errorf("the hand-made job went: %v", err)
	}
	_ = c.ScheduleClient().GetHandle(ctx, "baton-heartbeat-hb-"+suffix).Delete(ctx)
}
