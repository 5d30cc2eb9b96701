package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"go.temporal.io/sdk/converter"
)

// codecTokenEnv names the token the codec server requires.
const codecTokenEnv = "BATON_CODEC_TOKEN"

// runCodecServer serves the payload codec for the Web UI, so that an operator can read encrypted
// histories in the browser (the UI's codec endpoint setting, or temporal-dev --ui-codec-endpoint).
// Whoever reaches it can decrypt every history, so it requires a token and answers browsers of
// one origin only.
func runCodecServer(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("codec-server", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8081", "address to listen on")
	origin := fs.String("origin", "http://127.0.0.1:8233", "the Web UI's origin (scheme://host:port): the only one CORS allows")
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton codec-server: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if u, err := url.Parse(*origin); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		fmt.Fprintf(errOut, "baton codec-server: --origin %q is not an origin (scheme://host[:port], no wildcard)\n", *origin)
		return exitUsage
	}
	allowed := strings.TrimSuffix(*origin, "/")
	token := os.Getenv(codecTokenEnv)
	if len(token) < 16 {
		fmt.Fprintf(errOut, "baton codec-server: %s: want a token of at least 16 characters (e.g. `openssl rand -hex 16`): whoever reaches this server can decrypt every history\n", codecTokenEnv)
		return exitUsage
	}
	c, err := codec.FromEnv(os.LookupEnv)
	if err == nil && c == nil {
		err = fmt.Errorf("%s: not set: the codec server decrypts with it", codec.EnvKey)
	}
	if err != nil {
		fmt.Fprintf(errOut, "baton codec-server: %v\n", err)
		return exitUsage
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(errOut, "baton codec-server: --listen %s: %v\n", *listen, err)
		return exitFailure
	}
	srv := &http.Server{Handler: codecHandler(c, token, allowed), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "codec server on http://%s (POST /encode, /decode; %s as a bearer token, or the endpoint http://%s/<token> for the Web UI) for the UI at %s\n",
		l.Addr(), codecTokenEnv, l.Addr(), allowed)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(errOut, "baton codec-server: %v\n", err)
		return exitFailure
	}
	return 0
}

// codecHandler checks the origin and the token, then hands the request to the SDK's codec
// handler. The token comes as a bearer token (`temporal --codec-auth`) or as the first path
// segment: the Web UI sends no header of ours, so its codec endpoint is http://host:port/<token>.
func codecHandler(c *codec.Codec, token, origin string) http.Handler {
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
			http.Error(w, "missing or wrong token ("+codecTokenEnv+")", http.StatusUnauthorized)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = path
		handler.ServeHTTP(w, r2)
	})
}
