package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// What replies spent, as operators read it: each tried attempt's tokens and cost on a reply's
// timeline with the reply's total (from the attempt records its history keeps), and a reply
// run's total from the store's spend ledger. `baton explain` and `baton replies` print the same
// figures through these functions, so the terminal and the page agree.

// FormatCost is a dollar amount: four decimals under $1 (a call often costs a fraction of a cent),
// two from $1 up, thousands separated. An amount above zero that four decimals would show as
// $0.0000 is "<$0.0001".
func FormatCost(usd float64) string {
	switch {
	case usd > 0 && usd < 0.00005:
		return "<$0.0001"
	case usd < 0.99995: // below what rounds to $1.0000
		return "$" + strconv.FormatFloat(usd, 'f', 4, 64)
	}
	whole, cents, _ := strings.Cut(strconv.FormatFloat(usd, 'f', 2, 64), ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil { // beyond int64: no dollar amount a ledger holds
		return "$" + whole + "." + cents
	}
	return "$" + Count(n) + "." + cents
}

// Count is n with its thousands separated by commas: 2,010.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}

// FormatTokens is a spend's tokens: "2,010 in / 250 out", the input read from and written to the
// prompt cache said when there is some: "2,010 in (800 cached, 300 cache write) / 250 out".
func FormatTokens(s policy.Spend) string {
	var cache []string
	if s.CachedInput > 0 {
		cache = append(cache, Count(s.CachedInput)+" cached")
	}
	if s.CacheWrite > 0 {
		cache = append(cache, Count(s.CacheWrite)+" cache write")
	}
	in := Count(s.Input) + " in"
	if len(cache) > 0 {
		in += " (" + strings.Join(cache, ", ") + ")"
	}
	return in + " / " + Count(s.Output) + " out"
}

// SpentLine is a reply's total for a summary: "2,010 in / 250 out tokens, $0.0095", "…, unpriced"
// when no attempt was priced, and how many attempts the cost leaves out when some were not.
func SpentLine(total policy.Spend, unpriced int) string {
	line := FormatTokens(total) + " tokens, "
	if !total.Priced {
		return line + "unpriced"
	}
	line += FormatCost(total.Cost)
	if unpriced > 0 {
		line += fmt.Sprintf(" (without %d unpriced attempt%s)", unpriced, plural(unpriced))
	}
	return line
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ReplySpend is what a reply's attempts spent, as their records say.
type ReplySpend struct {
	// Steps is by index of the timeline's steps: a tried attempt's spend (its same-candidate
	// retries included) is on the line of its last call; nil elsewhere.
	Steps []*policy.Spend
	// Total is the reply's (ReplyResult.Spend; a failed reply's is its attempts' together); nil
	// when no attempt recorded a spend, as in a history from before spend was kept.
	Total *policy.Spend
	// Unpriced counts the attempts that consumed tokens of a model the catalog has no price for.
	Unpriced int
	// SoFar: the reply is running, and Total is what its attempts spent until now.
	SoFar bool
}

// Any reports whether some attempt recorded a spend.
func (r ReplySpend) Any() bool {
	if r.Total != nil {
		return true
	}
	for _, s := range r.Steps {
		if s != nil {
			return true
		}
	}
	return false
}

// SpendOf reads what a reply spent from its history: the attempt records of its result, or of its
// failure's details, placed on tl (ExplainWith's timeline of h, read with the same converter).
// A running reply has no result yet: running are its attempts so far (its status query), nil
// when not asked. Nothing decodable (an old or an unreadable history) is no spend.
func SpendOf(h *historypb.History, dc converter.DataConverter, tl *history.Timeline, running []policy.Attempt) ReplySpend {
	out := ReplySpend{Steps: make([]*policy.Spend, len(tl.Steps))}
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	records, total := closingRecords(h, dc)
	earlier := tl.Request.Earlier
	own := records
	switch {
	case records == nil && tl.Result == "running" && running != nil:
		own, out.SoFar = running, true // the status query lists the run's own attempts
	case len(earlier) > 0 && len(records) >= len(earlier):
		own = records[len(earlier):] // a result lists the runs a /model restart ended first
	}
	// The timeline opens with one line per attempt of the ended runs (history's earlierSteps).
	for i, a := range earlier {
		if i < len(out.Steps) && a.Spend != nil {
			out.Steps[i] = a.Spend
		}
	}
	next := min(len(earlier), len(tl.Steps))
	for _, a := range own {
		if a.Result != policy.ResultSucceeded && a.Result != policy.ResultFailed {
			continue // skipped or switched: no call
		}
		// A record is made when its last call has ended (the workflow's time, after the call's
		// completion event): the last line of its candidate by then. Lines of calls run again
		// after a lost worker, and of retries, come before it.
		j := -1
		for k := next; k < len(tl.Steps) && !a.At.IsZero(); k++ {
			s := tl.Steps[k]
			if s.At.After(a.At) {
				break
			}
			if s.Kind == "attempt" && s.Model == a.Provider+"/"+a.Model {
				j = k
			}
		}
		if j < 0 {
			continue // not placed: it still counts in the total
		}
		out.Steps[j], next = a.Spend, j+1
	}
	all := append(append([]policy.Attempt{}, earlier...), own...)
	if records != nil {
		all = records
	}
	for _, a := range all {
		if a.Spend != nil && !a.Spend.Priced && !a.Spend.IsZero() {
			out.Unpriced++
		}
	}
	if total == nil && (records != nil || out.SoFar) {
		if t := policy.TotalSpend(all); !t.IsZero() {
			total = &t
		}
	}
	out.Total = total
	return out
}

// closingRecords are the attempt records a reply ended with, and its total when its result says
// one: an answer's (ReplyResult), an exhausted chain's (Exhaustion), or another stop's (the
// attempts as the failure's details). Nil when it has not ended so.
func closingRecords(h *historypb.History, dc converter.DataConverter) ([]policy.Attempt, *policy.Spend) {
	events := h.GetEvents()
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			var res policy.ReplyResult
			p := e.GetWorkflowExecutionCompletedEventAttributes().GetResult().GetPayloads()
			if len(p) == 0 || dc.FromPayload(p[0], &res) != nil {
				return nil, nil
			}
			return res.Attempts, res.Spend
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
			app := e.GetWorkflowExecutionFailedEventAttributes().GetFailure().GetApplicationFailureInfo()
			p := app.GetDetails().GetPayloads()
			if len(p) == 0 {
				return nil, nil
			}
			if app.GetType() == policy.ErrFallbackSummary {
				var ex policy.Exhaustion
				if dc.FromPayload(p[0], &ex) != nil {
					return nil, nil
				}
				return ex.Attempts, nil
			}
			var attempts []policy.Attempt
			if dc.FromPayload(p[0], &attempts) != nil { // a budget's stop carries its check, no attempts
				return nil, nil
			}
			return attempts, nil
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			return nil, nil
		}
	}
	return nil, nil
}

// Run is one reply run of a listing.
type Run struct {
	WorkflowID, RunID, Agent, Session string
}

// SpendOfRuns is what each run spent, from the store's ledger (kept by run: a session's replies
// share one workflow id); nil where the ledger holds nothing for it.
func SpendOfRuns(ctx context.Context, st *store.Store, runs []Run) ([]*policy.Spend, error) {
	var keys []string
	for _, r := range runs {
		if r.RunID != "" {
			keys = append(keys, r.WorkflowID+"/"+r.RunID)
		}
	}
	out := make([]*policy.Spend, len(runs))
	if len(keys) == 0 {
		return out, nil
	}
	by, err := st.SpendOfReplies(ctx, keys)
	if err != nil {
		return out, err
	}
	for i, r := range runs {
		if sp, ok := by[r.WorkflowID+"/"+r.RunID]; ok && !sp.IsZero() {
			out[i] = &sp
		}
	}
	return out, nil
}
