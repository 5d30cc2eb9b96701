package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/openai/openai-go/v3"
	"go.temporal.io/sdk/temporal"
)

// liveWorld is serve with its own worker for the attempts of its callers, as `baton serve` runs.
func newLiveWorld(t *testing.T, config string, rules []fakeprovider.Rule) *turnWorld {
	t.Helper()
	return liveServe(t, testsuite.NewWorld(t, config,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-live-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-live-b"}}, rules), nil)
}

// liveServe serves w as `baton serve` does: the shared queue's worker, and a door of its own for
// its callers' attempts, with w's limits; set (nil: none) adjusts the server.
func liveServe(t *testing.T, w *testsuite.World, set func(*server)) *turnWorld {
	t.Helper()
	tq, door := testsuite.StartServeWorkers(t, w)
	s := &server{client: testsuite.SharedServer(t).Client(), taskQueue: tq, config: w.Config, timeout: time.Minute, content: w.Store, live: &liveDoor{hub: door.Hub, queue: door.Queue}, responses: w.Store}
	if set != nil {
		set(s)
	}
	h := httptest.NewServer(s)
	t.Cleanup(h.Close)
	return &turnWorld{World: w, h: h}
}

const liveConfig = `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`

func TestTheFirstTokenReachesTheCallerAsTheProviderSendsIt(t *testing.T) {
	tw := newLiveWorld(t, liveConfig, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{
		{Text: strings.Repeat("word ", 20), ChunkDelayMs: 100}}}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := tw.openai()
	s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "openai/gpt-5",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("count")}})
	var first time.Time
	var text strings.Builder
	for s.Next() {
		for _, c := range s.Current().Choices {
			if c.Delta.Content != "" && first.IsZero() {
				first = time.Now()
			}
			text.WriteString(c.Delta.Content)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	// The provider's handler stamps its end as it returns, which may be a moment after the caller
	// has read the last byte.
	call := tw.Fake.Calls()[0]
	for deadline := time.Now().Add(time.Second); call.EndedAt.IsZero() && time.Now().Before(deadline); call = tw.Fake.Calls()[0] {
		time.Sleep(5 * time.Millisecond)
	}
	if lag := first.Sub(call.FirstContentAt); call.FirstContentAt.IsZero() || lag > 100*time.Millisecond || lag < 0 {
		t.Errorf("the first token reached the caller %v after the provider sent it, want within 100 ms", lag)
	}
	if first.After(call.EndedAt) || call.EndedAt.Sub(first) < time.Second {
		t.Errorf("the first token arrived at %v, the provider's 2 s answer ended at %v: not live", first, call.EndedAt)
	}
	if text.String() != strings.Repeat("word ", 20) {
		t.Errorf("answer %q", text.String())
	}
}

// cut is an answer cut after its third word, mid-stream.
func cut() fakeprovider.Response {
	n := 3
	return fakeprovider.Response{Text: "The quick brown fox jumps over the lazy dog.", CutAfterChunks: &n}
}

func TestAStreamCutMidAnswerContinuesOnTheFallback(t *testing.T) {
	rules := []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{cut()}},
		// The fallback honours a true prefill: it writes the kept-back word again and goes on.
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "The quick brown fox jumps over the lazy dog.", Prefill: "honour"}}},
	}
	const whole = "The quick brown fox jumps over the lazy dog."
	t.Run("OpenAI caller", func(t *testing.T) {
		tw := newLiveWorld(t, liveConfig, rules)
		msg, finish, _ := complete(t, tw.openai(), openai.ChatCompletionNewParams{Model: "openai/gpt-5",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("a pangram")}}, true)
		if msg.Content != whole || finish != "stop" {
			t.Errorf("the caller got %q (%s), want the whole answer once", msg.Content, finish)
		}
		// The fallback was asked to continue what the caller already had.
		var sent struct {
			Messages []struct {
				Role    string
				Content json.RawMessage
			}
		}
		_ = json.Unmarshal(tw.Fake.Calls()[len(tw.Fake.Calls())-1].Body, &sent)
		last := sent.Messages[len(sent.Messages)-1]
		if last.Role != "assistant" || !strings.Contains(string(last.Content), "The quick") || strings.Contains(string(last.Content), "brown") {
			t.Errorf("the fallback's prefill, all but the last word the caller holds: %+v", sent.Messages)
		}
	})
	t.Run("Anthropic caller", func(t *testing.T) {
		tw := newLiveWorld(t, liveConfig, rules)
		m := completeAnthropicWith(t, tw.anthropic(), anthropic.MessageNewParams{Model: "openai/gpt-5", MaxTokens: 100,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("a pangram"))}}, true)
		if len(m.Content) != 1 || m.Content[0].Text != whole || m.StopReason != "end_turn" {
			t.Errorf("the caller got %+v (%s)", m.Content, m.StopReason)
		}
	})
	t.Run("the durable result is the whole answer, its attempts record the continuation", func(t *testing.T) {
		tw := newLiveWorld(t, liveConfig, rules)
		resp, body := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
		if resp.StatusCode != 200 || !strings.Contains(body, "[DONE]") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if resp.Trailer.Get("x-baton-attempts") != "2" {
			t.Errorf("trailers %v", resp.Trailer)
		}
		var res policy.ReplyResult
		run := testsuite.SharedServer(t).Client().GetWorkflow(context.Background(), resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id"))
		if err := run.Get(context.Background(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Text != whole || len(res.Attempts) != 2 || res.Attempts[0].Result != policy.ResultFailed || !res.Attempts[1].Continues {
			t.Errorf("result %q, attempts %+v", res.Text, res.Attempts)
		}
	})
}

func TestStreamErrorModeEndsTheCallersStreamWithAnError(t *testing.T) {
	tw := newLiveWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}, streaming: {midStream: "error"}}`,
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{cut()}}})
	resp, body := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"content":"The "`) || !strings.Contains(body, `data: {"error":`) ||
		strings.Contains(body, "data: [DONE]") || strings.Contains(body, `"finish_reason":"stop"`) {
		t.Errorf("OpenAI stream: %d\n%s", resp.StatusCode, body)
	}
	resp, body = testsuite.Post(t, tw.h.URL+"/v1/messages", `{"model":"openai/gpt-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"text":"The "`) || !strings.Contains(body, "event: error") || strings.Contains(body, "event: message_stop") {
		t.Errorf("Anthropic stream: %d\n%s", resp.StatusCode, body)
	}
	for _, c := range tw.Fake.Calls() {
		if c.Provider == "anthropic" {
			t.Errorf("error mode must not go on to the fallback: %+v", c)
		}
	}
}

