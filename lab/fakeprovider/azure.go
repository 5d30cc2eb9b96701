package fakeprovider

import (
	"net/http"
	"net/url"
	"strings"
)

// Azure OpenAI: the OpenAI wires on a resource's paths, the key in an api-key header.
//
//	POST /p/{provider}/openai/deployments/{deployment}/chat/completions?api-version=…
//	POST /p/{provider}/openai/v1/chat/completions       (the model names the deployment)
//	POST /p/{provider}/openai/v1/responses
//	POST /p/{provider}/openai/responses?api-version=…
//
// Without the /p/{provider} prefix the provider is "azure". A call on a deployment path or the
// unversioned Responses path without an api-version is answered 404 with Azure's body, as
// Azure answers it; the call is not recorded.

// AzureNotFound is Azure's answer to a path it does not serve (a missing api-version included).
const AzureNotFound = `{"error":{"code":"404","message":"Resource not found"}}`

func (s *Server) serveAzure(w http.ResponseWriter, r *http.Request, provider, path string) bool {
	rest, ok := strings.CutPrefix(path, "/openai/")
	if !ok {
		return false
	}
	if provider == "" {
		provider = "azure"
	}
	versioned := r.URL.Query().Get("api-version") != ""
	switch {
	case rest == "v1/chat/completions":
		s.serveJSON(w, r, provider, formatOpenAI, "")
	case rest == "v1/responses":
		s.serveJSON(w, r, provider, formatResponses, "")
	case rest == "responses" && versioned:
		s.serveJSON(w, r, provider, formatResponses, "")
	case strings.HasPrefix(rest, "deployments/") && strings.HasSuffix(rest, "/chat/completions") && versioned:
		deployment, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(rest, "deployments/"), "/chat/completions"))
		if err != nil || deployment == "" || strings.Contains(deployment, "/") {
			azureNotFound(w)
			return true
		}
		s.serveJSON(w, r, provider, formatOpenAI, deployment)
	default:
		azureNotFound(w)
	}
	return true
}

func azureNotFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(AzureNotFound))
}
