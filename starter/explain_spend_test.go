package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/policy"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// historyWithSpend is a recorded reply history (workflows/testdata) whose attempt records carry
// these spends (by record; nil: none) and whose result carries total, as a reply run since spend
// is kept ends: written to a file for `baton explain`.
func historyWithSpend(t *testing.T, name string, spends []*policy.Spend, total *policy.Spend) string {
	t.Helper()
	h, err := history.Load(filepath.Join("..", "workflows", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	dc := converter.GetDefaultDataConverter()
	set := func(attempts []policy.Attempt) {
		if len(attempts) != len(spends) {
			t.Fatalf("%s has %d attempt records, the test gives %d spends", name, len(attempts), len(spends))
		}
		for i := range attempts {
			attempts[i].Spend = spends[i]
		}
	}
	encode := func(v any) *commonpb.Payloads {
		p, err := dc.ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		return &commonpb.Payloads{Payloads: []*commonpb.Payload{p}}
	}
	done := false
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowExecutionCompletedEventAttributes(); a != nil {
			var res policy.ReplyResult
			if err := dc.FromPayload(a.GetResult().GetPayloads()[0], &res); err != nil {
				t.Fatal(err)
			}
			set(res.Attempts)
			res.Spend = total
			a.Result, done = encode(res), true
		}
		if a := e.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			app := a.GetFailure().GetApplicationFailureInfo()
			var ex policy.Exhaustion
			if err := dc.FromPayload(app.GetDetails().GetPayloads()[0], &ex); err != nil {
				t.Fatal(err)
			}
			set(ex.Attempts)
			app.Details, done = encode(ex), true
		}
	}
	if !done {
		t.Fatalf("%s did not end with attempt records", name)
	}
	data, err := history.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), name+"-spend.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// A cut stream billed on an unpriced model, continued by a priced one: each tried attempt's line
// has its tokens, the priced one its cost, and the reply its total (which leaves out the
// unpriced attempt's cost, and says so).
func TestExplainShowsWhatEachAttemptSpent(t *testing.T) {
	cut := &policy.Spend{Input: 1810, Output: 120}
	answer := &policy.Spend{Input: 1200, Output: 130, CachedInput: 800, Cost: 0.0042, Priced: true}
	total := cut.Add(*answer)
	file := historyWithSpend(t, "reply-continuation", []*policy.Spend{cut, answer}, &total)
	code, stdout, stderr := baton(t, "explain", file)
	if code != 0 {
		t.Fatal(stderr)
	}
	want := `reply reply-main-1796411302435223596: agent main
TIME          STEP     CANDIDATE                    PROFILE            OUTCOME    REASON   STATUS  WAIT  DECISION  TOKENS                           COST
19:08:22.505  attempt  openai/gpt-5                 openai:a           failed     timeout  -       -     advance   1,810 in / 120 out               -
19:08:22.530  attempt  anthropic/claude-sonnet-4-5  anthropic:default  succeeded  -        -       -     answer    1,200 in (800 cached) / 130 out  $0.0042
result: answered by anthropic/claude-sonnet-4-5 with anthropic:default
spent: 3,010 in (800 cached) / 250 out tokens, $0.0042 (without 1 unpriced attempt)
`
	if stdout != want {
		t.Errorf("explain:\n%s\nwant:\n%s", stdout, want)
	}

	// --json carries the records' figures: on each tried attempt's step, and the reply's total.
	code, stdout, stderr = baton(t, "explain", file, "--json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var tl struct {
		WorkflowID string
		Result     string
		Steps      []struct {
			Kind  string
			Model string
			Spend *policy.Spend
		}
		Spend *policy.Spend
	}
	if err := json.Unmarshal([]byte(stdout), &tl); err != nil {
		t.Fatal(err)
	}
	if tl.WorkflowID == "" || tl.Result != "answered" || len(tl.Steps) != 2 || tl.Spend == nil || *tl.Spend != total ||
		tl.Steps[0].Spend == nil || *tl.Steps[0].Spend != *cut || tl.Steps[1].Spend == nil || *tl.Steps[1].Spend != *answer {
		t.Errorf("explain --json:\n%s", stdout)
	}
	if !strings.Contains(stdout, `"inputTokens": 1810`) || !strings.Contains(stdout, `"cost": 0.0042`) || !strings.Contains(stdout, `"priced": true`) {
		t.Errorf("explain --json does not carry the records' fields:\n%s", stdout)
	}
}

