// Package fakeprovider is a real HTTP server that speaks OpenAI's Chat Completions and Responses
// and Anthropic's Messages wire formats, streaming and not, and fails in every way a provider
// does: statuses with bodies and headers, resets before headers, delays, cut streams, stalls,
// malformed chunks, in-band error events, empty answers. Healthy answers carry text, tool calls
// (and, in Anthropic's format, a thinking block; in Responses', a reasoning item), usage with
// cached tokens, or an echo of the request's messages (Responses: its input). A request ending
// with an assistant message (a prefill, as when a cut answer is continued) is ignored, honoured
// or rejected with a 400, as real models differ on it. A script of rules, matched per call on
// (provider, model, profile), says what each call gets; every call is recorded with its request
// body.
//
// Base URLs: {URL}/p/{provider}/v1 for OpenAI-format providers (Chat Completions and Responses:
// the SDK adds /chat/completions or /responses) and {URL}/p/{provider} for Anthropic (its SDK
// adds /v1/messages) and for the clouds, whose wires name the model in the path: Azure OpenAI
// (azure.go), Amazon Bedrock's Converse (bedrock.go), the Gemini API and Vertex AI (google.go).
package fakeprovider

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Match selects calls; an empty field matches anything.
type Match struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Profile  string `json:"profile,omitempty"`
}

// Usage is what a healthy answer reports. Input counts every prompt token, cached or not, as
// OpenAI's prompt_tokens does; Cached of them were read from the prompt cache (OpenAI's
// prompt_tokens_details.cached_tokens; Anthropic's cache_read_input_tokens, its input_tokens then
// being Input-Cached).
type Usage struct {
	Input  int `json:"input"`
	Output int `json:"output"`
	Cached int `json:"cached,omitempty"`
}

// ToolCall is one scripted tool call; Arguments is JSON text ("" means {}), and an empty ID gets a
// default (call_fake_N in OpenAI's format, toolu_fake_N in Anthropic's, N counting from 1).
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

// Response is one scripted answer (SCENARIOS.md's response kinds, combinable where it makes sense).
//
// A healthy answer is Text, then ToolCalls, finishing with Finish (in the wire's own words; by
// default OpenAI's "stop", or "tool_calls" with tool calls, and Anthropic's "end_turn", or
// "tool_use"). Thinking and Signature make a thinking block before the text in Anthropic's format
// (OpenAI's ignores them). Echo answers with the request's "messages" array as received, raw,
// instead of Text.
//
// CutAfterChunks, StallAfterChunks and MalformedChunk count a stream's chunks: the text pieces
// (a word and its trailing space each), then per tool call its opening chunk and its argument
// pieces (8 bytes each, never splitting a character). A stream cut after all of them still lacks
// its finish; Anthropic's thinking block comes before and is not counted.
//
// A fallback asked to continue a cut answer (sent as a final assistant message, or followed by an
// instruction to continue) behaves in one of four ways, scripted so:
//   - honours a true prefill: Prefill "honour" and the whole answer as Text; it answers what
//     follows the prefill, and from scratch when the request is no true prefill of Text;
//   - ignores prefill and instructions: the default Prefill; it answers Text from scratch;
//   - rejects a prefill with a 400: Prefill "reject";
//   - answers a different text: another Text (with the default Prefill).
type Response struct {
	Text             string            `json:"text,omitempty"`
	ToolCalls        []ToolCall        `json:"toolCalls,omitempty"`
	Finish           string            `json:"finish,omitempty"`
	Thinking         string            `json:"thinking,omitempty"`
	Signature        string            `json:"signature,omitempty"`
	Echo             bool              `json:"echo,omitempty"`
	Usage            *Usage            `json:"usage,omitempty"`
	Status           int               `json:"status,omitempty"`
	Body             string            `json:"body,omitempty"`
	Headers          map[string]string `json:"headers,omitempty"`
	Reset            bool              `json:"reset,omitempty"`
	DelayMs          int               `json:"delayMs,omitempty"`
	CutAfterChunks   *int              `json:"cutAfterChunks,omitempty"`
	StallAfterChunks *int              `json:"stallAfterChunks,omitempty"`
	StallMs          int               `json:"stallMs,omitempty"`
	// ChunkDelayMs spaces a stream's chunks (a model that takes its time).
	ChunkDelayMs   int             `json:"chunkDelayMs,omitempty"`
	MalformedChunk *int            `json:"malformedChunk,omitempty"`
	StreamError    json.RawMessage `json:"streamError,omitempty"`
	// StreamErrorAfterChunks sends StreamError as an in-band error event after this many counted
	// chunks (mid-answer) rather than first.
	StreamErrorAfterChunks *int `json:"streamErrorAfterChunks,omitempty"`
	Empty                  bool `json:"empty,omitempty"`
	// Prefill is how the model treats a request whose last message is an assistant message (a
	// prefill): "ignore" (the default, ""): answers Text from scratch whatever the request ends
	// with; "honour": continues a true prefill: when the request's last message is an assistant
	// message whose text P (its text content; for OpenAI also with "prefix": true on it) is a
	// prefix of Text (after trimming trailing whitespace from P), it answers Text[len(P):] (what
	// follows P, leading whitespace included) as if that were Text (chunks, cuts, usage and tool
	// calls after it alike), and from scratch otherwise (also when the last message is a user
	// message, e.g. an instruction to continue: it does not follow instructions); "reject": a
	// request whose last message is an assistant message gets HTTP 400 with the body Anthropic
	// sends for models without prefill support (PrefillRejectionAnthropic, or PrefillRejectionOpenAI
	// on the OpenAI wire) in place of everything else scripted; any other request is answered
	// from scratch.
	Prefill string `json:"prefill,omitempty"`
}

