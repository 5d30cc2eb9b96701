package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// runHealth is `baton health URL`: a probe for containers whose image has no shell or curl
// (compose's healthchecks): exit 0 when URL answers 2xx, else 1 with what it said.
func runHealth(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	target := "http://127.0.0.1:8080/readyz"
	switch fs.NArg() {
	case 0:
	case 1:
		target = fs.Arg(0)
	default:
		fmt.Fprintf(errOut, "baton health: want one URL, e.g. http://127.0.0.1:9090/readyz\n")
		return exitUsage
	}
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(errOut, "baton health: %q is not an http(s) URL\n", target)
		return exitUsage
	}
	if *timeout <= 0 {
		fmt.Fprintln(errOut, "baton health: --timeout must be positive")
		return exitUsage
	}
	hctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(hctx, http.MethodGet, target, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(errOut, "baton health: %s: %v\n", target, err)
		return exitFailure
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	text := strings.TrimSpace(string(body))
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(errOut, "baton health: %s: %s: %s\n", target, resp.Status, strings.ReplaceAll(text, "\n", "; "))
		return exitFailure
	}
	fmt.Fprintln(out, text)
	return 0
}
