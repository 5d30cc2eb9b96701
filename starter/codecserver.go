package main

import (
	"context"
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
)

// codecTokenEnv names the token the codec server requires.
const codecTokenEnv = codec.TokenEnv

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
	srv := &http.Server{Handler: codec.Handler(c, token, allowed), ReadHeaderTimeout: 10 * time.Second}
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
