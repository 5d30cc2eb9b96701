package serve

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/internal/wire"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/workflows"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
)

// Options configure a front door.
type Options struct {
	Client    client.Client
	TaskQueue string
	// Namespace is the Temporal namespace of the replies (cancelling a restarted one needs it).
	Namespace string
	// Token, when set, is required of every caller, as a bearer token or x-api-key (BATON_SERVE_TOKEN).
	Token  string
	Config *activities.ConfigSource
	// Timeout is the longest a request waits for its reply (0: DefaultTimeout).
	Timeout time.Duration
	// Content keeps turns too large to travel in the workflow input (the store).
	Content workflows.ContentPutter
	// MaxBody bounds a request body (BATON_MAX_REQUEST_BYTES; 0: DefaultMaxRequestBytes).
	MaxBody int64
	// Streams and StreamQueue are this process's live door: its worker runs the attempts of the
	// callers this server holds on StreamQueue and hands their deltas out through Streams (nil:
	// the shared worker runs them all, and an answer goes out whole).
	Streams     *live.Hub
	StreamQueue string
	// HasProfile reports whether the store holds a profile of a provider (nil: not checked).
	HasProfile func(ctx context.Context, provider string) bool
	// MaxInflight bounds the replies this server waits on at once (BATON_SERVE_MAX_INFLIGHT; 0: no bound).
	MaxInflight int
	Logger      *zap.Logger // nil: none
	// KeepAlive is how long a streamed caller goes without a byte before a keep-alive
	// (BATON_SERVE_KEEPALIVE; 0: DefaultServeKeepAlive).
	KeepAlive time.Duration
	// Identity names this server in the histories it writes to (a cancel).
	Identity string
	// Responses keeps the Responses door's stored responses and replies' event logs (nil: only
	// store: false is served).
	Responses ResponseStore
}

// DefaultTimeout is how long a request waits for its reply unless Options.Timeout says otherwise.
const DefaultTimeout = 10 * time.Minute

// New is the front door: POST /v1/chat/completions (OpenAI), POST /v1/messages (Anthropic) and
// GET /v1/models, each request a Reply workflow.
// startRetryAfter is the Retry-After (seconds) of a 503 for a reply that could not start
// (Temporal unreachable or saturated): clients that honour it (the official SDKs do) pace their
// retries instead of adding load at once.
const startRetryAfter = 2

func New(o Options) http.Handler {
	s := &server{client: o.Client, taskQueue: o.TaskQueue, namespace: o.Namespace, token: o.Token, config: o.Config,
		timeout: cmp.Or(o.Timeout, DefaultTimeout), content: o.Content, maxBody: o.MaxBody, hasProfile: o.HasProfile,
		logger: o.Logger, keepAlive: o.KeepAlive, identity: o.Identity, responses: o.Responses}
	if o.Streams != nil {
		s.live = &liveDoor{hub: o.Streams, queue: o.StreamQueue}
	}
	if o.MaxInflight > 0 {
		s.inflight = make(chan struct{}, o.MaxInflight)
	}
	return s
}

type server struct {
	client    client.Client
	taskQueue string
	token     string
	config    *activities.ConfigSource
	timeout   time.Duration
	content   workflows.ContentPutter
	maxBody   int64
	live      *liveDoor // nil: the shared worker runs every attempt
	// hasProfile reports whether the store holds a profile of a provider (nil: not checked).
	hasProfile func(ctx context.Context, provider string) bool
	// inflight holds a slot per reply this server waits on (nil: no bound).
	inflight  chan struct{}
	namespace string
	logger    *zap.Logger // nil: none
	keepAlive time.Duration
	identity  string
	responses ResponseStore // nil: no stored responses
}

// liveDoor is where this process's callers' attempts run and their deltas arrive.
type liveDoor struct {
	hub   *live.Hub
	queue string
}

// DefaultMaxRequestBytes bounds a request body unless BATON_MAX_REQUEST_BYTES says otherwise.
const DefaultMaxRequestBytes = 32 << 20

