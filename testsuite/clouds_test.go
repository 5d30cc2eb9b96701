package testsuite_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
)

// Chains across clouds, on the real server, each cloud's wire spoken by the fake provider.

// toolTurn is a turn that offers a weather tool, as an agent's tool loop sends it.
func toolTurn() provider.Turn {
	return provider.Turn{
		Messages: []provider.Message{{Role: provider.RoleSystem, Content: []provider.Part{provider.TextPart("You are terse.")}},
			{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart("Weather in Paris?")}}},
		Tools: []provider.Tool{{Name: "weather", Description: "the weather in a city",
			Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
	}
}

// toolCallsOf decodes a result's tool calls.
func toolCallsOf(t *testing.T, res policy.ReplyResult) []provider.ToolCall {
	t.Helper()
	calls, _, err := provider.DecodeAnswerContent(res.ToolCalls, res.Reasoning)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

func TestAChainFromOpenAIToAzureFailsOverOnInsufficientQuota(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-4o", fallbacks: ["azure/gpt-4o"]}}},
		models: {providers: {azure: {api: "azure-openai", baseUrl: "https://acme.openai.azure.com", models: [{id: "gpt-4o", deployment: "prod-4o"}]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-cloud-openai"},
			{ID: "azure:a", Provider: "azure", Type: "api_key", Key: "sk-cloud-azure"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 429,
				Body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`}}},
			{Match: fakeprovider.Match{Provider: "azure"}, Respond: []fakeprovider.Response{{ToolCalls: []fakeprovider.ToolCall{{ID: "call_w1", Name: "weather", Arguments: `{"city":"Paris"}`}}}}},
		})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	req, err := workflows.WithTurn(context.Background(), w.Store, workflows.ReplyRequest{Agent: "main", Session: "cloud-1"}, toolTurn())
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := reply(t, c, tq, req)
	if err != nil {
		t.Fatal(err)
	}
	// OpenAI's insufficient_quota at 429 is a rate limit in the seeds' words ("exceeded your
	// current quota"): the chain moves on at once.
	if res.Served.Provider != "azure" || len(res.Attempts) != 2 || res.Attempts[0].Code != "insufficient_quota" || res.Attempts[0].Reason != policy.ReasonRateLimit {
		t.Fatalf("served %+v, attempts %+v", res.Served, res.Attempts)
	}
	if calls := toolCallsOf(t, res); len(calls) != 1 || calls[0].ID != "call_w1" || calls[0].Name != "weather" || calls[0].Arguments != `{"city":"Paris"}` {
		t.Errorf("tool calls %+v", calls)
	}
	calls := w.Fake.Calls()
	if last := calls[len(calls)-1]; last.Provider != "azure" || last.Model != "prod-4o" || last.Tools != 1 {
		t.Errorf("Azure's call: %+v (want the deployment, with the tool)", last)
	}
}

// The same Claude on three clouds: Anthropic overloaded (529), Bedrock throttled, Vertex AI
// answers with the tool call intact. Each cloud authenticates its own way: an API key, a SigV4
// key pair, a service account traded for a token at the fake's token endpoint.
func TestTheSameModelOnThreeCloudsAnswersFromTheThird(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "anthropic/claude-sonnet-4-5",
			fallbacks: ["bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", "vertex/claude-sonnet-4-5@20250929"]}}},
		models: {providers: {bedrock: {api: "bedrock-converse", region: "us-east-1"},
			vertex: {api: "vertex-ai", region: "us-east5", project: "acme-ai"}}}}`,
		[]store.Credential{{ID: "anthropic:a", Provider: "anthropic", Type: "api_key", Key: "sk-ant-three-clouds"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Status: 529,
				Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}}},
			{Match: fakeprovider.Match{Provider: "bedrock"}, Respond: []fakeprovider.Response{{Status: 429,
				Headers: map[string]string{"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"},
				Body:    `{"message":"Too many requests, please wait before trying again."}`}}},
			{Match: fakeprovider.Match{Provider: "vertex"}, Respond: []fakeprovider.Response{{Text: "Checking.",
				ToolCalls: []fakeprovider.ToolCall{{ID: "toolu_v1", Name: "weather", Arguments: `{"city":"Paris"}`}}}}},
		})
	ctx := context.Background()
	w.AddCloudProfiles(t)
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	req, err := workflows.WithTurn(ctx, w.Store, workflows.ReplyRequest{Agent: "main", Session: "three-clouds"}, toolTurn())
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := reply(t, c, tq, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(res.Attempts); len(got) != 3 || res.Attempts[0].Reason != policy.ReasonOverloaded || res.Attempts[1].Reason != policy.ReasonRateLimit ||
		res.Served != (policy.Served{Provider: "vertex", Model: "claude-sonnet-4-5@20250929", Profile: "vertex:sa"}) {
		t.Fatalf("attempts %v, served %+v", got, res.Served)
	}
	if calls := toolCallsOf(t, res); len(calls) != 1 || calls[0].ID != "toolu_v1" || calls[0].Name != "weather" || calls[0].Arguments != `{"city":"Paris"}` {
		t.Errorf("tool calls %+v, text %q", calls, res.Text)
	}
	byProvider := map[string]fakeprovider.Call{}
	for _, call := range w.Fake.Calls() {
		byProvider[call.Provider] = call
	}
	if b := byProvider["bedrock"]; b.Profile != "bedrock:keys" || b.Model != "anthropic.claude-sonnet-4-5-20250929-v1:0" || b.Tools != 1 {
		t.Errorf("Bedrock's call %+v: want it signed with the stored pair, for the model, with the tool", b)
	}
	if v := byProvider["vertex"]; v.Profile != "vertex:sa" || v.Tools != 1 {
		t.Errorf("Vertex AI's call %+v: want the service account's token, with the tool", v)
	}
}
