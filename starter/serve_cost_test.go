package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
)

// A streamed reply whose primary is cut on OpenAI and that Azure answers, through `baton serve`:
// both attempts carry their tokens and cost in the reply's result, and serve's /metrics counts
// them by provider and model.
func TestAFailoverAcrossCloudsCarriesWhatEachAttemptCost(t *testing.T) {
	four := 4
	const text = "The quick brown fox jumps over the lazy dog."
	// $2.50 and $10 per million input and output tokens on OpenAI, $5 and $15 on Azure.
	const config = `{agents: {defaults: {model: {primary: "openai/gpt-4o", fallbacks: ["azure/gpt-4o"]}}},
		models: {providers: {
			openai: {models: [{id: "gpt-4o", cost: {input: 2.5, output: 10}}]},
			azure: {api: "azure-openai", baseUrl: "https://acme.openai.azure.com", models: [{id: "gpt-4o", deployment: "prod-4o", cost: {input: 5, output: 15}}]}}}}`
	w := testsuite.NewWorld(t, config,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-cost-openai"},
			{ID: "azure:a", Provider: "azure", Type: "api_key", Key: "sk-cost-azure"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: text, CutAfterChunks: &four}}},
			{Match: fakeprovider.Match{Provider: "azure"}, Respond: []fakeprovider.Response{{Text: text, Usage: &fakeprovider.Usage{Input: 1000, Output: 100}}}}})
	cfgFile := filepath.Join(t.TempDir(), "baton.json5")
	models := lab.ModelsConfig(w.Config.Get())
	if err := os.WriteFile(cfgFile, []byte(`{agents: {defaults: {model: {primary: "openai/gpt-4o", fallbacks: ["azure/gpt-4o"]}}}, models: `+models+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testsuite.SharedServer(t)
	base := startServeCommand(t, w, cfgFile)
	resp, body := testsuite.Post(t, base+"/v1/chat/completions", `{"model":"openai/gpt-4o","stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "[DONE]") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var res policy.ReplyResult
	if err := srv.Client().GetWorkflow(context.Background(), resp.Header.Get("x-baton-workflow-id"), resp.Header.Get("x-baton-run-id")).Get(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 2 || res.Attempts[0].Spend == nil || res.Attempts[1].Spend == nil {
		t.Fatalf("attempts %+v", res.Attempts)
	}
	cut, answered := *res.Attempts[0].Spend, *res.Attempts[1].Spend
	// The cut stream billed its output (estimated from the 4 chunks sent); Azure reported 1,000 in
	// and 100 out: $0.005 + $0.0015.
	if cut.Output == 0 || !cut.Priced || cut.Cost != float64(cut.Output)*10/1e6 {
		t.Errorf("the cut attempt spent %+v", cut)
	}
	if answered.Input != 1000 || answered.Output != 100 || answered.Cost != 0.0065 {
		t.Errorf("the answering attempt spent %+v, want 1000 in, 100 out, $0.0065", answered)
	}
	if res.Spend == nil || *res.Spend != cut.Add(answered) {
		t.Errorf("the reply spent %+v, want the sum of its attempts %+v", res.Spend, cut.Add(answered))
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{`baton_tokens_total{kind="output",model="gpt-4o",provider="openai"}`,
		`baton_tokens_total{kind="input",model="gpt-4o",provider="azure"} 1000`, `baton_tokens_total{kind="output",model="gpt-4o",provider="azure"} 100`,
		`baton_cost_total{model="gpt-4o",provider="azure"} 0.0065`, `baton_cost_total{model="gpt-4o",provider="openai"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("serve's /metrics lacks %s:\n%s", want, grepLines(metrics, "baton_"))
		}
	}
}