// door is one wire's front door: how it reads a request and writes an answer or an error.
type door struct {
	decode     func([]byte) (wire.Request, *wire.Error)
	writeError func(http.ResponseWriter, *wire.Error)
	answer     func(w http.ResponseWriter, r wire.Reply, req wire.Request)
	// live begins a live stream in the wire.
	live func(w io.Writer, flush func(), id, model string, created int64, req wire.Request) liveWriter
	// keepAlive writes the wire's keep-alive (an SSE comment, Anthropic's ping).
	keepAlive func(io.Writer) error
}

var (
	openAIDoor = door{decode: wire.DecodeOpenAI, writeError: wire.WriteOpenAIError, answer: answerOpenAI, keepAlive: wire.OpenAIKeepAlive,
		live: func(w io.Writer, flush func(), id, model string, created int64, req wire.Request) liveWriter {
			return wire.NewOpenAIStream(w, flush, "chatcmpl-"+id, model, created, req.IncludeUsage)
		}}
	anthropicDoor = door{decode: wire.DecodeAnthropic, writeError: wire.WriteAnthropicError, answer: answerAnthropic, keepAlive: wire.AnthropicKeepAlive,
		live: func(w io.Writer, flush func(), id, model string, _ int64, _ wire.Request) liveWriter {
			return wire.NewAnthropicStream(w, flush, "msg_"+id, model, provider.Usage{})
		}}
)

