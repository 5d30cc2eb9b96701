// Package chaos runs baton as a cluster would (two Temporal nodes on one PostgreSQL database,
// two workers, two front doors, the store on PostgreSQL), drives a steady load of replies through
// the official OpenAI and Anthropic clients while processes die and dependencies restart, then
// holds what happened against baton's promises, using the fake provider's ledger of calls and
// the store as witnesses. `baton chaos` and `make chaos` run it.
package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// Options are a run's.
type Options struct {
	// Postgres is a database URL whose role may create databases: the run makes its own.
	Postgres string
	// PostgresRestart is a shell command that restarts PostgreSQL ("" skips that fault, said so).
	PostgresRestart string
	ServerBin       string // bin/temporal-dev
	WorkerBin       string // bin/baton-worker
	BatonBin        string // bin/baton (for baton serve)
	Duration        time.Duration
	Rate            float64 // replies a second
	Outage          time.Duration
	// Deadline is how long a request may take before it counts as hung.
	Deadline time.Duration
	// Dir keeps the processes' logs.
	Dir string
	// Keep leaves the run's databases in place.
	Keep bool
	// Calm runs the load without faults: the cluster's own figures, to compare.
	Calm     bool
	Progress io.Writer
}

// Report is a run's figures and findings (the JSON `baton chaos --json` writes).
type Report struct {
	Duration      string             `json:"duration"`
	Rate          float64            `json:"rate"`
	Requests      int                `json:"requests"`
	Answered      int                `json:"answered"`
	FailedBy      map[string]int     `json:"failedByReason"`
	Lost          int                `json:"lost"`
	Hung          int                `json:"hung"`
	PaidTwice     int                `json:"paidTwice"`
	WronglyBlamed int                `json:"wronglyBlamed"`
	Retried       int                `json:"retried"`
	Resumed       int                `json:"resumed"`
	ProviderCalls int                `json:"providerCalls"`
	Replies       int                `json:"replies"`
	Latency       map[string]latency `json:"latency"`
	Faults        []*fault           `json:"faults"`
	Promises      []promiseResult    `json:"promises"`
	Pass          bool               `json:"pass"`
	LogDir        string             `json:"logDir"`
}

type latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50Ms"`
	P99 float64 `json:"p99Ms"`
}

type promiseResult struct {
	Name     string   `json:"name"`
	Promise  string   `json:"promise"`
	Kept     bool     `json:"kept"`
	Broken   int      `json:"broken"`
	Examples []string `json:"examples,omitempty"`
}

// Run brings the world up, loads it while the faults strike, drains it and checks it.
func Run(ctx context.Context, opts Options) (*Report, error) {
	w := &world{opts: opts, dir: opts.Dir}
	defer w.down(context.Background(), !opts.Keep)
	if err := w.up(ctx); err != nil {
		return nil, err
	}
	l := &load{
		doors:    func() []string { return w.doorURLs[:] },
		agents:   agents,
		rate:     opts.Rate,
		deadline: opts.Deadline,
		hc:       &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}},
		rng:      rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1)),
	}
	w.progress("load: %.0f replies/s for %s through %s and %s", opts.Rate, opts.Duration, w.doorURLs[0], w.doorURLs[1])
	loadCtx, stopLoad := context.WithTimeout(ctx, opts.Duration)
	defer stopLoad()
	fs := w.faults()
	if opts.Calm {
		fs = nil
	}
	w.faultsDealt = fs
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Faults over the first 80 %: the rest shows the recovery from the last.
		if len(fs) > 0 {
			w.strike(loadCtx, fs, opts.Duration*4/5)
		}
	}()
	l.run(loadCtx)
	wg.Wait()
	w.progress("load done: %d requests; draining", len(l.snapshot()))
	running := w.drain(ctx, 2*time.Minute)
	ev, err := w.evidence(ctx, l)
	if err != nil {
		return nil, err
	}
	if running > 0 {
		w.progress("%d replies still running after the drain", running)
	}
	found := check(ev)
	return w.report(ev, fs, found), nil
}

// drain waits until no reply workflow of this run runs (or limit passes) and returns how many do.
func (w *world) drain(ctx context.Context, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		n, err := w.count(ctx, fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND StartTime >= '%s'",
			workflows.ReplyWorkflowName, w.started.UTC().Format(time.RFC3339)))
		if err == nil && n == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return n
		}
		time.Sleep(2 * time.Second)
	}
}

func (w *world) count(ctx context.Context, query string) (int, error) {
	resp, err := w.client.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: "default", Query: query})
	if err != nil {
		return -1, err
	}
	return int(resp.GetCount()), nil
}

