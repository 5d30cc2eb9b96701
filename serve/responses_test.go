package serve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// A chain whose primary speaks only the Responses API and whose fallback speaks Anthropic's.
const responsesConfig = `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}},
  models: {providers: {openai: {api: "openai-responses", models: [{id: "gpt-5"}]}}}}`

func newResponsesWorld(t *testing.T, rules []fakeprovider.Rule) *turnWorld {
	t.Helper()
	return liveServe(t, testsuite.NewWorld(t, responsesConfig,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-resp-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-resp-b"}}, rules), nil)
}

func (tw *turnWorld) responses() *responses.ResponseService {
	c := tw.openai()
	return &c.Responses
}

var weatherFunction = responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Strict: openai.Bool(false),
	Description: openai.String("the weather in a city"),
	Parameters:  map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}}

func functionOutput(callID, output string) responses.ResponseInputItemUnionParam {
	item := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	item.OfFunctionCallOutput.CallID = openai.String(callID)
	return item
}

// streamEvents reads a Responses stream whole: its events, and whether they were numbered from
// first without a gap.
func streamEvents(t *testing.T, s interface {
	Next() bool
	Current() responses.ResponseStreamEventUnion
	Err() error
}, first int64) []responses.ResponseStreamEventUnion {
	t.Helper()
	var events []responses.ResponseStreamEventUnion
	for s.Next() {
		e := s.Current()
		if want := first + int64(len(events)); e.SequenceNumber != want {
			t.Errorf("event %s numbered %d, want %d", e.Type, e.SequenceNumber, want)
		}
		events = append(events, e)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return events
}

func TestTheResponsesClientRunsAToolStepAndContinuesByPreviousResponseID(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[stream], func(t *testing.T) {
			tw := newResponsesWorld(t, []fakeprovider.Rule{
				{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{
					{ToolCalls: []fakeprovider.ToolCall{{ID: "call_w1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
					{Thinking: "read the output", Text: "It is 4 degrees in Oslo.", Usage: &fakeprovider.Usage{Input: 40, Output: 8, Cached: 16}}}}})
			rs := tw.responses()
			params := responses.ResponseNewParams{Model: "openai/gpt-5", Instructions: openai.String("Be brief."),
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Oslo?")},
				Tools: []responses.ToolUnionParam{weatherFunction}}
			var first *responses.Response
			if stream {
				events := streamEvents(t, rs.NewStreaming(context.Background(), params), 0)
				last := events[len(events)-1]
				if last.Type != "response.completed" {
					t.Fatalf("the stream ended with %s", last.Type)
				}
				r := last.AsResponseCompleted().Response
				first = &r
			} else {
				var err error
				if first, err = rs.New(context.Background(), params); err != nil {
					t.Fatal(err)
				}
			}
			if len(first.Output) != 1 || first.Output[0].Type != "function_call" || first.Output[0].CallID != "call_w1" ||
				first.Output[0].Name != "get_weather" || !strings.HasPrefix(first.ID, "resp_") {
				t.Fatalf("first response %+v", first.Output)
			}
			// The next turn names the first and sends only the tool's output.
			params = responses.ResponseNewParams{Model: "openai/gpt-5", PreviousResponseID: openai.String(first.ID),
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{functionOutput("call_w1", `{"celsius":4}`)}},
				Tools: []responses.ToolUnionParam{weatherFunction}}
			second, err := rs.New(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			if second.OutputText() != "It is 4 degrees in Oslo." || second.Usage.InputTokensDetails.CachedTokens != 16 ||
				second.Usage.OutputTokensDetails.ReasoningTokens != 3 || second.Status != "completed" {
				t.Errorf("second response %q %+v %s", second.OutputText(), second.Usage, second.Status)
			}
			// The provider got the whole conversation: the question, the call and its output.
			var sent struct {
				Input []map[string]any `json:"input"`
			}
			calls := tw.Fake.Calls()
			_ = json.Unmarshal(calls[len(calls)-1].Body, &sent)
			var kinds []string
			for _, it := range sent.Input {
				if it["type"] == "message" || it["type"] == nil {
					kinds = append(kinds, cmpOr(it["role"]))
				} else {
					kinds = append(kinds, cmpOr(it["type"]))
				}
			}
			if got := strings.Join(kinds, " "); !strings.Contains(got, "user function_call function_call_output") {
				t.Errorf("the provider was sent %s", got)
			}
			// A stored response reads back as it ended.
			got, err := rs.Get(context.Background(), second.ID, responses.ResponseGetParams{})
			if err != nil || got.OutputText() != second.OutputText() || got.Status != "completed" {
				t.Errorf("retrieved %v %q", err, got.OutputText())
			}
		})
	}
}

func cmpOr(vs ...any) string {
	for _, v := range vs {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func TestResponsesRefusalsNameTheFieldAndStartNothing(t *testing.T) {
	tw := newResponsesWorld(t, nil)
	for _, c := range []struct{ body, param string }{
		{`{"model":"openai/gpt-5","input":"hi","previous_response_id":"resp_nope"}`, "previous_response_id"},
		{`{"model":"openai/gpt-5","input":[{"type":"function_call_output","call_id":"call_x","output":"1"}]}`, "input[0].call_id"},
		{`{"model":"openai/gpt-5","input":"hi","tools":[{"type":"web_search"}]}`, "tools[0]"},
		{`{"model":"openai/gpt-5","input":[{"type":"telepathy"}]}`, "input[0].type"},
	} {
		resp, body := testsuite.Post(t, tw.h.URL+"/v1/responses", c.body, nil)
		var e struct {
			Error struct {
				Param any `json:"param"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(body), &e)
		if p, _ := e.Error.Param.(string); resp.StatusCode/100 != 4 || p != c.param {
			t.Errorf("%s: %d %s, want a 4xx naming %s", c.body, resp.StatusCode, body, c.param)
		}
	}
	if n := len(tw.Fake.Calls()); n != 0 {
		t.Errorf("%d provider calls", n)
	}
	// An unknown response: the API's 404.
	if resp, body := get(t, tw.h.URL+"/v1/responses/resp_nope"); resp != http.StatusNotFound || !strings.Contains(body, "resp_nope") {
		t.Errorf("unknown id: %d %s", resp, body)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A background reply answers at once; its stream can be read from its start or after any
// event, by the official client, byte for byte the same events; the provider is called once.
func TestABackgroundResponseIsResumedAfterAnyEvent(t *testing.T) {
	tw := newResponsesWorld(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"},
		Respond: []fakeprovider.Response{{Text: "one two three four five six seven eight", ChunkDelayMs: 40}}}})
	rs := tw.responses()
	r, err := rs.New(context.Background(), responses.ResponseNewParams{Model: "openai/gpt-5", Background: openai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("count")}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "queued" && r.Status != "in_progress" {
		t.Fatalf("a background response answered %s", r.Status)
	}
	whole := streamEvents(t, rs.GetStreaming(context.Background(), r.ID, responses.ResponseGetParams{}), 0)
	if last := whole[len(whole)-1]; last.Type != "response.completed" || last.AsResponseCompleted().Response.OutputText() != "one two three four five six seven eight" {
		t.Fatalf("the whole stream ended with %s", last.Type)
	}
	for _, after := range []int64{0, 3, int64(len(whole)) - 2} {
		tail := streamEvents(t, rs.GetStreaming(context.Background(), r.ID, responses.ResponseGetParams{StartingAfter: openai.Int(after)}), after+1)
		if len(tail) != len(whole)-int(after)-1 {
			t.Errorf("after %d: %d events, want %d", after, len(tail), len(whole)-int(after)-1)
			continue
		}
		for i, e := range tail {
			if e.RawJSON() != whole[int(after)+1+i].RawJSON() {
				t.Errorf("after %d: event %d differs:\n%s\n%s", after, e.SequenceNumber, e.RawJSON(), whole[int(after)+1+i].RawJSON())
			}
		}
	}
	if code, body := get(t, tw.h.URL+"/v1/responses/"+r.ID+"?stream=true&starting_after=999"); code != http.StatusBadRequest || !strings.Contains(body, "starting_after") {
		t.Errorf("past the end: %d %s", code, body)
	}
	if n := len(tw.Fake.Calls()); n != 1 {
		t.Errorf("%d provider calls, want 1", n)
	}
}

// A streamed caller that drops its connection resumes where it left off: the reply went on.
func TestAStreamedResponseOutlivesItsCallerAndIsResumed(t *testing.T) {
	tw := newResponsesWorld(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"},
		Respond: []fakeprovider.Response{{Text: "alpha beta gamma delta epsilon zeta eta theta", ChunkDelayMs: 60}}}})
	ctx, hangUp := context.WithCancel(context.Background())
	s := tw.responses().NewStreaming(ctx, responses.ResponseNewParams{Model: "openai/gpt-5",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("greek")}})
	var id string
	var seen int64 = -1
	for s.Next() {
		e := s.Current()
		seen = e.SequenceNumber
		if e.Type == "response.created" {
			id = e.Response.ID
		}
		if e.Type == "response.output_text.delta" && e.Delta == "beta " {
			break
		}
	}
	hangUp()
	_ = s.Close()
	if id == "" || seen < 0 {
		t.Fatalf("no response id (%d events)", seen+1)
	}
	tail := streamEvents(t, tw.responses().GetStreaming(context.Background(), id, responses.ResponseGetParams{StartingAfter: openai.Int(seen)}), seen+1)
	var text strings.Builder
	for _, e := range tail {
		if e.Type == "response.output_text.delta" {
			text.WriteString(e.Delta)
		}
	}
	if last := tail[len(tail)-1]; last.Type != "response.completed" || text.String() != "gamma delta epsilon zeta eta theta" {
		t.Errorf("resumed with %q, ending %s", text.String(), last.Type)
	}
	if n := len(tw.Fake.Calls()); n != 1 {
		t.Errorf("%d provider calls, want 1", n)
	}
}

func TestCancellingABackgroundResponseAbortsItsReply(t *testing.T) {
	tw := newResponsesWorld(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"},
		Respond: []fakeprovider.Response{{DelayMs: 30000, Text: "too late"}}}})
	rs := tw.responses()
	r, err := rs.New(context.Background(), responses.ResponseNewParams{Model: "openai/gpt-5", Background: openai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("wait")}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(tw.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	cancelled := time.Now()
	got, err := rs.Cancel(context.Background(), r.ID)
	if err != nil || got.Status != "cancelled" {
		t.Fatalf("cancel: %v %+v", err, got)
	}
	testsuite.ClosedAndAlone(t, tw.Fake, cancelled, "the cancel")
	if got, err := rs.Get(context.Background(), r.ID, responses.ResponseGetParams{}); err != nil || got.Status != "cancelled" {
		t.Errorf("retrieved %v %+v", err, got)
	}
}

// An agent loop whose Responses-API primary fails mid-loop goes on on an Anthropic fallback and
// back, its tool-call ids intact.
func TestAnAgentLoopCrossesFromResponsesToAnthropicAndBack(t *testing.T) {
	tw := newResponsesWorld(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{
			{ToolCalls: []fakeprovider.ToolCall{{ID: "call_r1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
			// Mid-loop the primary is gone for a turn (a failover with no cooldown to wait out).
			{Status: 404, Body: `{"error":{"message":"The model gpt-5 does not exist","type":"invalid_request_error","code":"model_not_found"}}`},
			{Text: "Both are cold."}}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{
			{ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_a2", Name: "get_weather", Arguments: `{"city":"Bergen"}`}}}}},
	})
	rs := tw.responses()
	tools := []responses.ToolUnionParam{weatherFunction}
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Weather in Oslo and Bergen?", responses.EasyInputMessageRoleUser)}
	var answer string
	for step := 0; step < 4 && answer == ""; step++ {
		r, err := rs.New(context.Background(), responses.ResponseNewParams{Model: "openai/gpt-5", Store: openai.Bool(false), Tools: tools,
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for _, it := range r.Output {
			switch it.Type {
			case "function_call":
				input = append(input, responses.ResponseInputItemParamOfFunctionCall(it.Arguments.OfString, it.CallID, it.Name),
					functionOutput(it.CallID, `{"celsius":4}`))
			case "message":
				answer = r.OutputText()
			}
		}
	}
	if answer != "Both are cold." {
		t.Fatalf("the loop ended with %q", answer)
	}
	// The last call (back on the Responses primary) carried both calls with their ids.
	var sent struct {
		Input []map[string]any `json:"input"`
	}
	calls := tw.Fake.Calls()
	_ = json.Unmarshal(calls[len(calls)-1].Body, &sent)
	ids := map[string]int{}
	for _, it := range sent.Input {
		if id, ok := it["call_id"].(string); ok {
			ids[id]++
		}
	}
	if ids["call_r1"] != 2 || ids["toolu_a2"] != 2 {
		t.Errorf("call ids in the last request: %v", ids)
	}
}

// countingStore counts the reads a front door makes of stored responses and event logs.
type countingStore struct {
	ResponseStore
	reads atomic.Int64
}

func (c *countingStore) GetResponse(ctx context.Context, id string) ([]byte, error) {
	c.reads.Add(1)
	return c.ResponseStore.GetResponse(ctx, id)
}

func (c *countingStore) ReplyLog(ctx context.Context, reply string, from int) (store.ReplyLogPage, error) {
	c.reads.Add(1)
	return c.ResponseStore.ReplyLog(ctx, reply, from)
}

// Resuming 100 replies at once buys nothing again and reads the store no more than once per
// batch of events; a long answer is a few rows, not one per token.
func TestAHundredRepliesResumeAtOnceFromTheStoreAlone(t *testing.T) {
	long := strings.Repeat("token ", 2000)
	counting := &countingStore{}
	tw := liveServe(t, testsuite.NewWorld(t, responsesConfig,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-resume-a"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: long}}}}),
		func(s *server) { counting.ResponseStore = s.responses; s.responses = counting })
	const n = 100
	ids := make([]string, n)
	for i := range ids {
		resp, body := testsuite.Post(t, tw.h.URL+"/v1/responses", `{"model":"openai/gpt-5","input":"talk","background":true}`, nil)
		var r struct{ ID string }
		if err := json.Unmarshal([]byte(body), &r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		ids[i] = r.ID
	}
	batches := 0
	for _, id := range ids {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			page, err := tw.Store.ReplyLog(context.Background(), id, 0)
			if err == nil && page.Done {
				if len(page.Entries) < 1000 || page.Batches > len(page.Entries)/10 {
					t.Fatalf("%s: %d entries in %d rows: a long answer is a few rows", id, len(page.Entries), page.Batches)
				}
				batches += page.Batches
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not finish", id)
			}
		}
	}
	calls := len(tw.Fake.Calls())
	counting.reads.Store(0)
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(tw.h.URL + "/v1/responses/" + id + "?stream=true")
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if !strings.Contains(string(body), "event: response.completed") || strings.Count(string(body), "response.output_text.delta") < 1000 {
				errs <- id + ": " + string(body[:min(len(body), 300)])
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := len(tw.Fake.Calls()); got != calls || calls != n {
		t.Errorf("%d provider calls after resuming, %d before; want %d", got, calls, n)
	}
	if reads := counting.reads.Load(); reads > int64(batches) {
		t.Errorf("%d store reads to resume %d replies of %d batches in all", reads, n, batches)
	} else {
		t.Logf("%d store reads to resume %d replies of %d batches in all", reads, n, batches)
	}
}

// An image and a JSON schema reach the provider from the Responses client, streamed and not;
// the answer comes back as the schema's JSON.
func TestAnImageAndAJSONSchemaThroughTheResponsesDoor(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[stream], func(t *testing.T) {
			tw := newResponsesWorld(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"},
				Respond: []fakeprovider.Response{{Text: `{"animal":"cat"}`}}}})
			png := base64.StdEncoding.EncodeToString(pngOf(64))
			image := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
			image.OfInputImage.ImageURL = openai.String("data:image/png;base64," + png)
			params := responses.ResponseNewParams{Model: "openai/gpt-5", Store: openai.Bool(!stream),
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
					responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
						{OfInputText: &responses.ResponseInputTextParam{Text: "What animal?"}}, image}, responses.EasyInputMessageRoleUser)}},
				Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigParamOfJSONSchema("animal",
					map[string]any{"type": "object", "properties": map[string]any{"animal": map[string]any{"type": "string"}}, "required": []string{"animal"}})}}
			var text string
			if stream {
				events := streamEvents(t, tw.responses().NewStreaming(context.Background(), params), 0)
				r := events[len(events)-1].AsResponseCompleted().Response
				text = r.OutputText()
			} else {
				r, err := tw.responses().New(context.Background(), params)
				if err != nil {
					t.Fatal(err)
				}
				text = r.OutputText()
			}
			if text != `{"animal":"cat"}` {
				t.Errorf("answer %q", text)
			}
			body := tw.lastBody(t)
			raw, _ := json.Marshal(body)
			if !strings.Contains(string(raw), png) || !strings.Contains(string(raw), `"json_schema"`) || !strings.Contains(string(raw), `"animal"`) {
				t.Errorf("the provider was sent %.600s", raw)
			}
		})
	}
}

// Built-in tools go as they are to a chain that speaks only the Responses API, with the caller's
// other fields the API knows.
func TestBuiltinToolsReachAChainOfResponsesCandidates(t *testing.T) {
	tw := liveServe(t, testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["openai/gpt-5-mini"]}}},
	  models: {providers: {openai: {api: "openai-responses", models: [{id: "gpt-5"}, {id: "gpt-5-mini"}]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-builtin-a"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "searched"}}}}), nil)
	resp, body := testsuite.Post(t, tw.h.URL+"/v1/responses", `{"model":"openai/gpt-5","input":"news?","tools":[{"type":"web_search"},`+
		`{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":{"type":"web_search_preview"},"service_tier":"flex"}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "searched") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	sent := tw.lastBody(t)
	raw, _ := json.Marshal(sent["tools"])
	if !strings.Contains(string(raw), `"web_search"`) || !strings.Contains(string(raw), `"name":"f"`) ||
		!strings.Contains(fmt.Sprint(sent["tool_choice"]), "web_search_preview") || sent["service_tier"] != "flex" {
		t.Errorf("the provider was sent tools %s, tool_choice %v, service_tier %v", raw, sent["tool_choice"], sent["service_tier"])
	}
}

// serve's --timeout ends a stored response's wait, not its reply: the caller is told how to
// read it, and reads it once done.
func TestServesTimeoutLeavesAStoredResponseRunning(t *testing.T) {
	tw := liveServe(t, testsuite.NewWorld(t, responsesConfig,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-slow-a"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{DelayMs: 1500, Text: "late but whole"}}}}),
		func(s *server) { s.timeout = 300 * time.Millisecond })
	resp, body := testsuite.Post(t, tw.h.URL+"/v1/responses", `{"model":"openai/gpt-5","input":"slow"}`, nil)
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	id, _, _ := strings.Cut(e.Error.Message[max(0, strings.Index(e.Error.Message, "resp_")):], " ")
	if resp.StatusCode != http.StatusGatewayTimeout || e.Error.Code != "reply_still_running" || !strings.HasPrefix(id, "resp_") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := tw.responses().Get(context.Background(), id, responses.ResponseGetParams{})
		if err == nil && r.Status == "completed" {
			if r.OutputText() != "late but whole" {
				t.Errorf("read back %q", r.OutputText())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done: %v %+v", err, r)
		}
	}
}
