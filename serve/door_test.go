package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// newDoorWorld is newLiveWorld with serve's settings changed by set before it takes a request.
func newDoorWorld(t *testing.T, config string, rules []fakeprovider.Rule, set func(*server)) *turnWorld {
	t.Helper()
	return liveServe(t, testsuite.NewWorld(t, config,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-door-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-door-b"}}, rules), set)
}

// hasKey reports whether h has key (a trailer the response declared, before its value came).
func hasKey(h http.Header, key string) bool {
	_, ok := h[key]
	return ok
}

// sseLine is a line of a response body and when it arrived.
type sseLine struct {
	at   time.Time
	text string
}

// streamRaw posts body and reads the response line by line as it arrives: when the headers came,
// the lines with their times, and the response (its trailers read).
func streamRaw(t *testing.T, url, body string) (time.Duration, []sseLine, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	sent := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	headers := time.Since(sent)
	var lines []sseLine
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if line != "" {
			lines = append(lines, sseLine{at: time.Now(), text: strings.TrimSuffix(line, "\n")})
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return headers, lines, resp
}

func TestAStreamedCallerGetsHeadersAtOnceAndKeepAlivesUntilTheFirstToken(t *testing.T) {
	const answer = "Patience is a virtue."
	tw := newDoorWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5"}}}}`, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: answer, DelayMs: 2500}}}},
		func(s *server) { s.keepAlive = time.Second })

	// check counts the keep-alives before the first other event, and checks that the headers
	// came at once.
	check := func(t *testing.T, headers time.Duration, lines []sseLine, resp *http.Response, keepAlive func(string) bool, first string) {
		t.Helper()
		if headers > time.Second || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
			resp.Header.Get("x-baton-workflow-id") == "" || resp.Header.Get("x-baton-run-id") == "" ||
			!hasKey(resp.Trailer, "X-Baton-Attempts") {
			t.Errorf("headers after %v, want at once: %d %v", headers, resp.StatusCode, resp.Header)
		}
		n := 0
		for _, l := range lines {
			if l.text == "" || strings.HasPrefix(l.text, "data: {\"type\": \"ping\"}") {
				continue
			}
			if keepAlive(l.text) {
				n++
				continue
			}
			if !strings.HasPrefix(l.text, first) {
				t.Errorf("the first event after the keep-alives is %q, want %s…", l.text, first)
			}
			break
		}
		if n < 2 {
			t.Errorf("%d keep-alives before the first token (2.5 s, every 1 s), want at least 2:\n%v", n, lines)
		}
		if resp.Trailer.Get("x-baton-attempts") != "1" {
			t.Errorf("trailers %v", resp.Trailer)
		}
	}
	t.Run("OpenAI wire", func(t *testing.T) {
		headers, lines, resp := streamRaw(t, tw.h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","stream":true,"messages":[{"role":"user","content":"x"}]}`)
		check(t, headers, lines, resp, func(l string) bool { return l == ": keep-alive" }, "data: {")
		var text strings.Builder
		for _, l := range lines {
			var c struct {
				Choices []struct{ Delta struct{ Content string } }
			}
			if data, ok := strings.CutPrefix(l.text, "data: "); ok && json.Unmarshal([]byte(data), &c) == nil {
				for _, ch := range c.Choices {
					text.WriteString(ch.Delta.Content)
				}
			}
		}
		if text.String() != answer || lines[len(lines)-2].text != "data: [DONE]" {
			t.Errorf("answer %q, stream %v", text.String(), lines)
		}
		msg, finish, _ := complete(t, tw.openai(), openai.ChatCompletionNewParams{Model: "openai/gpt-5",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}}, true)
		if msg.Content != answer || finish != "stop" {
			t.Errorf("the OpenAI client got %q (%s)", msg.Content, finish)
		}
	})
	t.Run("Anthropic wire", func(t *testing.T) {
		headers, lines, resp := streamRaw(t, tw.h.URL+"/v1/messages", `{"model":"openai/gpt-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"x"}]}`)
		check(t, headers, lines, resp, func(l string) bool { return l == "event: ping" }, "event: message_start")
		if last := lines[len(lines)-3].text; last != "event: message_stop" {
			t.Errorf("the stream ends with %q:\n%v", last, lines)
		}
		m := completeAnthropicWith(t, tw.anthropic(), anthropic.MessageNewParams{Model: "openai/gpt-5", MaxTokens: 50,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("x"))}}, true)
		if len(m.Content) != 1 || m.Content[0].Text != answer || m.StopReason != "end_turn" || m.Model != "openai/gpt-5" {
			t.Errorf("the Anthropic client got %+v (%s, %s)", m.Content, m.StopReason, m.Model)
		}
	})
}

