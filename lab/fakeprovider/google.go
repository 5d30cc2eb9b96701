package fakeprovider

import "net/http"

// serveGoogle is not written yet (issue 28).
func (s *Server) serveGoogle(w http.ResponseWriter, r *http.Request, provider, path string) bool {
	return false
}