func TestACallerWhoHangsUpAbortsTheReply(t *testing.T) {
	stallAfter := 1
	tw := newLiveWorld(t, liveConfig, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 400, Body: `{"error":{"message":"model gpt-5 does not exist","code":"model_not_found"}}`}}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "slowly and then never", StallAfterChunks: &stallAfter, StallMs: 60000}}},
	})
	before, _ := tw.Store.ListProfiles(context.Background(), "main")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, tw.h.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"agent:main","user":"hangup","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read until the fallback's first word, then hang up.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "slowly") {
	}
	sess, _ := tw.Store.GetSession(context.Background(), "hangup")
	if sess.Model.ModelOverride != "claude" {
		t.Fatalf("the fallback override was not written before the fallback streamed: %+v", sess.Model)
	}
	hungUp := time.Now()
	cancel()
	resp.Body.Close()
	id, runID := resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id")
	err = testsuite.SharedServer(t).Client().GetWorkflow(context.Background(), id, runID).Get(context.Background(), nil)
	if !strings.Contains(err.Error(), policy.ErrAborted) {
		t.Errorf("the reply ended with %v, want AbortedError", err)
	}
	// Its record names the attempt that was in flight: failed, with no reason.
	var appErr *temporal.ApplicationError
	var attempts []policy.Attempt
	if !errors.As(err, &appErr) || appErr.Details(&attempts) != nil || len(attempts) != 2 ||
		attempts[1].Provider != "anthropic" || attempts[1].Result != policy.ResultFailed || attempts[1].Reason != policy.ReasonNone {
		t.Errorf("the aborted reply's attempts %+v: want the failed primary, then the fallback in flight", attempts)
	}
	var ended time.Time
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ended = tw.Fake.Calls()[1].EndedAt; !ended.IsZero() {
			break
		}
	}
	if ended.IsZero() || ended.Sub(hungUp) > time.Second {
		t.Errorf("the provider connection closed %v after the caller hung up, want within 1 s", ended.Sub(hungUp))
	}
	sess, _ = tw.Store.GetSession(context.Background(), "hangup")
	if sess.Model.ModelOverride != "" {
		t.Errorf("the override written for the aborted attempt stayed: %+v", sess.Model)
	}
	after, _ := tw.Store.ListProfiles(context.Background(), "main")
	statsOf := func(ps []store.Profile) policy.ProfileStats {
		for _, p := range ps {
			if p.ID == "anthropic:default" {
				return p.Stats
			}
		}
		return policy.ProfileStats{}
	}
	if b, a := statsOf(before), statsOf(after); !reflect.DeepEqual(b, a) {
		t.Errorf("the aborted call changed usage stats: %+v -> %+v", b, a)
	}
	if n := len(tw.Fake.Calls()); n != 2 {
		t.Errorf("%d provider calls, want 2: nothing is tried after an abort", n)
	}
}

