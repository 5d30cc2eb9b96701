package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

func post(t *testing.T, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func TestRulesMatchPerCallAndTheLastAnswerRepeats(t *testing.T) {
	fp := New([]Rule{
		{Match: Match{Provider: "openai", Model: "gpt-5", Profile: "openai:a"}, Respond: []Response{{Status: 429, Body: `{"error":{"message":"slow"}}`}, {Text: "fine now"}}},
	}, map[string]string{"sk-a": "openai:a", "sk-b": "openai:b"})
	if err := fp.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	url := fp.BaseURL("openai", false) + "/chat/completions"
	body := `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`
	a := map[string]string{"Authorization": "Bearer sk-a"}
	if resp, _ := post(t, url, body, a); resp.StatusCode != 429 {
		t.Errorf("first call %d", resp.StatusCode)
	}
	for i := 0; i < 2; i++ {
		resp, data := post(t, url, body, a)
		if resp.StatusCode != 200 || !strings.Contains(data, `"content":"fine now"`) {
			t.Errorf("call %d: %d %s", i+2, resp.StatusCode, data)
		}
	}
	// Another profile matches no rule and gets the default answer.
	if _, data := post(t, url, body, map[string]string{"Authorization": "Bearer sk-b"}); !strings.Contains(data, `"content":"ok"`) {
		t.Errorf("unmatched call: %s", data)
	}
	// Anthropic's format, not streaming.
	_, data := post(t, fp.BaseURL("anthropic", true)+"/v1/messages", `{"model":"claude","max_tokens":5,"messages":[]}`, map[string]string{"x-api-key": "sk-b"})
	if !strings.Contains(data, `"type":"message"`) || !strings.Contains(data, `"text":"ok"`) {
		t.Errorf("anthropic answer %s", data)
	}
	calls := fp.Calls()
	if len(calls) != 5 || calls[0].Outcome != "status 429" || calls[1].Outcome != "text" || calls[3].Profile != "openai:b" || calls[4].Provider != "anthropic" {
		t.Errorf("calls %+v", calls)
	}

	// Re-scripted at run time through the admin endpoint.
	rules, _ := json.Marshal([]Rule{{Respond: []Response{{Text: "rescripted"}}}})
	req, _ := http.NewRequest(http.MethodPut, fp.URL()+"/_fake/script", bytes.NewReader(rules))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("re-script: %v %v", resp, err)
	}
	if _, data := post(t, url, body, a); !strings.Contains(data, "rescripted") {
		t.Errorf("after re-script: %s", data)
	}
}

func TestParseScriptNamesWhatIsWrong(t *testing.T) {
	for src, want := range map[string]string{
		`[{"match":{},"respond":[]}]`:               "no respond list",
		`[{"respond":[{"status":999}]}]`:            "status 999",
		`{"rules": [{"respond":[{"delayMs":-1}]}]}`: "negative delay",
		`[{"respond": }]`:                           "script:",
		`[{"respond":[{"text":"x"}]},{"respond":[{"text":"y"},{"toolCalls":[{"name":"f","arguments":"{\"a\":"}]}]}]`: "rule 1 respond[1]: tool call 0 (f): arguments are not valid JSON",
		`[{"respond":[{"toolCalls":[{"arguments":"{}"}]}]}]`:                                                         "rule 0 respond[0]: tool call 0 has no name",
		`[{"respond":[{"usage":{"input":5,"output":1,"cached":6}}]}]`:                                                "cached is part of input",
		`[{"respond":[{"text":"x"}]},{"respond":[{"text":"y"},{"prefill":"honor"}]}]`:                                "rule 1 respond[1]: prefill \"honor\" is not",
	} {
		if _, err := ParseScript(strings.NewReader(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want …%s…", src, err, want)
		}
	}
	rules, err := ParseScript(strings.NewReader(`{"name":"a scenario","provider":[{"respond":[{"text":"x"}]}]}`))
	if err != nil || len(rules) != 1 {
		t.Errorf("a scenario's provider rules: %v %v", rules, err)
	}
}

// The scripted tool calls: the first one's arguments hold a multi-byte character across a piece
// boundary, the second one's are left out ({}).
var toolCalls = []ToolCall{
	{ID: "call_weather_1", Name: "get_weather", Arguments: `{"placename":"Zürich","days":[1,2,3],"unit":"celsius"}`},
	{ID: "call_time_2", Name: "get_time"},
}

func TestArgumentPiecesNeverSplitACharacter(t *testing.T) {
	args := toolCalls[0].Arguments
	pieces := argPieces(args)
	if strings.Join(pieces, "") != args || pieces[0] != `{"placen` || pieces[1] != `ame":"Zü` || pieces[2] != `rich","d` {
		t.Errorf("%q", pieces)
	}
}

func startFake(t *testing.T, rules []Rule) *Server {
	t.Helper()
	fp := New(rules, map[string]string{"sk-test": "p:test"})
	if err := fp.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fp.Close() })
	return fp
}

