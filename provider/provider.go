// Package provider calls model APIs through their official SDKs (retries off: the workflow owns
// every retry). An attempt either returns a complete answer or an *Error precise enough to
// classify: a stream that is cut, stalls, or carries an error event is a failure, never a
// truncated success. Meanwhile OnDelta hands the answer out live, as it streams (text and
// reasoning as they come, each tool call once it is whole); on a failure the *Error says what was
// handed out (PartialText, PartialToolCalls), and a later attempt may continue it (Prefill).
//
// Each adapter translates a whole Turn (the turn model, content.go: conversation, images, tools,
// tool results, reasoning, sampling and output controls) to its wire (OpenAI's Chat Completions
// and Responses, Anthropic's Messages) and assembles the streamed answer back into an Answer
// (text, tool calls, reasoning, finish reason, usage). Dropped lists what a wire leaves out of a
// turn.
//
// The package imports nothing of baton's (imports_test.go): the policy reads what it needs of a
// failure (Error) through activities.FailureOf.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
)

// Wire formats.
const (
	APIOpenAICompletions = "openai-completions"
	APIOpenAIResponses   = "openai-responses"
	APIAnthropicMessages = "anthropic-messages"
	// The clouds' APIs (azure.go, bedrock.go, google.go, vertex.go).
	APIAzureOpenAI          = "azure-openai"           // Chat Completions on an Azure OpenAI resource
	APIAzureOpenAIResponses = "azure-openai-responses" // the Responses API on an Azure OpenAI resource
	APIBedrockConverse      = "bedrock-converse"       // Amazon Bedrock's Converse and ConverseStream
	APIGoogleGemini         = "google-gemini"          // the Gemini API (generativelanguage.googleapis.com)
	APIVertexAI             = "vertex-ai"              // Gemini and Anthropic models on Google's Vertex AI
)

// APIs lists every wire format a provider may speak (models.providers.<id>.api).
var APIs = []string{APIOpenAICompletions, APIOpenAIResponses, APIAnthropicMessages, APIAzureOpenAI, APIAzureOpenAIResponses, APIBedrockConverse, APIGoogleGemini, APIVertexAI}

// Defaults for the streaming watchdog: response headers within DefaultResponseTimeout of the
// request, then a first chunk within DefaultFirstTokenTimeout of the headers, then no silence
// longer than DefaultIdleTimeout. The first-token default is short, so that a fast model's stall
// fails over in seconds; a request that asks for reasoning, or a reasoning model, is given
// DefaultReasoningFirstTokenTimeout instead (the reply decides which: policy.Config.Deadlines),
// since it thinks before its first token.
const (
	DefaultResponseTimeout            = 10 * time.Second
	DefaultFirstTokenTimeout          = 10 * time.Second
	DefaultReasoningFirstTokenTimeout = 60 * time.Second
	DefaultIdleTimeout                = 60 * time.Second
)

// cloudEndpoint: the API finds its endpoint itself (from the region, the project, the resource)
// when the provider sets no base URL.
var cloudEndpoint = map[string]bool{APIBedrockConverse: true, APIGoogleGemini: true, APIVertexAI: true}

// Default base URLs of the providers baton knows by name.
var defaultBaseURLs = map[string]string{
	"openai":     "https://api.openai.com/v1",
	"openrouter": "https://openrouter.ai/api/v1",
	"anthropic":  "https://api.anthropic.com",
}

// Credential types beyond api_key, token and oauth: a cloud's own keys, or none at all.
const (
	// CredentialAWSKeys is an AWS access key pair (AccessKeyID, SecretAccessKey, SessionToken):
	// Bedrock signs with it (SigV4).
	CredentialAWSKeys = "aws_keys"
	// CredentialServiceAccount is a Google service account's JSON key (ServiceAccount): Vertex AI
	// trades it for an access token.
	CredentialServiceAccount = "service_account"
	// CredentialAmbient stores no secret: the cloud's own credential chain supplies one (AWS's
	// default chain: environment, shared files, SSO, instance roles; Google's application-default
	// credentials).
	CredentialAmbient = "ambient"
)

// Credential is the secret an attempt uses. It lives only in the activity's memory.
type Credential struct {
	Type    string // api_key | token | oauth | aws_keys | service_account | ambient
	Key     string
	Token   string
	Access  string
	Refresh string
	Expires time.Time
	// AccessKeyID, SecretAccessKey and SessionToken are an aws_keys credential.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// ServiceAccount is a service_account credential: the JSON key file's content.
	ServiceAccount string
}

