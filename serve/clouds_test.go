package serve

import (
	"testing"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/openai/openai-go/v3"
)

// Each cloud's API runs an agent's tool step through serve, for a caller that streams and one that
// does not: the official OpenAI client asks, the fake speaks Bedrock's event stream, Gemini's and
// Vertex AI's (Gemini and Claude) wires, and the tool call and the follow-up answer come back whole.
func TestEachCloudRunsAToolStepThroughServe(t *testing.T) {
	rules := []fakeprovider.Rule{}
	for _, p := range []string{"bedrock", "gemini", "vertex"} {
		rules = append(rules, fakeprovider.Rule{Match: fakeprovider.Match{Provider: p}, Respond: []fakeprovider.Response{
			toolCallReply("call_w1", "get_weather", `{"city":"Paris"}`), {Text: "It is 18 degrees in Paris.", Usage: &fakeprovider.Usage{Input: 60, Output: 7}},
			toolCallReply("call_w1", "get_weather", `{"city":"Paris"}`), {Text: "It is 18 degrees in Paris.", Usage: &fakeprovider.Usage{Input: 60, Output: 7}},
			toolCallReply("call_w1", "get_weather", `{"city":"Paris"}`), {Text: "It is 18 degrees in Paris.", Usage: &fakeprovider.Usage{Input: 60, Output: 7}},
			toolCallReply("call_w1", "get_weather", `{"city":"Paris"}`), {Text: "It is 18 degrees in Paris.", Usage: &fakeprovider.Usage{Input: 60, Output: 7}},
		}})
	}
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"}},
		models: {providers: {bedrock: {api: "bedrock-converse", region: "us-east-1"}, gemini: {api: "google-gemini"},
			vertex: {api: "vertex-ai", region: "us-east5", project: "acme-ai"}}}}`,
		[]store.Credential{{ID: "gemini:a", Provider: "gemini", Type: "api_key", Key: "AIza-serve-gemini-key"}}, rules)
	w.AddCloudProfiles(t)
	tw := liveServe(t, w, nil)
	client := tw.openai()
	for _, model := range []string{"bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", "gemini/gemini-2.5-pro", "vertex/gemini-2.5-pro", "vertex/claude-sonnet-4-5@20250929"} {
		for _, stream := range []bool{false, true} {
			t.Run(model+map[bool]string{false: " whole", true: " stream"}[stream], func(t *testing.T) {
				params := openai.ChatCompletionNewParams{
					Model: model,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are terse."),
						openai.UserMessage("What is the weather in Paris?")},
					Tools:       []openai.ChatCompletionToolUnionParam{weatherTool},
					Temperature: openai.Float(0.3),
				}
				msg, finish, usage := complete(t, client, params, stream)
				if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "call_w1" || msg.ToolCalls[0].Function.Name != "get_weather" ||
					msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || finish != "tool_calls" {
					t.Fatalf("tool call: %+v finish %q", msg.ToolCalls, finish)
				}
				if usage.PromptTokens != 40 || usage.CompletionTokens != 9 {
					t.Errorf("usage %+v, want the provider's 40/9", usage)
				}
				params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage(`{"celsius":18}`, "call_w1"))
				msg, finish, _ = complete(t, client, params, stream)
				if msg.Content != "It is 18 degrees in Paris." || finish != "stop" {
					t.Errorf("answer %q finish %q", msg.Content, finish)
				}
				calls := tw.Fake.Calls()
				if last := calls[len(calls)-1]; last.Tools != 1 || last.Profile == "" || last.Provider+"/"+last.Model != model {
					t.Errorf("the follow-up went to %s/%s (profile %q, %d tools): want %s, the tool offered, under the profile",
						last.Provider, last.Model, last.Profile, last.Tools, model)
				}
			})
		}
	}
}
