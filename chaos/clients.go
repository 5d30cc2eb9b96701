package chaos

// The chaos load generator's caller: one HTTP request of a chaos request, sent to `baton serve`
// through the official SDKs (openai-go for chat completions and responses, anthropic-sdk-go for
// messages), as a real caller would send it, and how it ended as that caller saw it.
//
// The SDKs' own retries are off: the harness retries, and must see every failure. The harness's
// *http.Client is used as given, so that its timeouts decide what a hang is.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// wire is how a request reaches serve.
type wire string

const (
	wireChat      wire = "openai-chat"
	wireMessages  wire = "anthropic-messages"
	wireResponses wire = "openai-responses" // always background: true, store: true, streamed; resumable
)

// turn is an earlier exchange of a session, sent back as history.
type turn struct{ User, Assistant string }

// try is one HTTP request of a chaos request.
type try struct {
	Wire    wire
	Stream  bool   // ignored for wireResponses (always streamed)
	Model   string // what serve takes as model, e.g. "agent:rl"
	Session string // sent as header x-baton-session when not ""
	History []turn // earlier turns, sent before the new user message (user/assistant pairs)
	Marker  string // unique per try, e.g. "r-000123.1": the new user message is "chaos " + Marker + ": answer please"
	Tools   bool   // offer one function tool, lookup(q)
	Token   string // serve's bearer token (BATON_SERVE_TOKEN); "" sends a dummy key "chaos" (SDKs need one)
}

// toolCall is a tool call in an answer.
type toolCall struct{ ID, Name, Arguments string }

// How a try failed (result.Fail).
const (
	failConnection  = "connection"   // no HTTP response, or the connection/stream broke without a wire error
	failHTTP        = "http"         // an HTTP error status with the wire's error body
	failStreamError = "stream_error" // an error event inside a stream
)

// result is how one try ended, as the caller saw it.
type result struct {
	Answered   bool   // a whole answer: the stream (or body) ended with its normal terminator/finish; no error
	Text       string // the answer's text as received (for a failed streamed try: what arrived before the failure)
	ToolCalls  []toolCall
	Finish     string // finish reason / stop reason / status as the wire says it
	Fail       string // "" when answered; else failConnection, failHTTP or failStreamError
	Status     int    // HTTP status (0 when none)
	ErrType    string // the wire error's type when the wire named one (the Responses wire names only a code)
	ErrCode    string // the wire error's code when given
	ErrMessage string
	WorkflowID string    // response header x-baton-workflow-id when any response arrived
	RunID      string    // x-baton-run-id
	ResponseID string    // Responses API: the response id (resp_…) once known
	SeqSeen    int64     // Responses API: the last sequence_number received (-1: none)
	Partial    bool      // some answer content (text or tool call) arrived before a failure
	FirstByte  time.Time // first answer content received (zero when none)
	Ended      time.Time
}

// The tool a try offers when it asks for tools.
const (
	lookupName        = "lookup"
	lookupDescription = "looks a thing up"
)

func lookupSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "required": []string{"q"}}
}

// userMessage is the try's new user message.
func (t try) userMessage() string { return "chaos " + t.Marker + ": answer please" }

// do runs one try against serve at base (e.g. "http://127.0.0.1:18080"), with hc as the HTTP client.
func do(ctx context.Context, hc *http.Client, base string, t try) result {
	var r result
	switch t.Wire {
	case wireChat:
		if t.Stream {
			r = chatStreamed(ctx, hc, base, t)
		} else {
			r = chatWhole(ctx, hc, base, t)
		}
	case wireMessages:
		if t.Stream {
			r = messagesStreamed(ctx, hc, base, t)
		} else {
			r = messagesWhole(ctx, hc, base, t)
		}
	case wireResponses:
		r = responsesStreamed(ctx, hc, base, t)
	default:
		r = result{Fail: failConnection, ErrMessage: fmt.Sprintf("unknown wire %q", t.Wire)}
	}
	return r.end()
}

