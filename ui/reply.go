package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/api/serviceerror"
)

// replyPage is one reply's timeline.
type replyPage struct {
	ID, Run   string
	Now       time.Time
	Timeline  *history.Timeline
	SVG       []byte
	Steps     []stepRow
	Requested string
	Live      *liveStatus
	Err       string
	WebUI     string
	SVGLink   string
	NextLink  string
	// HasSpend: some attempt recorded what it spent (the steps table shows tokens and cost);
	// Spent is the reply's total in a line, "" when none was recorded.
	HasSpend bool
	Spent    string
}

// stepRow is a row of the table under the picture.
type stepRow struct {
	N int
	history.Step
	Offset string
	Tone   string
	Label  string
	Spend  *policy.Spend // a tried attempt's, on the line of its last call
}

// liveStatus is a running reply's status query.
type liveStatus struct {
	Candidate, Profile string
	WaitUntil          time.Time
	Err                string
}

// load reads a reply's history and explains it; a running reply's status query adds where it is.
func (h *handler) load(ctx context.Context, id, run string) (*replyPage, int) {
	p := &replyPage{ID: id, Run: run, Now: h.o.Now().UTC()}
	if id == "" {
		p.Err = "no reply named: want ?id=WORKFLOW_ID[&run=RUN_ID]"
		return p, http.StatusBadRequest
	}
	if h.o.Client == nil {
		p.Err = "no Temporal client"
		return p, http.StatusServiceUnavailable
	}
	if h.dcErr != nil {
		p.Err = errText(h.dcErr)
		return p, http.StatusInternalServerError
	}
	if run == "" {
		d, err := h.o.Client.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return p.fail(err)
		}
		run = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		p.Run = run
	}
	hist, err := history.Fetch(ctx, h.o.Client, id, run)
	if err != nil {
		return p.fail(err)
	}
	codec.DecodeFailures(hist, h.dc) // failure messages are encoded too under BATON_PAYLOAD_KEY
	opts := history.Options{DataConverter: h.dc}
	var running []policy.Attempt // a running reply's attempts so far, as its status query says
	tl, err := history.ExplainWith(hist, opts)
	if err != nil {
		p.Err = errText(err)
		return p, http.StatusUnprocessableEntity
	}
	if tl.Result == "running" {
		p.Live = &liveStatus{}
		qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		v, err := h.o.Client.QueryWorkflow(qctx, id, run, workflows.StatusQuery)
		var st workflows.Status
		if err == nil {
			err = v.Get(&st)
		}
		cancel()
		if err != nil {
			p.Live.Err = "status query: " + errText(err)
		} else {
			p.Live.Candidate, p.Live.Profile, p.Live.WaitUntil = st.Candidate, st.Profile, st.WaitUntil
			running = st.Attempts
			if len(st.Attempts) > 0 {
				opts.Attempts = st.Attempts
				if again, err := history.ExplainWith(hist, opts); err == nil {
					tl = again
				}
			}
		}
	}
	p.Timeline = tl
	p.SVG = history.RenderSVG(tl, history.SVGOptions{Now: p.Now})
	spent := SpendOf(hist, h.dc, tl, running)
	p.HasSpend = spent.Any()
	if spent.Total != nil {
		p.Spent = SpentLine(*spent.Total, spent.Unpriced)
		if spent.SoFar {
			p.Spent += " so far"
		}
	}
	for i, s := range tl.Steps {
		row := stepRow{N: i + 1, Step: s, Tone: history.Tone(s), Spend: spent.Steps[i]}
		if !tl.Start.IsZero() {
			row.Offset = "+" + history.Short(s.At.Sub(tl.Start))
		}
		switch s.Kind {
		case "wait":
			row.Label = history.WaitLabel(s)
		case "session":
			row.Label = s.Decision
		case "probe":
			row.Label = "probe"
		default:
			row.Label = s.Kind
		}
		p.Steps = append(p.Steps, row)
	}
	r := tl.Request
	switch {
	case r.Model != "":
		p.Requested = r.Model + " (one-off, strict)"
	case r.FixedChain != nil && !r.FixedChain.Model.IsZero():
		p.Requested = r.FixedChain.Model.String() + " (a job's primary)"
	case r.Heartbeat != nil:
		p.Requested = "the agent's heartbeat"
	case r.Agent != "":
		p.Requested = "agent " + r.Agent + "'s chain"
	}
	p.WebUI = h.webUILink(id, run)
	p.SVGLink = strings.Replace(replyLink(id, run), "reply?", "reply.svg?", 1)
	if tl.NextRunID != "" {
		p.NextLink = replyLink(id, tl.NextRunID)
	}
	return p, http.StatusOK
}

func (p *replyPage) fail(err error) (*replyPage, int) {
	p.Err = errText(err)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		p.Err = fmt.Sprintf("no reply %s (run %s) in this namespace: %s", p.ID, dashIfEmpty(p.Run), errText(err))
		return p, http.StatusNotFound
	}
	return p, http.StatusBadGateway
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "latest"
	}
	return s
}

func (h *handler) reply(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	p, status := h.load(ctx, r.URL.Query().Get("id"), r.URL.Query().Get("run"))
	refresh := 0
	if p.Timeline != nil && p.Timeline.Result == "running" {
		refresh = 2
	}
	h.render(w, status, "reply", pageData{Title: "reply " + p.ID, Refresh: refresh, Page: p})
}

func (h *handler) replySVG(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	p, status := h.load(ctx, r.URL.Query().Get("id"), r.URL.Query().Get("run"))
	if p.Timeline == nil {
		http.Error(w, p.Err, status)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_, _ = w.Write(history.RenderSVG(p.Timeline, history.SVGOptions{List: true, Now: p.Now}))
}