// Kind names the response for call records.
func (r Response) Kind() string {
	switch {
	case r.Reset:
		return "reset"
	case r.Status != 0 && r.Status != 200:
		return fmt.Sprintf("status %d", r.Status)
	case r.Empty:
		return "empty"
	case len(r.StreamError) > 0 && r.StreamErrorAfterChunks != nil:
		return fmt.Sprintf("stream error after %d", *r.StreamErrorAfterChunks)
	case len(r.StreamError) > 0:
		return "stream error"
	case r.CutAfterChunks != nil:
		return fmt.Sprintf("cut after %d", *r.CutAfterChunks)
	case r.StallAfterChunks != nil:
		return fmt.Sprintf("stall after %d", *r.StallAfterChunks)
	case r.MalformedChunk != nil:
		return fmt.Sprintf("malformed chunk %d", *r.MalformedChunk)
	case len(r.ToolCalls) > 0:
		return "tool calls"
	case r.Echo:
		return "echo"
	}
	return "text"
}

// Rule answers the calls it matches with Respond in turn; the last answer repeats.
type Rule struct {
	Match   Match      `json:"match"`
	Respond []Response `json:"respond"`
}

// Call is one request the server saw.
type Call struct {
	N        int       `json:"n"`
	At       time.Time `json:"at"`
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Profile  string    `json:"profile"`
	Stream   bool      `json:"stream"`
	Outcome  string    `json:"outcome"`
	// Tools is how many tools the request offered.
	Tools int `json:"tools,omitempty"`
	// Prefill is what the scripted model did with the request's final assistant message:
	// "honoured", "ignored", "rejected", or "" when the request carried none. It is recorded
	// whatever else the Response does (a 503 with Prefill "honour" still reads "honoured").
	Prefill string `json:"prefill,omitempty"`
	// Body is the request body as received (GET /_fake/calls leaves it out unless ?bodies=1).
	Body json.RawMessage `json:"body,omitempty"`
	// FirstContentAt is when the first content chunk was sent; EndedAt when the request ended
	// (the answer done, or the client gone).
	FirstContentAt time.Time `json:"firstContentAt,omitzero"`
	EndedAt        time.Time `json:"endedAt,omitzero"`
	// Mark is the last match of Server.Mark in the request body: which of a load's requests the
	// call serves, when the load writes a mark into each.
	Mark string `json:"mark,omitempty"`
	// Delivered: a healthy answer went out whole while its client still held the connection (a
	// chat or responses wire; the clouds' wires leave it false).
	Delivered bool `json:"delivered,omitempty"`
}

