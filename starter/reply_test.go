package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
)

func TestReplyPrintsTheNoticeAndTheAnswer(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-cli-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-cli-b"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 402, Body: `{"error":{"message":"Payment Required"}}`}}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "answered"}}},
		})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	code, stdout, stderr := baton(t, "reply", "--address", srv.HostPort(), "--task-queue", tq, "--session", "cli", "hello", "there")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "↪️ Model Fallback: anthropic/claude (selected openai/gpt-5; billing)\nanswered\n" {
		t.Errorf("stdout %q", stdout)
	}
	// /status shows the selected model, the active fallback and why.
	code, stdout, _ = baton(t, "session", "status", "cli", "--store", w.StoreURL)
	if code != 0 || !strings.Contains(stdout, "active:   anthropic/claude (fallback since") || !strings.Contains(stdout, "; billing;") ||
		!strings.Contains(stdout, "profile:  anthropic:default (auto pin)") {
		t.Errorf("session status: %s", stdout)
	}
	code, _, stderr = baton(t, "reply", "--address", srv.HostPort(), "--task-queue", tq, "--model", "openai/gpt-5", "strict")
	if code != exitFailure || !strings.Contains(stderr, "baton reply: All models failed (1): openai/gpt-5: Payment Required (billing) (FallbackSummaryError; workflow") {
		t.Errorf("a strict one-off model that fails: exit %d, %s", code, stderr)
	}
	if code, _, stderr = baton(t, "reply"); code != exitUsage || !strings.Contains(stderr, "want a message") {
		t.Errorf("no message: %d %s", code, stderr)
	}
}

func TestSessionModelSwitchesARunningReply(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-sw-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-sw-b"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{DelayMs: 1500, Status: 500, Body: `{"error":{"message":"boom"}}`}}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "from the switch"}}},
		})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	run, err := srv.Client().ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName,
		workflows.ReplyRequest{Agent: "main", Session: "live", Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(w.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	code, _, stderr := baton(t, "session", "model", "live", "anthropic/claude", "--store", w.StoreURL, "--address", srv.HostPort(), "--task-queue", tq)
	if code != 0 || !strings.Contains(stderr, "switch sent to the running reply "+run.GetID()) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res policy.ReplyResult
	if err := run.Get(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Text != "from the switch" || len(res.Attempts) < 2 || res.Attempts[len(res.Attempts)-2].Result != policy.ResultSwitched {
		t.Errorf("result %q, attempts %+v", res.Text, res.Attempts)
	}
}

func TestReplySendsImagesASystemPromptAndParameters(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "anthropic/claude"}}}}`,
		[]store.Credential{{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-cli-img"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "two squares"}}}})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.jpg")
	imgA := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 6000)...)
	imgB := append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte{2}, 100)...)
	_ = os.WriteFile(a, imgA, 0o600)
	_ = os.WriteFile(b, imgB, 0o600)
	code, stdout, stderr := baton(t, "reply", "--address", srv.HostPort(), "--task-queue", tq, "--store", w.StoreURL,
		"--image", a, "--image", b, "--system", "Count shapes.", "--temperature", "0.2", "--max-tokens", "64", "how many?")
	if code != 0 || stdout != "two squares\n" {
		t.Fatalf("exit %d: %q %s", code, stdout, stderr)
	}
	var sent struct {
		System      []struct{ Text string }
		Temperature float64
		MaxTokens   int `json:"max_tokens"`
		Messages    []struct {
			Content []struct {
				Type   string
				Text   string
				Source struct {
					MediaType string `json:"media_type"`
					Data      string
				}
			}
		}
	}
	if err := json.Unmarshal(w.Fake.Calls()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.System) != 1 || sent.System[0].Text != "Count shapes." || sent.Temperature != 0.2 || sent.MaxTokens != 64 ||
		len(sent.Messages) != 1 || len(sent.Messages[0].Content) != 3 {
		t.Fatalf("the provider got %s", w.Fake.Calls()[0].Body[:min(600, len(w.Fake.Calls()[0].Body))])
	}
	for i, want := range [][]byte{imgA, imgB} {
		src := sent.Messages[0].Content[i+1].Source
		got, _ := base64.StdEncoding.DecodeString(src.Data)
		if !bytes.Equal(got, want) || src.MediaType != map[int]string{0: "image/png", 1: "image/jpeg"}[i] {
			t.Errorf("image %d: %s, %d bytes, equal %v", i, src.MediaType, len(got), bytes.Equal(got, want))
		}
	}
	notImage := filepath.Join(dir, "notes.txt")
	_ = os.WriteFile(notImage, []byte("hello"), 0o600)
	for _, args := range [][]string{{"--image", notImage, "x"}, {"--image", filepath.Join(dir, "missing.png"), "x"}, {"--temperature", "3", "x"}, {"--max-tokens", "0", "x"}} {
		if code, _, stderr := baton(t, append([]string{"reply", "--address", srv.HostPort(), "--task-queue", tq}, args...)...); code != exitUsage ||
			!strings.Contains(stderr, strings.TrimPrefix(args[0], "")) {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
}

func TestReplySaysWhenNoWorkerPollsItsQueue(t *testing.T) {
	srv := testsuite.SharedServer(t)
	start := time.Now()
	code, _, stderr := baton(t, "reply", "--address", srv.HostPort(), "--task-queue", testsuite.TaskQueue(t), "hello")
	if code != exitFailure || !strings.Contains(stderr, "no worker polls the task queue") || time.Since(start) > 20*time.Second {
		t.Errorf("exit %d after %v: %s", code, time.Since(start), stderr)
	}
}
