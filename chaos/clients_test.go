package chaos

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sw "github.com/batonhq/baton/internal/wire"
	"github.com/batonhq/baton/provider"
)

// The fake serves below answer with serve's own encoders (internal/wire, imported as sw), so that the bytes are
// serve's, and read each request with serve's own decoders, so that what the clients send is
// what serve takes.

// seenRequest is a request a fake serve received.
type seenRequest struct {
	method, path string
	query        url.Values
	header       http.Header
	body         []byte
}

// fakeServe stands in for baton serve: handle answers every request; the requests are kept.
type fakeServe struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seenRequest
}

func newFakeServe(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *fakeServe {
	t.Helper()
	f := &fakeServe{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, seenRequest{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(), body: body})
		f.mu.Unlock()
		handle(w, r, body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServe) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.reqs...)
}

const (
	testWorkflow = "reply-chaos-wf"
	testRun      = "run-0001"
	testModel    = "agent:rl"
)

// startReply sets what serve sets once a reply started: its workflow headers.
func startReply(w http.ResponseWriter) {
	w.Header().Set("x-baton-workflow-id", testWorkflow)
	w.Header().Set("x-baton-run-id", testRun)
}

// openSSE sends a stream's headers at once, as serve's openStream does.
func openSSE(w http.ResponseWriter) func() {
	startReply(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := w.(http.Flusher).Flush
	flush()
	return flush
}

// cut drops the connection mid-body, as a killed serve does: no terminator, no clean end.
func cut() { panic(http.ErrAbortHandler) }

var (
	textAnswer = provider.Answer{Text: "Baton keeps the answer whole when a stream is cut in the middle of a sentence, " +
		"so this one is long enough to travel in several pieces.", FinishReason: provider.FinishStop, Usage: provider.Usage{Input: 12, Output: 30}}
	toolAnswer = provider.Answer{Text: "Let me look that up. ", ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"baton"}`}},
		FinishReason: provider.FinishToolCalls, Usage: provider.Usage{Input: 12, Output: 9}}
	testHistory = []turn{{User: "first question", Assistant: "first answer"}, {User: "second question", Assistant: "second answer"}}
)

// answerAs answers a request as serve does with a whole answer, in the try's sw.
func answerAs(w http.ResponseWriter, wr sw.Request, path string, a provider.Answer) {
	reply := sw.Reply{ID: "x1", Model: wr.Model, Created: time.Now().Unix(), Answer: a}
	switch {
	case path == "/v1/responses":
		flush := openSSE(w)
		st := sw.NewResponsesStream(w, flush, sw.ResponsesHead{ID: "resp_x1", Model: wr.Model, CreatedAt: reply.Created, Echo: wr.Responses.ResponsesEcho}, -1)
		st.Start()
		st.Answer(a)
	case !wr.Stream:
		startReply(w)
		w.Header().Set("Content-Type", "application/json")
		if path == "/v1/messages" {
			_, _ = w.Write(sw.AnthropicResponse(reply))
		} else {
			_, _ = w.Write(sw.OpenAIResponse(reply))
		}
	case path == "/v1/messages":
		sw.StreamAnswer(sw.NewAnthropicStream(w, openSSE(w), "msg_x1", wr.Model, a.Usage), a)
	default:
		sw.StreamAnswer(sw.NewOpenAIStream(w, openSSE(w), "chatcmpl-x1", wr.Model, reply.Created, wr.IncludeUsage), a)
	}
}

// decodeAs reads a request body with serve's decoder for its path.
func decodeAs(path string, body []byte) (sw.Request, *sw.Error) {
	switch path {
	case "/v1/messages":
		return sw.DecodeAnthropic(body)
	case "/v1/responses":
		return sw.DecodeResponses(body)
	}
	return sw.DecodeOpenAI(body)
}

func pathOf(w wire) string {
	return map[wire]string{wireChat: "/v1/chat/completions", wireMessages: "/v1/messages", wireResponses: "/v1/responses"}[w]
}

// streamOf opens a try's stream in its wire, as serve does.
func streamOf(w http.ResponseWriter, tw wire) sw.Stream {
	flush := openSSE(w)
	switch tw {
	case wireMessages:
		return sw.NewAnthropicStream(w, flush, "msg_x1", testModel, provider.Usage{})
	case wireResponses:
		st := sw.NewResponsesStream(w, flush, sw.ResponsesHead{ID: "resp_x1", Model: testModel, Echo: sw.ResponsesEcho{Store: true, Background: true}}, -1)
		st.Start()
		return st
	}
	return sw.NewOpenAIStream(w, flush, "chatcmpl-x1", testModel, 1, true)
}

var streamedWires = []try{{Wire: wireChat, Stream: true}, {Wire: wireMessages, Stream: true}, {Wire: wireResponses}}

func withMarker(t try, marker string) try {
	t.Model, t.Marker = testModel, marker
	return t
}

func TestDoGetsAWholeAnswerOnEveryWire(t *testing.T) {
	cases := []struct {
		try        try
		answer     provider.Answer
		wantFinish string
	}{
		{try{Wire: wireChat}, textAnswer, "stop"},
		{try{Wire: wireChat, Stream: true}, textAnswer, "stop"},
		{try{Wire: wireChat, Tools: true, Token: "tok-1"}, toolAnswer, "tool_calls"},
		{try{Wire: wireChat, Stream: true, Tools: true, Session: "s-7"}, toolAnswer, "tool_calls"},
		{try{Wire: wireMessages}, textAnswer, "end_turn"},
		{try{Wire: wireMessages, Stream: true, Token: "tok-1"}, textAnswer, "end_turn"},
		{try{Wire: wireMessages, Tools: true, Session: "s-7"}, toolAnswer, "tool_use"},
		{try{Wire: wireMessages, Stream: true, Tools: true}, toolAnswer, "tool_use"},
		{try{Wire: wireResponses, Session: "s-7"}, textAnswer, "completed"},
		{try{Wire: wireResponses, Tools: true, Token: "tok-1"}, toolAnswer, "completed"},
	}
	for _, c := range cases {
		tr := withMarker(c.try, "r-000123.1")
		tr.History = testHistory
		name := string(tr.Wire) + map[bool]string{true: "/streamed", false: "/whole"}[tr.Stream || tr.Wire == wireResponses] +
			map[bool]string{true: "/tools", false: ""}[tr.Tools]
		t.Run(name, func(t *testing.T) {
			fs := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				wr, werr := decodeAs(r.URL.Path, body)
				if werr != nil {
					sw.WriteOpenAIError(w, werr)
					return
				}
				answerAs(w, wr, r.URL.Path, c.answer)
			})
			before := time.Now()
			res := do(context.Background(), fs.Client(), fs.URL, tr)

			// What was sent: the wire's path, the key, the session, history then the marked
			// message, the tool, streaming as asked.
			reqs := fs.requests()
			if len(reqs) != 1 || reqs[0].path != pathOf(tr.Wire) || reqs[0].method != http.MethodPost {
				t.Fatalf("requests %+v", reqs)
			}
			decoded, werr := decodeAs(reqs[0].path, reqs[0].body)
			if werr != nil {
				t.Fatalf("serve's decoder refuses the request: %v\n%s", werr, reqs[0].body)
			}
			key := cmp.Or(tr.Token, "chaos")
			if tr.Wire == wireMessages {
				if got := reqs[0].header.Get("x-api-key"); got != key {
					t.Errorf("x-api-key %q, want %q", got, key)
				}
			} else if got := reqs[0].header.Get("Authorization"); got != "Bearer "+key {
				t.Errorf("Authorization %q, want Bearer %s", got, key)
			}
			if got := reqs[0].header.Get("x-baton-session"); got != tr.Session {
				t.Errorf("x-baton-session %q, want %q", got, tr.Session)
			}
			if got := reqs[0].header.Get("X-Stainless-Retry-Count"); got != "0" {
				t.Errorf("retry count header %q", got)
			}
			var convo []string
			for _, m := range decoded.Turn.Messages {
				var text string
				for _, p := range m.Content {
					text += p.Text
				}
				convo = append(convo, m.Role+":"+text)
			}
			want := []string{"user:first question", "assistant:first answer", "user:second question", "assistant:second answer", "user:chaos r-000123.1: answer please"}
			if !reflect.DeepEqual(convo, want) || decoded.Model != testModel {
				t.Errorf("serve read %s %v, want %v", decoded.Model, convo, want)
			}
			if tr.Tools {
				if tools := decoded.Turn.Tools; len(tools) != 1 || tools[0].Name != "lookup" || tools[0].Description != "looks a thing up" ||
					!sameJSON(tools[0].Schema, `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`) {
					t.Errorf("tools %+v (%s)", tools, tools[0].Schema)
				}
			} else if len(decoded.Turn.Tools) != 0 {
				t.Errorf("tools offered unasked: %+v", decoded.Turn.Tools)
			}
			switch tr.Wire {
			case wireResponses:
				if rr := decoded.Responses; !decoded.Stream || !rr.Background || !rr.Store {
					t.Errorf("stream %v background %v store %v, want all true", decoded.Stream, rr.Background, rr.Store)
				}
			case wireChat:
				if decoded.Stream != tr.Stream || decoded.IncludeUsage != tr.Stream {
					t.Errorf("stream %v include_usage %v, want %v", decoded.Stream, decoded.IncludeUsage, tr.Stream)
				}
			default:
				if decoded.Stream != tr.Stream || *decoded.Turn.Params.MaxTokens != 256 {
					t.Errorf("stream %v max_tokens %v", decoded.Stream, *decoded.Turn.Params.MaxTokens)
				}
			}

			// What was seen: the whole answer, its finish, serve's headers.
			var wantCalls []toolCall
			for _, c := range c.answer.ToolCalls {
				wantCalls = append(wantCalls, toolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			}
			if !res.Answered || res.Fail != "" || res.Text != c.answer.Text || !reflect.DeepEqual(res.ToolCalls, wantCalls) || res.Finish != c.wantFinish {
				t.Errorf("result %+v\nwant text %q, calls %v, finish %s", res, c.answer.Text, wantCalls, c.wantFinish)
			}
			if res.Status != 200 || res.WorkflowID != testWorkflow || res.RunID != testRun || res.Partial {
				t.Errorf("status %d, workflow %q run %q, partial %v", res.Status, res.WorkflowID, res.RunID, res.Partial)
			}
			if res.FirstByte.Before(before) || res.Ended.Before(res.FirstByte) {
				t.Errorf("first byte %v, ended %v", res.FirstByte, res.Ended)
			}
			if tr.Wire == wireResponses {
				st := sw.NewResponsesStream(io.Discard, nil, sw.ResponsesHead{ID: "resp_x1"}, -1)
				st.Start()
				st.Answer(c.answer)
				if res.ResponseID != "resp_x1" || res.SeqSeen != st.LastWritten() {
					t.Errorf("response %q, last sequence number %d, want resp_x1 and %d", res.ResponseID, res.SeqSeen, st.LastWritten())
				}
			}
		})
	}
}

// A stream that stops mid-answer without its terminator is never an answer: the connection
// dropped (a killed serve), or the body ended cleanly but early (a proxy closing it).
func TestDoTellsAStreamCutMidAnswer(t *testing.T) {
	for _, tr := range streamedWires {
		for _, abrupt := range []bool{true, false} {
			t.Run(string(tr.Wire)+map[bool]string{true: "/connection dropped", false: "/clean end, no terminator"}[abrupt], func(t *testing.T) {
				fs := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
					s := streamOf(w, tr.Wire)
					s.Text("Baton keeps the answer ")
					s.Text("whole when")
					if tr.Wire != wireResponses {
						s.ToolCall(0, "call_1", "lookup")
						s.ToolArgs(0, `{"q":`)
					}
					if abrupt {
						cut()
					}
				})
				res := do(context.Background(), fs.Client(), fs.URL, withMarker(tr, "r-1.1"))
				if res.Answered || res.Fail != "connection" || !res.Partial || res.Text != "Baton keeps the answer whole when" || res.FirstByte.IsZero() {
					t.Errorf("result %+v", res)
				}
				if res.Status != 200 || res.WorkflowID != testWorkflow || res.RunID != testRun {
					t.Errorf("status %d, headers %q %q", res.Status, res.WorkflowID, res.RunID)
				}
				if tr.Wire == wireResponses && (res.ResponseID != "resp_x1" || res.SeqSeen < 4) {
					t.Errorf("response %q, last sequence number %d", res.ResponseID, res.SeqSeen)
				}
			})
		}
	}
}

// A whole answer less only its terminator ([DONE], message_stop, response.completed) is not an
// answer, even with its finish reason in.
func TestDoWantsTheStreamsTerminator(t *testing.T) {
	cases := []struct {
		try        try
		terminator string
		finish     string
	}{
		{try{Wire: wireChat, Stream: true}, "data: [DONE]", "stop"},
		{try{Wire: wireMessages, Stream: true}, "event: message_stop", "end_turn"},
		{try{Wire: wireResponses}, "event: response.completed", ""},
	}
	for _, c := range cases {
		for _, abrupt := range []bool{true, false} {
			t.Run(string(c.try.Wire)+map[bool]string{true: "/connection dropped", false: "/clean end"}[abrupt], func(t *testing.T) {
				fs := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
					var buf bytes.Buffer
					switch c.try.Wire {
					case wireChat:
						sw.StreamAnswer(sw.NewOpenAIStream(&buf, nil, "chatcmpl-x1", testModel, 1, true), textAnswer)
					case wireMessages:
						sw.StreamAnswer(sw.NewAnthropicStream(&buf, nil, "msg_x1", testModel, provider.Usage{}), textAnswer)
					default:
						st := sw.NewResponsesStream(&buf, nil, sw.ResponsesHead{ID: "resp_x1", Model: testModel}, -1)
						st.Start()
						st.Answer(textAnswer)
					}
					at := bytes.LastIndex(buf.Bytes(), []byte(c.terminator))
					if at < 0 {
						t.Errorf("no %s in %s", c.terminator, buf.Bytes())
						return
					}
					flush := openSSE(w)
					_, _ = w.Write(buf.Bytes()[:at])
					flush()
					if abrupt {
						cut()
					}
				})
				res := do(context.Background(), fs.Client(), fs.URL, withMarker(c.try, "r-1.1"))
				if res.Answered || res.Fail != "connection" || res.Finish != c.finish || res.Text != textAnswer.Text || !res.Partial {
					t.Errorf("result %+v", res)
				}
			})
		}
	}
}

// An error event inside a stream is the wire's word: stream_error, with its type and code, and
// what arrived before it.
func TestDoReadsAnErrorEventMidStream(t *testing.T) {
	cases := []struct {
		try                    try
		e                      sw.Error
		wantType, wantCode     string
		wantFinish, wantSaying string
	}{
		{try{Wire: wireChat, Stream: true}, sw.Error{Status: 502, Type: "server_error", Code: "all_candidates_failed", Message: "the answer failed after 6 chunks"},
			"server_error", "all_candidates_failed", "", "failed after 6 chunks"},
		{try{Wire: wireMessages, Stream: true}, sw.Error{Status: 529, Type: "overloaded_error", Message: "every candidate is overloaded"},
			"overloaded_error", "", "", "every candidate is overloaded"},
		{try{Wire: wireMessages, Stream: true}, sw.Error{Status: 502, Type: "server_error", Message: "the answer failed after 6 chunks"},
			"api_error", "", "", "failed after 6 chunks"},
		{try{Wire: wireResponses}, sw.Error{Status: 429, Type: "rate_limit_error", Message: "every candidate is rate-limited", RetryAfter: 30},
			"", "rate_limit_exceeded", "failed", "every candidate is rate-limited (retry after 30 s)"},
	}
	for _, c := range cases {
		for _, before := range []bool{true, false} {
			t.Run(string(c.try.Wire)+"/"+c.wantSaying+map[bool]string{true: "/after text", false: "/before content"}[before], func(t *testing.T) {
				fs := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
					s := streamOf(w, c.try.Wire)
					if before {
						s.Text("Baton keeps the answer ")
					}
					e := c.e
					s.Error(&e)
				})
				res := do(context.Background(), fs.Client(), fs.URL, withMarker(c.try, "r-1.1"))
				if res.Answered || res.Fail != "stream_error" || res.ErrType != c.wantType || res.ErrCode != c.wantCode ||
					!strings.Contains(res.ErrMessage, c.wantSaying) || res.Finish != c.wantFinish {
					t.Errorf("result %+v", res)
				}
				wantText := map[bool]string{true: "Baton keeps the answer ", false: ""}[before]
				if res.Partial != before || res.Text != wantText || res.Status != 200 || res.WorkflowID != testWorkflow {
					t.Errorf("partial %v text %q status %d workflow %q", res.Partial, res.Text, res.Status, res.WorkflowID)
				}
			})
		}
	}
}

// An error status is "http", its type and code read from the wire's body; the SDKs do not retry.
func TestDoReadsAnHTTPError(t *testing.T) {
	cases := []struct {
		try                try
		status             int
		write              func(http.ResponseWriter)
		wantType, wantCode string
	}{
		{try{Wire: wireChat}, 503, func(w http.ResponseWriter) {
			sw.WriteOpenAIError(w, &sw.Error{Status: 503, Type: "server_error", Message: "cannot start the reply: unavailable"})
		}, "server_error", ""},
		{try{Wire: wireChat, Stream: true}, 429, func(w http.ResponseWriter) {
			sw.WriteOpenAIError(w, &sw.Error{Status: 429, Type: "rate_limit_error", Code: "server_busy", RetryAfter: 1, Message: "baton serve has 8 replies in flight"})
		}, "rate_limit_error", "server_busy"},
		{try{Wire: wireMessages}, 503, func(w http.ResponseWriter) {
			sw.WriteAnthropicError(w, &sw.Error{Status: 503, Type: "server_error", Message: "cannot start the reply: unavailable"})
		}, "overloaded_error", ""},
		{try{Wire: wireMessages, Stream: true}, 503, func(w http.ResponseWriter) {
			sw.WriteAnthropicError(w, &sw.Error{Status: 503, Type: "server_error", Message: "cannot start the reply: unavailable"})
		}, "overloaded_error", ""},
		{try{Wire: wireResponses}, 503, func(w http.ResponseWriter) {
			sw.WriteResponsesError(w, &sw.Error{Status: 503, Type: "server_error", Message: "cannot store the response: unavailable"})
		}, "server_error", ""},
		// A proxy's own page in front of a dead serve: no wire body, still an HTTP error.
		{try{Wire: wireChat, Stream: true}, 502, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			_, _ = io.WriteString(w, "<html>Bad Gateway</html>")
		}, "", ""},
		{try{Wire: wireMessages}, 502, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			_, _ = io.WriteString(w, "<html>Bad Gateway</html>")
		}, "", ""},
	}
	for _, c := range cases {
		t.Run(string(c.try.Wire)+"/"+http.StatusText(c.status), func(t *testing.T) {
			fs := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) { c.write(w) })
			res := do(context.Background(), fs.Client(), fs.URL, withMarker(c.try, "r-1.1"))
			if res.Answered || res.Fail != "http" || res.Status != c.status || res.ErrType != c.wantType || res.ErrCode != c.wantCode ||
				res.ErrMessage == "" || res.Partial {
				t.Errorf("result %+v", res)
			}
			if n := len(fs.requests()); n != 1 {
				t.Errorf("%d requests: the SDK retried", n)
			}
		})
	}
}

func TestDoTellsAConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	_ = ln.Close()
	for _, tr := range []try{{Wire: wireChat}, {Wire: wireChat, Stream: true}, {Wire: wireMessages}, {Wire: wireMessages, Stream: true}, {Wire: wireResponses}} {
		res := do(context.Background(), &http.Client{}, base, withMarker(tr, "r-1.1"))
		if res.Answered || res.Fail != "connection" || res.Status != 0 || !strings.Contains(res.ErrMessage, "refused") || res.Ended.IsZero() {
			t.Errorf("%s stream=%v: %+v", tr.Wire, tr.Stream, res)
		}
	}
}

// A hang is cut by the harness's deadline: a connection failure that says it timed out.
func TestDoTimesOutOnAHang(t *testing.T) {
	for _, tr := range []try{{Wire: wireChat}, {Wire: wireChat, Stream: true}, {Wire: wireMessages, Stream: true}, {Wire: wireResponses}} {
		t.Run(string(tr.Wire), func(t *testing.T) {
			fs := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if tr.Stream || tr.Wire == wireResponses {
					streamOf(w, tr.Wire).Text("a beginning ")
				}
				<-r.Context().Done() // hangs until the caller gives up
			})
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			res := do(ctx, fs.Client(), fs.URL, withMarker(tr, "r-1.1"))
			if res.Answered || res.Fail != "connection" || !strings.Contains(res.ErrMessage, "timed out") {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// A Responses stream cut mid-answer is resumed on another serve, after the last event seen: the
// answer is whole, once.
func TestResumeFinishesABrokenResponsesStream(t *testing.T) {
	head := sw.ResponsesHead{ID: "resp_chaos1", Model: testModel, CreatedAt: 1700000000, Echo: sw.ResponsesEcho{Store: true, Background: true}}
	// play makes the answer's calls on a stream; whole false stops in the middle of the call.
	play := func(st *sw.ResponsesStream, whole bool) {
		st.Start()
		st.Text("Let me look ")
		st.Text("that up. ")
		st.ToolCall(0, "call_9", "lookup")
		st.ToolArgs(0, `{"q":`)
		if whole {
			st.ToolArgs(0, `"baton"}`)
			st.Finish(provider.FinishToolCalls, provider.Usage{Input: 10, Output: 5})
		}
	}
	broke := sw.NewResponsesStream(io.Discard, nil, head, -1)
	play(broke, false)
	cutAt := broke.LastWritten()
	first := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		play(sw.NewResponsesStream(w, openSSE(w), head, -1), false)
		cut()
	})
	second := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/responses/"+head.ID {
			sw.WriteResponsesError(w, sw.ResponseNotFound(strings.TrimPrefix(r.URL.Path, "/v1/responses/")))
			return
		}
		var skip int64 = -1
		if v := r.URL.Query().Get("starting_after"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Errorf("starting_after %q: %v", v, err)
			}
			skip = n
		}
		w.Header().Set("Content-Type", "text/event-stream") // serve's GET names no workflow
		w.WriteHeader(http.StatusOK)
		play(sw.NewResponsesStream(w, w.(http.Flusher).Flush, head, skip), true)
	})
	tr := withMarker(try{Wire: wireResponses, Tools: true}, "r-000042.1")
	broken := do(context.Background(), first.Client(), first.URL, tr)
	if broken.Answered || broken.Fail != "connection" || broken.ResponseID != head.ID || broken.SeqSeen != cutAt ||
		broken.Text != "Let me look that up. " || len(broken.ToolCalls) != 0 || !broken.Partial || broken.WorkflowID != testWorkflow {
		t.Fatalf("the broken stream: %+v (cut after %d)", broken, cutAt)
	}

	res := resume(context.Background(), second.Client(), second.URL, tr, broken)
	reqs := second.requests()
	if len(reqs) != 1 || reqs[0].query.Get("stream") != "true" || reqs[0].query.Get("starting_after") != strconv.FormatInt(cutAt, 10) {
		t.Fatalf("the resume asked %+v, want stream=true&starting_after=%d", reqs, cutAt)
	}
	whole := sw.NewResponsesStream(io.Discard, nil, head, -1)
	play(whole, true)
	if !res.Answered || res.Fail != "" || res.Finish != "completed" || res.Text != "Let me look that up. " ||
		!reflect.DeepEqual(res.ToolCalls, []toolCall{{ID: "call_9", Name: "lookup", Arguments: `{"q":"baton"}`}}) {
		t.Errorf("resumed: %+v", res)
	}
	if res.SeqSeen != whole.LastWritten() || res.Partial || res.Status != 200 || res.WorkflowID != testWorkflow || res.RunID != testRun ||
		res.FirstByte != broken.FirstByte || !res.Ended.After(broken.Ended) {
		t.Errorf("resumed: seq %d (want %d), partial %v, status %d, workflow %q %q, first byte %v, ended %v",
			res.SeqSeen, whole.LastWritten(), res.Partial, res.Status, res.WorkflowID, res.RunID, res.FirstByte, res.Ended)
	}

	// A response serve does not hold: the resume fails as the wire says.
	gone := broken
	gone.ResponseID = "resp_gone"
	if res := resume(context.Background(), second.Client(), second.URL, tr, gone); res.Answered || res.Fail != "http" || res.Status != 404 ||
		res.Text != broken.Text || !res.Partial {
		t.Errorf("resuming an unknown response: %+v", res)
	}
	// Nothing to resume without a response id.
	none := result{Fail: "connection", ErrMessage: "connection refused", SeqSeen: -1}
	if res := resume(context.Background(), second.Client(), second.URL, tr, none); res.Answered || res.Fail != "connection" ||
		!strings.Contains(res.ErrMessage, "no response id") || len(second.requests()) != 2 {
		t.Errorf("resuming without an id: %+v", res)
	}
}

func TestDoNeverPanicsOnOddInput(t *testing.T) {
	fs := newFakeServe(t, func(w http.ResponseWriter, r *http.Request, body []byte) { cut() })
	for _, tr := range []try{{}, {Wire: "smoke-signals"}, {Wire: wireChat, History: []turn{{}, {User: "only a question"}}}, {Wire: wireResponses, Marker: ""}} {
		res := do(context.Background(), nil, fs.URL, tr)
		if res.Answered || res.Fail != "connection" {
			t.Errorf("%+v: %+v", tr, res)
		}
	}
	if res := do(context.Background(), nil, "::not a url", try{Wire: wireMessages}); res.Answered || res.Fail == "" {
		t.Errorf("a bad base: %+v", res)
	}
}

// sameJSON reports whether raw is the JSON value want, whatever its key order and spacing.
func sameJSON(raw json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(raw, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && reflect.DeepEqual(a, b)
}
