package lab

import (
	"encoding/json"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
)

// PointAtFake sets every provider the config or the credentials name to the fake provider, in
// its wire format (Anthropic's for anthropic, OpenAI's for the rest).
func PointAtFake(cfg *policy.Config, fake *fakeprovider.Server, creds []store.Credential) {
	providers := map[string]bool{}
	add := func(refs ...policy.ModelRef) {
		for _, r := range refs {
			if r.Provider != "" {
				providers[r.Provider] = true
			}
		}
	}
	add(cfg.Model.Primary)
	add(cfg.Model.Fallbacks...)
	add(cfg.ImageModel.Primary)
	add(cfg.ImageModel.Fallbacks...)
	for _, a := range cfg.Agents {
		if a.Model != nil {
			add(a.Model.Primary)
			add(a.Model.Fallbacks...)
		}
	}
	for _, c := range creds {
		providers[c.Provider] = true
	}
	for p := range cfg.Providers { // a provider the config describes, whoever names it later
		providers[p] = true
	}
	for p := range providers {
		// A provider keeps the API its config names (the fake speaks each); by default anthropic
		// speaks Anthropic Messages and the rest Chat Completions.
		api := cfg.Providers[p].API
		if api == "" {
			api = provider.APIOpenAICompletions
			if p == "anthropic" {
				api = provider.APIAnthropicMessages
			}
		}
		pc := cfg.Providers[p]
		pc.ID, pc.API, pc.BaseURL = p, api, fake.BaseURL(p, api == provider.APIAnthropicMessages)
		switch api {
		case provider.APIAzureOpenAI, provider.APIAzureOpenAIResponses, provider.APIBedrockConverse, provider.APIGoogleGemini, provider.APIVertexAI:
			pc.BaseURL = fake.URL() + "/p/" + p // the clouds' SDKs add their own paths under the endpoint
		}
		cfg.Providers[p] = pc
	}
}

// ModelsConfig is the config's `models` value naming each provider's base URL and API, for a
// worker process that reads its config from a file (after PointAtFake).
func ModelsConfig(cfg *policy.Config) string {
	providers := map[string]map[string]any{}
	for id, pc := range cfg.Providers {
		e := map[string]any{"baseUrl": pc.BaseURL, "api": pc.API}
		for k, v := range map[string]string{"region": pc.Region, "project": pc.Project, "apiVersion": pc.APIVersion} {
			if v != "" {
				e[k] = v
			}
		}
		if len(pc.Models) > 0 {
			var models []map[string]any
			for _, m := range pc.Models {
				mm := map[string]any{"id": m.ID}
				if m.Cost != nil {
					mm["cost"] = m.Cost
				}
				if m.Deployment != "" {
					mm["deployment"] = m.Deployment
				}
				models = append(models, mm)
			}
			e["models"] = models
		}
		providers[id] = e
	}
	data, _ := json.Marshal(map[string]any{"providers": providers}) // strings only: cannot fail
	return string(data)
}