// A streamed reply that fails before any content ends its stream, whose headers went out at the
// reply's start, with the wire's error event carrying what the status response carried.
func TestAStreamedReplyThatFailsBeforeContentEndsWithAnErrorEvent(t *testing.T) {
	rateLimited := fakeprovider.Response{Status: 429, Headers: map[string]string{"retry-after": "0"},
		Body: `{"error":{"message":"Rate limit reached","type":"requests"}}`}
	tooLong := fakeprovider.Response{Status: 400,
		Body: `{"error":{"message":"This model's maximum context length is 128000 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`}
	cases := []struct {
		name                  string
		respond               fakeprovider.Response
		openAIType, code      string
		anthropicType, saying string
	}{
		{"every candidate rate-limited", rateLimited, "rate_limit_error", "rate_limit_exceeded", "rate_limit_error", "retry after "},
		{"a prompt that does not fit", tooLong, "invalid_request_error", "context_length_exceeded", "invalid_request_error", "maximum context length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tw := newDoorWorld(t, liveConfig, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{c.respond}}},
				func(*server) {})
			// fallbacks: [] makes the request strict: the primary's failure is the reply's.
			resp, body := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","fallbacks":[],"stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
			var e struct {
				Error struct{ Message, Type, Code string }
			}
			data, _ := strings.CutPrefix(strings.TrimSpace(body), "data: ")
			if err := json.Unmarshal([]byte(data), &e); err != nil || resp.StatusCode != 200 || e.Error.Type != c.openAIType || e.Error.Code != c.code ||
				!strings.Contains(e.Error.Message, c.saying) || strings.Contains(body, "[DONE]") {
				t.Errorf("OpenAI stream: %d %v\n%s", resp.StatusCode, err, body)
			}
			resp, body = testsuite.Post(t, tw.h.URL+"/v1/messages", `{"model":"openai/gpt-5","fallbacks":[],"max_tokens":50,"stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
			if resp.StatusCode != 200 || !strings.HasPrefix(body, "event: error\n") || !strings.Contains(body, `"type":"`+c.anthropicType+`"`) ||
				!strings.Contains(body, c.saying) || strings.Contains(body, "message_stop") {
				t.Errorf("Anthropic stream: %d\n%s", resp.StatusCode, body)
			}

			// The official clients raise it.
			oc, ac := tw.openai(), tw.anthropic()
			s := oc.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "openai/gpt-5",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}}, option.WithJSONSet("fallbacks", []string{}))
			for s.Next() {
				t.Errorf("a chunk from a failed reply: %+v", s.Current())
			}
			var se *ssestream.StreamError
			if err := s.Err(); !errors.As(err, &se) || !strings.Contains(string(se.Event.Data), `"code":"`+c.code+`"`) {
				t.Errorf("the OpenAI client's error: %v", err)
			}
			as := ac.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{Model: "openai/gpt-5", MaxTokens: 50,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("x"))}}, aoption.WithJSONSet("fallbacks", []string{}))
			for as.Next() {
				t.Errorf("an event from a failed reply: %+v", as.Current())
			}
			var ae *anthropic.Error
			if err := as.Err(); !errors.As(err, &ae) || string(ae.Type()) != c.anthropicType {
				t.Errorf("the Anthropic client's error: %v", err)
			}
		})
	}
}

// serve's --timeout ends a caller's wait by cancelling the reply, as a hang-up does.
func TestServesTimeoutCancelsTheReply(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "streamed, on the door", false: "unstreamed, on the shared worker"}[stream], func(t *testing.T) {
			tw := newDoorWorld(t, liveConfig, []fakeprovider.Rule{
				{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "too late", DelayMs: 30000}}}},
				func(s *server) { s.timeout = 1500 * time.Millisecond })
			body := `{"model":"openai/gpt-5","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"x"}]}`
			resp, out := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", body, nil)
			answered := time.Now()
			var e struct {
				Error struct{ Message, Type, Code string }
			}
			data, _ := strings.CutPrefix(strings.TrimSpace(out), "data: ")
			_ = json.Unmarshal([]byte(data), &e)
			if want := map[bool]int{true: 200, false: 504}[stream]; resp.StatusCode != want || e.Error.Code != "timeout" ||
				!strings.Contains(e.Error.Message, "--timeout of 1.5s") || !strings.Contains(e.Error.Message, "was cancelled") {
				t.Errorf("%d (want %d) %s", resp.StatusCode, want, out)
			}
			err := testsuite.SharedServer(t).Client().GetWorkflow(context.Background(), resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id")).
				Get(context.Background(), nil)
			if err == nil || !strings.Contains(err.Error(), policy.ErrAborted) {
				t.Errorf("the reply ended with %v, want AbortedError", err)
			}
			testsuite.ClosedAndAlone(t, tw.Fake, answered, "the timeout's answer")
		})
	}
}

// A reply that may wait durably for a cooldown longer than serve's --timeout is left running, and
// the caller is told how to follow it.
func TestServesTimeoutLeavesADurableWaitRunningAndSaysHowToFollowIt(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{true: "streamed", false: "unstreamed"}[stream], func(t *testing.T) {
			tw := newDoorWorld(t, liveConfig, []fakeprovider.Rule{
				{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "worth the wait", DelayMs: 3500}}}},
				func(s *server) { s.timeout = 1500 * time.Millisecond })
			body := `{"model":"openai/gpt-5","max_tokens":20,"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"x"}]}`
			resp, out := testsuite.Post(t, tw.h.URL+"/v1/messages", body, map[string]string{WaitHeader: "2h"})
			id, runID := resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id")
			if want := map[bool]int{true: 200, false: 504}[stream]; resp.StatusCode != want ||
				(stream && !strings.HasPrefix(out, "event: error\n")) || !strings.Contains(out, "the reply was not cancelled") ||
				!strings.Contains(out, "temporal workflow show --workflow-id "+id+" --run-id "+runID) || !strings.Contains(out, "up to 2h0m0s") {
				t.Errorf("%d (want %d) %s", resp.StatusCode, want, out)
			}
			var res policy.ReplyResult
			if err := testsuite.SharedServer(t).Client().GetWorkflow(context.Background(), id, runID).Get(context.Background(), &res); err != nil || res.Text != "worth the wait" {
				t.Errorf("the reply went on to %q, %v; want its answer", res.Text, err)
			}
			if n := len(tw.Fake.Calls()); n != 1 {
				t.Errorf("%d provider calls, want 1", n)
			}
		})
	}
}