// RequireToken lets through only a caller that sends token as a bearer token ("" : everyone),
// answering others with a 401 in OpenAI's error shape.
func RequireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tokenGiven(r, token) {
			wire.WriteOpenAIError(w, unauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// tokenGiven reports whether the caller sent token as a bearer token or, to the Anthropic door
// whose clients send their key so, as x-api-key.
func tokenGiven(r *http.Request, token string) bool {
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if key := r.Header.Get("x-api-key"); key != "" && r.URL.Path == "/v1/messages" {
		got = key
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

var unauthorized = &wire.Error{Status: http.StatusUnauthorized, Message: "missing or wrong token (BATON_SERVE_TOKEN, as a bearer token or x-api-key)",
	Type: "authentication_error", Code: "invalid_api_key"}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := openAIDoor
	switch {
	case r.URL.Path == "/v1/messages":
		d = anthropicDoor
	case strings.HasPrefix(r.URL.Path, "/v1/responses"):
		d = responsesDoor
	}
	if s.token != "" && !tokenGiven(r, s.token) {
		d.writeError(w, unauthorized)
		return
	}
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		s.models(w)
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
		s.turn(w, r, openAIDoor)
	case r.URL.Path == "/v1/messages" && r.Method == http.MethodPost:
		s.turn(w, r, anthropicDoor)
	case r.URL.Path == "/v1/responses" || strings.HasPrefix(r.URL.Path, "/v1/responses/"):
		s.responsesPath(w, r)
	case r.URL.Path == "/v1/models" || r.URL.Path == "/v1/chat/completions" || r.URL.Path == "/v1/messages":
		d.writeError(w, &wire.Error{Status: http.StatusMethodNotAllowed, Message: r.Method + " is not allowed here", Type: "invalid_request_error"})
	default:
		d.writeError(w, &wire.Error{Status: http.StatusNotFound, Type: "not_found_error",
			Message: "unknown path " + r.URL.Path + " (POST /v1/chat/completions, POST /v1/messages, POST /v1/responses, GET /v1/models)"})
	}
}

func (s *server) models(w http.ResponseWriter) {
	seen := map[string]bool{}
	var data []map[string]any
	add := func(id, owner string) {
		if id != "" && !seen[id] {
			seen[id] = true
			data = append(data, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": owner})
		}
	}
	cfg := s.config.Get()
	refs := append([]policy.ModelRef{cfg.Model.Primary}, cfg.Model.Fallbacks...)
	for _, a := range cfg.Agents {
		if a.Model != nil {
			refs = append(append(refs, a.Model.Primary), a.Model.Fallbacks...)
		}
	}
	for _, r := range refs {
		if !r.IsZero() {
			add(r.String(), r.Provider)
		}
	}
	add("agent:main", "baton")
	for _, a := range cfg.Agents {
		add("agent:"+a.ID, "baton")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// decodeRequest reads a caller's body in its wire and says which reply it asks for: the agent,
// the session, the chain (a provider/model is a job primary with the configured fallbacks unless
// fallbacks is given; agent:<id> is that agent's chain), and the turn.
func decodeRequest(decode func([]byte) (wire.Request, *wire.Error), body []byte, session string) (workflows.ReplyRequest, wire.Request, *wire.Error) {
	wr, werr := decode(body)
	if werr != nil {
		return workflows.ReplyRequest{}, wr, werr
	}
	req := workflows.ReplyRequest{Agent: "main", Session: session}
	if req.Session == "" {
		req.Session = wr.Session
	}
	model := strings.TrimSpace(wr.Model)
	if agent, ok := strings.CutPrefix(model, "agent:"); ok {
		if agent == "" {
			return req, wr, wire.BadRequest("model", "model: \"agent:\" names no agent")
		}
		req.Agent = agent
		if wr.Fallbacks != nil {
			return req, wr, wire.BadRequest("fallbacks", "fallbacks: goes with a provider/model, not an agent")
		}
		return req, wr, nil
	}
	ref, err := policy.ParseModelRef(model)
	if err != nil {
		return req, wr, wire.BadRequest("model", "model: %v (or \"agent:<id>\")", err)
	}
	cp := &policy.FixedChain{Model: ref}
	if wr.Fallbacks != nil {
		cp.HasFallbacks, cp.Fallbacks = true, []policy.ModelRef{}
		for i, f := range *wr.Fallbacks {
			fr, err := policy.ParseModelRef(f)
			if err != nil {
				return req, wr, wire.BadRequest(fmt.Sprintf("fallbacks[%d]", i), "fallbacks[%d]: %v", i, err)
			}
			cp.Fallbacks = append(cp.Fallbacks, fr)
		}
	}
	req.FixedChain = cp
	return req, wr, nil
}

// turn serves one model turn through a Reply workflow. Nothing starts until the whole request
// has been read and checked.
func (s *server) turn(w http.ResponseWriter, r *http.Request, d door) {
	body, ok := s.read(w, r, d.writeError)
	if !ok {
		return
	}
	req, wr, werr := decodeRequest(d.decode, body, r.Header.Get("x-baton-session"))
	if werr == nil {
		werr = applyWait(r.Header, wr, &req) // the durable wait: body wait_for_cooldown or header
	}
	if werr == nil {
		werr = s.admit(r.Context(), req)
	}
	if werr != nil {
		d.writeError(w, werr)
		return
	}
	s.turnDecoded(w, r, d, req, wr)
}

// turnDecoded runs a decoded, admitted request's reply and answers in its wire.
func (s *server) turnDecoded(w http.ResponseWriter, r *http.Request, d door, req workflows.ReplyRequest, wr wire.Request) {
	release, werr := s.slot()
	if werr != nil {
		d.writeError(w, werr)
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	req, err := workflows.WithTurn(ctx, s.content, req, wr.Turn)
	if err != nil {
		d.writeError(w, &wire.Error{Status: http.StatusServiceUnavailable, Message: err.Error(), Type: "server_error"})
		return
	}
	// The caller's live stream: this process runs the reply's attempts, so deltas reach the caller
	// in memory, and the caller's going away ends the call at once. A streamed answer's attempts
	// go to this process's own queue (every delta must reach it); an unstreamed one's stay on the
	// shared queue, where the reply started here eagerly hands them to this process's shared
	// worker without a trip through matching (and another worker takes them if this one cannot).
	var stream *live.Stream
	// The stream ends with the request, unless serve's timeout leaves a durable wait running
	// (detach): the end of this handler must not abort a reply that outlives its caller.
	streamCtx, endStream := context.WithCancel(context.WithoutCancel(r.Context()))
	detach := context.AfterFunc(r.Context(), endStream)
	if s.live != nil {
		key := live.NewKey()
		if wr.Stream {
			stream = s.live.hub.Open(streamCtx, key)
			req.StreamQueue = s.live.queue
		} else {
			// Nothing reaches an unstreamed caller before the whole answer: a cut midway is
			// not a partial answer it holds (streaming.midStream does not apply).
			stream = s.live.hub.Watch(streamCtx, key)
		}
		defer stream.Close()
		req.StreamKey = key
	}
	run, err := workflows.StartReply(ctx, s.client, s.taskQueue, req)
	if err != nil {
		d.writeError(w, &wire.Error{Status: http.StatusServiceUnavailable, Message: "cannot start the reply: " + err.Error(), Type: "server_error", RetryAfter: startRetryAfter})
		return
	}
	w.Header().Set("x-baton-workflow-id", run.GetID())
	w.Header().Set("x-baton-run-id", run.GetRunID())
	flush := func() {}
	if f, ok := w.(http.Flusher); ok {
		flush = f.Flush
	}
	sent := &countingWriter{ResponseWriter: w} // what the answer's stream wrote
	// A streamed caller gets its headers now and a keep-alive whenever nothing else went out for
	// a while, so that a proxy's idle timeout does not cut it (which would abort the reply)
	// during a retry wait or a slow first token.
	var keepAlive <-chan time.Time
	var idle *time.Timer
	if wr.Stream {
		openStream(w, flush)
		idle = time.NewTimer(s.keepAliveEvery())
		defer idle.Stop()
		keepAlive = idle.C
	}
	type outcome struct {
		res    policy.ReplyResult
		answer provider.Answer
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		// Bounded by the caller, not by ctx: serve's own timeout is told apart below.
		if o.err = run.Get(r.Context(), &o.res); o.err == nil {
			o.answer, o.err = answerOf(o.res)
		}
		done <- o
	}()
	var ready <-chan struct{}
	if stream != nil {
		ready = stream.Ready() // a streamed caller's deltas; any caller's whole answer (answer first)
	}
	var out *liveOut // the answer's stream in the caller's wire, begun at the first delta
	fail := func(e *wire.Error) {
		switch {
		case out != nil:
			// Part of an answer went out: the stream ends with an explicit error, never a
			// terminator after a partial answer.
			out.w.Error(e)
		case wr.Stream:
			// The headers went out before the outcome was known: the wire's error event
			// carries what the status response would have.
			d.live(w, flush, run.GetRunID(), wr.Model, time.Now().Unix(), wr).Error(e)
		default:
			d.writeError(w, e)
		}
	}
	for {
		select {
		case <-ready:
			deltas := stream.Take()
			if wr.Stream && len(deltas) > 0 {
				before := sent.n
				out = s.forward(sent, d, wr, run.GetRunID(), out, deltas, flush)
				if sent.n != before {
					idle.Reset(s.keepAliveEvery())
				}
			}
			if f := finalIn(deltas); f != nil {
				// The answer is whole and kept: the caller has it now, the reply's bookkeeping
				// goes on without it (docs/DECISIONS.md: answer first).
				answerHeaders(w.Header(), f.Model, f.Attempts, f.FallbackReason)
				answerCaller(w, d, wr, run.GetRunID(), out, f.Model, f.Answer)
				return
			}
		case <-keepAlive:
			_ = d.keepAlive(w) // a caller gone is heard of through its context
			flush()
			idle.Reset(s.keepAliveEvery())
		case o := <-done:
			if r.Context().Err() != nil {
				s.abort(run)
				return
			}
			if stream != nil && wr.Stream {
				out = s.forward(sent, d, wr, run.GetRunID(), out, stream.Take(), flush)
			}
			if o.err != nil {
				fail(replyError(o.err, time.Now()))
				return
			}
			res := o.res
			model := res.Served.Provider + "/" + res.Served.Model
			answerHeaders(w.Header(), model, len(res.Attempts), string(policy.LastReason(res.Attempts)))
			answerCaller(w, d, wr, run.GetRunID(), out, model, o.answer)
			return
		case <-ctx.Done():
			if r.Context().Err() != nil {
				s.abort(run)
				return
			}
			// serve's own --timeout ended the wait, not the reply.
			if stream != nil && wr.Stream {
				out = s.forward(sent, d, wr, run.GetRunID(), out, stream.Take(), flush)
			}
			e, follow := s.gaveUp(run, req.WaitForCooldown)
			if follow {
				detach()
			}
			fail(e)
			return
		}
	}
}

// read reads a request's body within BATON_MAX_REQUEST_BYTES; false: the error went out.
func (s *server) read(w http.ResponseWriter, r *http.Request, writeError func(http.ResponseWriter, *wire.Error)) ([]byte, bool) {
	limit := s.maxBody
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		writeError(w, wire.BadRequest("", "reading the body: %v", err))
		return nil, false
	}
	if int64(len(body)) > limit {
		// 413, not a 400 that reads like bad JSON nor a 5xx that invites a retry.
		writeError(w, &wire.Error{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
			Message: fmt.Sprintf("the request body is over the limit of %d bytes (BATON_MAX_REQUEST_BYTES)", limit)})
		return nil, false
	}
	return body, true
}

// admit refuses a request naming an agent the config does not have (a mistake to name, not a
// chain of defaults) or a model no reply could reach.
func (s *server) admit(ctx context.Context, req workflows.ReplyRequest) *wire.Error {
	if _, ok := s.config.Get().Agent(req.Agent); !ok && req.Agent != "main" {
		return wire.BadRequest("model", "model: agent %q is not in the config's agents.list", req.Agent)
	}
	return s.reachable(ctx, req)
}

// slot takes one of the server's in-flight slots (BATON_SERVE_MAX_INFLIGHT): what cannot be
// started in time is shed, rather than left to wait past its caller's deadline.
func (s *server) slot() (release func(), e *wire.Error) {
	if s.inflight == nil {
		return func() {}, nil
	}
	select {
	case s.inflight <- struct{}{}:
		return func() { <-s.inflight }, nil
	default:
		return nil, &wire.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "server_busy", RetryAfter: 1,
			Message: fmt.Sprintf("baton serve has %d replies in flight (BATON_SERVE_MAX_INFLIGHT): try again shortly", cap(s.inflight))}
	}
}

// reachable refuses a model whose provider has neither a models.providers entry nor a stored
// profile: a mistake to name now, not an outage to discover.
func (s *server) reachable(ctx context.Context, req workflows.ReplyRequest) *wire.Error {
	if s.hasProfile == nil || req.FixedChain == nil {
		return nil
	}
	cfg := s.config.Get()
	refs := map[string]policy.ModelRef{"model": req.FixedChain.Model}
	for i, f := range req.FixedChain.Fallbacks {
		refs[fmt.Sprintf("fallbacks[%d]", i)] = f
	}
	for param, ref := range refs {
		if _, ok := cfg.Providers[ref.Provider]; ok || ref.IsZero() || s.hasProfile(ctx, ref.Provider) {
			continue
		}
		return wire.BadRequest(param, "%s: %s: provider %q has no models.providers entry and no stored profile", param, ref, ref.Provider)
	}
	return nil
}

// abort cancels a reply whose caller went away: the provider connection closes (the attempt runs
// here, on the caller's context), the fallback written for it is rolled back, nothing else is tried.
func (s *server) abort(run client.WorkflowRun) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.client.CancelWorkflow(ctx, run.GetID(), run.GetRunID()) == nil {
		return
	}
	// The run that started is over: a /model restart continued it as new. Its chain's current
	// run is cancelled, and only while it is this reply's (a session's later turn shares the ID).
	_, err := s.client.WorkflowService().RequestCancelWorkflowExecution(ctx, &workflowservice.RequestCancelWorkflowExecutionRequest{
		Namespace: cmp.Or(s.namespace, "default"), WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: run.GetID()},
		FirstExecutionRunId: run.GetRunID(), Identity: s.identity, Reason: "the caller went away"})
	if err != nil && s.logger != nil {
		s.logger.Warn("cancelling an abandoned reply failed", zap.String("workflow", run.GetID()), zap.Error(err))
	}
}

// answerHeaders name the candidate that finished the answer, how many attempts the reply made
// and why it failed over (as trailers on a live stream, whose headers went out before the reply
// ended).
func answerHeaders(h http.Header, model string, attempts int, fallbackReason string) {
	if model != "/" && model != "" {
		h.Set("x-baton-model", model)
	}
	h.Set("x-baton-attempts", strconv.Itoa(attempts))
	if fallbackReason != "" {
		h.Set("x-baton-fallback-reason", fallbackReason)
	}
}

// answerCaller sends a finished answer: whole, or the rest of a live stream and its end. A
// session's turns share the workflow ID (its lane): the run names the answer.
func answerCaller(w http.ResponseWriter, d door, wr wire.Request, runID string, out *liveOut, model string, a provider.Answer) {
	if out == nil {
		d.answer(w, wire.Reply{ID: runID, Model: model, Created: time.Now().Unix(), Answer: a}, wr)
		return
	}
	out.finish(a, model)
}

// finalIn is the whole answer among deltas, if it came (it comes last).
func finalIn(deltas []live.Delta) *live.Final {
	if n := len(deltas); n > 0 {
		return deltas[n-1].Final
	}
	return nil
}

// liveOut is a caller's live stream and what has gone out on it.
type liveOut struct {
	w         liveWriter
	text      strings.Builder
	toolCalls int
}

// liveWriter is a wire's stream writer (wire.OpenAIStream, wire.AnthropicStream).
type liveWriter interface {
	wire.Stream
	Err() error
}

// forward writes deltas to the caller's stream (whose headers went out with the reply's start),
// beginning the wire's events at the first one: they name the candidate that sent it.
func (s *server) forward(w http.ResponseWriter, d door, wr wire.Request, runID string, out *liveOut, deltas []live.Delta, flush func()) *liveOut {
	for _, delta := range deltas {
		if delta.Final != nil {
			continue // the whole answer: its rest goes with the end (answerCaller)
		}
		if out == nil {
			out = &liveOut{w: d.live(w, flush, runID, delta.Model, time.Now().Unix(), wr)}
		}
		out.send(delta)
	}
	return out
}

// send writes one delta in the caller's wire, naming the candidate it came from.
func (o *liveOut) send(delta live.Delta) {
	if m, ok := o.w.(interface{ SetModel(string) }); ok {
		m.SetModel(delta.Model) // each chunk names the candidate it came from
	}
	switch {
	case delta.Text != "":
		o.w.Text(delta.Text)
		o.text.WriteString(delta.Text)
	case delta.Reasoning != "":
		// OpenAI's wires take reasoning text as it comes; Anthropic's a whole block (below).
		if r, ok := o.w.(interface{ Reasoning(string) }); ok {
			r.Reasoning(delta.Reasoning)
		}
	case delta.ReasoningPart != nil:
		switch r := o.w.(type) {
		case interface{ ReasoningPart(provider.Part) }:
			r.ReasoningPart(*delta.ReasoningPart)
		case interface {
			Thinking(string)
			Signature(string)
			RedactedThinking(string)
		}:
			if p := delta.ReasoningPart; p.Redacted != "" {
				r.RedactedThinking(p.Redacted)
			} else {
				r.Thinking(p.Text)
				r.Signature(p.Signature)
			}
		}
	case delta.ToolCall != nil:
		o.w.ToolCall(o.toolCalls, delta.ToolCall.ID, delta.ToolCall.Name)
		o.w.ToolArgs(o.toolCalls, delta.ToolCall.Arguments)
		o.toolCalls++
	}
}

// finish sends what of the answer has not gone out live (an attempt that ran on the shared
// worker sends no deltas), then the wire's end, naming the candidate that finished it.
func (o *liveOut) finish(a provider.Answer, model string) {
	if m, ok := o.w.(interface{ SetModel(string) }); ok {
		m.SetModel(model)
	}
	if rest, ok := strings.CutPrefix(a.Text, o.text.String()); ok && rest != "" {
		o.w.Text(rest)
	}
	for i := o.toolCalls; i < len(a.ToolCalls); i++ {
		o.w.ToolCall(i, a.ToolCalls[i].ID, a.ToolCalls[i].Name)
		o.w.ToolArgs(i, a.ToolCalls[i].Arguments)
	}
	o.w.Finish(a.FinishReason, a.Usage)
}

// answerOf is a reply's answer in the turn model (its tool calls and reasoning travel as JSON the
// workflow does not read).
func answerOf(res policy.ReplyResult) (provider.Answer, error) {
	calls, reasoning, err := provider.DecodeAnswerContent(res.ToolCalls, res.Reasoning)
	if err != nil {
		return provider.Answer{}, fmt.Errorf("the reply's answer: %w", err)
	}
	return provider.Answer{Text: res.Text, ToolCalls: calls, Reasoning: reasoning, FinishReason: res.FinishReason,
		Usage: provider.Usage{Input: res.Input, Output: res.Output, CachedInput: res.CachedInput, Reasoning: res.ReasoningOutput}}, nil
}

// An answer sent whole: unstreamed, or streamed but not live (its attempts ran on the shared
// worker, or serve has no door), whose headers then went out at the reply's start.
func answerOpenAI(w http.ResponseWriter, r wire.Reply, req wire.Request) {
	r.ID = "chatcmpl-" + r.ID
	answerWhole(w, req.Stream, r.Answer, func() []byte { return wire.OpenAIResponse(r) }, func(buf io.Writer) wire.Stream {
		return wire.NewOpenAIStream(buf, func() {}, r.ID, r.Model, r.Created, req.IncludeUsage)
	})
}

func answerAnthropic(w http.ResponseWriter, r wire.Reply, req wire.Request) {
	r.ID = "msg_" + r.ID
	answerWhole(w, req.Stream, r.Answer, func() []byte { return wire.AnthropicResponse(r) }, func(buf io.Writer) wire.Stream {
		return wire.NewAnthropicStream(buf, func() {}, r.ID, r.Model, r.Answer.Usage)
	})
}

// answerWhole sends an answer whole: a JSON body, or (streamed) the wire's events at once.
func answerWhole(w http.ResponseWriter, stream bool, a provider.Answer, body func() []byte, events func(io.Writer) wire.Stream) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body())
		return
	}
	startSSE(w)
	var buf bytes.Buffer
	wire.StreamAnswer(events(&buf), a)
	_, _ = w.Write(buf.Bytes())
}
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
}

