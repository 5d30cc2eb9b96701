package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestExplainMatchesTheGoldenTimeline(t *testing.T) {
	for _, name := range []string{"reply-rate-limit-fallback"} {
		t.Run(name, func(t *testing.T) {
			golden := filepath.Join("testdata", "explain-"+name+".golden")
			code, stdout, stderr := baton(t, "explain", filepath.Join("..", "workflows", "testdata", name+".json"))
			if code != 0 {
				t.Fatal(stderr)
			}
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if stdout != string(want) {
				t.Errorf("explain output:\n%s\nwant (%s):\n%s", stdout, golden, want)
			}
		})
	}
}

func TestHistoryExportReplayAndExplainFromTheServer(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-h-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-h-b"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 404, Body: `{"error":{"message":"The model does not exist"}}`}}}})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	conn := []string{"--address", srv.HostPort(), "--task-queue", tq}
	code, stdout, stderr := baton(t, append([]string{"reply", "--json"}, append(conn, "hello")...)...)
	if code != 0 {
		t.Fatal(stderr)
	}
	var res struct{ WorkflowID string }
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.WorkflowID == "" {
		t.Fatalf("%s %v", stdout, err)
	}
	code, exported, stderr := baton(t, append([]string{"history", "export", res.WorkflowID}, conn...)...)
	if code != 0 || strings.Contains(exported, "sk-h-") {
		t.Fatalf("export: %d %s", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "h.json")
	if err := os.WriteFile(file, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"replay", file}, append([]string{"replay", "--workflow-id", res.WorkflowID}, conn...)} {
		if code, stdout, stderr := baton(t, args...); code != 0 || !strings.Contains(stdout, "events replay against this code") {
			t.Errorf("baton %v: %d %s %s", args, code, stdout, stderr)
		}
	}
	code, stdout, _ = baton(t, append([]string{"explain", res.WorkflowID}, conn...)...)
	if code != 0 || !strings.Contains(stdout, "openai/gpt-5") || !strings.Contains(stdout, "model_not_found") ||
		!strings.Contains(stdout, "advance") || !strings.Contains(stdout, "result: answered by anthropic/claude with anthropic:default") {
		t.Errorf("explain: %s", stdout)
	}
}