// An attempt's same-candidate retries are one record: its spend is on the line of its last call,
// and a reply whose every attempt is priced totals without a remark.
func TestExplainPutsAnAttemptsSpendOnItsLastCall(t *testing.T) {
	b := &policy.Spend{Input: 40, Cost: 0.0001, Priced: true} // the third 429 billed its prompt
	answer := &policy.Spend{Input: 2000, Output: 250, Cost: 1234.5, Priced: true}
	total := b.Add(*answer)
	file := historyWithSpend(t, "reply-rate-limit-fallback", []*policy.Spend{nil, b, answer}, &total)
	code, stdout, stderr := baton(t, "explain", file)
	if code != 0 {
		t.Fatal(stderr)
	}
	lines := strings.Split(stdout, "\n")
	if len(lines) < 12 || spendCells(lines[1]) != "TOKENS|COST" {
		t.Fatalf("explain:\n%s", stdout)
	}
	for i, want := range []string{"-|-", "-|-", "-|-", "-|-", "-|-", "40 in / 0 out|$0.0001", "-|-", "2,000 in / 250 out|$1,234.50"} {
		if got := spendCells(lines[2+i]); got != want {
			t.Errorf("line %d %q: tokens and cost %q, want %q", 2+i, lines[2+i], got, want)
		}
	}
	if !strings.Contains(stdout, "\nspent: 2,040 in / 250 out tokens, $1,234.50\n") {
		t.Errorf("the total:\n%s", stdout)
	}
}

// A failed reply has no result: its total is its records' (the failure's details), and a reply
// that priced nothing says so.
func TestExplainOfAFailedReplyTotalsItsAttempts(t *testing.T) {
	file := historyWithSpend(t, "reply-exhausted", []*policy.Spend{nil, {Input: 12}, {Input: 3000, Output: 7}}, nil)
	code, stdout, stderr := baton(t, "explain", file)
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.HasSuffix(stdout, "\nspent: 3,012 in / 7 out tokens, unpriced\n") || strings.Contains(stdout, "$") {
		t.Errorf("explain:\n%s", stdout)
	}
	lines := strings.Split(stdout, "\n")
	// The anthropic attempt's third call (its record's last) ended at 12:19:51.779.
	if l := lines[2+11]; !strings.HasPrefix(l, "12:19:51.779") || spendCells(l) != "3,000 in / 7 out|-" {
		t.Errorf("the last call's line: %q\n%s", l, stdout)
	}
}

// A call run again after its worker was lost is the same attempt: the spend is on the run that
// answered, not on the lost one.
func TestExplainPutsTheSpendOnTheCallThatEndedTheAttempt(t *testing.T) {
	answer := &policy.Spend{Input: 10, Output: 3}
	file := historyWithSpend(t, "reply-worker-lost", []*policy.Spend{answer}, answer)
	code, stdout, stderr := baton(t, "explain", file)
	if code != 0 {
		t.Fatal(stderr)
	}
	lines := strings.Split(stdout, "\n")
	if spendCells(lines[2]) != "-|-" || !strings.Contains(lines[2], "lost") || !strings.Contains(lines[2], "run again") ||
		spendCells(lines[3]) != "10 in / 3 out|-" || !strings.Contains(lines[3], "succeeded") {
		t.Errorf("explain:\n%s", stdout)
	}
}

// spendCells are a table line's last two cells (cells are two spaces or more apart).
func spendCells(line string) string {
	cells := regexp.MustCompile(` {2,}`).Split(strings.TrimSpace(line), -1)
	if len(cells) < 2 {
		return ""
	}
	return cells[len(cells)-2] + "|" + cells[len(cells)-1]
}

// A history from before spend was kept prints as it always did: no columns, no total, no
// "spend" in its JSON.
func TestExplainOfAnOldHistoryIsUnchanged(t *testing.T) {
	for _, name := range []string{"reply-rate-limit-fallback", "reply-exhausted", "reply-worker-lost"} {
		file := filepath.Join("..", "workflows", "testdata", name+".json")
		code, stdout, stderr := baton(t, "explain", file)
		if code != 0 {
			t.Fatal(stderr)
		}
		if strings.Contains(stdout, "TOKENS") || strings.Contains(stdout, "spent") || strings.Contains(stdout, "$") {
			t.Errorf("%s:\n%s", name, stdout)
		}
		code, stdout, stderr = baton(t, "explain", file, "--json")
		if code != 0 {
			t.Fatal(stderr)
		}
		if strings.Contains(stdout, `"spend"`) {
			t.Errorf("%s --json:\n%s", name, stdout)
		}
		h, err := history.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		tl, err := history.Explain(h)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.MarshalIndent(tl, "", "  ")
		if stdout != string(want)+"\n" {
			t.Errorf("%s --json is not the timeline as before:\n%s", name, stdout)
		}
	}
}