// replyError maps a failed reply to an OpenAI-shaped error: 429 with Retry-After when every
// candidate was rate-limited, 400 for a prompt that does not fit, 502 otherwise.
func replyError(err error, now time.Time) *wire.Error {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "deadline exceeded") {
			return &wire.Error{Status: http.StatusGatewayTimeout, Message: "no answer in time: " + err.Error(), Type: "server_error"}
		}
		return &wire.Error{Status: http.StatusBadGateway, Message: err.Error(), Type: "server_error"}
	}
	switch appErr.Type() {
	case policy.ErrContextOverflow:
		return &wire.Error{Status: http.StatusBadRequest, Message: appErr.Message(), Type: "invalid_request_error", Code: "context_length_exceeded"}
	case policy.ErrFormat, "BadRequest":
		return &wire.Error{Status: http.StatusBadRequest, Message: appErr.Message(), Type: "invalid_request_error"}
	case policy.ErrFallbackSummary:
		var ex policy.Exhaustion
		_ = appErr.Details(&ex)
		if limited, retryAfter := ex.AllRateLimited(now); limited {
			return &wire.Error{Status: http.StatusTooManyRequests, Message: appErr.Message(), Type: "rate_limit_error", Code: "rate_limit_exceeded", RetryAfter: retryAfter}
		}
		return &wire.Error{Status: http.StatusBadGateway, Message: appErr.Message(), Type: "server_error", Code: string(ex.Reason)}
	}
	return &wire.Error{Status: http.StatusBadGateway, Message: appErr.Message(), Type: "server_error", Code: appErr.Type()}
}