// resume continues a Responses try whose stream broke (r.ResponseID known, r.SeqSeen the last
// sequence number seen) on serve at base: GET /v1/responses/{id}?stream=true&starting_after=SeqSeen,
// appending to r.Text / r.ToolCalls, and returns the try's result as if the stream had not broken
// (Answered when the resumed stream ends with response.completed).
func resume(ctx context.Context, hc *http.Client, base string, t try, r result) result {
	if r.ResponseID == "" {
		r.ErrMessage = strings.TrimPrefix(r.ErrMessage+"; cannot resume: no response id", "; ")
		return r.end()
	}
	// What the broken stream ended with is replaced by how the resumed one ends.
	r.Answered, r.Finish, r.Fail, r.Status, r.ErrType, r.ErrCode, r.ErrMessage = false, "", "", 0, "", "", ""
	q := responses.ResponseGetParams{}
	if r.SeqSeen >= 0 {
		q.StartingAfter = openai.Int(r.SeqSeen)
	}
	c := openAIClient(hc, base, t)
	var resp *http.Response
	// The SDK sends stream as a JSON body on the GET; the query says it too, as the API documents it.
	s := c.Responses.GetStreaming(ctx, r.ResponseID, q, option.WithQuery("stream", "true"), option.WithResponseInto(&resp))
	readResponses(ctx, s, resp, &r)
	return r.end()
}

// --- OpenAI chat completions ---

func openAIClient(hc *http.Client, base string, t try) openai.Client {
	opts := []option.RequestOption{option.WithBaseURL(strings.TrimRight(base, "/") + "/v1/"), option.WithAPIKey(tryKey(t)),
		option.WithHTTPClient(orDefaultClient(hc)), option.WithMaxRetries(0)}
	if t.Session != "" {
		opts = append(opts, option.WithHeader("x-baton-session", t.Session))
	}
	return openai.NewClient(opts...)
}

func chatParams(t try) openai.ChatCompletionNewParams {
	var msgs []openai.ChatCompletionMessageParamUnion
	for _, h := range t.History {
		// An empty side of a turn (an answer that was only a tool call) is left out: an empty
		// message is refused by some providers, which would fail the try for the harness's sake.
		if h.User != "" {
			msgs = append(msgs, openai.UserMessage(h.User))
		}
		if h.Assistant != "" {
			msgs = append(msgs, openai.AssistantMessage(h.Assistant))
		}
	}
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(t.Model), Messages: append(msgs, openai.UserMessage(t.userMessage()))}
	if t.Tools {
		p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: lookupName, Description: openai.String(lookupDescription), Parameters: shared.FunctionParameters(lookupSchema())})}
	}
	return p
}

func chatWhole(ctx context.Context, hc *http.Client, base string, t try) result {
	var r result
	var resp *http.Response
	c := openAIClient(hc, base, t)
	cc, err := c.Chat.Completions.New(ctx, chatParams(t), option.WithResponseInto(&resp))
	r.headers(resp)
	if err != nil {
		r.failed(ctx, err, resp)
		return r
	}
	if len(cc.Choices) == 0 {
		r.Fail, r.ErrMessage = failConnection, "a chat completion without choices"
		return r
	}
	ch := cc.Choices[0]
	r.text(ch.Message.Content)
	for _, tc := range ch.Message.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, toolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		r.seen()
	}
	r.Finish = ch.FinishReason
	r.Answered = r.Finish != ""
	if !r.Answered {
		r.Fail, r.ErrMessage = failConnection, "a chat completion without a finish reason"
	}
	return r
}

func chatStreamed(ctx context.Context, hc *http.Client, base string, t try) result {
	var r result
	var resp *http.Response
	p := chatParams(t)
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	// The SDK ends a stream alike on [DONE] and on a clean EOF: the body is watched for [DONE].
	done := &doneWatcher{}
	c := openAIClient(hc, base, t)
	s := c.Chat.Completions.NewStreaming(ctx, p, option.WithResponseInto(&resp), option.WithMiddleware(done.middleware))
	defer s.Close()
	r.headers(resp)
	calls := map[int64]*toolCall{}
	var order []int64
	for s.Next() {
		for _, ch := range s.Current().Choices {
			r.text(ch.Delta.Content)
			for _, d := range ch.Delta.ToolCalls {
				tc := calls[d.Index]
				if tc == nil {
					tc = &toolCall{}
					calls[d.Index] = tc
					order = append(order, d.Index)
				}
				if d.ID != "" {
					tc.ID = d.ID
				}
				if d.Function.Name != "" {
					tc.Name = d.Function.Name
				}
				tc.Arguments += d.Function.Arguments
				r.seen()
			}
			if ch.FinishReason != "" {
				r.Finish = ch.FinishReason
			}
		}
	}
	slices.Sort(order)
	for _, i := range order {
		r.ToolCalls = append(r.ToolCalls, *calls[i])
	}
	switch err := s.Err(); {
	case err != nil:
		r.failed(ctx, err, resp)
	case r.Finish != "" && done.seen:
		r.Answered = true
	case r.Finish != "":
		r.endedEarly(ctx, "the stream ended without [DONE]")
	default:
		r.endedEarly(ctx, "the stream ended without a finish reason")
	}
	return r
}

