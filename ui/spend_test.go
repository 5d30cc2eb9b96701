package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestSpendFormats(t *testing.T) {
	for usd, want := range map[float64]string{0: "$0.0000", 0.00001: "<$0.0001", 0.00005: "$0.0001", 0.0042: "$0.0042", 0.00369: "$0.0037",
		0.5: "$0.5000", 0.99994: "$0.9999", 0.99996: "$1.00", 1: "$1.00", 12.345: "$12.35", 1234.5: "$1,234.50", 1234567.891: "$1,234,567.89"} {
		if got := FormatCost(usd); got != want {
			t.Errorf("FormatCost(%v) = %q, want %q", usd, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 2010: "2,010", 123456: "123,456", 1234567: "1,234,567", -4321: "-4,321"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	for _, c := range []struct {
		s    policy.Spend
		want string
	}{
		{policy.Spend{Input: 2010, Output: 250}, "2,010 in / 250 out"},
		{policy.Spend{Input: 2010, Output: 250, CachedInput: 800}, "2,010 in (800 cached) / 250 out"},
		{policy.Spend{Input: 2010, Output: 250, CachedInput: 800, CacheWrite: 1200}, "2,010 in (800 cached, 1,200 cache write) / 250 out"},
	} {
		if got := FormatTokens(c.s); got != c.want {
			t.Errorf("FormatTokens(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
	priced := policy.Spend{Input: 2010, Output: 250, Cost: 0.0095, Priced: true}
	for _, c := range []struct {
		s        policy.Spend
		unpriced int
		want     string
	}{
		{priced, 0, "2,010 in / 250 out tokens, $0.0095"},
		{priced, 2, "2,010 in / 250 out tokens, $0.0095 (without 2 unpriced attempts)"},
		{policy.Spend{Input: 2010, Output: 250}, 1, "2,010 in / 250 out tokens, unpriced"},
	} {
		if got := SpentLine(c.s, c.unpriced); got != c.want {
			t.Errorf("SpentLine(%+v, %d) = %q, want %q", c.s, c.unpriced, got, c.want)
		}
	}
}

// fakeTemporal answers the page's reads from a recorded history and a visibility listing.
type fakeTemporal struct {
	client.Client // what the page does not call: nil
	hist          *historypb.History
	list          []*workflowpb.WorkflowExecutionInfo
}

func (f *fakeTemporal) GetWorkflowHistory(context.Context, string, string, bool, enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	return &events{list: f.hist.GetEvents()}
}

func (f *fakeTemporal) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	return &workflowservice.ListWorkflowExecutionsResponse{Executions: f.list}, nil
}

type events struct{ list []*historypb.HistoryEvent }

func (e *events) HasNext() bool { return len(e.list) > 0 }
func (e *events) Next() (*historypb.HistoryEvent, error) {
	ev := e.list[0]
	e.list = e.list[1:]
	return ev, nil
}

// recorded is a history of workflows/testdata whose attempt records carry these spends (by
// record) and whose result carries total; no spends: the history as recorded, before spend was
// kept.
func recorded(t *testing.T, name string, spends []*policy.Spend, total *policy.Spend) *historypb.History {
	t.Helper()
	h, err := history.Load(filepath.Join("..", "workflows", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if spends == nil {
		return h
	}
	dc := converter.GetDefaultDataConverter()
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowExecutionCompletedEventAttributes(); a != nil {
			var res policy.ReplyResult
			if err := dc.FromPayload(a.GetResult().GetPayloads()[0], &res); err != nil || len(res.Attempts) != len(spends) {
				t.Fatalf("%s: %d records, %v", name, len(res.Attempts), err)
			}
			for i := range res.Attempts {
				res.Attempts[i].Spend = spends[i]
			}
			res.Spend = total
			p, err := dc.ToPayload(res)
			if err != nil {
				t.Fatal(err)
			}
			a.Result = &commonpb.Payloads{Payloads: []*commonpb.Payload{p}}
		}
	}
	return h
}

func getPage(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// stepHTML is the steps table's row of step n.
func stepHTML(body, n string) string {
	i := strings.Index(body, `data-step="`+n+`" data-kind=`) // the table's row, not the picture's bar
	if i < 0 {
		return ""
	}
	j := strings.Index(body[i:], "</tr>")
	return body[i : i+j]
}

// The reply page: each tried attempt's tokens and cost (none for the unpriced one), and the
// reply's total; a history from before spend was kept shows the page as it was.
func TestTheReplyPageShowsWhatEachAttemptSpent(t *testing.T) {
	cut := &policy.Spend{Input: 1810, Output: 120}
	answer := &policy.Spend{Input: 1200, Output: 130, CachedInput: 800, Cost: 0.0042, Priced: true}
	total := cut.Add(*answer)
	fake := &fakeTemporal{hist: recorded(t, "reply-continuation", []*policy.Spend{cut, answer}, &total)}
	h := New(Options{Client: fake, DataConverter: converter.GetDefaultDataConverter(), Now: func() time.Time { return now }})
	body := getPage(t, h, "/ui/reply?id=reply-main-1&run=r1")
	if !strings.Contains(body, "<th>tokens</th><th>cost</th>") ||
		!strings.Contains(body, `<dt>spent</dt><dd class="spent">3,010 in (800 cached) / 250 out tokens, $0.0042 (without 1 unpriced attempt)</dd>`) {
		t.Errorf("the reply's total:\n%s", body)
	}
	if r := stepHTML(body, "1"); !strings.Contains(r, `<td class="num tokens">1,810 in / 120 out</td>`) || !strings.Contains(r, `<td class="num cost">–</td>`) {
		t.Errorf("the unpriced attempt: %s", r)
	}
	if r := stepHTML(body, "2"); !strings.Contains(r, `<td class="num tokens">1,200 in (800 cached) / 130 out</td>`) || !strings.Contains(r, `<td class="num cost">$0.0042</td>`) {
		t.Errorf("the priced attempt: %s", r)
	}

	fake.hist = recorded(t, "reply-rate-limit-fallback", nil, nil)
	body = getPage(t, h, "/ui/reply?id=reply-main-2&run=r2")
	if strings.Contains(body, "<th>tokens</th>") || strings.Contains(body, "<dt>spent</dt>") || strings.Contains(body, `class="num`) ||
		!strings.Contains(body, `data-step="8"`) {
		t.Errorf("a reply without spend:\n%s", body)
	}
}

// The replies list reads each run's cost from the store's ledger, kept by run (<workflow id>/<run
// id>), never a session's sum as one reply's.
func TestTheRepliesListShowsWhatEachReplyCost(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "s.db"), store.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, r := range []store.SpendRow{
		{Key: "reply/main/s1/r1/1", Reply: "reply/main/s1/r1", Agent: "main", At: now, Spend: policy.Spend{Input: 2010, Output: 250, Cost: 0.0095, Priced: true}},
		{Key: "reply/main/s1/r9/1", Reply: "reply/main/s1", Agent: "main", At: now, Spend: policy.Spend{Input: 5, Output: 5, Cost: 9, Priced: true}},
		{Key: "reply-main-7/r2/1", Reply: "reply-main-7/r2", Agent: "main", At: now, Spend: policy.Spend{Input: 12, Output: 3}},
	} {
		if err := st.RecordSpend(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	sa := func(agent, session string) *commonpb.SearchAttributes {
		f := map[string]*commonpb.Payload{}
		for k, v := range map[string]string{saAgent: agent, saSession: session} {
			if v != "" {
				f[k], _ = converter.GetDefaultDataConverter().ToPayload(v)
			}
		}
		return &commonpb.SearchAttributes{IndexedFields: f}
	}
	exec := func(id, run, session string) *workflowpb.WorkflowExecutionInfo {
		return &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: run},
			Status: enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, StartTime: timestamppb.New(now), SearchAttributes: sa("main", session)}
	}
	fake := &fakeTemporal{list: []*workflowpb.WorkflowExecutionInfo{exec("reply/main/s1", "r1", "s1"), exec("reply/main/s1", "r0", "s1"),
		exec("reply-main-7", "r2", ""), exec("reply-main-8", "r3", "")}}
	body := getPage(t, New(Options{Client: fake, Store: st, Now: func() time.Time { return now }}), "/ui/")
	if !strings.Contains(body, "<th>cost</th>") {
		t.Fatalf("no cost column:\n%s", body)
	}
	cost := func(run string) string {
		r := rowHTML(body, `data-run-id="`+run+`"`)
		i := strings.Index(r, `<td class="num cost">`)
		if i < 0 {
			return ""
		}
		return r[i : i+strings.Index(r[i:], "</td>")+5]
	}
	for run, want := range map[string]string{
		"r1": `<td class="num cost">$0.0095<div class="sub">2,010 in / 250 out</div></td>`,
		"r0": `<td class="num cost">–</td>`, // another turn of the session: its sum is not this run's
		"r2": `<td class="num cost"><span class="note">unpriced</span><div class="sub">12 in / 3 out</div></td>`,
		"r3": `<td class="num cost">–</td>`,
	} {
		if got := cost(run); got != want {
			t.Errorf("run %s: %s, want %s", run, got, want)
		}
	}

	// Without a store the column is empty, and the page is served.
	body = getPage(t, New(Options{Client: fake, Now: func() time.Time { return now }}), "/ui/")
	if got := strings.Count(body, `<td class="num cost">–</td>`); got != 4 {
		t.Errorf("without a store, %d empty cost cells, want 4", got)
	}
}

// rowHTML is the table row that holds attr.
func rowHTML(body, attr string) string {
	i := strings.Index(body, attr)
	if i < 0 {
		return ""
	}
	j := strings.Index(body[i:], "</tr>")
	return body[i : i+j]
}
