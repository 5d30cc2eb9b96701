package fakeprovider

import "net/http"

// serveCloud answers a call on one of the clouds' wires, which name the model in the path:
// Azure OpenAI (azure.go), Amazon Bedrock (bedrock.go), the Gemini API and Vertex AI (google.go).
// It reports false for a path none of them owns.
func (s *Server) serveCloud(w http.ResponseWriter, r *http.Request, provider, path string) bool {
	return s.serveAzure(w, r, provider, path) || s.serveBedrock(w, r, provider, path) || s.serveGoogle(w, r, provider, path)
}
