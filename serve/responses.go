package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/internal/wire"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ResponseStore keeps what the Responses door needs beyond a reply: the responses it stored (a
// later previous_response_id, GET) and the replies' event logs (a caller resuming). *store.Store
// is one.
type ResponseStore interface {
	PutResponse(ctx context.Context, id string, rec []byte, at time.Time) error
	GetResponse(ctx context.Context, id string) ([]byte, error)
	ReplyLog(ctx context.Context, reply string, from int) (store.ReplyLogPage, error)
	FinishReplyLog(ctx context.Context, reply string, final []byte) error
}

// responseRecord is what the door stores of a response when it starts it (store: true): how to
// find its reply, what its events repeat, and the conversation a later previous_response_id
// continues. The answer is the final record of the reply's event log (the response's id names it).
type responseRecord struct {
	Head       wire.ResponsesHead `json:"head"`
	WorkflowID string             `json:"workflowId"`
	RunID      string             `json:"runId"`
	// Messages are the conversation up to this response's input (instructions left out: a later
	// request gives its own).
	Messages []provider.Message `json:"messages"`
}

// responseFinal is how a stored response ended: the final record of its event log.
type responseFinal struct {
	Status string           `json:"status"` // completed, failed or cancelled
	Model  string           `json:"model,omitempty"`
	Answer *provider.Answer `json:"answer,omitempty"`
	Error  *wire.Error      `json:"error,omitempty"`
}

var responsesDoor = door{decode: wire.DecodeResponses, writeError: wire.WriteResponsesError, keepAlive: wire.OpenAIKeepAlive,
	answer: func(w http.ResponseWriter, r wire.Reply, req wire.Request) {
		r.ID = "resp_" + r.ID
		echo := req.Responses.ResponsesEcho
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(wire.ResponsesResponse(r, echo))
			return
		}
		startSSE(w)
		s := wire.NewResponsesStream(w, nil, wire.ResponsesHead{ID: r.ID, Model: r.Model, CreatedAt: r.Created, Echo: echo}, -1)
		s.Answer(r.Answer)
	},
	live: func(w io.Writer, flush func(), id, model string, created int64, req wire.Request) liveWriter {
		return wire.NewResponsesStream(w, flush, wire.ResponsesHead{ID: "resp_" + id, Model: model, CreatedAt: created, Echo: req.Responses.ResponsesEcho}, -1)
	}}

// responsesPath routes /v1/responses and /v1/responses/{id}[/cancel].
func (s *server) responsesPath(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/v1/responses"), "/")
	id, action, _ := strings.Cut(rest, "/")
	switch {
	case rest == "" && r.Method == http.MethodPost:
		s.createResponse(w, r)
	case id != "" && action == "" && r.Method == http.MethodGet:
		s.getResponse(w, r, id)
	case id != "" && action == "cancel" && r.Method == http.MethodPost:
		s.cancelResponse(w, r, id)
	case rest == "" || action == "" || action == "cancel":
		wire.WriteResponsesError(w, &wire.Error{Status: http.StatusMethodNotAllowed, Message: r.Method + " is not allowed here", Type: "invalid_request_error"})
	default:
		wire.WriteResponsesError(w, &wire.Error{Status: http.StatusNotFound, Type: "not_found_error", Message: "unknown path " + r.URL.Path})
	}
}