// stamp records a time on call n.
func (s *Server) stamp(n int, set func(*Call)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= 1 && n <= len(s.calls) {
		set(&s.calls[n-1])
	}
}

// MaxBody is the largest request body the server reads (a 10 MB image is ~13.4 MB in base64);
// a larger one is answered 413.
const MaxBody = 64 << 20

// DefaultText answers calls that no rule matches.
const DefaultText = "ok"

// Server is the fake provider.
type Server struct {
	// Now stamps calls (the scenario clock in simulate); time.Now when nil.
	Now func() time.Time
	// BeforeRespond runs after a call is recorded and before it is answered: simulate uses it to
	// switch models or abort exactly at call N.
	BeforeRespond func(Call)
	// Mark, when set, finds each call's mark in its request body (the last match: a session's
	// history holds the marks of earlier turns) and answers with "{mark}" in a response's Text
	// and tool call arguments replaced by it: a load of many requests gets answers it can check
	// one by one (baton chaos).
	Mark *regexp.Regexp

	mu          sync.Mutex
	rules       []Rule
	pos         []int
	calls       []Call
	credentials map[string]string // secret → profile id
	listener    net.Listener
	srv         *http.Server
}

// New returns a server scripted with rules; credentials maps each secret to the profile id the
// calls are recorded under.
func New(rules []Rule, credentials map[string]string) *Server {
	s := &Server{credentials: map[string]string{}}
	for k, v := range credentials {
		s.credentials[k] = v
	}
	s.SetRules(rules)
	return s
}

// SetRules re-scripts the server; rule positions restart.
func (s *Server) SetRules(rules []Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append([]Rule(nil), rules...)
	s.pos = make([]int, len(rules))
}

// AddCredential maps another secret to a profile id.
func (s *Server) AddCredential(secret, profile string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.credentials[secret] = profile
}

// Calls returns every call so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Start listens on addr ("127.0.0.1:0" for any free port) and serves in the background.
func (s *Server) Start(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.listener = l
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return nil
}

// URL is the server's root, e.g. http://127.0.0.1:40123.
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() }

// BaseURL is what to configure as models.providers.<provider>.baseUrl.
func (s *Server) BaseURL(provider string, anthropicFormat bool) string {
	if anthropicFormat {
		return s.URL() + "/p/" + provider
	}
	return s.URL() + "/p/" + provider + "/v1"
}

// Close stops the server.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now().UTC()
}

// wireFormat is the API a call came in on.
type wireFormat int

const (
	formatOpenAI    wireFormat = iota // Chat Completions
	formatAnthropic                   // Messages
	formatResponses                   // OpenAI's Responses (responses.go)
)

// ServeHTTP routes /p/{provider}/v1/chat/completions, /p/{provider}/v1/responses,
// /p/{provider}/v1/messages, the same without /p/{provider}, and the admin endpoints /_fake/script
// (PUT rules) and /_fake/calls (GET).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch path {
	case "/_fake/script":
		s.serveScript(w, r)
		return
	case "/_fake/calls":
		calls := s.Calls()
		if r.URL.Query().Get("bodies") != "1" {
			for i := range calls {
				calls[i].Body = nil
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(calls)
		return
	}
	provider := ""
	if rest, ok := strings.CutPrefix(path, "/p/"); ok {
		provider, path, _ = strings.Cut(rest, "/")
		path = "/" + path
	}
	// The clouds' wires (azure.go, bedrock.go, google.go) name the model in the path.
	if s.serveCloud(w, r, provider, path) {
		return
	}
	format := formatOpenAI
	switch path {
	case "/v1/chat/completions", "/chat/completions":
		if provider == "" {
			provider = "openai"
		}
	case "/v1/responses", "/responses":
		format = formatResponses
		if provider == "" {
			provider = "openai"
		}
	case "/v1/messages":
		format = formatAnthropic
		if provider == "" {
			provider = "anthropic"
		}
	default:
		http.Error(w, `{"error":{"message":"not found","type":"not_found_error"}}`, http.StatusNotFound)
		return
	}
	s.serveJSON(w, r, provider, format, "")
}

