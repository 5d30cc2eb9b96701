// Package schedules keeps the config's scheduled runs as Temporal Schedules: cron.jobs[] and the
// agents' heartbeats. The worker reconciles them at start.
package schedules

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// Schedule id prefixes.
const (
	CronPrefix      = "baton-cron-"
	HeartbeatPrefix = "baton-heartbeat-"
)

// Desired is one schedule the config asks for.
type Desired struct {
	ID      string
	Spec    client.ScheduleSpec
	Request workflows.ReplyRequest
	Memo    map[string]any
}

// FromConfig lists the schedules cfg asks for: one per cron job, one heartbeat per agent that
// has one (the defaults' settings, overridden by the agent's). A heartbeat runs in the agent's main
// session, whose key is the agent id.
func FromConfig(cfg *policy.Config) []Desired {
	var out []Desired
	for _, j := range cfg.CronJobs {
		payload := j.Payload
		out = append(out, Desired{
			ID:   CronPrefix + j.ID,
			Spec: client.ScheduleSpec{CronExpressions: []string{j.Cron}, TimeZoneName: j.TZ},
			Request: workflows.ReplyRequest{Agent: j.Agent, Session: j.Session, Message: j.Message, FixedChain: &payload, WaitForCooldown: j.WaitForCooldown,
				Job: j.ID, JobBudget: j.Budget},
			Memo: map[string]any{"baton": "cron", "cron": j.Cron, "tz": j.TZ, "managed": "config"},
		})
	}
	agents := []string{"main"}
	if len(cfg.Agents) > 0 {
		agents = agents[:0]
		for _, a := range cfg.Agents {
			agents = append(agents, a.ID)
		}
	}
	for _, id := range agents {
		// An agent's heartbeat settings override the defaults' field by field.
		var hb policy.Heartbeat
		if cfg.Heartbeat != nil {
			hb = *cfg.Heartbeat
		}
		if a, ok := cfg.Agent(id); ok && a.Heartbeat != nil {
			if a.Heartbeat.Every > 0 {
				hb.Every = a.Heartbeat.Every
			}
			if !a.Heartbeat.Model.IsZero() {
				hb.Model = a.Heartbeat.Model
			}
			if a.Heartbeat.Message != "" {
				hb.Message = a.Heartbeat.Message
			}
		}
		if hb.Every <= 0 {
			continue
		}
		msg := hb.Message
		if msg == "" {
			msg = "heartbeat"
		}
		run := &policy.HeartbeatRun{}
		if !hb.Model.IsZero() {
			run.Model = hb.Model.String()
		}
		out = append(out, Desired{
			ID:      HeartbeatPrefix + id,
			Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: hb.Every}}},
			Request: workflows.ReplyRequest{Agent: id, Session: id, Message: msg, Heartbeat: run},
			Memo:    map[string]any{"baton": "heartbeat", "every": hb.Every.String(), "managed": "config"},
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Report says what a reconcile did.
type Report struct {
	Created, Updated, Deleted []string
}

// Reconcile makes the namespace's config-managed schedules match cfg: creates the missing, updates
// the rest, deletes those the config no longer has. Schedules made with `baton cron add` are left
// alone. dc is the client's data converter (nil: the default), which wrote the memos that tell
// them apart: encrypted under BATON_PAYLOAD_KEY, they read only through it.
func Reconcile(ctx context.Context, c client.Client, cfg *policy.Config, taskQueue string, dc converter.DataConverter) (Report, error) {
	var rep Report
	sc := c.ScheduleClient()
	want := map[string]bool{}
	var errs []error
	for _, d := range FromConfig(cfg) {
		want[d.ID] = true
		action := &client.ScheduleWorkflowAction{ID: strings.TrimPrefix(d.ID, "baton-"), Workflow: workflows.ReplyWorkflowName,
			Args: []any{d.Request}, TaskQueue: taskQueue, WorkflowExecutionTimeout: 24 * time.Hour,
			TypedSearchAttributes: workflows.ReplySearchAttributes(d.Request.Agent, d.Request.Session)}
		h := sc.GetHandle(ctx, d.ID)
		_, err := h.Describe(ctx)
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			if _, err := sc.Create(ctx, client.ScheduleOptions{ID: d.ID, Spec: d.Spec, Action: action, Memo: d.Memo}); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", d.ID, err))
				continue
			}
			rep.Created = append(rep.Created, d.ID)
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", d.ID, err))
		default:
			spec := d.Spec
			err := h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
				s := in.Description.Schedule
				s.Spec, s.Action = &spec, action
				return &client.ScheduleUpdate{Schedule: &s}, nil
			}})
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", d.ID, err))
				continue
			}
			rep.Updated = append(rep.Updated, d.ID)
		}
	}
	it, err := sc.List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return rep, errors.Join(append(errs, err)...)
	}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			errs = append(errs, err)
			break
		}
		if want[e.ID] || MemoString(dc, e.Memo, "managed") != "config" {
			continue
		}
		if err := sc.GetHandle(ctx, e.ID).Delete(ctx); err != nil {
			var notFound *serviceerror.NotFound
			if !errors.As(err, &notFound) {
				errs = append(errs, fmt.Errorf("%s: %w", e.ID, err))
			}
			continue
		}
		rep.Deleted = append(rep.Deleted, e.ID)
	}
	return rep, errors.Join(errs...)
}

// MemoString reads one string from a schedule's memo through dc (nil: the default converter).
func MemoString(dc converter.DataConverter, m *commonpb.Memo, key string) string {
	if m == nil || m.GetFields()[key] == nil {
		return ""
	}
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	var s string
	if err := dc.FromPayload(m.GetFields()[key], &s); err != nil {
		return ""
	}
	return s
}
