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
