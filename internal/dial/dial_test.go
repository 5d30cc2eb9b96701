package dial

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/logging"
	"github.com/batonhq/baton/lab"
	"go.temporal.io/sdk/client"
)

func TestTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": DefaultTimeout, "90": 90 * time.Second, "2m": 2 * time.Minute, "0": 0} {
		got, err := Timeout(func(string) (string, bool) { return v, v != "" })
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", v, got, err, want)
		}
	}
	for _, bad := range []string{"soon", "-5", "-1s"} {
		if _, err := Timeout(func(string) (string, bool) { return bad, true }); err == nil || !strings.Contains(err.Error(), EnvTimeout) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A process started before its server waits for it, saying what it waits for, and connects once
// the server is up.
func TestDialWaitsForAServerStartedLater(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Temporal dev server: `make test` runs it")
	}
	addr, err := lab.FreeHostPort()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var said []string
	type result struct {
		c   client.Client
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		c, err := Dial(ctx, client.Options{HostPort: addr, Namespace: "default", Logger: logging.Discard}, time.Minute, func(s string) {
			mu.Lock()
			said = append(said, s)
			mu.Unlock()
		})
		done <- result{c, err}
	}()
	time.Sleep(1500 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("Dial returned before the server started: %v", r.err)
	default:
	}
	srv, err := lab.StartServer(ctx, lab.ServerOptions{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	r := <-done
	if r.err != nil {
		t.Fatalf("Dial: %v", r.err)
	}
	defer r.c.Close()
	if _, err := r.c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		t.Errorf("the client Dial returned: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(said, "\n")
	if !strings.Contains(all, "waiting up to 1m0s (BATON_CONNECT_TIMEOUT) for Temporal at "+addr+", namespace default") ||
		!strings.Contains(all, "connected to Temporal at "+addr) {
		t.Errorf("said:\n%s", all)
	}
}

// A TEMPORAL_ADDRESS naming several frontends connects while one of them is down: calls go to
// the one that answers.
func TestSeveralFrontendsServeWhileOneIsDown(t *testing.T) {
	ctx, srv := aServer(t)
	down, err := lab.FreeHostPort()
	if err != nil {
		t.Fatal(err)
	}
	target := Target(down + "," + srv.HostPort())
	if !strings.HasPrefix(target, hostsScheme+":///") || Target(srv.HostPort()) != srv.HostPort() {
		t.Fatalf("targets: %q, %q", target, Target(srv.HostPort()))
	}
	c, err := Dial(ctx, client.Options{HostPort: target, Namespace: "default", Logger: logging.Discard}, 30*time.Second, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	for i := range 10 { // round-robin would send every other call to the dead one
		if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

// A Link sees the client's connection open while its server runs, and closed once the server is
// gone: a finished attempt then waits for the server instead of reporting into nothing.
func TestALinkSeesTheServerGo(t *testing.T) {
	ctx, srv := aServer(t)
	var link *Link
	if link.Up() {
		t.Fatal("a nil Link is up")
	}
	link = &Link{}
	opts := client.Options{HostPort: srv.HostPort(), Namespace: "default", Logger: logging.Discard}
	opts.ConnectionOptions.DialOptions = append(opts.ConnectionOptions.DialOptions, link.DialOption())
	c, err := Dial(ctx, opts, 30*time.Second, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil || !link.Up() {
		t.Fatalf("connected: up %v, %v", link.Up(), err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for link.Up() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if link.Up() {
		t.Error("the server stopped 10 s ago and the link is still up")
	}
}

// aServer starts a dev server for the test, stopped at its end (a test may stop it before).
func aServer(t *testing.T) (context.Context, *lab.Server) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Temporal dev server: `make test` runs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	srv, err := lab.StartServer(ctx, lab.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return ctx, srv
}
