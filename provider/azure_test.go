package provider_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// Azure OpenAI against the fake's Azure paths: where each call goes, how it authenticates, and
// what Azure's own errors classify as.

func azureRequest(fp *fakeprovider.Server, rec *sentRequest) provider.Request {
	req := request(fp, "azure")
	req.API, req.BaseURL, req.Model = provider.APIAzureOpenAI, fp.URL()+"/p/azure", "gpt-4o"
	req.HTTPClient = &http.Client{Transport: rec}
	return req
}

func TestAzureSendsTheDeploymentTheVersionAndTheKey(t *testing.T) {
	fp := start(t, nil)
	cases := []struct {
		name, api, version, deployment string
		cred                           provider.Credential
		wantPath, wantVersion, model   string
	}{
		{"a deployment, the default version", provider.APIAzureOpenAI, "", "prod-4o", provider.Credential{Type: "api_key", Key: secret},
			"/p/azure/openai/deployments/prod-4o/chat/completions", provider.DefaultAzureAPIVersion, "prod-4o"},
		{"the deployment defaults to the model", provider.APIAzureOpenAI, "2025-04-01-preview", "", provider.Credential{Type: "api_key", Key: secret},
			"/p/azure/openai/deployments/gpt-4o/chat/completions", "2025-04-01-preview", "gpt-4o"},
		{"the v1 API: the deployment is the model", provider.APIAzureOpenAI, "v1", "prod-4o", provider.Credential{Type: "api_key", Key: secret},
			"/p/azure/openai/v1/chat/completions", "", "prod-4o"},
		{"Responses on v1 by default", provider.APIAzureOpenAIResponses, "", "prod-4o", provider.Credential{Type: "api_key", Key: secret},
			"/p/azure/openai/v1/responses", "", "prod-4o"},
		{"Responses on a preview version", provider.APIAzureOpenAIResponses, "2025-04-01-preview", "prod-4o", provider.Credential{Type: "api_key", Key: secret},
			"/p/azure/openai/responses", "2025-04-01-preview", "prod-4o"},
		{"an Entra ID token as a bearer", provider.APIAzureOpenAI, "", "prod-4o", provider.Credential{Type: "token", Token: secret},
			"/p/azure/openai/deployments/prod-4o/chat/completions", provider.DefaultAzureAPIVersion, "prod-4o"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &sentRequest{}
			req := azureRequest(fp, rec)
			req.API, req.APIVersion, req.Deployment, req.Credential = c.api, c.version, c.deployment, c.cred
			resp, err := provider.Complete(context.Background(), req)
			if err != nil || resp.Answer.Text != fakeprovider.DefaultText {
				t.Fatalf("%+v %v", resp.Answer, err)
			}
			r := rec.last(t)
			if r.URL.Path != c.wantPath || r.URL.Query().Get("api-version") != c.wantVersion {
				t.Errorf("went to %s, want %s?api-version=%s", r.URL, c.wantPath, c.wantVersion)
			}
			if c.cred.Type == "token" {
				if r.Header.Get("Authorization") != "Bearer "+secret || r.Header.Get("api-key") != "" {
					t.Errorf("Entra ID: authorization %q, api-key %q", r.Header.Get("Authorization"), r.Header.Get("api-key"))
				}
			} else if r.Header.Get("api-key") != secret || r.Header.Get("Authorization") != "" {
				t.Errorf("key: api-key %q, authorization %q (Azure takes the key in api-key only)", r.Header.Get("api-key"), r.Header.Get("Authorization"))
			}
			calls := fp.Calls()
			if got := calls[len(calls)-1]; got.Model != c.model || got.Profile != "p:a" {
				t.Errorf("the fake saw model %q profile %q, want %q p:a", got.Model, got.Profile, c.model)
			}
		})
	}
}

func TestAProvidersHeadersAndQueryGoWithEveryCall(t *testing.T) {
	fp := start(t, nil)
	for _, api := range []string{provider.APIOpenAICompletions, provider.APIAnthropicMessages, provider.APIAzureOpenAI} {
		rec := &sentRequest{}
		req := azureRequest(fp, rec)
		if api != provider.APIAzureOpenAI {
			id := map[string]string{provider.APIOpenAICompletions: "openai", provider.APIAnthropicMessages: "anthropic"}[api]
			req = request(fp, id)
			req.HTTPClient = &http.Client{Transport: rec}
		}
		req.API = api
		req.Headers = map[string]string{"X-Gateway-Route": "eu-1", "OpenAI-Organization": "org-7"}
		req.Query = map[string]string{"tenant": "acme"}
		if _, err := provider.Complete(context.Background(), req); err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		r := rec.last(t)
		if r.Header.Get("X-Gateway-Route") != "eu-1" || r.Header.Get("OpenAI-Organization") != "org-7" || r.URL.Query().Get("tenant") != "acme" {
			t.Errorf("%s: headers %v, query %q", api, r.Header, r.URL.RawQuery)
		}
		if api == provider.APIAzureOpenAI && r.URL.Query().Get("api-version") == "" {
			t.Errorf("the provider's query replaced the api-version: %q", r.URL.RawQuery)
		}
	}
}

func TestAzureErrorsClassify(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		want    policy.Reason
	}{
		{"the token rate limit of a pricing tier", 429, map[string]string{"retry-after": "6"},
			`{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit."}}`,
			policy.ReasonRateLimit},
		{"a deployment that does not exist", 404, nil,
			`{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}`,
			policy.ReasonModelNotFound},
		{"a wrong key", 401, nil,
			`{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`,
			policy.ReasonAuth},
		{"the content filter on the prompt", 400, nil,
			`{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}}`,
			policy.ReasonFormat},
		{"a context overflow", 400, nil,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			policy.ReasonContextOverflow},
		{"the resource is busy", 503, nil,
			`{"error":{"code":"ServiceUnavailable","message":"The service is temporarily unable to process your request. Please try again later."}}`,
			policy.ReasonTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{Status: c.status, Headers: c.headers, Body: c.body}}}})
			_, err := provider.Complete(context.Background(), azureRequest(fp, &sentRequest{}))
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%v, want a provider error", err)
			}
			if got := responsesFailure(pe); got != c.want {
				t.Errorf("%+v classifies as %s, want %s", pe, got, c.want)
			}
			if strings.Contains(pe.Error()+pe.BodyPreview, secret) {
				t.Error("the key is in the error")
			}
			if c.headers["retry-after"] != "" && !pe.Retry.HasAfter {
				t.Error("Azure's retry-after was not read")
			}
		})
	}
}

func TestAzureWithoutAnAPIVersionIsNotFound(t *testing.T) {
	// What Azure itself answers; the adapter always sends one, so only a hand-made call sees it.
	fp := start(t, nil)
	resp, err := http.Post(fp.URL()+"/p/azure/openai/deployments/x/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || len(fp.Calls()) != 0 {
		t.Errorf("status %d, %d calls recorded", resp.StatusCode, len(fp.Calls()))
	}
}

func TestPolicyKnowsEveryAPI(t *testing.T) {
	if !slices.Equal(provider.APIs, policy.APIs) {
		t.Errorf("provider.APIs %v, policy.APIs %v: the config would refuse (or accept) what the adapters do not", provider.APIs, policy.APIs)
	}
}