// evidence gathers what the run left: the requests, the provider's calls, the store's kept
// outcomes, stats and sessions, and every reply's history.
func (w *world) evidence(ctx context.Context, l *load) (evidence, error) {
	ev := evidence{Requests: l.snapshot(), Stats: map[string]policy.ProfileStats{}}
	for _, c := range w.fake.Calls() {
		c.Body = nil
		ev.Calls = append(ev.Calls, c)
	}
	var err error
	if ev.Kept, err = w.store.KeptOutcomes(ctx, w.started); err != nil {
		return ev, err
	}
	for _, id := range profiles {
		if ev.Stats[id], err = w.store.Stats(ctx, "main", id); err != nil {
			return ev, err
		}
	}
	for _, a := range agents {
		list, err := w.store.ListSessions(ctx, a, 100000)
		if err != nil {
			return ev, err
		}
		for _, s := range list {
			st := sessionState{Key: s.Key, Agent: s.Agent}
			if s.Model.ModelOverride != "" {
				st.Model = s.Model.ProviderOverride + "/" + s.Model.ModelOverride
			}
			ev.Sessions = append(ev.Sessions, st)
		}
	}
	if ev.Runs, err = w.replies(ctx); err != nil {
		return ev, err
	}
	ev.Expect = w.expectations(ev.Requests)
	return ev, nil
}

// replies reads every reply workflow this run started, with its history's steps.
func (w *world) replies(ctx context.Context) ([]replyRun, error) {
	query := fmt.Sprintf("WorkflowType = '%s' AND StartTime >= '%s'", workflows.ReplyWorkflowName, w.started.UTC().Format(time.RFC3339))
	var runs []replyRun
	var token []byte
	for {
		resp, err := w.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query, PageSize: 1000, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("listing the run's replies: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			r := replyRun{WorkflowID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId(), Status: status(e.GetStatus())}
			if e.GetCloseTime() != nil {
				r.Closed = e.GetCloseTime().AsTime()
			}
			runs = append(runs, r)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	// Histories, eight at a time.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := &runs[i]
			h, err := history.Fetch(ctx, w.client, r.WorkflowID, r.RunID)
			var tl *history.Timeline
			if err == nil {
				tl, err = history.Explain(h)
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("reading reply %s: %w", r.WorkflowID, err)
				}
				mu.Unlock()
				return
			}
			r.Steps, r.Session, r.Agent = tl.Steps, tl.Request.Session, tl.Request.Agent
			if tl.Served != nil {
				r.Final = tl.Served.Provider + "/" + tl.Served.Model
			}
		}()
	}
	wg.Wait()
	return runs, firstErr
}

// status is a run's status in lower case (the enum's own name: running, completed, failed,
// canceled, terminated, timedout, continuedasnew).
func status(s enumspb.WorkflowExecutionStatus) string { return strings.ToLower(s.String()) }

// expectations are the world's script, with the outage's window.
func (w *world) expectations([]*request) expectations {
	ex := expectations{Answer: expected, Primary: primaries, Ladder: []string{"rl:chaos", "ov:chaos", "cut:chaos", "mute:chaos"},
		MayFail: map[string][]window{
			"rl:chaos":   {{Reason: policy.ReasonRateLimit}},
			"ov:chaos":   {{Reason: policy.ReasonOverloaded}},
			"cut:chaos":  {{Reason: policy.ReasonTimeout}},
			"mute:chaos": {{Reason: policy.ReasonTimeout}},
		}}
	for _, f := range w.faultsDealt {
		if strings.Contains(f.Name, "outage") && !f.At.IsZero() {
			// The outage's 503 reads as an overload.
			ex.MayFail["ok:chaos"] = append(ex.MayFail["ok:chaos"], window{Reason: policy.ReasonOverloaded, From: f.At})
		}
	}
	return ex
}

// report sums the run up.
func (w *world) report(ev evidence, fs []*fault, found []broken) *Report {
	r := &Report{Duration: w.opts.Duration.String(), Rate: w.opts.Rate, Requests: len(ev.Requests), FailedBy: map[string]int{},
		Latency: map[string]latency{}, Faults: fs, ProviderCalls: len(ev.Calls), Replies: len(ev.Runs), LogDir: w.dir}
	phases := map[string][]float64{}
	for _, q := range ev.Requests {
		r.Retried += max(0, len(q.Tries)-1)
		for _, t := range q.Tries {
			r.Resumed += t.Resumed
		}
		if q.answered() {
			r.Answered++
			ms := float64(q.End.Sub(q.Start).Microseconds()) / 1000
			phases[phaseOf(q.Start, fs)] = append(phases[phaseOf(q.Start, fs)], ms)
			phases["all"] = append(phases["all"], ms)
			how := "whole"
			if q.Stream {
				how = "streamed"
			}
			for _, k := range []string{"agent " + q.Agent, "wire " + string(q.Wire) + " " + how} {
				phases[k] = append(phases[k], ms)
			}
		} else if l := q.last(); l != nil && !q.Hung {
			r.FailedBy[failureName(l.Res)]++
		}
	}
	for name, v := range phases {
		sort.Float64s(v)
		r.Latency[name] = latency{N: len(v), P50: quantile(v, 0.5), P99: quantile(v, 0.99)}
	}
	for _, f := range fs {
		if f.Until.IsZero() {
			continue
		}
		for _, q := range ev.Requests {
			if q.answered() && !q.Start.Before(f.Until) && (f.Recovery == 0 || q.End.Sub(f.Until) < f.Recovery) {
				f.Recovery = q.End.Sub(f.Until)
			}
		}
	}
	groups := byPromise(found)
	r.Lost, r.Hung, r.PaidTwice, r.WronglyBlamed = len(groups[promiseLost]), len(groups[promiseHung]), len(groups[promisePaidOnce]), len(groups[promiseBlame])
	r.Pass = len(found) == 0
	for _, p := range promiseOrder {
		pr := promiseResult{Name: p, Promise: promiseText[p], Kept: len(groups[p]) == 0, Broken: len(groups[p])}
		for i, b := range groups[p] {
			if i == 5 {
				break
			}
			pr.Examples = append(pr.Examples, b.Detail)
		}
		r.Promises = append(r.Promises, pr)
	}
	for _, f := range fs {
		if f.Error != "" {
			r.Pass = false
		}
	}
	return r
}