// serveJSON answers a call on one of the JSON wires (Chat Completions, Responses, Messages);
// model, when set, is the model the path named (Azure's deployment) in place of the body's.
func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request, provider string, format wireFormat, model string) {
	var body struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		Messages json.RawMessage `json:"messages"`
		Input    json.RawMessage `json:"input"` // Responses' messages
		Tools    json.RawMessage `json:"tools"`
	}
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	if err := json.Unmarshal(data, &body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"request body is not JSON","type":"invalid_request_error"}}`))
		return
	}
	// Read outside the lock: a body may be large.
	messages, last := body.Messages, lastMessage{}
	if format == formatResponses {
		messages, last = body.Input, readLastInput(body.Input)
	} else {
		last = readLastMessage(messages)
	}
	if model != "" {
		body.Model = model
	}
	secret := cmp.Or(r.Header.Get("x-api-key"), r.Header.Get("api-key")) // api-key: Azure's
	if auth := r.Header.Get("Authorization"); secret == "" && strings.HasPrefix(auth, "Bearer ") {
		secret = strings.TrimPrefix(auth, "Bearer ")
	}
	var tools []json.RawMessage
	_ = json.Unmarshal(body.Tools, &tools)
	resp, call := s.take(incoming{provider: provider, model: body.Model, secret: secret, stream: body.Stream,
		messages: messages, last: last, tools: len(tools), body: data, anthropic: format == formatAnthropic})
	defer func() {
		// Stamped when the handler returns: after the answer, or when the client went away.
		delivered := healthy(resp) && r.Context().Err() == nil
		s.stamp(call.N, func(c *Call) { c.EndedAt, c.Delivered = time.Now(), delivered })
	}()
	s.respond(w, r, resp, body.Model, body.Stream, format, call.N)
}

// markOf is the last match of s.Mark in body ("" without Mark or a match).
func (s *Server) markOf(body []byte) string {
	if s.Mark == nil {
		return ""
	}
	all := s.Mark.FindAll(body, -1)
	if len(all) == 0 {
		return ""
	}
	return string(all[len(all)-1])
}

// marked is r with "{mark}" in its text and tool call arguments replaced by mark.
func (r Response) marked(mark string) Response {
	r.Text = strings.ReplaceAll(r.Text, "{mark}", mark)
	if len(r.ToolCalls) > 0 {
		calls := make([]ToolCall, len(r.ToolCalls))
		for i, tc := range r.ToolCalls {
			tc.Arguments = strings.ReplaceAll(tc.Arguments, "{mark}", mark)
			calls[i] = tc
		}
		r.ToolCalls = calls
	}
	return r
}

// healthy reports a scripted whole answer: no failure knob set.
func healthy(r Response) bool {
	switch r.Kind() {
	case "text", "tool calls", "echo":
		return true
	}
	return false
}

// readBody reads a request's body, up to MaxBody; over it, the call is answered 413 (ok false).
func readBody(w http.ResponseWriter, r *http.Request) (data []byte, ok bool) {
	data, _ = io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if len(data) > MaxBody {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = w.Write([]byte(`{"error":{"message":"request body is over 64 MB","type":"request_too_large"}}`))
		return nil, false
	}
	return data, true
}

// incoming is one call as its wire read it: whose it is, and what take needs of its body.
type incoming struct {
	provider, model string
	secret          string // the credential as sent: the profile it belongs to is recorded
	stream          bool
	messages        json.RawMessage // what Echo answers with
	last            lastMessage     // the request's last message (prefill rules)
	tools           int
	body            []byte
	anthropic       bool // the prefill rules of Anthropic's wire (reject with its body)
}

// take matches a call to its rule, records it and runs BeforeRespond: the scripted answer and
// the call's record. Every wire answers through it; the caller stamps EndedAt when done.
func (s *Server) take(in incoming) (Response, Call) {
	s.mu.Lock()
	profile := s.credentials[in.secret]
	resp := Response{Text: DefaultText}
	for i, rule := range s.rules {
		m := rule.Match
		if (m.Provider == "" || m.Provider == in.provider) && (m.Model == "" || m.Model == in.model) && (m.Profile == "" || m.Profile == profile) {
			if len(rule.Respond) > 0 {
				resp = rule.Respond[min(s.pos[i], len(rule.Respond)-1)]
				s.pos[i]++
			}
			break
		}
	}
	if resp.Echo {
		resp.Text = string(in.messages)
	}
	mark := s.markOf(in.body)
	if mark != "" {
		resp = resp.marked(mark)
	}
	resp, prefill := resp.withPrefill(in.last, in.anthropic)
	outcome := resp.Kind()
	if prefill == "rejected" {
		outcome = "prefill rejected"
	}
	call := Call{N: len(s.calls) + 1, At: s.now(), Provider: in.provider, Model: in.model, Profile: profile, Stream: in.stream,
		Outcome: outcome, Tools: in.tools, Prefill: prefill, Body: json.RawMessage(in.body), Mark: mark}
	s.calls = append(s.calls, call)
	hook := s.BeforeRespond
	s.mu.Unlock()
	if hook != nil {
		hook(call)
	}
	return resp, call
}

func (s *Server) serveScript(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		http.Error(w, "PUT a JSON array of rules", http.StatusMethodNotAllowed)
		return
	}
	rules, err := ParseScript(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.SetRules(rules)
	w.WriteHeader(http.StatusNoContent)
}

// ParseScript reads rules: a JSON array, or an object with "rules" (or a scenario's "provider").
func ParseScript(r io.Reader) ([]Rule, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "[") {
		var rules []Rule
		if err := json.Unmarshal(data, &rules); err != nil {
			return nil, fmt.Errorf("script: %w", err)
		}
		return rules, validate(rules)
	}
	var doc struct {
		Rules    []Rule `json:"rules"`
		Provider []Rule `json:"provider"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	if doc.Rules == nil {
		doc.Rules = doc.Provider
	}
	return doc.Rules, validate(doc.Rules)
}

