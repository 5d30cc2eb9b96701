package codec

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"go.temporal.io/sdk/converter"
)

// TokenEnv is the token a codec server requires of its callers.
const TokenEnv = "BATON_CODEC_TOKEN"

// Handler checks the origin and the token, then hands the request to the SDK's codec
// handler. The token comes as a bearer token (`temporal --codec-auth`) or as the first path
// segment: the Web UI sends no header of ours, so its codec endpoint is http://host:port/<token>.
func Handler(c *Codec, token, origin string) http.Handler {
	handler := converter.NewPayloadCodecHTTPHandler(c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			if o != origin {
				http.Error(w, "origin "+o+" is not allowed (codec-server --origin)", http.StatusForbidden)
				return
			}
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type,X-Namespace,Authorization")
			w.Header().Set("Access-Control-Allow-Methods", "POST,OPTIONS")
			w.Header().Set("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		got, path := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.URL.Path
		if seg, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/"); ok && subtle.ConstantTimeCompare([]byte(seg), []byte(token)) == 1 {
			got, path = seg, "/"+rest
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			http.Error(w, "missing or wrong token ("+TokenEnv+")", http.StatusUnauthorized)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = path
		handler.ServeHTTP(w, r2)
	})
}
