package serve

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/internal/wire"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
)

func serveWorld(t *testing.T, rules []fakeprovider.Rule) *httptest.Server {
	t.Helper()
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}, list: [{id: "main"}, {id: "ops", model: "anthropic/claude"}]}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-srv-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-srv-b"}}, rules)
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	h := httptest.NewServer(&server{client: srv.Client(), taskQueue: tq, config: w.Config, timeout: time.Minute})
	t.Cleanup(h.Close)
	return h
}

// The request shapes of the OpenAI Python and Go clients.
const (
	pythonShape = `{"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hi"}],"model":"openai/gpt-5","stream":false}`
	goShape     = `{"messages":[{"content":"Say hi","role":"user"}],"model":"openai/gpt-5","stream":true,"stream_options":{"include_usage":true}}`
)

func TestServeAnswersLikeOpenAIAndNamesTheModelThatAnswered(t *testing.T) {
	h := serveWorld(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "hi from claude", Usage: &fakeprovider.Usage{Input: 7, Output: 3}}}},
	})
	resp, body := testsuite.Post(t, h.URL+"/v1/chat/completions", pythonShape, map[string]string{"x-baton-session": "web-1"})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var out struct {
		Model   string
		Choices []struct {
			Message struct{ Role, Content string }
		}
		Usage struct{ PromptTokens, CompletionTokens int } `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if out.Model != "anthropic/claude" || out.Choices[0].Message.Content != "hi from claude" {
		t.Errorf("%s", body)
	}
	if resp.Header.Get("x-baton-workflow-id") == "" || resp.Header.Get("x-baton-fallback-reason") != "overloaded" || resp.Header.Get("x-baton-attempts") != "2" {
		t.Errorf("headers %v", resp.Header)
	}

	// Streaming: complete SSE chunks in OpenAI's format, usage, then [DONE].
	resp, body = testsuite.Post(t, h.URL+"/v1/chat/completions", goShape, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var text strings.Builder
	sawUsage, done := false, false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Model   string
			Choices []struct{ Delta struct{ Content string } }
			Usage   *struct{ CompletionTokens int } `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
		}
		sawUsage = sawUsage || c.Usage != nil
	}
	if text.String() != "hi from claude" || !sawUsage || !done {
		t.Errorf("stream: text %q usage %v done %v\n%s", text.String(), sawUsage, done, body)
	}

	// An agent id; GET /v1/models lists models and agents.
	if resp, body = testsuite.Post(t, h.URL+"/v1/chat/completions", `{"model":"agent:ops","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, nil); resp.StatusCode != 200 ||
		!strings.Contains(body, `"model":"anthropic/claude"`) {
		t.Errorf("agent:ops: %d %s", resp.StatusCode, body)
	}
	r, err := http.Get(h.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	models, _ := io.ReadAll(r.Body)
	r.Body.Close()
	for _, id := range []string{`"openai/gpt-5"`, `"anthropic/claude"`, `"agent:ops"`} {
		if !strings.Contains(string(models), id) {
			t.Errorf("models lack %s: %s", id, models)
		}
	}
}

func TestServeFailsWithOpenAIShapedErrors(t *testing.T) {
	h := serveWorld(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 429, Headers: map[string]string{"retry-after": "0"},
			Body: `{"error":{"message":"Rate limit reached","type":"requests"}}`}}},
	})
	// fallbacks: [] makes the request strict: every candidate rate-limited → 429 with Retry-After.
	resp, body := testsuite.Post(t, h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","fallbacks":[],"messages":[{"role":"user","content":"hi"}]}`, nil)
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != 429 || ra < 1 || ra > 60 || !strings.Contains(body, `"type":"rate_limit_error"`) || strings.Contains(body, "data:") {
		t.Errorf("%d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// Streamed, the headers went out as the reply started: the same error is the stream's error
	// event, the Retry-After in its message, and no [DONE].
	resp, body = testsuite.Post(t, h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","fallbacks":[],"messages":[{"role":"user","content":"hi"}],"stream":true}`, nil)
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	data, _ := strings.CutPrefix(strings.TrimSpace(body), "data: ")
	if err := json.Unmarshal([]byte(data), &e); err != nil || resp.StatusCode != 200 || e.Error.Type != "rate_limit_error" || e.Error.Code != "rate_limit_exceeded" ||
		!strings.Contains(e.Error.Message, "(retry after ") || strings.Contains(body, "[DONE]") {
		t.Errorf("streamed: %d %v %s", resp.StatusCode, err, body)
	}
	cases := []struct{ body, param string }{
		{`{"model":"openai/gpt-5","messages":`, ""},
		{`{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{`{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`, "model"},
		{`{"model":"openai/gpt-5","messages":[]}`, "messages"},
		{`{"model":"openai/gpt-5","messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role"},
		{`{"model":"openai/gpt-5","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, "messages[0].content[0].image_url"},
		{`{"model":"openai/gpt-5","fallbacks":["nope"],"messages":[{"role":"user","content":"hi"}]}`, "fallbacks[0]"},
		{`{"model":"openai/gpt-5","stream":"yes","messages":[{"role":"user","content":"hi"}]}`, "stream"},
	}
	for _, c := range cases {
		resp, body := testsuite.Post(t, h.URL+"/v1/chat/completions", c.body, nil)
		var e struct {
			Error struct {
				Param any
				Type  string
			}
		}
		_ = json.Unmarshal([]byte(body), &e)
		param, _ := e.Error.Param.(string)
		if resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || param != c.param {
			t.Errorf("%s: %d %s (want 400 naming %q)", c.body, resp.StatusCode, body, c.param)
		}
	}
}

func TestATokenIsRequiredWhenSet(t *testing.T) {
	h := httptest.NewServer(&server{token: "s3cret", config: activities.StaticConfig(policy.DefaultConfig())})
	defer h.Close()
	if resp, _ := testsuite.Post(t, h.URL+"/v1/chat/completions", pythonShape, nil); resp.StatusCode != 401 {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	if resp, _ := testsuite.Post(t, h.URL+"/v1/chat/completions", pythonShape, map[string]string{"Authorization": "Bearer wrong"}); resp.StatusCode != 401 {
		t.Errorf("wrong token: %d", resp.StatusCode)
	}
}

func FuzzDecodeChat(f *testing.F) {
	f.Add([]byte(`{"model":"anthropic/claude","max_tokens":5,"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`))
	f.Add([]byte(pythonShape))
	f.Add([]byte(goShape))
	f.Add([]byte(`{"model":"agent:x","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"fallbacks":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, decode := range []func([]byte) (wire.Request, *wire.Error){wire.DecodeOpenAI, wire.DecodeAnthropic} {
			req, wr, werr := decodeRequest(decode, body, "")
			if werr == nil && (len(wr.Turn.Messages) == 0 || req.Agent == "") {
				t.Fatalf("accepted without messages or agent: %s", body)
			}
		}
	})
}