func openAIClient(fp *Server) openai.Client {
	return openai.NewClient(ooption.WithBaseURL(fp.BaseURL("openai", false)), ooption.WithAPIKey("sk-test"), ooption.WithMaxRetries(0))
}

func anthropicClient(fp *Server) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(fp.BaseURL("anthropic", true)), aoption.WithAPIKey("sk-test"), aoption.WithMaxRetries(0))
}

func openAIParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:         "gpt-5",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("weather in Zürich?")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		Tools: []openai.ChatCompletionToolUnionParam{
			openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather"}),
			openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time"}),
		},
	}
}

func anthropicParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-x",
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather in Zürich?"))},
		Tools: []anthropic.ToolUnionParam{
			anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{}, "get_weather"),
			anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{}, "get_time"),
		},
	}
}

func TestOpenAIToolCallsReachTheSDK(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "whole", true: "stream"}[stream]
		t.Run(name, func(t *testing.T) {
			fp := startFake(t, []Rule{{Respond: []Response{{Text: "let me check", ToolCalls: toolCalls, Usage: &Usage{Input: 100, Output: 20, Cached: 64}}}}})
			client := openAIClient(fp)
			var got openai.ChatCompletion
			if stream {
				s := client.Chat.Completions.NewStreaming(context.Background(), openAIParams())
				acc := openai.ChatCompletionAccumulator{}
				for s.Next() {
					if !acc.AddChunk(s.Current()) {
						t.Fatalf("the accumulator refused %s", s.Current().RawJSON())
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				got = acc.ChatCompletion
			} else {
				resp, err := client.Chat.Completions.New(context.Background(), openAIParams())
				if err != nil {
					t.Fatal(err)
				}
				got = *resp
			}
			if len(got.Choices) != 1 {
				t.Fatalf("choices %+v", got.Choices)
			}
			c := got.Choices[0]
			if c.Message.Content != "let me check" || c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 2 {
				t.Fatalf("message %+v finish %q", c.Message, c.FinishReason)
			}
			for i, want := range []ToolCall{toolCalls[0], {ID: "call_time_2", Name: "get_time", Arguments: "{}"}} {
				tc := c.Message.ToolCalls[i]
				if tc.ID != want.ID || tc.Type != "function" || tc.Function.Name != want.Name || tc.Function.Arguments != want.Arguments {
					t.Errorf("tool call %d: %s %s %s %q", i, tc.ID, tc.Type, tc.Function.Name, tc.Function.Arguments)
				}
			}
			if u := got.Usage; u.PromptTokens != 100 || u.CompletionTokens != 20 || u.PromptTokensDetails.CachedTokens != 64 {
				t.Errorf("usage %+v", u)
			}
			calls := fp.Calls()
			if len(calls) != 1 || calls[0].Outcome != "tool calls" || calls[0].Tools != 2 || calls[0].Stream != stream {
				t.Errorf("calls %+v", calls)
			}
			var body struct {
				Messages []struct{ Role string } `json:"messages"`
			}
			if err := json.Unmarshal(calls[0].Body, &body); err != nil || len(body.Messages) != 2 || body.Messages[1].Role != "user" {
				t.Errorf("recorded body %s: %v", calls[0].Body, err)
			}
		})
	}
}

