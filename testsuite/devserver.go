// Package testsuite is what baton's tests share: one dev server per test package (lab starts it),
// workers on task queues of their own, worlds of store, config and fake provider, and the scan
// that fails a run whose histories or logs hold a credential. Nothing outside tests imports it.
package testsuite

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/lab"
	"go.temporal.io/sdk/client"
)

// Server is the lab's dev server, as tests hold it.
type Server = lab.Server

var (
	sharedMu     sync.Mutex
	sharedServer *Server
	sharedErr    error
)

// Main runs a test package with one dev server shared by all its tests: call it from TestMain.
// The server starts on first use, so packages whose selected tests need none start none. When
// the tests are done, every history on the server and every log in LogDir is searched for the
// credentials the tests stored (RegisterSecret): one found fails the run.
func Main(m *testing.M) {
	code := m.Run()
	sharedMu.Lock()
	var leaks []Leak
	if sharedServer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		found, n, err := ScanHistories(ctx, sharedServer, Secrets())
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testsuite: scanning histories for credentials: %v\n", err)
			code = max(code, 1)
		}
		leaks = append(leaks, found...)
		if testing.Verbose() {
			fmt.Fprintf(os.Stderr, "testsuite: %d histories scanned for %d credentials\n", n, len(Secrets()))
		}
		if err := sharedServer.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testsuite: stopping the dev server: %v\n", err)
		}
	}
	sharedMu.Unlock()
	if logDir != "" {
		found, n, err := ScanFiles(logDir, Secrets())
		if err != nil {
			fmt.Fprintf(os.Stderr, "testsuite: scanning logs for credentials: %v\n", err)
			code = max(code, 1)
		}
		leaks = append(leaks, found...)
		if testing.Verbose() {
			fmt.Fprintf(os.Stderr, "testsuite: %d log files scanned\n", n)
		}
	}
	for _, l := range leaks {
		fmt.Fprintf(os.Stderr, "testsuite: %s\n", l)
	}
	if len(leaks) > 0 {
		code = max(code, 1)
	} else if logDir != "" {
		_ = os.RemoveAll(logDir)
	}
	os.Exit(code)
}

// NeedsServer marks a test that needs the Temporal dev server: `make check` (go test -short)
// skips it; `make test` runs it, and it fails there when the server cannot start.
func NeedsServer(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Temporal dev server: `make test` runs it")
	}
}

// SharedServer returns the package's dev server, starting it on first use. The test fails if
// the server cannot start (for example bin/temporal-dev is missing).
func SharedServer(t testing.TB) *Server {
	t.Helper()
	NeedsServer(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedServer == nil && sharedErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		sharedServer, sharedErr = lab.StartServer(ctx, lab.ServerOptions{LogDir: LogDir(), Logger: Logger()})
		cancel()
	}
	if sharedErr != nil {
		t.Fatalf("dev server: %v", sharedErr)
	}
	return sharedServer
}

// Client hands out the shared server's client.
func Client(t testing.TB) client.Client {
	t.Helper()
	return SharedServer(t).Client()
}