// doneWatcher notes whether a chat stream's body carried its terminator, data: [DONE].
type doneWatcher struct {
	seen bool
	tail []byte // the last bytes read, for a terminator cut across reads
}

var doneLine = []byte("data: [DONE]")

func (d *doneWatcher) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &watchedBody{ReadCloser: resp.Body, d: d}
	}
	return resp, err
}

type watchedBody struct {
	io.ReadCloser
	d *doneWatcher
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if d := b.d; n > 0 && !d.seen {
		buf := append(d.tail, p[:n]...)
		d.seen = bytes.Contains(buf, doneLine)
		d.tail = append(d.tail[:0], buf[max(0, len(buf)-len(doneLine)):]...)
	}
	return n, err
}

// --- OpenAI responses ---

func responsesStreamed(ctx context.Context, hc *http.Client, base string, t try) result {
	r := result{SeqSeen: -1}
	var items responses.ResponseInputParam
	for _, h := range t.History {
		if h.User != "" { // an empty side is left out, as in chatParams
			items = append(items, responses.ResponseInputItemParamOfMessage(h.User, responses.EasyInputMessageRoleUser))
		}
		if h.Assistant != "" {
			items = append(items, responses.ResponseInputItemParamOfMessage(h.Assistant, responses.EasyInputMessageRoleAssistant))
		}
	}
	items = append(items, responses.ResponseInputItemParamOfMessage(t.userMessage(), responses.EasyInputMessageRoleUser))
	p := responses.ResponseNewParams{Model: shared.ResponsesModel(t.Model), Background: openai.Bool(true), Store: openai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items}}
	if t.Tools {
		// strict false: the schema is not a strict one (no additionalProperties: false).
		p.Tools = []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: lookupName,
			Description: openai.String(lookupDescription), Parameters: lookupSchema(), Strict: openai.Bool(false)}}}
	}
	var resp *http.Response
	c := openAIClient(hc, base, t)
	s := c.Responses.NewStreaming(ctx, p, option.WithResponseInto(&resp))
	readResponses(ctx, s, resp, &r)
	return r
}

// readResponses reads a Responses event stream into r, from where r stands (a resumed stream
// goes on from the broken one's text and tool calls).
func readResponses(ctx context.Context, s *ssestream.Stream[responses.ResponseStreamEventUnion], resp *http.Response, r *result) {
	defer s.Close()
	r.headers(resp)
	ended := false
	for !ended && s.Next() {
		e := s.Current()
		r.SeqSeen = e.SequenceNumber
		if r.ResponseID == "" && e.Response.ID != "" {
			r.ResponseID = e.Response.ID // response.created, the first event
		}
		switch e.Type {
		case "response.output_text.delta":
			r.text(e.Delta)
		case "response.output_item.added":
			if e.Item.Type == "function_call" {
				r.seen() // a call has begun: content, though only a whole call is kept (below)
			}
		case "response.function_call_arguments.delta":
			r.seen()
		case "response.output_item.done":
			// A call is kept whole, from its done item: a resumed stream then never holds half
			// a call twice.
			if e.Item.Type == "function_call" {
				r.ToolCalls = append(r.ToolCalls, toolCall{ID: e.Item.CallID, Name: e.Item.Name, Arguments: e.Item.Arguments.OfString})
				r.seen()
			}
		case "error":
			r.Fail, r.ErrCode, r.ErrMessage = failStreamError, e.Code, e.Message
		case "response.failed":
			ended, r.Finish = true, string(e.Response.Status)
			if r.Fail == "" { // the error event that comes first says it already
				r.Fail, r.ErrCode, r.ErrMessage = failStreamError, string(e.Response.Error.Code), e.Response.Error.Message
			}
		case "response.incomplete":
			ended, r.Finish = true, string(e.Response.Status)
			r.Fail, r.ErrCode = failStreamError, e.Response.IncompleteDetails.Reason
			r.ErrMessage = "the response is incomplete: " + e.Response.IncompleteDetails.Reason
		case "response.completed":
			ended, r.Finish = true, string(e.Response.Status)
			r.Answered = r.Fail == ""
		}
	}
	if ended {
		return // a terminal event: whatever the connection does after it changes nothing
	}
	if err := s.Err(); err != nil {
		r.failed(ctx, err, resp)
	} else if r.Fail == "" {
		r.endedEarly(ctx, "the stream ended without response.completed")
	}
}

