package lab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton/internal/env"
	"github.com/batonhq/baton/internal/logging"
	"go.temporal.io/sdk/client"
	sdktestsuite "go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"
)

// DevServerEnv overrides where the dev server binary is found.
const DevServerEnv = "BATON_TEMPORAL_DEV"

// DevServerPath returns $BATON_TEMPORAL_DEV, or bin/temporal-dev at the root of this module. A
// missing binary is an error that says how to build it: tests fail, never skip, without it.
func DevServerPath() (string, error) {
	if p := os.Getenv(DevServerEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", DevServerEnv, p, err)
		}
		return p, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "bin", "temporal-dev")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the Temporal dev server is not built (%s missing): run `make build` first", p)
	}
	return p, nil
}

// ModuleRoot is the folder of baton's go.mod, found upwards from the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module github.com/batonhq/baton\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("baton's go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Server is a running bin/temporal-dev process.
type Server struct {
	dev     *sdktestsuite.DevServer
	logPath string
	keepLog bool
}

// ServerOptions tune StartServer; the zero value is an in-memory, headless server on a free port.
type ServerOptions struct {
	// HostPort to listen on; a free loopback port when empty.
	HostPort string
	// DBFilename keeps state in a SQLite file, so a restarted server finds it again.
	DBFilename string
	// UI starts the Web UI on UIPort (default: port + 1000).
	UI     bool
	UIPort string
	// Path of the server binary; DevServerPath() when empty.
	Path string
	// Args are extra flags for the server (--dynamic-config-value KEY=VALUE, …).
	Args []string
	// LogDir keeps the server's output (for the package's credential scan); else it goes to a
	// temporary file, removed when the server stops cleanly.
	LogDir string
	// Logger receives the client's and the workflows' log lines (else they are dropped).
	Logger *zap.Logger
}

// StartServer starts bin/temporal-dev through the SDK's StartDevServer and waits until it serves.
func StartServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	path := opts.Path
	if path == "" {
		p, err := DevServerPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	logFile, err := os.CreateTemp(opts.LogDir, "temporal-dev-*.log")
	if err != nil {
		return nil, err
	}
	hostPort := opts.HostPort
	if hostPort == "" {
		if hostPort, err = FreeHostPort(); err != nil {
			return nil, err
		}
	}
	clientLog := logging.Discard
	if opts.Logger != nil {
		clientLog = logging.SDK(opts.Logger)
	}
	defer logFile.Close()
	// Compressed as baton's own clients to this server are, so that what a test or the bench's
	// floors measure beside them is alike.
	compression, err := env.Compression(os.Getenv(env.EnvCompression), hostPort)
	if err != nil {
		return nil, err
	}
	dev, err := sdktestsuite.StartDevServer(ctx, sdktestsuite.DevServerOptions{
		ExistingPath: path,
		ClientOptions: &client.Options{HostPort: hostPort, Namespace: "default", Logger: clientLog,
			ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression}},
		DBFilename: opts.DBFilename,
		EnableUI:   opts.UI,
		UIPort:     opts.UIPort,
		LogLevel:   "warn",
		ExtraArgs:  opts.Args,
		Stdout:     logFile,
		Stderr:     logFile,
	})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w\n%s", path, err, tail(logFile.Name(), 20))
	}
	srv := &Server{dev: dev, logPath: logFile.Name(), keepLog: opts.LogDir != ""}
	// The frontend answers before the server's start is done: on PostgreSQL it then registers
	// the namespace and its search attributes, and says so in this line.
	for !logSays(logFile.Name(), "Temporal server: ") {
		select {
		case <-ctx.Done():
			_ = srv.Stop()
			return nil, fmt.Errorf("starting %s: its start did not complete: %w\n%s", path, ctx.Err(), tail(logFile.Name(), 20))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return srv, nil
}

// FreeHostPort is a loopback address no one listens on, with a port below the kernel's
// ephemeral range (10000–32767): a server binds it only later, and a port from that range (what
// listening on :0 gives) may be taken meanwhile by any outgoing connection. bin/temporal-dev
// picks its other ports the same way.
func FreeHostPort() (string, error) {
	for range 200 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(10000+rand.IntN(22768)))
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr, nil
		}
	}
	return "", errors.New("no free port found in 10000-32767 on 127.0.0.1")
}

// Client is connected to the server's default namespace.
func (s *Server) Client() client.Client { return s.dev.Client() }

// HostPort is the frontend's address.
func (s *Server) HostPort() string { return s.dev.FrontendHostPort() }

// LogPath is the file the server writes its output to.
func (s *Server) LogPath() string { return s.logPath }

// Stop interrupts the server and waits for it to exit.
func (s *Server) Stop() error {
	s.dev.Client().Close()
	err := s.dev.Stop()
	if err == nil && !s.keepLog {
		_ = os.Remove(s.logPath)
	}
	return err
}

// logSays reports whether the file at path holds s.
func logSays(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(b), s)
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
