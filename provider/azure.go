package provider

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Azure OpenAI: the OpenAI wires on an Azure resource. The same bodies and streams as OpenAI's
// (openai.go, openai_responses.go); what differs is where they go and how they authenticate:
// the deployment in the path (or, on Azure's v1 API, as the body's model), the api-version
// query, and the resource's key in an api-key header (an Entra ID token goes as a bearer).
//
// The official client sends it, configured by hand rather than through openai-go's azure
// package: that package sends plain-HTTP loopback requests around the client's transport (the
// one baton's watchdog and error capture live in) and takes Entra ID tokens only through azcore;
// the three things it sets are set here the same way.

// DefaultAzureAPIVersion is the api-version sent when the provider names none: Azure's newest
// generally available version of the data-plane API.
const DefaultAzureAPIVersion = "2024-10-21"

// azureV1 is the api-version that selects Azure's v1 API (/openai/v1/..., no api-version query,
// the deployment as the model).
const azureV1 = "v1"

// completeAzure runs Chat Completions (APIAzureOpenAI) or Responses (APIAzureOpenAIResponses)
// on an Azure resource.
func completeAzure(ctx context.Context, req Request, hc *http.Client, secret string, clk *clock, em *emitter, cap *capture) (Response, error) {
	req.Model = cmp.Or(req.Deployment, req.Model)
	if req.API == APIAzureOpenAIResponses {
		return completeResponses(ctx, req, hc, secret, clk, em)
	}
	return completeOpenAI(ctx, req, hc, secret, clk, em, cap)
}

// isAzure reports whether an API is one of Azure's.
func isAzure(api string) bool { return api == APIAzureOpenAI || api == APIAzureOpenAIResponses }

// azurePost sends a streaming request for path ("chat/completions" or "responses") to the
// resource at req.BaseURL (https://<resource>.openai.azure.com, with or without /openai).
func azurePost(ctx context.Context, req Request, hc *http.Client, secret, path string, body any, opts []option.RequestOption) (*http.Response, error) {
	version := cmp.Or(req.APIVersion, DefaultAzureAPIVersion)
	if path == "responses" && req.APIVersion == "" {
		version = azureV1 // Azure's Responses API is generally available only on v1
	}
	base := strings.TrimSuffix(strings.TrimSuffix(req.BaseURL, "/"), "/openai") + "/openai/"
	switch {
	case version == azureV1:
		path = "v1/" + path
	case path == "responses":
		// The Responses API is not under a deployment: the body's model names it (a preview
		// api-version).
		opts = append(opts, option.WithQuery("api-version", version))
	default:
		path = "deployments/" + url.PathEscape(req.Model) + "/" + path
		opts = append(opts, option.WithQuery("api-version", version))
	}
	if req.Credential.Type == "token" || req.Credential.Type == "oauth" {
		opts = append(opts, option.WithHeader("Authorization", "Bearer "+secret)) // Entra ID
	} else {
		opts = append(opts, option.WithHeader("api-key", secret), option.WithHeaderDel("Authorization"))
	}
	client := openai.NewClient(
		option.WithBaseURL(base),
		option.WithAPIKey(secret),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // the workflow owns every retry
	)
	var raw *http.Response
	err := client.Post(ctx, path, body, &raw, opts...)
	return raw, err
}

// azureCodes turns Azure's own error codes into the codes the classifier reads (the rest of
// Azure's errors are OpenAI's shapes and read as such): a deployment that does not exist is a
// model that is not there.
func azureCodes(e *Error) {
	switch e.Code {
	case "DeploymentNotFound", "ModelNotFound":
		e.Type, e.Code = e.Code, "model_not_found"
	}
}
