package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/ui"
	"github.com/batonhq/baton/workflows"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
)

// replyRow is one reply as visibility knows it, with baton's search attributes.
type replyRow struct {
	WorkflowID     string     `json:"workflowId"`
	RunID          string     `json:"runId"`
	Status         string     `json:"status"`
	Start          time.Time  `json:"start"`
	Close          *time.Time `json:"close,omitempty"`
	Agent          string     `json:"agent,omitempty"`
	Session        string     `json:"session,omitempty"`
	FinalModel     string     `json:"finalModel,omitempty"`
	FailoverReason string     `json:"failoverReason,omitempty"`
	Attempts       int64      `json:"attempts,omitempty"`
	UsedFallback   bool       `json:"usedFallback"`
	// Spend is what the reply's calls spent, from the store's ledger; absent when it recorded
	// none or the store could not be read.
	Spend *policy.Spend `json:"spend,omitempty"`
}

// runReplies is `baton replies`: recent Reply workflows from visibility, filtered by baton's
// search attributes (which README's `temporal operator search-attribute create` registers).
func runReplies(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("replies", flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	failedOver := fs.Bool("failed-over", false, "only replies answered by a fallback (BatonUsedFallback = true)")
	failed := fs.Bool("failed", false, "only replies that failed")
	agent := fs.String("agent", "", "only this agent's replies (BatonAgent)")
	session := fs.String("session", "", "only this session's replies (BatonSession)")
	since := fs.Duration("since", 0, "only replies started within this long, e.g. 24h (default: any time)")
	limit := fs.Int("limit", 20, "at most this many, the most recent first")
	asJSON := fs.Bool("json", false, "print the replies as JSON")
	storeURL := storeFlag(fs) // for the spend columns: a store that is not there leaves them empty
	set, code, ok := parseFlags(fs, args, errOut)
	if !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(errOut, "baton replies: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case *limit < 1 || *limit > 1000:
		fmt.Fprintf(errOut, "baton replies: --limit %d is not 1..1000\n", *limit)
		return exitUsage
	case *since < 0:
		fmt.Fprintf(errOut, "baton replies: --since %s is negative\n", *since)
		return exitUsage
	}
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton replies: %v\n", err)
		return exitUsage
	}
	query := repliesQuery(*agent, *session, *failedOver, *failed, *since, time.Now())
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := tf.dial(dctx)
	if err != nil {
		fmt.Fprintf(errOut, "baton replies: %v\n", err)
		return exitFailure
	}
	defer c.Close()
	var rows []replyRow
	var token []byte
	for len(rows) < *limit {
		resp, err := c.ListWorkflow(dctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: tf.Namespace, Query: query,
			PageSize: int32(*limit - len(rows)), NextPageToken: token})
		if err != nil {
			fmt.Fprintf(errOut, "baton replies: listing %q: %v\n", query, err)
			return exitFailure
		}
		for _, e := range resp.GetExecutions() {
			sa := e.GetSearchAttributes().GetIndexedFields()
			r := replyRow{WorkflowID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId(),
				Status: strings.ToLower(strings.TrimPrefix(e.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_")), Start: e.GetStartTime().AsTime(),
				Agent: saString(sa, "BatonAgent"), Session: saString(sa, "BatonSession"), FinalModel: saString(sa, "BatonFinalModel"),
				FailoverReason: saString(sa, "BatonFailoverReason")}
			saValue(sa, "BatonAttempts", &r.Attempts)
			saValue(sa, "BatonUsedFallback", &r.UsedFallback)
			if e.GetCloseTime() != nil {
				t := e.GetCloseTime().AsTime()
				r.Close = &t
			}
			if len(rows) < *limit {
				rows = append(rows, r)
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	addSpend(ctx, rows, *storeURL, set["store"] || os.Getenv("BATON_STORE") != "", errOut)
	if *asJSON {
		if rows == nil {
			rows = []replyRow{}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rows)
		return 0
	}
	if len(rows) == 0 {
		fmt.Fprintf(out, "No replies match %s.\n", query)
		return 0
	}
	printReplies(out, rows)
	return 0
}

// printReplies is the replies' table.
func printReplies(out io.Writer, rows []replyRow) {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tWORKFLOW ID\tSTATUS\tAGENT\tSESSION\tFINAL MODEL\tATTEMPTS\tFAILOVER\tTOKENS\tCOST")
	for _, r := range rows {
		attempts, failover, tokens, cost := "1", "-", "-", "-"
		if r.Attempts > 0 {
			attempts = fmt.Sprint(r.Attempts)
		}
		if r.UsedFallback || r.FailoverReason != "" {
			failover = dash(r.FailoverReason)
		}
		if r.Spend != nil {
			tokens, cost = ui.FormatTokens(*r.Spend), "unpriced"
			if r.Spend.Priced {
				cost = ui.FormatCost(r.Spend.Cost)
			}
		}
		// A reply answered by its requested model at the first try sets no final-model attribute.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Start.UTC().Format(time.RFC3339), r.WorkflowID, r.Status, dash(r.Agent),
			dash(r.Session), dash(r.FinalModel), attempts, failover, tokens, cost)
	}
	_ = tw.Flush()
}

// addSpend fills in what each reply spent from the store's ledger. The list is visibility's: a
// store that is not there, or cannot be read, leaves the spend out (said on errOut when it was
// named, by --store or BATON_STORE, or when reading failed) and fails nothing.
func addSpend(ctx context.Context, rows []replyRow, storeURL string, named bool, errOut io.Writer) {
	if len(rows) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a store away costs the listing no more
	defer cancel()
	if storeMissing(storeURL) {
		if named {
			fmt.Fprintf(errOut, "baton replies: --store / BATON_STORE: %s does not exist: the replies' spend is not shown\n", storeURL)
		}
		return
	}
	st, err := openStore(ctx, storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton replies: the replies' spend is not shown: %v\n", err)
		return
	}
	defer st.Close()
	runs := make([]ui.Run, len(rows))
	for i, r := range rows {
		runs[i] = ui.Run{WorkflowID: r.WorkflowID, RunID: r.RunID, Agent: r.Agent, Session: r.Session}
	}
	spends, err := ui.SpendOfRuns(ctx, st, runs)
	if err != nil {
		fmt.Fprintf(errOut, "baton replies: the replies' spend is not shown: %v\n", err)
		return
	}
	for i := range rows {
		rows[i].Spend = spends[i]
	}
}

// repliesQuery is the visibility query for the filters; values are quoted as the SQL-like
// language wants them.
func repliesQuery(agent, session string, failedOver, failed bool, since time.Duration, now time.Time) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	clauses := []string{"WorkflowType = " + quote(workflows.ReplyWorkflowName)}
	if agent != "" {
		clauses = append(clauses, "BatonAgent = "+quote(agent))
	}
	if session != "" {
		clauses = append(clauses, "BatonSession = "+quote(session))
	}
	if failedOver {
		clauses = append(clauses, "BatonUsedFallback = true")
	}
	if failed {
		clauses = append(clauses, "ExecutionStatus = 'Failed'")
	}
	if since > 0 {
		clauses = append(clauses, "StartTime > "+quote(now.Add(-since).UTC().Format(time.RFC3339)))
	}
	return strings.Join(clauses, " AND ")
}

func saString(sa map[string]*commonpb.Payload, key string) string {
	var s string
	saValue(sa, key, &s)
	return s
}

// saValue decodes a search attribute (plain JSON: the server indexes them, so no codec applies).
func saValue(sa map[string]*commonpb.Payload, key string, v any) {
	if p := sa[key]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, v)
	}
}