// bearer is what goes on the wire.
func (c Credential) bearer() string {
	switch {
	case c.Key != "":
		return c.Key
	case c.Token != "":
		return c.Token
	}
	return c.Access
}

// Request is one attempt: one model, one credential.
type Request struct {
	Provider   string
	Model      string
	API        string // empty: by provider (anthropic → Anthropic Messages, else OpenAI Chat Completions)
	BaseURL    string // empty: the provider's default
	Credential Credential
	// Turn is the whole model turn: the conversation, the tools, the sampling and output controls.
	Turn Turn

	// What the clouds' APIs need besides a base URL (the provider's config entry): Region (Bedrock,
	// Vertex AI), Project (Vertex AI; empty: the service account's), APIVersion (Azure's
	// api-version), Deployment (Azure: the deployment serving Model; empty: Model).
	Region     string
	Project    string
	APIVersion string
	Deployment string
	// Headers and Query go with every call to this provider (its config entry's headers and
	// query), besides the adapter's own: gateways' routing keys, organisation headers. Never
	// secrets: those live in profiles.
	Headers map[string]string
	Query   map[string]string

	// Prefill is the answer so far, for the model to continue (an attempt after a stream that
	// failed mid-answer), and Continuation how it is asked to: ContinuePrefill (the default) sends
	// PrefillSent(Prefill) as the final assistant message, with "prefix": true on the OpenAI wire
	// when PrefillPrefix (the Responses API has no such flag, and OpenAI's models answer a final
	// assistant message anew: restart is that API's default continuation); ContinueInstruction
	// follows it with a user message asking to go on. The Response's answer is then the model's
	// continuation only: the caller checks and joins it.
	Prefill       string
	Continuation  string
	PrefillPrefix bool

	// The clocks: ResponseTimeout runs from the request until the response headers, then
	// FirstTokenTimeout until the first chunk, then IdleTimeout from each chunk. Keep-alives
	// (Anthropic's ping events, SSE comment lines) re-arm the idle timer once content has
	// started; before it they do not stop the first-token clock. Zero: the defaults.
	ResponseTimeout   time.Duration
	FirstTokenTimeout time.Duration
	IdleTimeout       time.Duration
	// AttemptTimeout, when set, bounds the whole attempt, from the request to its last chunk,
	// whatever the other clocks say (FaultAttemptTimeout).
	AttemptTimeout time.Duration
	// MinTokensPerSecond, when set, is a throughput floor (FaultSlow): once the answer has
	// started (its first piece of text, reasoning or tool-call arguments), it must average at
	// least this many tokens a second from then on, judged from ThroughputGrace after its start
	// (zero: judged at once). Tokens are estimated, not counted (see floor).
	MinTokensPerSecond float64
	ThroughputGrace    time.Duration
	// OnChunk is called for every chunk received (and for a keep-alive once the stream has
	// started), so the activity can heartbeat.
	OnChunk func()
	// OnDelta, when set, receives the answer as it streams, in stream order, from the goroutine
	// that reads the stream: each piece of text and of reasoning as soon as it is parsed, and
	// each tool call once, when it is complete (a stream cut in the middle of a call hands out
	// nothing of it). It must not block for long: the idle clock runs meanwhile.
	OnDelta func(Delta)
	// HTTPClient, when set, replaces the default transport (tests, proxies).
	HTTPClient *http.Client
	// TokenURL and ClientID let an expired OAuth credential be refreshed before the call.
	TokenURL string
	ClientID string
	// Now is the clock that decides expiry (time.Now when nil).
	Now func() time.Time
}

// Delta is one piece of a streamed answer: exactly one field is set.
type Delta struct {
	Text      string    // answer text
	Reasoning string    // reasoning (thinking) text
	ToolCall  *ToolCall // a complete tool call: final id, name and arguments
	// ReasoningPart is a whole reasoning part at its end, after its Reasoning deltas: an Anthropic
	// thinking block (with its signature, or redacted), or a Responses reasoning item.
	ReasoningPart *Part
}

// Response is a complete answer.
type Response struct {
	// Answer is the model's answer: text, tool calls, reasoning, finish reason (in OpenAI's words)
	// and usage (in OpenAI's meaning: Input counts cached input too).
	Answer Answer `json:"answer"`
	Chunks int    `json:"chunks"`
	// Refreshed holds a credential refreshed for this call, for the caller to store. It is a
	// secret: never log or return it from an activity.
	Refreshed *Credential `json:"-"`
}

