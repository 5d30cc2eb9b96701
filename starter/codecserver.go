package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"go.temporal.io/sdk/converter"
)

// runCodecServer serves the payload codec for the Web UI, so that an operator can read encrypted
// histories in the browser (the UI's codec endpoint setting, or temporal-dev --ui-codec-endpoint).
func runCodecServer(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("codec-server", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8081", "address to listen on")
	origin := fs.String("origin", "http://127.0.0.1:8233", "the Web UI's origin, allowed by CORS")
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	key, err := codec.ParseKey(os.Getenv(codec.EnvKey))
	if err != nil {
		fmt.Fprintf(errOut, "baton codec-server: %s: %v\n", codec.EnvKey, err)
		return exitUsage
	}
	c, err := codec.New(key)
	if err != nil {
		fmt.Fprintf(errOut, "baton codec-server: %v\n", err)
		return exitUsage
	}
	handler := converter.NewPayloadCodecHTTPHandler(c)
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", *origin)
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type,X-Namespace,Authorization")
		w.Header().Set("Access-Control-Allow-Methods", "POST,OPTIONS")
		if r.Method == http.MethodOptions {
			return
		}
		handler.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(errOut, "baton codec-server: --listen %s: %v\n", *listen, err)
		return exitFailure
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "codec server on http://%s (POST /encode, /decode) for the UI at %s\n", l.Addr(), *origin)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(errOut, "baton codec-server: %v\n", err)
		return exitFailure
	}
	return 0
}
