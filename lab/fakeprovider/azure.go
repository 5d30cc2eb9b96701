package fakeprovider

import "net/http"

// serveAzure is not written yet (issue 28).
func (s *Server) serveAzure(w http.ResponseWriter, r *http.Request, provider, path string) bool {
	return false
}