// --- Anthropic messages ---

func anthropicClient(hc *http.Client, base string, t try) anthropic.Client {
	// Without the environment's defaults: an ANTHROPIC_BASE_URL or a profile must not redirect
	// or authenticate the harness's calls.
	opts := []aoption.RequestOption{aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(strings.TrimRight(base, "/") + "/"),
		aoption.WithAPIKey(tryKey(t)), aoption.WithHTTPClient(orDefaultClient(hc)), aoption.WithMaxRetries(0)}
	if t.Session != "" {
		opts = append(opts, aoption.WithHeader("x-baton-session", t.Session))
	}
	return anthropic.NewClient(opts...)
}

func messagesParams(t try) anthropic.MessageNewParams {
	var msgs []anthropic.MessageParam
	for _, h := range t.History {
		if h.User != "" { // an empty side is left out, as in chatParams
			msgs = append(msgs, anthropic.NewUserMessage(anthropic.NewTextBlock(h.User)))
		}
		if h.Assistant != "" {
			msgs = append(msgs, anthropic.NewAssistantMessage(anthropic.NewTextBlock(h.Assistant)))
		}
	}
	p := anthropic.MessageNewParams{Model: anthropic.Model(t.Model), MaxTokens: 256,
		Messages: append(msgs, anthropic.NewUserMessage(anthropic.NewTextBlock(t.userMessage())))}
	if t.Tools {
		s := lookupSchema()
		p.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: lookupName, Description: anthropic.String(lookupDescription),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: s["properties"], Required: []string{"q"}}}}}
	}
	return p
}

func messagesWhole(ctx context.Context, hc *http.Client, base string, t try) result {
	var r result
	var resp *http.Response
	c := anthropicClient(hc, base, t)
	m, err := c.Messages.New(ctx, messagesParams(t), aoption.WithResponseInto(&resp))
	r.headers(resp)
	if err != nil {
		r.failed(ctx, err, resp)
		return r
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			r.text(b.Text)
		case "tool_use":
			r.ToolCalls = append(r.ToolCalls, toolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			r.seen()
		}
	}
	r.Finish = string(m.StopReason)
	r.Answered = r.Finish != ""
	if !r.Answered {
		r.Fail, r.ErrMessage = failConnection, "a message without a stop reason"
	}
	return r
}

func messagesStreamed(ctx context.Context, hc *http.Client, base string, t try) result {
	var r result
	var resp *http.Response
	c := anthropicClient(hc, base, t)
	s := c.Messages.NewStreaming(ctx, messagesParams(t), aoption.WithResponseInto(&resp))
	defer s.Close()
	r.headers(resp)
	calls := map[int64]*toolCall{} // by block index
	var order []int64
	stopped := false
	for !stopped && s.Next() {
		e := s.Current()
		switch e.Type {
		case "content_block_start":
			if e.ContentBlock.Type == "tool_use" {
				calls[e.Index] = &toolCall{ID: e.ContentBlock.ID, Name: e.ContentBlock.Name}
				order = append(order, e.Index)
				r.seen()
			}
		case "content_block_delta":
			switch e.Delta.Type {
			case "text_delta":
				r.text(e.Delta.Text)
			case "input_json_delta":
				if tc := calls[e.Index]; tc != nil {
					tc.Arguments += e.Delta.PartialJSON
				}
			}
		case "content_block_stop":
			// A call without arguments streams none: its input is {}, as a whole message says.
			if tc := calls[e.Index]; tc != nil && tc.Arguments == "" {
				tc.Arguments = "{}"
			}
		case "message_delta":
			if e.Delta.StopReason != "" {
				r.Finish = string(e.Delta.StopReason)
			}
		case "message_stop":
			stopped = true
		}
	}
	for _, i := range order {
		r.ToolCalls = append(r.ToolCalls, *calls[i])
	}
	switch err := s.Err(); {
	case stopped:
		r.Answered = true
	case err != nil:
		r.failed(ctx, err, resp)
	default:
		r.endedEarly(ctx, "the stream ended without message_stop")
	}
	return r
}

// --- what every wire shares ---

func tryKey(t try) string {
	if t.Token != "" {
		return t.Token
	}
	return "chaos"
}

func orDefaultClient(hc *http.Client) *http.Client {
	if hc == nil {
		return http.DefaultClient
	}
	return hc
}

// text appends a piece of the answer's text.
func (r *result) text(s string) {
	if s != "" {
		r.Text += s
		r.seen()
	}
}