// createResponse is POST /v1/responses. A response that is not stored runs as the other doors'
// replies do (its caller going away aborts it); a stored one (store: true, the API's default) or
// a background one keeps an event log, outlives its caller, and may be read, resumed and
// cancelled through any front door of the deployment.
func (s *server) createResponse(w http.ResponseWriter, r *http.Request) {
	d := responsesDoor
	body, ok := s.read(w, r, d.writeError)
	if !ok {
		return
	}
	req, wr, werr := decodeRequest(d.decode, body, r.Header.Get("x-baton-session"))
	if werr == nil {
		werr = applyWait(r.Header, wr, &req)
	}
	if werr == nil {
		werr = s.admit(r.Context(), req)
	}
	if werr == nil {
		werr = s.prepareResponses(r.Context(), req, &wr)
	}
	if werr != nil {
		d.writeError(w, werr)
		return
	}
	if !wr.Responses.Store {
		s.turnDecoded(w, r, d, req, wr)
		return
	}
	if s.responses == nil {
		d.writeError(w, &wire.Error{Status: http.StatusNotImplemented, Type: "invalid_request_error", Param: "store",
			Message: "store: this server keeps no responses; send store: false"})
		return
	}
	release, werr := s.slot()
	if werr != nil {
		d.writeError(w, werr)
		return
	}
	defer release()
	echo := wr.Responses.ResponsesEcho
	id := "resp_" + live.NewKey()
	req.LogKey = id
	head := wire.ResponsesHead{ID: id, Model: wr.Model, CreatedAt: time.Now().Unix(), Echo: echo}
	// The reply outlives this request: its stream and its wait end with the reply, not the caller.
	ctx := context.WithoutCancel(r.Context())
	sctx, cancelStart := context.WithTimeout(ctx, s.timeout)
	defer cancelStart()
	req, err := workflows.WithTurn(sctx, s.content, req, wr.Turn)
	if err != nil {
		d.writeError(w, &wire.Error{Status: http.StatusServiceUnavailable, Message: err.Error(), Type: "server_error"})
		return
	}
	var stream *live.Stream
	if s.live != nil && wr.Stream && !echo.Background {
		// A streamed caller's attempts run here; what they log wakes its stream at once.
		key := live.NewKey()
		stream = s.live.hub.Open(ctx, key)
		req.StreamQueue, req.StreamKey = s.live.queue, key
	}
	run, err := workflows.StartReply(sctx, s.client, s.taskQueue, req)
	if err != nil {
		if stream != nil {
			stream.Close()
		}
		d.writeError(w, &wire.Error{Status: http.StatusServiceUnavailable, Message: "cannot start the reply: " + err.Error(), Type: "server_error", RetryAfter: startRetryAfter})
		return
	}
	rec := responseRecord{Head: head, WorkflowID: run.GetID(), RunID: run.GetRunID(), Messages: conversation(wr)}
	data, _ := json.Marshal(rec) // plain data: cannot fail
	if err := s.responses.PutResponse(sctx, id, data, time.Now()); err != nil {
		// The reply runs on; what cannot be kept cannot be resumed or continued: say so now.
		s.abort(run)
		if stream != nil {
			stream.Close()
		}
		d.writeError(w, &wire.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Message: "cannot store the response: " + err.Error()})
		return
	}
	// The end is written once the reply ends, here or by whichever door reads it first.
	go func() {
		defer func() {
			if stream != nil {
				stream.Close()
			}
		}()
		s.settle(ctx, rec, run)
	}()
	w.Header().Set("x-baton-workflow-id", run.GetID())
	w.Header().Set("x-baton-run-id", run.GetRunID())
	// The caller waits up to --timeout; the reply goes on after it, stored.
	wait, stopWaiting := context.WithTimeout(r.Context(), s.timeout)
	defer stopWaiting()
	switch {
	case wr.Stream:
		s.follow(wait, w, rec, -1, stream)
	case echo.Background:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wire.ResponsesObject(wire.Reply{ID: id, Model: head.Model, Created: head.CreatedAt}, echo, "queued", nil))
	default:
		f := s.settle(wait, rec, run)
		switch {
		case f != nil:
			s.writeFinal(w, rec, *f)
		case r.Context().Err() == nil:
			d.writeError(w, stillRunning(id, s.timeout))
		} // else the caller went away: the reply goes on, stored
	}
}

