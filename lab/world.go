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
		cfg.Providers[p] = policy.ProviderConfig{ID: p, BaseURL: fake.BaseURL(p, api == provider.APIAnthropicMessages), API: api, Models: cfg.Providers[p].Models}
	}
}

// ModelsConfig is the config's `models` value naming each provider's base URL and API, for a
// worker process that reads its config from a file (after PointAtFake).
func ModelsConfig(cfg *policy.Config) string {
	providers := map[string]map[string]string{}
	for id, pc := range cfg.Providers {
		providers[id] = map[string]string{"baseUrl": pc.BaseURL, "api": pc.API}
	}
	data, _ := json.Marshal(map[string]any{"providers": providers}) // strings only: cannot fail
	return string(data)
}