// phaseOf names the fault a request began under: the latest to strike before it, while it was
// under way or within 30 s after; else "steady".
func phaseOf(start time.Time, fs []*fault) string {
	name := "steady"
	for _, f := range fs {
		if !f.At.IsZero() && !start.Before(f.At) && start.Before(latest(f.Until, f.At.Add(30*time.Second))) {
			name = f.Name // faults strike in order: a later one wins
		}
	}
	return name
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// failureName is how a request's error is counted: its wire's status and type/code.
func failureName(r result) string {
	switch r.Fail {
	case "http":
		return fmt.Sprintf("http %d %s", r.Status, firstOf(r.ErrCode, r.ErrType))
	case "stream_error":
		return "stream error " + firstOf(r.ErrCode, r.ErrType)
	}
	return r.Fail
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// PrintTable writes the report for a person.
func (r *Report) PrintTable(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "chaos run\t%s at %.0f replies/s\n", r.Duration, r.Rate)
	fmt.Fprintf(tw, "requests\t%d (%d retried on the other door, %d streams resumed)\n", r.Requests, r.Retried, r.Resumed)
	fmt.Fprintf(tw, "answered\t%d\n", r.Answered)
	for _, k := range sortedKeys(r.FailedBy) {
		fmt.Fprintf(tw, "failed: %s\t%d\n", k, r.FailedBy[k])
	}
	fmt.Fprintf(tw, "lost\t%d\nhung\t%d\npaid twice\t%d\nwrongly blamed\t%d\n", r.Lost, r.Hung, r.PaidTwice, r.WronglyBlamed)
	fmt.Fprintf(tw, "provider calls\t%d over %d reply runs\n", r.ProviderCalls, r.Replies)
	tw.Flush()
	fmt.Fprintln(out, "\nlatency of answered requests (ms), by what they began under:")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "phase\tn\tp50\tp99")
	names := sortedKeys(r.Latency)
	names = slices.DeleteFunc(names, func(s string) bool { return s == "all" || s == "steady" })
	for _, n := range append([]string{"all", "steady"}, names...) {
		if l, ok := r.Latency[n]; ok {
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\n", n, l.N, l.P50, l.P99)
		}
	}
	tw.Flush()
	fmt.Fprintln(out, "\nfaults:")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\tstruck\tback after\trecovered after")
	for _, f := range r.Faults {
		switch {
		case f.Skipped != "":
			fmt.Fprintf(tw, "%s\tskipped: %s\t\t\n", f.Name, f.Skipped)
		case f.At.IsZero():
			fmt.Fprintf(tw, "%s\tnot reached\t\t\n", f.Name)
		default:
			rec := "-"
			if f.Recovery > 0 {
				rec = f.Recovery.Round(100 * time.Millisecond).String()
			}
			line := fmt.Sprintf("%s\t%s\t%s\t%s", f.Name, clock(f.At), f.Until.Sub(f.At).Round(100*time.Millisecond), rec)
			if f.Error != "" {
				line += "\tFAILED: " + f.Error
			}
			fmt.Fprintln(tw, line)
		}
	}
	tw.Flush()
	fmt.Fprintln(out, "\npromises:")
	for _, p := range r.Promises {
		mark := "kept"
		if !p.Kept {
			mark = fmt.Sprintf("BROKEN (%d)", p.Broken)
		}
		fmt.Fprintf(out, "  %-10s %s\n", mark, p.Promise)
		for _, e := range p.Examples {
			fmt.Fprintf(out, "             %s\n", e)
		}
	}
	fmt.Fprintf(out, "\nlogs: %s\n", r.LogDir)
}

// WriteJSON writes the report as JSON.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
