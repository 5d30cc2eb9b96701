package testsuite

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/lab"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/proto"
)

// Every credential a test stores is registered here; at the end of a package run (Main) every
// history on the shared server and every log the package wrote is searched for them. A key in a
// history or a log fails the run, naming where it was found.
var (
	secretsMu sync.Mutex
	secrets   = map[string]bool{}

	logOnce sync.Once
	logDir  string
	logger  *zap.Logger
)

// RegisterSecret adds credential values that must never appear in a history or a log.
func RegisterSecret(values ...string) {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	for _, v := range values {
		if len(v) >= 4 { // shorter ones would match by chance
			secrets[v] = true
		}
	}
}

// Secrets returns the registered credential values.
func Secrets() []string {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	return slices.Sorted(maps.Keys(secrets))
}

// LogDir is the folder where this package's tests write their logs (worker processes, dev
// servers, the activities' and the SDK's loggers); Main scans it when the package ends.
func LogDir() string {
	logOnce.Do(func() {
		dir, err := os.MkdirTemp("", "baton-test-logs-*")
		if err != nil {
			dir = os.TempDir()
		}
		logDir = dir
		f, err := os.Create(filepath.Join(dir, "in-process.log"))
		if err != nil {
			logger = zap.NewNop()
			return
		}
		enc := zap.NewProductionEncoderConfig()
		logger = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(f), zap.InfoLevel))
	})
	return logDir
}

// Logger writes to LogDir()/in-process.log at info: the activities' lines and, through the
// shared server's client, the SDK's and the workflows' (decision records included).
func Logger() *zap.Logger {
	LogDir()
	return logger
}

// Leak is a credential found where it must not be.
type Leak struct {
	Secret string // masked in String
	Where  string
}

func (l Leak) String() string {
	masked := l.Secret[:min(4, len(l.Secret))] + "…"
	return fmt.Sprintf("a credential (%s) in %s", masked, l.Where)
}

// ScanHistories reads the history of every workflow in the server's namespace and reports each
// registered secret found in one.
func ScanHistories(ctx context.Context, s *lab.Server, secrets []string) ([]Leak, int, error) {
	c := s.Client()
	var leaks []Leak
	n := 0
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 200, NextPageToken: token})
		if err != nil {
			return leaks, n, fmt.Errorf("listing workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			h, err := history.Fetch(ctx, c, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId())
			if err != nil {
				return leaks, n, err
			}
			n++
			for _, sec := range secrets {
				if HistoryHolds(h, sec) {
					leaks = append(leaks, Leak{Secret: sec, Where: "the history of " + e.GetExecution().GetWorkflowId()})
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return leaks, n, nil
		}
	}
}

// HistoryHolds reports whether text appears anywhere in h: in a string field or in a payload's
// bytes. (The history's JSON would not do: it carries payloads in base64.)
func HistoryHolds(h *historypb.History, text string) bool {
	data, err := proto.Marshal(h)
	return err != nil || bytes.Contains(data, []byte(text))
}

// ScanFiles reports each secret found in a file under dir, with its line.
func ScanFiles(dir string, secrets []string) ([]Leak, int, error) {
	var leaks []Leak
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		n++
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
		for line := 1; sc.Scan(); line++ {
			for _, sec := range secrets {
				if strings.Contains(sc.Text(), sec) {
					leaks = append(leaks, Leak{Secret: sec, Where: fmt.Sprintf("%s:%d", path, line)})
				}
			}
		}
		return sc.Err()
	})
	return leaks, n, err
}