// prepareResponses applies what only the Responses door has: built-in tools (refused unless
// every candidate speaks the Responses API) and previous_response_id (the stored conversation goes
// before the new input, after the new instructions).
func (s *server) prepareResponses(ctx context.Context, req workflows.ReplyRequest, wr *wire.Request) *wire.Error {
	rr := wr.Responses
	if len(rr.BuiltinTools) > 0 {
		if !s.allSpeakResponses(req) {
			return rr.BuiltinTools[0].Refusal()
		}
		// Every candidate takes them as they are: the caller's tools and choice, whole.
		if wr.Turn.Extra == nil {
			wr.Turn.Extra = map[string]json.RawMessage{}
		}
		wr.Turn.Extra["tools"] = rr.Tools
		for _, b := range rr.BuiltinTools {
			if b.Param == "tool_choice" {
				wr.Turn.Extra["tool_choice"] = rr.ToolChoice
			}
		}
	}
	if rr.PreviousResponseID == "" {
		return nil
	}
	if s.responses == nil {
		return wire.PreviousResponseNotFound(rr.PreviousResponseID)
	}
	rec, werr := s.record(ctx, rr.PreviousResponseID)
	if werr != nil {
		if werr.Status == http.StatusNotFound {
			werr = wire.PreviousResponseNotFound(rr.PreviousResponseID)
		}
		return werr
	}
	f, werr := s.final(ctx, rec)
	switch {
	case werr != nil:
		return werr
	case f == nil:
		return wire.BadRequest("previous_response_id", "previous_response_id: response %s is still in progress", rr.PreviousResponseID)
	case f.Answer == nil:
		return wire.BadRequest("previous_response_id", "previous_response_id: response %s ended %s, with no answer to continue", rr.PreviousResponseID, f.Status)
	}
	prior := append(append([]provider.Message{}, rec.Messages...), wire.ResponsesAnswerMessage(rec.Head.ID, *f.Answer))
	calls := map[string]bool{}
	for _, m := range prior {
		for _, p := range m.Content {
			if p.Type == provider.PartToolCall {
				calls[p.CallID] = true
			}
		}
	}
	for _, pr := range rr.PriorCallResults {
		if !calls[pr.CallID] {
			return pr.Refusal()
		}
	}
	msgs, head := wr.Turn.Messages, instructions(*wr) // this request's instructions stay first
	wr.Turn.Messages = append(append(append([]provider.Message{}, msgs[:head]...), prior...), msgs[head:]...)
	return nil
}

// conversation is what a later previous_response_id continues: the turn's messages without
// this request's instructions.
func conversation(wr wire.Request) []provider.Message {
	return wr.Turn.Messages[instructions(wr):]
}

// instructions is how many of the turn's first messages are the request's instructions (0 or 1).
func instructions(wr wire.Request) int {
	if wr.Responses.Instructions != nil && len(wr.Turn.Messages) > 0 {
		return 1
	}
	return 0
}

// allSpeakResponses reports whether every candidate of the reply's chain speaks the Responses
// API, so that built-in tools can go to them as they are.
func (s *server) allSpeakResponses(req workflows.ReplyRequest) bool {
	cfg := s.config.Get()
	var refs []policy.ModelRef
	if fc := req.FixedChain; fc != nil {
		refs = append(refs, fc.Model)
		if fc.HasFallbacks {
			refs = append(refs, fc.Fallbacks...)
		} else {
			refs = append(refs, cfg.AgentFallbacks(req.Agent)...)
		}
	} else {
		refs = append([]policy.ModelRef{cfg.AgentPrimary(req.Agent)}, cfg.AgentFallbacks(req.Agent)...)
	}
	for _, ref := range refs {
		if cfg.Providers[policy.NormalizeProvider(ref.Provider)].API != provider.APIOpenAIResponses {
			return false
		}
	}
	return len(refs) > 0
}

// record reads a stored response (404 in the API's shape when it is not there or expired).
func (s *server) record(ctx context.Context, id string) (responseRecord, *wire.Error) {
	var rec responseRecord
	if s.responses == nil {
		return rec, wire.ResponseNotFound(id)
	}
	data, err := s.responses.GetResponse(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return rec, wire.ResponseNotFound(id)
	}
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	if err != nil {
		return rec, &wire.Error{Status: http.StatusInternalServerError, Type: "server_error", Message: fmt.Sprintf("reading response %s: %v", id, err)}
	}
	return rec, nil
}

// final is how a stored response ended (nil: it has not): its log's final record, or, when the
// reply ended without one written (its front door went away), what the reply's result says,
// written now.
func (s *server) final(ctx context.Context, rec responseRecord) (*responseFinal, *wire.Error) {
	page, err := s.responses.ReplyLog(ctx, rec.Head.ID, 0)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, &wire.Error{Status: http.StatusInternalServerError, Type: "server_error", Message: fmt.Sprintf("reading response %s: %v", rec.Head.ID, err)}
	}
	if page.Done {
		return decodeFinal(page.Final), nil
	}
	desc, err := s.client.DescribeWorkflowExecution(ctx, rec.WorkflowID, rec.RunID)
	if err != nil {
		return nil, &wire.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Message: fmt.Sprintf("reading response %s's reply: %v", rec.Head.ID, err)}
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, nil
	}
	return s.settle(ctx, rec, s.client.GetWorkflow(ctx, rec.WorkflowID, rec.RunID)), nil
}