func TestOpenAIToolCallWithoutTextHasNullContent(t *testing.T) {
	fp := startFake(t, []Rule{{Respond: []Response{{ToolCalls: toolCalls[:1], Finish: "function_call"}}}})
	_, data := post(t, fp.BaseURL("openai", false)+"/chat/completions", `{"model":"m","messages":[]}`, nil)
	if !strings.Contains(data, `"content":null`) || !strings.Contains(data, `"finish_reason":"function_call"`) {
		t.Errorf("%s", data)
	}
	_, data = post(t, fp.BaseURL("openai", false)+"/chat/completions", `{"model":"m","stream":true,"messages":[]}`, nil)
	if strings.Contains(data, `"content"`) || !strings.Contains(data, `"finish_reason":"function_call"`) {
		t.Errorf("%s", data)
	}
}

func TestAnthropicToolCallsAndThinkingReachTheSDK(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "whole", true: "stream"}[stream]
		t.Run(name, func(t *testing.T) {
			fp := startFake(t, []Rule{{Respond: []Response{{Thinking: "the user wants weather", Signature: "sig-abc", Text: "let me check",
				ToolCalls: toolCalls, Usage: &Usage{Input: 100, Output: 20, Cached: 64}}}}})
			client := anthropicClient(fp)
			var got anthropic.Message
			if stream {
				s := client.Messages.NewStreaming(context.Background(), anthropicParams())
				for s.Next() {
					if err := got.Accumulate(s.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				resp, err := client.Messages.New(context.Background(), anthropicParams())
				if err != nil {
					t.Fatal(err)
				}
				got = *resp
			}
			if got.StopReason != "tool_use" || len(got.Content) != 4 {
				t.Fatalf("stop %q content %+v", got.StopReason, got.Content)
			}
			if b := got.Content[0]; b.Type != "thinking" || b.Thinking != "the user wants weather" || b.Signature != "sig-abc" {
				t.Errorf("thinking block %+v", b)
			}
			if b := got.Content[1]; b.Type != "text" || b.Text != "let me check" {
				t.Errorf("text block %+v", b)
			}
			for i, want := range []ToolCall{toolCalls[0], {ID: "call_time_2", Name: "get_time", Arguments: "{}"}} {
				b := got.Content[2+i]
				var gotArgs, wantArgs any
				_ = json.Unmarshal(b.Input, &gotArgs)
				_ = json.Unmarshal([]byte(want.Arguments), &wantArgs)
				if b.Type != "tool_use" || b.ID != want.ID || b.Name != want.Name || !jsonEqual(gotArgs, wantArgs) {
					t.Errorf("tool block %d: %s %s %s %s", i, b.Type, b.ID, b.Name, b.Input)
				}
			}
			if stream && string(got.Content[2].Input) != toolCalls[0].Arguments {
				t.Errorf("streamed input %s, want the exact arguments", got.Content[2].Input)
			}
			if u := got.Usage; u.InputTokens != 36 || u.CacheReadInputTokens != 64 || u.OutputTokens != 20 {
				t.Errorf("usage %+v", u)
			}
			if calls := fp.Calls(); len(calls) != 1 || calls[0].Tools != 2 || calls[0].Provider != "anthropic" || len(calls[0].Body) == 0 {
				t.Errorf("calls %+v", calls)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestAnthropicToolCallAloneStartsAtBlockZero(t *testing.T) {
	fp := startFake(t, []Rule{{Respond: []Response{{ToolCalls: toolCalls[1:]}}}})
	client := anthropicClient(fp)
	s := client.Messages.NewStreaming(context.Background(), anthropicParams())
	var got anthropic.Message
	for s.Next() {
		if err := got.Accumulate(s.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if s.Err() != nil || len(got.Content) != 1 || got.Content[0].Type != "tool_use" || got.Content[0].ID != "call_time_2" || string(got.Content[0].Input) != "{}" {
		t.Errorf("%v %+v", s.Err(), got.Content)
	}
}

func TestFailureKnobsCountToolCallChunksAfterTheText(t *testing.T) {
	// "a b " is two text chunks; get_time's call is its opening chunk and one piece ("{}").
	three := 3
	fp := startFake(t, []Rule{{Respond: []Response{{Text: "a b ", ToolCalls: toolCalls[1:], CutAfterChunks: &three}}}})
	_, data := post(t, fp.BaseURL("openai", false)+"/chat/completions", `{"model":"m","stream":true,"messages":[]}`, nil)
	if !strings.Contains(data, `"name":"get_time"`) || strings.Contains(data, `"arguments":"{}"`) || strings.Contains(data, "finish_reason\":\"") || strings.Contains(data, "[DONE]") {
		t.Errorf("cut after the opening chunk: %s", data)
	}
	_, data = post(t, fp.BaseURL("anthropic", true)+"/v1/messages", `{"model":"m","stream":true,"messages":[]}`, nil)
	if !strings.Contains(data, `"type":"tool_use"`) || strings.Contains(data, "input_json_delta") || strings.Contains(data, "message_stop") {
		t.Errorf("cut after the opening chunk: %s", data)
	}
	if calls := fp.Calls(); calls[0].Outcome != "cut after 3" {
		t.Errorf("outcome %q", calls[0].Outcome)
	}
}

func TestEchoAnswersWithTheMessagesReceived(t *testing.T) {
	fp := startFake(t, []Rule{{Respond: []Response{{Echo: true, Text: "ignored"}}}})
	// OpenAI, streaming, through the SDK: the text is the messages array exactly as sent.
	client := openAIClient(fp)
	s := client.Chat.Completions.NewStreaming(context.Background(), openAIParams())
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	var sent struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(fp.Calls()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if text := acc.Choices[0].Message.Content; text != string(sent.Messages) || !strings.Contains(text, "weather in Zürich?") {
		t.Errorf("echo %q, sent %s", text, sent.Messages)
	}
	// Anthropic, whole, raw bytes kept (spacing and all).
	raw := `{"model":"m","max_tokens":5,"messages": [ {"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}]} ]}`
	_, data := post(t, fp.BaseURL("anthropic", true)+"/v1/messages", raw, nil)
	var msg struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal([]byte(data), &msg); err != nil || len(msg.Content) != 1 ||
		msg.Content[0].Text != `[ {"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}]} ]` {
		t.Errorf("echo %s: %v", data, err)
	}
	if calls := fp.Calls(); len(calls) != 2 || calls[1].Outcome != "echo" {
		t.Errorf("calls %+v", calls)
	}
}

func TestCallsEndpointLeavesBodiesOutUnlessAsked(t *testing.T) {
	fp := startFake(t, nil)
	post(t, fp.BaseURL("openai", false)+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"secret-ish"}],"tools":[{},{},{}]}`, nil)
	get := func(query string) []Call {
		resp, err := http.Get(fp.URL() + "/_fake/calls" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var calls []Call
		if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil {
			t.Fatal(err)
		}
		return calls
	}
	if calls := get(""); len(calls) != 1 || calls[0].Body != nil || calls[0].Tools != 3 {
		t.Errorf("without bodies: %+v", calls)
	}
	if calls := get("?bodies=1"); len(calls) != 1 || !strings.Contains(string(calls[0].Body), "secret-ish") {
		t.Errorf("with bodies: %+v", calls)
	}
	if calls := fp.Calls(); len(calls[0].Body) == 0 {
		t.Error("Calls() keeps bodies")
	}
}

func TestLargeBodiesAreReadWhole(t *testing.T) {
	fp := startFake(t, []Rule{{Respond: []Response{{Text: "seen"}}}})
	big := strings.Repeat("A", 14<<20) // a 10 MB image in base64, and some
	resp, data := post(t, fp.BaseURL("openai", false)+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+big+`"}]}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(data, "seen") || len(fp.Calls()[0].Body) < 14<<20 {
		t.Errorf("%d %.200s", resp.StatusCode, data)
	}
	resp, _ = post(t, fp.BaseURL("openai", false)+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+strings.Repeat("A", MaxBody)+`"}]}`, nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || len(fp.Calls()) != 1 {
		t.Errorf("over the limit: %d", resp.StatusCode)
	}
}

// answer is what a caller reads from a healthy answer on either wire, streamed or not.
type answer struct {
	Text     string
	Tools    []string // tool call names, in order
	Finished bool     // a finish (stop) reason arrived
	Output   int      // usage's output tokens, -1 when no usage arrived
}

type wireMessage struct {
	Content   *string `json:"content"`
	ToolCalls []struct {
		Function struct{ Name string } `json:"function"`
	} `json:"tool_calls"`
}

// wireObject is one shape for every object of both wires: OpenAI's completions and chunks,
// Anthropic's message and events.
type wireObject struct {
	Choices []struct {
		Delta        wireMessage `json:"delta"`
		Message      wireMessage `json:"message"`
		FinishReason *string     `json:"finish_reason"`
	} `json:"choices"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
		Name string `json:"name"`
	} `json:"content"`
	StopReason   string `json:"stop_reason"`
	ContentBlock struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
		OutputTokens     int `json:"output_tokens"`
	} `json:"usage"`
}

// readAnswer reads an answer body: one JSON object, or an event stream of them.
func readAnswer(t *testing.T, data string, stream bool) answer {
	t.Helper()
	objects := []string{data}
	if stream {
		objects = nil
		for _, line := range strings.Split(data, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
				objects = append(objects, d)
			}
		}
	}
	a := answer{Output: -1}
	for _, o := range objects {
		var obj wireObject
		if err := json.Unmarshal([]byte(o), &obj); err != nil {
			t.Fatalf("%v: %s", err, o)
		}
		for _, c := range obj.Choices {
			for _, m := range []wireMessage{c.Delta, c.Message} {
				if m.Content != nil {
					a.Text += *m.Content
				}
				for _, tc := range m.ToolCalls {
					if tc.Function.Name != "" { // later chunks of a call carry only arguments
						a.Tools = append(a.Tools, tc.Function.Name)
					}
				}
			}
			a.Finished = a.Finished || c.FinishReason != nil && *c.FinishReason != ""
		}
		for _, b := range obj.Content {
			switch b.Type {
			case "text":
				a.Text += b.Text
			case "tool_use":
				a.Tools = append(a.Tools, b.Name)
			}
		}
		if obj.Delta.Type == "text_delta" {
			a.Text += obj.Delta.Text
		}
		if obj.ContentBlock.Type == "tool_use" {
			a.Tools = append(a.Tools, obj.ContentBlock.Name)
		}
		a.Finished = a.Finished || obj.StopReason != "" || obj.Delta.StopReason != ""
		if u := obj.Usage; u != nil {
			a.Output = u.CompletionTokens + u.OutputTokens
		}
	}
	return a
}

// The scripted answer a continuation is checked against.
const foxText = "The quick brown fox jumps over the lazy dog."

// Requests as a continuation sends them: the question, the answer so far, and on the OpenAI wire
// maybe an instruction to continue.
const (
	question     = `{"role":"user","content":"say the pangram"}`
	instruction  = `{"role":"user","content":"Continue your previous answer exactly where it stopped, without repeating anything."}`
	oaiPrefix    = `{"role":"assistant","content":"The quick brown","prefix":true}`
	oaiParts     = `{"role":"assistant","content":[{"type":"text","text":"The quick "},{"type":"text","text":"brown"}],"prefix":true}`
	oaiNoPrefix  = `{"role":"assistant","content":"The quick brown"}`
	oaiNotPrefix = `{"role":"assistant","content":"The slow brown","prefix":true}`
	antString    = `{"role":"assistant","content":"The quick brown "}`
	antBlocks    = `{"role":"assistant","content":[{"type":"thinking","thinking":"The pangram","signature":"sig"},{"type":"text","text":"The quick brown"}]}`
	antNotPrefix = `{"role":"assistant","content":"The slow brown"}`
)

func TestPrefillIsHonouredIgnoredOrRejectedAsScripted(t *testing.T) {
	two := 2
	const rest = " fox jumps over the lazy dog."
	for _, tc := range []struct {
		name      string
		anthropic bool
		resp      Response
		messages  []string
		want      string // the text answered (streamed answers are cut as the Response says)
		wantCut   string // the streamed text when the Response cuts the stream
		tools     []string
		prefill   string // the call record's
		rejected  bool
	}{
		{name: "openai honours prefix true", resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, oaiPrefix}, want: rest, prefill: "honoured"},
		{name: "openai honours text parts", resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, oaiParts}, want: rest, prefill: "honoured"},
		{name: "openai honour without prefix starts over", resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, oaiNoPrefix}, want: foxText, prefill: "ignored"},
		{name: "openai honour of no prefix of Text starts over", resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, oaiNotPrefix}, want: foxText, prefill: "ignored"},
		{name: "openai honour does not follow an instruction", resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, oaiNoPrefix, instruction}, want: foxText},
		{name: "openai honoured continuation is cut and tool calls follow", resp: Response{Text: foxText, ToolCalls: toolCalls[1:], Prefill: "honour", CutAfterChunks: &two},
			messages: []string{question, oaiPrefix}, want: rest, wantCut: " fox ", tools: []string{"get_time"}, prefill: "honoured"},
		{name: "openai rejects a prefill", resp: Response{Text: foxText, Prefill: "reject"}, messages: []string{question, oaiPrefix}, prefill: "rejected", rejected: true},
		{name: "openai rejects an assistant message without prefix", resp: Response{Text: foxText, Prefill: "reject", CutAfterChunks: &two}, messages: []string{question, oaiNoPrefix}, prefill: "rejected", rejected: true},
		{name: "openai reject answers a request without prefill", resp: Response{Text: foxText, Prefill: "reject"}, messages: []string{question, oaiNoPrefix, instruction}, want: foxText},
		{name: "openai ignores by default", resp: Response{Text: foxText}, messages: []string{question, oaiPrefix}, want: foxText, prefill: "ignored"},
		{name: "openai ignores an instruction", resp: Response{Text: foxText, Prefill: "ignore"}, messages: []string{question, oaiNoPrefix, instruction}, want: foxText},

		{name: "anthropic honours string content", anthropic: true, resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, antString}, want: rest, prefill: "honoured"},
		{name: "anthropic honours text blocks after thinking", anthropic: true, resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, antBlocks}, want: rest, prefill: "honoured"},
		{name: "anthropic honour of no prefix of Text starts over", anthropic: true, resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, antNotPrefix}, want: foxText, prefill: "ignored"},
		{name: "anthropic honour does not follow an instruction", anthropic: true, resp: Response{Text: foxText, Prefill: "honour"}, messages: []string{question, antString, instruction}, want: foxText},
		{name: "anthropic honoured continuation is cut and tool calls follow", anthropic: true, resp: Response{Text: foxText, ToolCalls: toolCalls[1:], Prefill: "honour", CutAfterChunks: &two},
			messages: []string{question, antString}, want: rest, wantCut: " fox ", tools: []string{"get_time"}, prefill: "honoured"},
		{name: "anthropic rejects a prefill", anthropic: true, resp: Response{Text: foxText, Prefill: "reject"}, messages: []string{question, antBlocks}, prefill: "rejected", rejected: true},
		{name: "anthropic reject answers a request without prefill", anthropic: true, resp: Response{Text: foxText, Prefill: "reject"}, messages: []string{question}, want: foxText},
		{name: "anthropic ignores by default", anthropic: true, resp: Response{Text: foxText}, messages: []string{question, antString}, want: foxText, prefill: "ignored"},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "/whole", true: "/stream"}[stream], func(t *testing.T) {
				fp := startFake(t, []Rule{{Respond: []Response{tc.resp}}})
				url := fp.BaseURL("openai", false) + "/chat/completions"
				if tc.anthropic {
					url = fp.BaseURL("anthropic", true) + "/v1/messages"
				}
				body := fmt.Sprintf(`{"model":"m","max_tokens":100,"stream":%t,"messages":[%s]}`, stream, strings.Join(tc.messages, ","))
				resp, data := post(t, url, body, nil)
				calls := fp.Calls()
				if len(calls) != 1 || calls[0].Prefill != tc.prefill {
					t.Errorf("calls %+v, want prefill %q", calls, tc.prefill)
				}
				if tc.rejected {
					want := PrefillRejectionOpenAI
					if tc.anthropic {
						want = PrefillRejectionAnthropic
					}
					if resp.StatusCode != 400 || data != want || resp.Header.Get("Content-Type") != "application/json" {
						t.Errorf("%d %s %s, want 400 %s", resp.StatusCode, resp.Header.Get("Content-Type"), data, want)
					}
					if len(calls) == 1 && calls[0].Outcome != "prefill rejected" {
						t.Errorf("outcome %q", calls[0].Outcome)
					}
					return
				}
				if resp.StatusCode != 200 {
					t.Fatalf("%d %s", resp.StatusCode, data)
				}
				got := readAnswer(t, data, stream)
				if stream && tc.wantCut != "" {
					if got.Text != tc.wantCut || got.Finished || len(got.Tools) != 0 || got.Output != -1 {
						t.Errorf("cut %+v, want %q unfinished", got, tc.wantCut)
					}
					return
				}
				// Usage counts the continuation's chunks, as it would the Text's.
				output := Response{Text: tc.want, ToolCalls: tc.resp.ToolCalls}.countedChunks()
				if got.Text != tc.want || !got.Finished || strings.Join(got.Tools, ",") != strings.Join(tc.tools, ",") || got.Output != output {
					t.Errorf("answer %+v, want %q tools %q output %d", got, tc.want, tc.tools, output)
				}
			})
		}
	}
}

func TestAMarkedLoadGetsAnswersItCanCheckOneByOne(t *testing.T) {
	fp := New([]Rule{
		{Match: Match{Provider: "ok"}, Respond: []Response{{Text: "answer to {mark} done", ToolCalls: []ToolCall{{Name: "lookup", Arguments: `{"q":"{mark}"}`}}}}},
		{Match: Match{Provider: "bad"}, Respond: []Response{{Status: 429, Body: `{"error":{"message":"slow"}}`}}},
	}, nil)
	fp.Mark = regexp.MustCompile(`r-[0-9]+\.[0-9]+`)
	if err := fp.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	// A session's history holds an earlier mark: the last one is the call's.
	body := `{"model":"m","messages":[{"role":"user","content":"chaos r-1.1"},{"role":"assistant","content":"answer to r-1.1 done"},{"role":"user","content":"chaos r-2.1"}]}`
	_, data := post(t, fp.BaseURL("ok", false)+"/chat/completions", body, nil)
	if !strings.Contains(data, `"content":"answer to r-2.1 done"`) || !strings.Contains(data, `{\"q\":\"r-2.1\"}`) {
		t.Errorf("marked answer: %s", data)
	}
	post(t, fp.BaseURL("bad", false)+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"chaos r-3.2"}]}`, nil)
	calls := fp.Calls()
	if len(calls) != 2 || calls[0].Mark != "r-2.1" || !calls[0].Delivered || calls[1].Mark != "r-3.2" || calls[1].Delivered {
		t.Errorf("calls: %+v", calls)
	}
}