// Stream faults: how a stream failed (or never started).
const (
	FaultResponseTimeout = "response_timeout"    // no response headers within the response timeout (Net "timeout")
	FaultCut             = "cut"                 // ended without the protocol's terminator
	FaultStall           = "stall"               // went silent longer than the idle timeout
	FaultFirstToken      = "first_token_timeout" // nothing within the first-token timeout
	FaultMalformed       = "malformed"           // a chunk that is not valid JSON
	FaultInBandError     = "in_band_error"       // an error event inside a 200 stream
	FaultEmpty           = "empty"               // a 200 with no content
	FaultAttemptTimeout  = "attempt_timeout"     // the whole attempt outlasted AttemptTimeout
	FaultSlow            = "too_slow"            // alive, but under the MinTokensPerSecond floor
)

// Error is a failed attempt as the classifier needs it: what the provider answered, parsed once
// (Parse, errors.go) into one normalised record. It never holds a secret: bodies are previews
// with key material masked.
type Error struct {
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`
	Type   string `json:"type,omitempty"`
	// Message is the error's own message: that of the JSON error object the body or the message
	// held, else the message, else the body's text.
	Message     string            `json:"message,omitempty"`
	BodyPreview string            `json:"bodyPreview,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"` // retry-after, retry-after-ms, rate-limit resets
	Net         string            `json:"net,omitempty"`     // reset | refused | dns | tls | timeout | eof
	Stream      string            `json:"stream,omitempty"`  // a Fault* value
	// Wrapped is the message as it came when it held a JSON error object after a status or a short
	// wrapper ("429 {"error":{…}}"); Message is then the object's message.
	Wrapped string `json:"wrapped,omitempty"`
	// Detail is what the body says: its error object's message, or its text.
	Detail string `json:"detail,omitempty"`
	// Page: the message is an HTML page (a proxy's or a gateway's, in place of the provider's
	// answer), whose words say nothing; DetailPage: the detail is one.
	Page       bool `json:"page,omitempty"`
	DetailPage bool `json:"detailPage,omitempty"`
	// Retry is what the answer said about when to come back (headers and body), as it said it.
	Retry RetryInfo `json:"retry,omitzero"`
	// Partial: some output had arrived before the failure (it is never returned).
	Partial bool `json:"partial,omitempty"`
	// PartialText is the answer text delivered through OnDelta before the failure (text deltas
	// only), and PartialToolCalls the number of complete tool calls delivered: what a caller
	// who streamed them has already shown. Not part of Error().
	PartialText      string `json:"-"`
	PartialToolCalls int    `json:"-"`
}

func (e *Error) Error() string {
	var parts []string
	if e.Status != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", e.Status))
	}
	if e.Stream != "" {
		parts = append(parts, "stream "+e.Stream)
	}
	if e.Net != "" {
		parts = append(parts, "network "+e.Net)
	}
	msg := e.Message
	if msg == "" {
		msg = e.BodyPreview
	}
	if msg != "" {
		parts = append(parts, msg)
	}
	return strings.Join(parts, ": ")
}

// Complete runs one attempt and returns the whole answer, or an *Error.
func Complete(ctx context.Context, req Request) (Response, error) {
	if req.Model == "" {
		return Response{}, errors.New("request without a model")
	}
	if req.ResponseTimeout <= 0 {
		req.ResponseTimeout = DefaultResponseTimeout
	}
	if req.FirstTokenTimeout <= 0 {
		req.FirstTokenTimeout = DefaultFirstTokenTimeout
	}
	if req.IdleTimeout <= 0 {
		req.IdleTimeout = DefaultIdleTimeout
	}
	api := req.API
	if api == "" {
		api = APIOpenAICompletions
		if req.Provider == "anthropic" {
			api = APIAnthropicMessages
		}
	}
	if req.BaseURL == "" && !cloudEndpoint[api] {
		req.BaseURL = defaultBaseURLs[req.Provider]
		if req.BaseURL == "" {
			return Response{}, fmt.Errorf("provider %q has no base URL: set models.providers.%s.baseUrl", req.Provider, req.Provider)
		}
	}
	var refreshed *Credential
	now := time.Now
	if req.Now != nil {
		now = req.Now
	}
	if needsRefresh(req.Credential, req.TokenURL, now()) {
		c, err := refresh(ctx, req.Credential, req.TokenURL, req.ClientID, req.HTTPClient)
		if err != nil {
			return Response{}, err
		}
		req.Credential, refreshed = c, &c
	}
	secret := req.Credential.bearer()

	// The watchdog: the response timeout until the headers, the first-token timeout until the
	// first chunk, then the idle timeout.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	clk := &clock{w: &watchdog{cancel: cancel}, req: &req}
	clk.w.arm(req.ResponseTimeout, errResponseTimeout)
	defer clk.w.stop()
	if req.AttemptTimeout > 0 {
		whole := time.AfterFunc(req.AttemptTimeout, func() { cancel(errAttempt) })
		defer whole.Stop()
	}
	var fl *floor
	if req.MinTokensPerSecond > 0 {
		fl = &floor{rate: req.MinTokensPerSecond, grace: req.ThroughputGrace, cancel: cancel}
		defer fl.stop()
	}

	cap := &capture{}
	base := http.DefaultTransport
	if req.HTTPClient != nil && req.HTTPClient.Transport != nil {
		base = req.HTTPClient.Transport
	}
	httpClient := &http.Client{Transport: &captureTransport{base: base, cap: cap, clk: clk, headers: req.Headers, query: req.Query, signed: api == APIBedrockConverse}}
	em := &emitter{on: req.OnDelta, floor: fl}

	var resp Response
	var err error
	switch api {
	case APIAnthropicMessages:
		resp, err = completeAnthropic(ctx, req, httpClient, secret, clk, em)
	case APIOpenAIResponses:
		resp, err = completeResponses(ctx, req, httpClient, secret, clk, em)
	case APIOpenAICompletions, "":
		resp, err = completeOpenAI(ctx, req, httpClient, secret, clk, em, cap)
	case APIAzureOpenAI, APIAzureOpenAIResponses:
		resp, err = completeAzure(ctx, req, httpClient, secret, clk, em, cap)
	case APIBedrockConverse:
		resp, err = completeBedrock(ctx, req, httpClient, clk, em)
	case APIGoogleGemini:
		resp, err = completeGemini(ctx, req, httpClient, secret, clk, em)
	case APIVertexAI:
		resp, err = completeVertex(ctx, req, httpClient, clk, em)
	default:
		return Response{}, fmt.Errorf("provider %q: API %q is not supported (%s)", req.Provider, api, strings.Join(APIs, ", "))
	}
	if err != nil {
		err = toError(ctx, err, cap, resp.Chunks > 0, secret)
		if e, ok := err.(*Error); ok && isAzure(api) {
			azureCodes(e)
		}
	} else if resp.Answer.Empty() {
		err = &Error{Stream: FaultEmpty, Message: "the provider answered with no content"}
	}
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.PartialText, e.PartialToolCalls = em.text.String(), em.calls
		}
		return Response{}, err
	}
	resp.Refreshed = refreshed
	return resp, nil
}

// PrefillSent is what goes on the wire for a prefill: the text without its trailing whitespace,
// which Anthropic refuses at the end of a final assistant message (both wires send the same). ""
// sends no prefill at all. A caller joining the continuation to the answer so far can tell from
// it what whitespace the model did not see.
func PrefillSent(prefill string) string {
	return strings.TrimRightFunc(prefill, unicode.IsSpace)
}

// How a Prefill is sent (policy's strategies of the same names).
const (
	ContinuePrefill     = "prefill"
	ContinueInstruction = "instruction"
)

// continueInstruction follows the answer so far under ContinueInstruction.
const continueInstruction = "Continue your previous answer exactly where it stopped. Do not repeat any of it, and do not add any preamble."

var (
	errResponseTimeout = errors.New("no response headers within the response timeout")
	errFirstToken      = errors.New("no first token within the first-token timeout")
	errStall           = errors.New("the stream went silent longer than the idle timeout")
	errCut             = errors.New("the stream ended before the protocol's terminator")
	errAttempt         = errors.New("the attempt ran past its attempt timeout")
	errSlow            = errors.New("the stream fell under its throughput floor")
)

// emitter hands the answer out through OnDelta as it streams, and keeps what it handed out: the
// text (PartialText on a failure) and the count of tool calls.
type emitter struct {
	on    func(Delta)
	text  strings.Builder
	calls int
	floor *floor // nil: no throughput floor
}

func (e *emitter) emitText(s string) {
	if s == "" {
		return
	}
	e.floor.add(len(s))
	e.text.WriteString(s)
	if e.on != nil {
		e.on(Delta{Text: s})
	}
}

func (e *emitter) emitReasoning(s string) {
	e.floor.add(len(s))
	if s != "" && e.on != nil {
		e.on(Delta{Reasoning: s})
	}
}

// progress: a piece of a tool call's arguments streamed (handed out only once the call is
// whole, but the model produced it now).
func (e *emitter) progress(s string) { e.floor.add(len(s)) }

func (e *emitter) emitReasoningPart(p Part) {
	if e.on != nil {
		e.on(Delta{ReasoningPart: &p})
	}
}

func (e *emitter) emitCall(c ToolCall) {
	e.calls++
	if e.on != nil {
		e.on(Delta{ToolCall: &c})
	}
}

// lateArguments: arguments for a tool call already handed out as complete, which cannot be
// taken back.
func lateArguments() *Error {
	return &Error{Stream: FaultMalformed, Message: "a tool call's arguments went on after the call was complete", Partial: true}
}

// streamEnd is the outcome of a stream read to its end, alike on every wire: an error its events
// carried (inBand), else the stream's, else the attempt's; else a stream that never reached its
// terminator (ended; missing names it) is empty or cut, never a truncated success.
func streamEnd(ctx context.Context, inBand, streamErr error, chunks int, ended bool, missing string) error {
	switch {
	case inBand != nil:
		return inBand
	case streamErr != nil:
		return streamErr
	case ctx.Err() != nil:
		return ctx.Err()
	case ended:
		return nil
	case chunks == 0:
		return &Error{Stream: FaultEmpty, Message: "the provider answered with no content"}
	}
	return &Error{Stream: FaultCut, Message: errCut.Error() + " (" + missing + ")", Partial: true}
}

// clock drives the watchdog from what the stream does.
type clock struct {
	w       *watchdog
	req     *Request
	started atomic.Bool // a first chunk has arrived
}

// headers: the response has started; the first-token clock runs from here.
func (c *clock) headers() {
	c.w.arm(c.req.FirstTokenTimeout, errFirstToken)
}

// chunk: content (a stream event that is not a keep-alive) arrived.
func (c *clock) chunk() {
	c.started.Store(true)
	c.w.arm(c.req.IdleTimeout, errStall)
	if c.req.OnChunk != nil {
		c.req.OnChunk()
	}
}

// keepAlive: a ping or an SSE comment. Life once content has started; nothing before.
func (c *clock) keepAlive() {
	if c.started.Load() {
		c.w.arm(c.req.IdleTimeout, errStall)
		if c.req.OnChunk != nil {
			c.req.OnChunk()
		}
	}
}

// watchdog cancels the attempt when its timer runs out; each chunk re-arms it. One timer for the
// whole attempt: re-arming is a Reset, not a new timer per chunk. A firing that a re-arm overtook
// (the timer ran out as a chunk arrived) is ignored: the timer fires again at the new deadline.
type watchdog struct {
	mu       sync.Mutex
	timer    *time.Timer
	cause    error
	deadline time.Time
	cancel   context.CancelCauseFunc
}

func (w *watchdog) arm(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cause, w.deadline = cause, time.Now().Add(d)
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.fire)
		return
	}
	w.timer.Reset(d)
}

func (w *watchdog) fire() {
	w.mu.Lock()
	cause, early := w.cause, time.Now().Before(w.deadline)
	w.mu.Unlock()
	if !early {
		w.cancel(cause)
	}
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}

// floor is the throughput floor. Its clock starts with the answer's first piece (text, reasoning
// or tool-call arguments); from then on the answer must average at least rate tokens a second,
// judged once grace has run: the pieces so far hold it up until start + tokens/rate, so one
// timer, pushed back by each piece, fires when the average falls under the floor (not before
// start + grace). Tokens are estimated as the streamed text, reasoning and tool-call arguments
// in UTF-8 bytes / 4 (no tokenizer: about 4 bytes a token in English; bytes rather than
// characters, so that a script of few characters a token, CJK, is not taken for a crawl).
type floor struct {
	mu       sync.Mutex
	rate     float64
	grace    time.Duration
	start    time.Time
	bytes    int
	timer    *time.Timer
	deadline time.Time
	done     bool
	cancel   context.CancelCauseFunc
}

func (f *floor) add(n int) {
	if f == nil || n <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	now := time.Now()
	if f.start.IsZero() {
		f.start = now
	}
	f.bytes += n
	held := time.Duration(float64(f.bytes) / 4 / f.rate * float64(time.Second))
	f.deadline = f.start.Add(max(f.grace, held))
	if f.timer == nil {
		f.timer = time.AfterFunc(f.deadline.Sub(now), f.fire)
		return
	}
	f.timer.Reset(f.deadline.Sub(now))
}

// fire cancels the attempt, unless a piece pushed the deadline back meanwhile (the timer then
// fires again at the new one).
func (f *floor) fire() {
	f.mu.Lock()
	early := time.Now().Before(f.deadline) || f.done
	f.mu.Unlock()
	if !early {
		f.cancel(errSlow)
	}
}

func (f *floor) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	if f.timer != nil {
		f.timer.Stop()
	}
}

// capture records the last response's status, headers and (for errors) body.
type capture struct {
	mu      sync.Mutex
	status  int
	headers http.Header
	body    []byte
	sawDone bool
}

type captureTransport struct {
	base http.RoundTripper
	cap  *capture
	clk  *clock
	// headers and query are the provider's own (Request.Headers, Request.Query), added to every
	// request; signed: the adapter adds them itself before it signs (Bedrock's SigV4 covers the
	// query and would not match one added after).
	headers, query map[string]string
	signed         bool
}

func (t *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !t.signed && (len(t.headers) > 0 || len(t.query) > 0) {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
		if len(t.query) > 0 {
			q := r.URL.Query()
			for k, v := range t.query {
				q.Set(k, v)
			}
			r.URL.RawQuery = q.Encode()
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if t.clk != nil {
		t.clk.headers()
	}
	t.cap.mu.Lock()
	t.cap.status, t.cap.headers = resp.StatusCode, resp.Header.Clone()
	t.cap.mu.Unlock()
	if resp.StatusCode >= 300 {
		// Read a bounded error body now, and hand the SDK the same bytes.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
		resp.Body.Close()
		t.cap.mu.Lock()
		t.cap.body = data
		t.cap.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return resp, nil
	}
	spot := &doneSpotter{ReadCloser: resp.Body, cap: t.cap}
	if t.clk != nil {
		spot.onComment = t.clk.keepAlive
	}
	resp.Body = spot
	return resp, nil
}

// doneSpotter notices, as the stream passes by, OpenAI's "[DONE]" terminator and SSE comment
// lines (": keep-alive"), which the SDKs' decoders drop unseen.
type doneSpotter struct {
	io.ReadCloser
	cap  *capture
	tail []byte
	seen bool
	// onComment is called (once per read) when a read holds the start of a comment line.
	onComment func()
	midLine   bool // the last read did not end a line
}

var doneMarker = []byte("[DONE]")

func (d *doneSpotter) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	if n > 0 && !d.seen {
		// Look in this read, and across the boundary with the previous one.
		seam := append(d.tail[:len(d.tail):len(d.tail)], p[:min(n, len(doneMarker))]...)
		if bytes.Contains(p[:n], doneMarker) || bytes.Contains(seam, doneMarker) {
			d.seen = true
			d.cap.mu.Lock()
			d.cap.sawDone = true
			d.cap.mu.Unlock()
		}
		d.tail = append(d.tail[:0], p[max(0, n-len(doneMarker)):n]...)
	}
	if n > 0 && d.onComment != nil {
		if hasCommentLine(p[:n], !d.midLine) {
			d.onComment()
		}
		d.midLine = p[n-1] != '\n'
	}
	return n, err
}

// hasCommentLine reports whether b holds a line that starts with ':' (atStart: b starts a line).
func hasCommentLine(b []byte, atStart bool) bool {
	if atStart && len(b) > 0 && b[0] == ':' {
		return true
	}
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 || i+1 >= len(b) {
			return false
		}
		if b[i+1] == ':' {
			return true
		}
		b = b[i+1:]
	}
}

// hintHeaders are the response headers that say when to come back.
var hintHeaders = []string{"retry-after", "retry-after-ms", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens",
	"anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-unified-reset"}

func pickHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for _, name := range hintHeaders {
		if v := h.Get(name); v != "" {
			out[name] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// toError turns whatever the SDK returned into an *Error.
func toError(ctx context.Context, err error, cap *capture, partial bool, secret string) error {
	var pe *Error
	if errors.As(err, &pe) {
		pe.Partial = pe.Partial || partial
		return scrub(pe, secret)
	}
	e := &Error{Partial: partial}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errResponseTimeout):
		e.Stream, e.Net, e.Message = FaultResponseTimeout, "timeout", errResponseTimeout.Error()
		return scrub(e, secret)
	case errors.Is(cause, errFirstToken):
		e.Stream, e.Message = FaultFirstToken, errFirstToken.Error()
		if partial {
			e.Stream, e.Message = FaultStall, errStall.Error()
		}
		return scrub(e, secret)
	case errors.Is(cause, errStall):
		e.Stream, e.Message = FaultStall, errStall.Error()
		return scrub(e, secret)
	case errors.Is(cause, errAttempt):
		e.Stream, e.Message = FaultAttemptTimeout, errAttempt.Error()
		return scrub(e, secret)
	case errors.Is(cause, errSlow):
		e.Stream, e.Message = FaultSlow, errSlow.Error()
		return scrub(e, secret)
	}
	cap.mu.Lock()
	status, headers, body := cap.status, cap.headers, cap.body
	cap.mu.Unlock()
	if status >= 300 {
		e.Status, e.Headers = status, pickHeaders(headers)
		return scrub(e.Parse(body), secret)
	}
	if status == 0 {
		e.Net, e.Message = netKind(err), err.Error()
		return scrub(e, secret)
	}
	// The stream had started: an in-band error, a malformed chunk, or a broken connection.
	e.Status = 0
	var se interface{ RawJSON() string }
	switch {
	case errors.As(err, &se) && se.RawJSON() != "":
		e.Stream = FaultInBandError
		e.Parse([]byte(se.RawJSON())) // an error event, read like a body
	case isStreamErrorEvent(err):
		e.Stream = FaultInBandError
		e.Parse(streamErrorData(err))
	case isJSONError(err):
		e.Stream, e.Message = FaultMalformed, "a stream chunk is not valid JSON: "+err.Error()
	default:
		e.Stream, e.Message = FaultCut, errCut.Error()+": "+err.Error()
		e.Net = netKind(err)
	}
	return scrub(e, secret)
}

func netKind(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		return "timeout"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "eof"
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:") || strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		return "tls"
	case errors.As(err, &opErr):
		return "reset"
	}
	return "reset"
}

// keyRe finds key-like material to mask in anything that leaves this package.
var keyRe = regexp.MustCompile(`(sk-[A-Za-z0-9_\-]{2,}|Bearer\s+[A-Za-z0-9._\-]+|"?(api[_-]?key|x-api-key|authorization)"?\s*[:=]\s*"?[A-Za-z0-9._\-]+)`)

// Mask hides key material in s, and secret itself wherever it appears.
func Mask(s, secret string) string {
	if secret != "" && len(secret) >= 4 {
		s = strings.ReplaceAll(s, secret, "***")
	}
	return keyRe.ReplaceAllStringFunc(s, func(m string) string {
		if len(m) <= 6 {
			return "***"
		}
		return m[:3] + "***"
	})
}

func scrub(e *Error, secret string) *Error {
	e.Message = Mask(e.Message, secret)
	e.BodyPreview = Mask(e.BodyPreview, secret)
	e.Wrapped = Mask(e.Wrapped, secret)
	e.Detail = Mask(e.Detail, secret)
	return e
}

const previewMax = 2048

func preview(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > previewMax {
		s = s[:previewMax] + "…"
	}
	return s
}

// drops collects the turn's fields a wire cannot carry, each once, in the order met. A nil
// *drops collects nothing (a call does not need the list; Dropped does).
type drops struct {
	seen map[string]bool
	list []string
}

func (d *drops) add(field string) {
	if d == nil || d.seen[field] {
		return
	}
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	d.seen[field] = true
	d.list = append(d.list, field)
}

// dropToolControls notes a tool choice and a parallel-calls flag that do not go: with no tool sent,
// they have nothing to govern.
func dropToolControls(t Turn, d *drops) {
	if t.ToolChoice != nil {
		d.add("toolChoice")
	}
	if t.ParallelToolCalls != nil {
		d.add("parallelToolCalls")
	}
}

// dropSeedAndPenalties notes the sampling controls only Chat Completions has.
func dropSeedAndPenalties(p Params, d *drops) {
	if p.Seed != nil {
		d.add("params.seed")
	}
	if p.PresencePenalty != nil {
		d.add("params.presencePenalty")
	}
	if p.FrequencyPenalty != nil {
		d.add("params.frequencyPenalty")
	}
}

// Dropped lists the fields of a turn that a wire (one of APIs; anything else is read as
// APIOpenAICompletions) cannot carry and leaves out, for
// logs: parameters ("params.seed"), fields of tools ("tools.strict"), fields of message content
// ("messages.content.cacheControl"), parts the wire cannot take where they are
// ("messages.content.reasoning (in an assistant message)"), and extra fields not forwarded
// ("extra.KEY": meant for another wire, or one the adapter sets itself). What the wire carries in another form (a tool result's image
// moved to a user message, a JSON response format emulated by a tool, a temperature clamped to
// Anthropic's range) is not listed.
func Dropped(t Turn, api string) []string {
	d := &drops{}
	forwarded := map[string]bool{}
	switch api {
	case APIAnthropicMessages:
		body, _ := anthropicBody("m", t, d, "")
		if t.Wire == WireAnthropic {
			for _, f := range extraFields(t.Extra, anthropicOwnKeys, body, anthropicOverridable(t)) {
				forwarded[f.key] = true
			}
		}
	case APIBedrockConverse:
		bedrockDrops(t, d)
	case APIGoogleGemini, APIVertexAI:
		geminiDrops(t, d) // Claude on Vertex AI drops what anthropic-messages drops
	case APIOpenAIResponses, APIAzureOpenAIResponses:
		body := responsesBody("m", t, d)
		if t.Wire == WireResponses {
			for _, f := range extraFields(t.Extra, responsesOwnKeys, body, responsesOverridable) {
				forwarded[f.key] = true
			}
		}
	default:
		body := openAIBody("m", t, d)
		if t.Wire == WireOpenAI {
			for _, f := range extraFields(t.Extra, openAIOwnKeys, body, nil) {
				forwarded[f.key] = true
			}
		}
	}
	for _, k := range sortedKeys(t.Extra) {
		if !forwarded[k] {
			d.add("extra." + k)
		}
	}
	return d.list
}

// inRole names where a dropped part was: " (in a user message)", " (in an assistant message)".
func inRole(role string) string {
	article := "a"
	if role == "" {
		role = "untyped"
	}
	if strings.IndexByte("aeiou", role[0]) >= 0 {
		article = "an"
	}
	return " (in " + article + " " + role + " message)"
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonField is one extra top-level field to set on a request body.
type jsonField struct {
	key   string
	path  string // an sjson path naming exactly the key
	value json.RawMessage
}

// extraFields are the caller's extra fields to set on body (in key order): all but the keys the
// adapter always sets (own) and those body already carries, unless overridable names them (a
// default the adapter chose without the turn asking, such as Anthropic's max_tokens).
func extraFields(extra map[string]json.RawMessage, own map[string]bool, body any, overridable map[string]bool) []jsonField {
	if len(extra) == 0 {
		return nil
	}
	present := presentKeys(body)
	var out []jsonField
	for _, k := range sortedKeys(extra) {
		if own[k] || (present[k] && !overridable[k]) {
			continue
		}
		v := extra[k]
		if len(v) == 0 || !json.Valid(v) {
			continue
		}
		out = append(out, jsonField{key: k, path: sjsonKey(k), value: v})
	}
	return out
}

// presentKeys are the JSON keys a request body struct writes (without marshalling it: it may
// hold images).
func presentKeys(body any) map[string]bool {
	v := reflect.ValueOf(body)
	present := map[string]bool{}
	for i := 0; i < v.NumField(); i++ {
		name, opts, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		empty := f.IsZero() || (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0
		if name != "" && name != "-" && (!empty || !strings.Contains(opts, "omitempty")) {
			present[name] = true
		}
	}
	return present
}

// sjsonKey escapes a key for an sjson path, so that a key such as "a.b" stays one key.
func sjsonKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		switch c := k[i]; c {
		case '.', '*', '?', '|', '#', '@', '\\', ':', '!', '=', '<', '>', '%', '"', ',', '[', ']', '{', '}', '(', ')':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// rawJSON is a caller's raw JSON value, or nothing when it is not valid JSON (it would fail the
// whole request body).
func rawJSON(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || !json.Valid(r) {
		return nil
	}
	return r
}