// settle waits for the reply of rec to end and writes how it ended (settleReply).
func (s *server) settle(ctx context.Context, rec responseRecord, run client.WorkflowRun) *responseFinal {
	return settleReply(ctx, s.responses, rec.Head.ID, run)
}

// settleReply waits for a reply to end and writes how it ended as the final record of its event
// log key (the first writer's stands: it is read back, so every door tells the same end); nil
// when ctx ended first.
func settleReply(ctx context.Context, rs ResponseStore, key string, run client.WorkflowRun) *responseFinal {
	var res policy.ReplyResult
	err := run.Get(ctx, &res)
	var ended *temporal.WorkflowExecutionError
	if ctx.Err() != nil || err != nil && !errors.As(err, &ended) {
		return nil // the wait ended, not the reply: its end is for a later reader to write
	}
	f := responseFinal{Status: "completed", Model: res.Served.Provider + "/" + res.Served.Model}
	var a provider.Answer
	if err == nil {
		a, err = answerOf(res)
	}
	switch {
	case err == nil:
		f.Answer = &a
	case isCancelled(err):
		f.Status, f.Model = "cancelled", ""
	default:
		f.Status, f.Model, f.Error = "failed", "", replyError(err, time.Now())
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// A failed write leaves the end to whichever door reads the reply next.
	_ = rs.FinishReplyLog(wctx, key, mustJSON(f))
	if page, err := rs.ReplyLog(wctx, key, 0); err == nil && page.Done {
		return decodeFinal(page.Final) // another door may have written it first
	}
	return &f
}

func decodeFinal(data []byte) *responseFinal {
	var f responseFinal
	if json.Unmarshal(data, &f) != nil || f.Status == "" {
		f = responseFinal{Status: "failed", Error: &wire.Error{Status: http.StatusInternalServerError, Type: "server_error", Message: "the response's end is unreadable"}}
	}
	return &f
}

// isCancelled reports a reply that was cancelled (a cancel, an abort).
func isCancelled(err error) bool {
	var appErr *temporal.ApplicationError
	return temporal.IsCanceledError(err) || errors.As(err, &appErr) && appErr.Type() == policy.ErrAborted
}

// writeFinal answers with a finished response's object.
func (s *server) writeFinal(w http.ResponseWriter, rec responseRecord, f responseFinal) {
	w.Header().Set("Content-Type", "application/json")
	r := wire.Reply{ID: rec.Head.ID, Model: rec.Head.Model, Created: rec.Head.CreatedAt}
	switch {
	case f.Answer != nil:
		r.Model, r.Answer = f.Model, *f.Answer
		_, _ = w.Write(wire.ResponsesResponse(r, rec.Head.Echo))
	case f.Status == "cancelled":
		_, _ = w.Write(wire.ResponsesObject(r, rec.Head.Echo, "cancelled", nil))
	default:
		_, _ = w.Write(wire.ResponsesObject(r, rec.Head.Echo, "failed", f.Error))
	}
}

// getResponse is GET /v1/responses/{id}: its state, its output once done; with stream=true, its
// events after starting_after (every one without it), then the live ones.
func (s *server) getResponse(w http.ResponseWriter, r *http.Request, id string) {
	rec, werr := s.record(r.Context(), id)
	if werr != nil {
		wire.WriteResponsesError(w, werr)
		return
	}
	q := r.URL.Query()
	// The API takes stream as a query parameter; OpenAI's own clients send it as a JSON body.
	var body struct {
		Stream bool `json:"stream"`
	}
	if data, _ := io.ReadAll(io.LimitReader(r.Body, 4096)); len(data) > 0 {
		if err := json.Unmarshal(data, &body); err != nil {
			wire.WriteResponsesError(w, wire.BadRequest("", "the body: %v", err))
			return
		}
	}
	if q.Get("stream") == "true" || body.Stream {
		skip := int64(-1)
		if v := q.Get("starting_after"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < -1 {
				wire.WriteResponsesError(w, wire.BadRequest("starting_after", "starting_after: %q is not a sequence number", v))
				return
			}
			skip = n
		}
		s.follow(r.Context(), w, rec, skip, nil)
		return
	}
	f, werr := s.final(r.Context(), rec)
	if werr != nil {
		wire.WriteResponsesError(w, werr)
		return
	}
	if f != nil {
		s.writeFinal(w, rec, *f)
		return
	}
	// Still running: the object as it stands, with what of the answer is logged so far.
	var a provider.Answer
	if page, err := s.responses.ReplyLog(r.Context(), id, 0); err == nil {
		for _, e := range page.Entries {
			if d, err := live.DecodeDelta(e); err == nil {
				a.Text += d.Text
			}
		}
	}
	status := "in_progress"
	if a.Text == "" && rec.Head.Echo.Background {
		status = "queued"
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(wire.ResponsesObject(wire.Reply{ID: id, Model: rec.Head.Model, Created: rec.Head.CreatedAt, Answer: a}, rec.Head.Echo, status, nil))
}

// cancelResponse is POST /v1/responses/{id}/cancel: a background response is aborted with the
// abort rules of every reply (nothing more is tried, the fallback written for its attempt is
// rolled back); the answer is the response as it ended.
func (s *server) cancelResponse(w http.ResponseWriter, r *http.Request, id string) {
	rec, werr := s.record(r.Context(), id)
	if werr != nil {
		wire.WriteResponsesError(w, werr)
		return
	}
	if !rec.Head.Echo.Background {
		wire.WriteResponsesError(w, wire.BadRequest("", "only a response created with background: true can be cancelled"))
		return
	}
	run := s.client.GetWorkflow(r.Context(), rec.WorkflowID, rec.RunID)
	s.abort(run)
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	f := s.settle(ctx, rec, run)
	if f == nil {
		wire.WriteResponsesError(w, &wire.Error{Status: http.StatusGatewayTimeout, Type: "server_error", Message: "the reply of " + id + " did not end within 30 s of its cancel"})
		return
	}
	s.writeFinal(w, rec, *f)
}

// follow sends a stored response's events as a stream: from its event log (what its caller has
// seen is always there first), skipping those numbered through skip, then, as the reply goes on,
// the rest; it ends with the response's end. wake (may be nil) is this process's live stream of
// the reply, which says at once that more was logged; otherwise the log is read again after a
// pause that grows while nothing comes.
func (s *server) follow(ctx context.Context, w http.ResponseWriter, rec responseRecord, skip int64, wake *live.Stream) {
	id := rec.Head.ID
	page, err := s.responses.ReplyLog(ctx, id, 0)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		wire.WriteResponsesError(w, &wire.Error{Status: http.StatusInternalServerError, Type: "server_error", Message: fmt.Sprintf("reading response %s: %v", id, err)})
		return
	}
	if page.Done {
		// A finished response's events are all known: a starting_after past them is a mistake.
		if last := render(io.Discard, rec, -1, page).LastWritten(); skip > last {
			wire.WriteResponsesError(w, wire.BadRequest("starting_after", "starting_after: %d is beyond the last event (%d) of response %s", skip, last, id))
			return
		}
	}
	flush := func() {}
	if f, ok := w.(http.Flusher); ok {
		flush = f.Flush
	}
	openStream(w, flush)
	out := &liveOut{w: wire.NewResponsesStream(w, flush, rec.Head, skip)}
	out.w.(*wire.ResponsesStream).Start()
	run := s.client.GetWorkflow(context.WithoutCancel(ctx), rec.WorkflowID, rec.RunID)
	keepAlive := func() {
		_ = wire.OpenAIKeepAlive(w)
		flush()
	}
	f, err := tailLog(ctx, s.responses, id, page, run, wake, s.keepAliveEvery(), keepAlive, out.send)
	switch {
	case err != nil:
		out.w.Error(&wire.Error{Status: http.StatusInternalServerError, Type: "server_error", Message: fmt.Sprintf("reading response %s: %v", id, err)})
	case f != nil:
		out.end(*f)
	case errors.Is(ctx.Err(), context.DeadlineExceeded), ctx.Err() == nil:
		// serve's --timeout, or Temporal could not say how the reply ended: it goes on, stored.
		e := stillRunning(id, s.timeout)
		if ctx.Err() == nil {
			e.Message = "Temporal could not be asked how the reply ended; " + strings.SplitN(e.Message, "; ", 2)[1]
		}
		e.Message += fmt.Sprintf(" (from the event after %d)", out.w.(*wire.ResponsesStream).LastWritten())
		out.w.Error(e)
	}
}

// stillRunning is what a caller of a stored response gets when serve's --timeout ends its wait:
// the reply is not aborted, and the response can be read or resumed later.
func stillRunning(id string, timeout time.Duration) *wire.Error {
	return &wire.Error{Status: http.StatusGatewayTimeout, Type: "server_error", Code: "reply_still_running", Message: fmt.Sprintf(
		"no answer within baton serve's --timeout of %s; response %s goes on, stored: read it with GET /v1/responses/%s, resume its stream with ?stream=true&starting_after=N",
		timeout, id, id)}
}

// tailLog hands each delta of a reply's event log (key) to on, from page (the log as read first)
// on, as the log grows, until it is finished: it returns the final record (nil when ctx ended
// first). wake (may be nil) is this process's live stream of the reply, which says at once that
// more was logged; otherwise the log is read again after a pause that grows while nothing comes
// (50 ms to 1 s), and read once more when the reply ends, whose end settleReply writes. idle is
// called after every keepAlive without a delta.
func tailLog(ctx context.Context, rs ResponseStore, key string, page store.ReplyLogPage, run client.WorkflowRun,
	wake *live.Stream, keepAlive time.Duration, idle func(), on func(live.Delta)) (*responseFinal, error) {
	ended := make(chan *responseFinal, 1)
	go func() { ended <- settleReply(ctx, rs, key, run) }()
	var wakeup <-chan struct{}
	if wake != nil {
		wakeup = wake.Ready()
	}
	pause := 50 * time.Millisecond
	quiet := time.NewTimer(keepAlive)
	defer quiet.Stop()
	var err error
	for {
		for _, e := range page.Entries {
			if d, err := live.DecodeDelta(e); err == nil {
				on(d)
			}
		}
		if len(page.Entries) > 0 {
			pause = 50 * time.Millisecond
			quiet.Reset(keepAlive)
		}
		if page.Done {
			return decodeFinal(page.Final), nil
		}
		next := page.Next
		select {
		case <-wakeup:
			wake.Take()
		case f := <-ended:
			if f == nil {
				return nil, nil // ctx ended
			}
			// Its last deltas were logged before the reply ended; its end is written.
			if page, err = rs.ReplyLog(ctx, key, next); err != nil || !page.Done {
				page.Done, page.Final = true, mustJSON(*f) // its end could not be kept: it is still told
			}
			continue
		case <-time.After(pause):
			pause = min(2*pause, time.Second)
		case <-quiet.C:
			idle()
			quiet.Reset(keepAlive)
			continue
		case <-ctx.Done():
			return nil, nil
		}
		if page, err = rs.ReplyLog(ctx, key, next); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		page.Next = max(page.Next, next)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// render writes a finished response's whole stream to w, skipping through skip.
func render(w io.Writer, rec responseRecord, skip int64, page store.ReplyLogPage) *wire.ResponsesStream {
	st := wire.NewResponsesStream(w, nil, rec.Head, skip)
	out := &liveOut{w: st}
	st.Start()
	for _, e := range page.Entries {
		if d, err := live.DecodeDelta(e); err == nil {
			out.send(d)
		}
	}
	out.end(*decodeFinal(page.Final))
	return st
}

// end ends a response's stream as it ended: the rest of the answer and its finish, or the error.
func (o *liveOut) end(f responseFinal) {
	switch {
	case f.Answer != nil:
		o.finish(*f.Answer, f.Model)
	case f.Status == "cancelled":
		o.w.Error(&wire.Error{Status: 499, Type: "server_error", Code: "cancelled", Message: "the response was cancelled"})
	default:
		o.w.Error(f.Error)
	}
}