func validate(rules []Rule) error {
	for i, r := range rules {
		if len(r.Respond) == 0 {
			return fmt.Errorf("script: rule %d (%+v) has no respond list", i, r.Match)
		}
		for j, resp := range r.Respond {
			if resp.Status != 0 && (resp.Status < 100 || resp.Status > 599) {
				return fmt.Errorf("script: rule %d respond[%d]: status %d is not an HTTP status", i, j, resp.Status)
			}
			if resp.DelayMs < 0 || resp.StallMs < 0 || resp.ChunkDelayMs < 0 {
				return fmt.Errorf("script: rule %d respond[%d]: negative delay", i, j)
			}
			switch resp.Prefill {
			case "", "ignore", "honour", "reject":
			default:
				return fmt.Errorf("script: rule %d respond[%d]: prefill %q is not \"ignore\", \"honour\" or \"reject\"", i, j, resp.Prefill)
			}
			if u := resp.Usage; u != nil && (u.Input < 0 || u.Output < 0 || u.Cached < 0 || u.Cached > u.Input) {
				return fmt.Errorf("script: rule %d respond[%d]: usage %+v: counts must not be negative, and cached is part of input", i, j, *u)
			}
			for k, tc := range resp.ToolCalls {
				if tc.Name == "" {
					return fmt.Errorf("script: rule %d respond[%d]: tool call %d has no name", i, j, k)
				}
				if tc.Arguments != "" && !json.Valid([]byte(tc.Arguments)) {
					return fmt.Errorf("script: rule %d respond[%d]: tool call %d (%s): arguments are not valid JSON: %s", i, j, k, tc.Name, tc.Arguments)
				}
			}
		}
	}
	return nil
}
