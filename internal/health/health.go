// Package health serves /healthz and /readyz for baton's long-running processes (the worker's
// metrics listener, serve), for Docker's and Kubernetes' probes.
package health

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
)

// Check is one dependency /readyz asks about.
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

// Temporal checks that the frontend answers.
func Temporal(c client.Client) Check {
	return Check{Name: "temporal", Fn: func(ctx context.Context) error {
		_, err := c.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	}}
}

// Timeout bounds each check, so that a probe never hangs on a dead dependency.
const Timeout = 3 * time.Second

// Mount adds /healthz (the process answers: always 200) and /readyz (200 when every check
// passes, else 503 naming each that failed) to mux. Neither needs a token: they say nothing but
// which dependency is down.
func Mount(mux *http.ServeMux, checks ...Check) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		var lines []string
		failed := false
		for _, c := range checks {
			ctx, cancel := context.WithTimeout(r.Context(), Timeout)
			err := c.Fn(ctx)
			cancel()
			if err != nil {
				failed = true
				lines = append(lines, fmt.Sprintf("%s: %s", c.Name, oneLine(err)))
				continue
			}
			lines = append(lines, c.Name+": ok")
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if failed {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	})
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
