package fakeprovider

import "net/http"

// serveBedrock is not written yet (issue 28).
func (s *Server) serveBedrock(w http.ResponseWriter, r *http.Request, provider, path string) bool {
	return false
}