// seen notes that answer content arrived.
func (r *result) seen() {
	if r.FirstByte.IsZero() {
		r.FirstByte = time.Now()
	}
}

// headers reads what a response says whatever its outcome: status and baton's workflow headers
// (a resumed stream's GET names no workflow: the first request's stay).
func (r *result) headers(resp *http.Response) {
	if resp == nil {
		return
	}
	r.Status = resp.StatusCode
	if v := resp.Header.Get("x-baton-workflow-id"); v != "" {
		r.WorkflowID = v
	}
	if v := resp.Header.Get("x-baton-run-id"); v != "" {
		r.RunID = v
	}
}

// end stamps the try's end.
func (r result) end() result {
	r.Partial = !r.Answered && !r.FirstByte.IsZero()
	if r.Answered {
		r.Fail = ""
	}
	r.Ended = time.Now()
	return r
}

// endedEarly is a stream that ended cleanly but without its terminator: the connection's doing
// (a killed serve behind a proxy, a deadline), never an answer.
func (r *result) endedEarly(ctx context.Context, why string) {
	r.Fail, r.ErrMessage = failConnection, why
	if ctx.Err() != nil {
		r.ErrMessage = deadlineMessage(ctx.Err()) + " (" + why + ")"
	}
}

func deadlineMessage(err error) string {
	if errors.Is(err, context.Canceled) {
		return "cancelled: " + err.Error()
	}
	return "timed out: " + err.Error()
}

// failed sorts an SDK error into the three ways a try fails.
func (r *result) failed(ctx context.Context, err error, resp *http.Response) {
	r.Answered = false
	var (
		oe  *openai.Error
		ae  *anthropic.Error
		se  *ssestream.StreamError
		ne  net.Error
		wex sdkWireError
	)
	switch {
	case ctx.Err() != nil:
		// The harness's deadline (or cancel): it tells a hang by its own clock.
		r.Fail, r.ErrMessage = failConnection, deadlineMessage(ctx.Err())
	case errors.As(err, &oe):
		// A body that is not the wire's (a proxy's page) leaves the SDK's error empty: the body says it.
		r.Fail, r.Status, r.ErrType, r.ErrCode = failHTTP, oe.StatusCode, oe.Type, oe.Code
		r.ErrMessage = cmp.Or(oe.Message, bodyText(oe.Response), http.StatusText(oe.StatusCode))
	case errors.As(err, &ae):
		// Anthropic's SDK raises an error event as an *Error with the stream's 200 status.
		r.Fail = failHTTP
		if ae.StatusCode < 400 {
			r.Fail = failStreamError
		} else {
			r.Status = ae.StatusCode
		}
		r.ErrType = string(ae.Type())
		wex.read([]byte(ae.RawJSON()))
		r.ErrMessage = cmp.Or(wex.Error.Message, ae.RawJSON())
	case errors.As(err, &se):
		// openai-go raises a chunk holding {"error": {…}} as a StreamError carrying the event.
		r.Fail, r.ErrMessage = failStreamError, se.Message
		if wex.read(se.Event.Data) {
			r.ErrType, r.ErrCode, r.ErrMessage = wex.Error.Type, wex.code(), cmp.Or(wex.Error.Message, se.Message)
		}
	case resp != nil && resp.StatusCode >= 400:
		// An error status whose body is not the wire's (a proxy's page): still an HTTP error.
		r.Fail, r.Status, r.ErrMessage = failHTTP, resp.StatusCode, err.Error()
	case errors.As(err, &ne) && ne.Timeout():
		r.Fail, r.ErrMessage = failConnection, "timed out: "+err.Error()
	default:
		// Refused, reset, an unexpected EOF, a chunk that is not JSON: no wire error.
		r.Fail, r.ErrMessage = failConnection, err.Error()
	}
}

// bodyText is the start of an error response's body, which the SDK kept readable.
func bodyText(resp *http.Response) string {
	if resp == nil || resp.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return strings.TrimSpace(string(b))
}

// sdkWireError is an error body or event in the wires' shapes: OpenAI's {"error": {message, type,
// code}}, Anthropic's {"type": "error", "error": {type, message}}.
type sdkWireError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"` // a string, or null (OpenAI has sent numbers)
	} `json:"error"`
}

func (w *sdkWireError) read(data []byte) bool { return json.Unmarshal(data, w) == nil }

func (w *sdkWireError) code() string {
	switch c := w.Error.Code.(type) {
	case nil:
		return ""
	case string:
		return c
	default:
		return fmt.Sprint(c)
	}
}