func TestKeepAliveIsAPositiveDuration(t *testing.T) {
	for v, want := range map[string]time.Duration{"": DefaultServeKeepAlive, "1s": time.Second, "500ms": 500 * time.Millisecond, "0s": 0, "-1s": 0, "15": 0, "soon": 0} {
		if got, err := ParseKeepAlive(v); got != want || (err != nil) != (want == 0) {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
}

// startFails is a Temporal client whose every start fails, as one does while its cluster is down
// or saturated.
type startFails struct{ client.Client }

func (startFails) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	return nil, serviceerror.NewUnavailable("frontend unreachable")
}

// A reply that cannot start is a 503 that says when to try again, on each wire, streamed or not.
func TestAReplyThatCannotStartSaysWhenToRetry(t *testing.T) {
	w := newDoorWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5"}}}}`, nil,
		func(s *server) { s.client = startFails{s.client} })
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"agent:main","messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/chat/completions", `{"model":"agent:main","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/messages", `{"model":"agent:main","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/responses", `{"model":"agent:main","input":"hi","store":false}`},
		{"/v1/responses", `{"model":"agent:main","input":"hi","background":true}`},
	} {
		resp, err := http.Post(w.h.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" ||
			!strings.Contains(string(body), "cannot start the reply: frontend unreachable") {
			t.Errorf("%s %s: %d, Retry-After %q: %s", c.path, c.body, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	// What the official client sees: the error, and the header it would wait for.
	oc := openai.NewClient(option.WithBaseURL(w.h.URL+"/v1"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	_, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "agent:main",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable || apiErr.Response.Header.Get("Retry-After") != "2" {
		t.Errorf("openai-go: %v", err)
	}
}