func TestThinkingStreamsLiveWithItsSignatureToAnAnthropicCaller(t *testing.T) {
	tw := newLiveWorld(t, `{agents: {defaults: {model: {primary: "anthropic/claude"}}}}`, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Thinking: "six times seven", Signature: "sig-42", Text: "It is 42."}}}})
	m := completeAnthropicWith(t, tw.anthropic(), anthropic.MessageNewParams{Model: "anthropic/claude", MaxTokens: 2000,
		Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("6*7?"))}}, true)
	if len(m.Content) != 2 || m.Content[0].Type != "thinking" || m.Content[0].Thinking != "six times seven" || m.Content[0].Signature != "sig-42" ||
		m.Content[1].Text != "It is 42." {
		t.Errorf("content %+v", m.Content)
	}
}

func TestAFailoverBeforeTheFirstByteIsInvisible(t *testing.T) {
	tw := newLiveWorld(t, liveConfig, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{overloaded()}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "one clean answer", ChunkDelayMs: 50}}},
	})
	resp, body := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	var text strings.Builder
	for _, line := range strings.Split(body, "\n") {
		var c struct {
			Choices []struct{ Delta struct{ Content string } }
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(data), &c) == nil {
			for _, ch := range c.Choices {
				text.WriteString(ch.Delta.Content)
			}
		}
	}
	if resp.StatusCode != 200 || text.String() != "one clean answer" || strings.Contains(body, "error") || !strings.Contains(body, "data: [DONE]") {
		t.Errorf("%d %q\n%s", resp.StatusCode, text.String(), body)
	}
	if resp.Trailer.Get("x-baton-fallback-reason") != "overloaded" {
		t.Errorf("trailers %v", resp.Trailer)
	}
}

func TestServeShedsWhatItCannotStartWithA429(t *testing.T) {
	tw := newLiveWorld(t, liveConfig, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "slow", DelayMs: 2000}}}})
	tw.h.Config.Handler.(*server).inflight = make(chan struct{}, 1)
	done := make(chan int, 1)
	go func() {
		resp, _ := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","messages":[{"role":"user","content":"first"}]}`, nil)
		done <- resp.StatusCode
	}()
	for deadline := time.Now().Add(20 * time.Second); len(tw.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	resp, body := testsuite.Post(t, tw.h.URL+"/v1/messages", `{"model":"openai/gpt-5","max_tokens":5,"messages":[{"role":"user","content":"second"}]}`, nil)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(body, "BATON_SERVE_MAX_INFLIGHT") || !strings.Contains(body, `"type":"error"`) {
		t.Errorf("over the bound: %d %s %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if code := <-done; code != 200 {
		t.Errorf("the reply in flight: %d", code)
	}
	if resp, _ := testsuite.Post(t, tw.h.URL+"/v1/chat/completions", `{"model":"openai/gpt-5","messages":[{"role":"user","content":"third"}]}`, nil); resp.StatusCode != 200 {
		t.Errorf("the slot was not given back: %d", resp.StatusCode)
	}
}

// Answer first: the caller's last byte leaves before the reply's completion event (the history's
// clock and the client's are this machine's), streamed and not; the bookkeeping still completes.
func TestTheCallerHasTheAnswerBeforeTheReplyCompletes(t *testing.T) {
	tw := newLiveWorld(t, liveConfig, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "whole and kept", Usage: &fakeprovider.Usage{Input: 5, Output: 3}}}}})
	c := testsuite.SharedServer(t).Client()
	for _, stream := range []bool{false, true, false, true} {
		resp, err := http.Post(tw.h.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(fmt.Sprintf(`{"model":"openai/gpt-5","stream":%v,"messages":[{"role":"user","content":"x"}]}`, stream)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		lastByte := time.Now()
		resp.Body.Close()
		if !strings.Contains(string(body), "whole and kept") && !strings.Contains(string(body), "kept") {
			t.Fatalf("stream %v: %s", stream, body)
		}
		attempts := resp.Header.Get("x-baton-attempts")
		if stream {
			attempts = resp.Trailer.Get("x-baton-attempts")
		}
		if attempts != "1" {
			t.Errorf("stream %v: attempts %q", stream, attempts)
		}
		var res policy.ReplyResult
		run := c.GetWorkflow(context.Background(), resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id"))
		if err := run.Get(context.Background(), &res); err != nil || res.Text != "whole and kept" {
			t.Fatalf("stream %v: the reply ended %v %q", stream, err, res.Text)
		}
		it := c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if completed := ev.GetEventTime().AsTime(); !lastByte.Before(completed) {
			t.Errorf("stream %v: the caller's last byte at %s, the reply completed at %s: the answer waited for the bookkeeping",
				stream, lastByte.Format(time.StampMicro), completed.Format(time.StampMicro))
		}
	}
	// The bookkeeping happened, once per reply.
	ps, _ := tw.Store.ListProfiles(context.Background(), "main")
	for _, p := range ps {
		if p.ID == "openai:a" && (p.Stats.LastUsed.IsZero() || p.Stats.ErrorCount != 0) {
			t.Errorf("%s: %+v", p.ID, p.Stats)
		}
	}
}
