package ui

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
)

// The reply's search attributes (workflows keeps its keys unexported; the names are the contract
// that README's `temporal operator search-attribute create` registers).
const (
	saAgent          = "BatonAgent"
	saSession        = "BatonSession"
	saFinalModel     = "BatonFinalModel"
	saFailoverReason = "BatonFailoverReason"
	saAttempts       = "BatonAttempts"
	saUsedFallback   = "BatonUsedFallback"
	replyType        = "Reply"
)

// repliesView is the recent replies with the filter that chose them.
type repliesView struct {
	Filter  replyFilter
	Query   string
	Rows    []replyRow
	Err     string
	More    bool
	Reasons []string
	// SpendErr says why the replies' spend could not be read from the store's ledger.
	SpendErr string
}

// replyFilter is the form above the list.
type replyFilter struct {
	Agent, Session, Model, Reason, Outcome string
	Limit                                  int
}

// replyRow is one reply as visibility knows it.
type replyRow struct {
	WorkflowID, RunID, Status string
	Start, Close              time.Time
	Agent, Session            string
	FinalModel, Reason        string
	Attempts                  int64
	UsedFallback              bool
	// FirstTry: answered by its requested model at the first try (such a reply spends no
	// history event on the failover attributes).
	FirstTry     bool
	Link, WebUI  string
	SessionLink  string
	StatusFamily string // ok, fallback, failed, running, other
	// Spend is what the reply's calls spent, from the store's ledger; nil: none recorded (or no
	// store).
	Spend *policy.Spend
}

// outcomes the filter offers: the query each adds.
var outcomes = map[string]string{
	"fallback": saUsedFallback + " = true",
	"failed":   "ExecutionStatus = 'Failed'",
	"running":  "ExecutionStatus = 'Running'",
	"retried":  saAttempts + " > 1",
}

func readFilter(q url.Values) (replyFilter, string, error) {
	f := replyFilter{Agent: strings.TrimSpace(q.Get("agent")), Session: strings.TrimSpace(q.Get("session")),
		Model: strings.TrimSpace(q.Get("model")), Reason: strings.TrimSpace(q.Get("reason")), Outcome: q.Get("outcome"), Limit: 50}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return f, "", fmt.Errorf("limit: %q is not a number from 1 to 1000", v)
		}
		f.Limit = n
	}
	clauses := []string{"WorkflowType = '" + replyType + "'"}
	for _, c := range []struct{ name, attr, value string }{
		{"agent", saAgent, f.Agent}, {"session", saSession, f.Session}, {"model", saFinalModel, f.Model}, {"reason", saFailoverReason, f.Reason},
	} {
		if c.value == "" {
			continue
		}
		if strings.ContainsAny(c.value, `'"\`) {
			return f, "", fmt.Errorf("%s: %q may not hold quotes or backslashes", c.name, c.value)
		}
		clauses = append(clauses, c.attr+" = '"+c.value+"'")
	}
	if f.Outcome != "" {
		clause, ok := outcomes[f.Outcome]
		if !ok {
			return f, "", fmt.Errorf("outcome: %q is not fallback, failed, running or retried", f.Outcome)
		}
		clauses = append(clauses, clause)
	}
	return f, strings.Join(clauses, " AND "), nil
}

// replies lists recent replies from visibility, newest first (running ones lead).
func (h *handler) replies(ctx context.Context, q url.Values) repliesView {
	v := repliesView{}
	for _, r := range allReasons {
		v.Reasons = append(v.Reasons, string(r))
	}
	f, query, err := readFilter(q)
	v.Filter, v.Query = f, query
	if err != nil {
		v.Err = err.Error()
		return v
	}
	if h.o.Client == nil {
		v.Err = "no Temporal client"
		return v
	}
	var token []byte
	for len(v.Rows) < f.Limit {
		resp, err := h.o.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: h.o.Namespace, Query: query, PageSize: int32(min(f.Limit-len(v.Rows), 100)), NextPageToken: token})
		if err != nil {
			v.Err = "visibility: " + errText(err)
			return v
		}
		for _, e := range resp.GetExecutions() {
			v.Rows = append(v.Rows, h.replyRow(e))
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	v.More = len(token) > 0
	h.addSpend(ctx, &v)
	return v
}

// addSpend reads what the listed replies spent from the store's ledger; without a store the
// column stays empty, and a ledger that cannot be read is said beside the list.
func (h *handler) addSpend(ctx context.Context, v *repliesView) {
	if h.o.Store == nil || len(v.Rows) == 0 {
		return
	}
	runs := make([]Run, len(v.Rows))
	for i, r := range v.Rows {
		runs[i] = Run{WorkflowID: r.WorkflowID, RunID: r.RunID, Agent: r.Agent, Session: r.Session}
	}
	spends, err := SpendOfRuns(ctx, h.o.Store, runs)
	if err != nil {
		v.SpendErr = "spend: " + errText(err)
		return
	}
	for i := range v.Rows {
		v.Rows[i].Spend = spends[i]
	}
}

var allReasons = []policy.Reason{policy.ReasonRateLimit, policy.ReasonOverloaded, policy.ReasonBilling, policy.ReasonAuth,
	policy.ReasonAuthPermanent, policy.ReasonTimeout, policy.ReasonFormat, policy.ReasonModelNotFound, policy.ReasonSessionExpired,
	policy.ReasonContextOverflow, policy.ReasonEmptyResponse, policy.ReasonNoErrorDetails, policy.ReasonUnclassified}

func (h *handler) replyRow(e *workflowpb.WorkflowExecutionInfo) replyRow {
	row := replyRow{WorkflowID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId()}
	row.Status = statusName(e.GetStatus())
	if e.GetStartTime() != nil {
		row.Start = e.GetStartTime().AsTime()
	}
	if e.GetCloseTime() != nil {
		row.Close = e.GetCloseTime().AsTime()
	}
	fields := e.GetSearchAttributes().GetIndexedFields()
	dc := converter.GetDefaultDataConverter() // search attributes never pass through a codec
	str := func(name string) string {
		var s string
		if p, ok := fields[name]; ok {
			_ = dc.FromPayload(p, &s)
		}
		return s
	}
	row.Agent, row.Session, row.FinalModel, row.Reason = str(saAgent), str(saSession), str(saFinalModel), str(saFailoverReason)
	if p, ok := fields[saAttempts]; ok {
		_ = dc.FromPayload(p, &row.Attempts)
	}
	if p, ok := fields[saUsedFallback]; ok {
		_ = dc.FromPayload(p, &row.UsedFallback)
	}
	_, hasAttempts := fields[saAttempts]
	row.FirstTry = row.Status == "completed" && !hasAttempts
	switch {
	case row.Status == "running":
		row.StatusFamily = "running"
	case row.Status == "failed":
		row.StatusFamily = "failed"
	case row.UsedFallback:
		row.StatusFamily = "fallback"
	case row.Status == "completed" && (row.FirstTry || row.Attempts <= 1):
		row.StatusFamily = "ok"
	case row.Status == "completed":
		row.StatusFamily = "retried"
	default:
		row.StatusFamily = "other"
	}
	row.Link = replyLink(row.WorkflowID, row.RunID)
	row.WebUI = h.webUILink(row.WorkflowID, row.RunID)
	if row.Session != "" {
		row.SessionLink = Prefix + "?session=" + urlQuery(row.Session)
	}
	return row
}

func statusName(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "running"
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "canceled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "restarted"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	}
	return strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

func urlQuery(s string) string { return url.QueryEscape(s) }
