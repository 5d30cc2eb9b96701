package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"go.temporal.io/sdk/client"
)

const (
	testPayloadKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	oldPayloadKey  = "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100"
)

// With BATON_PAYLOAD_KEY a reply whose every model failed leaves no provider error text, prompt
// or model name in the history (failure messages are encoded too), and every command that reads
// it (history export --decode, replay, explain) reads it with the key, and after a key rotation
// with the old key in BATON_PAYLOAD_KEYS.
func TestEncryptedHistoryHoldsNoPlaintextAndStillReplaysAndExplains(t *testing.T) {
	t.Setenv(codec.EnvKey, testPayloadKey)
	t.Setenv(codec.EnvOldKeys, "")
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-enc-a"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-enc-b"}},
		[]fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 404,
				Body: `{"error":{"message":"The model does not exist for org-PLAINTEXT-OPENAI-7731"}}`}}},
			{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Status: 404,
				Body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude PLAINTEXT-ANTHROPIC-5512"}}`}}},
		})
	srv := testsuite.SharedServer(t)
	conv, err := codec.ConvertersFromEnv(os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := client.NewClientFromExisting(srv.Client(), client.Options{DataConverter: conv.Data, FailureConverter: conv.Failure})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, enc, tq, w.Acts)
	conn := []string{"--address", srv.HostPort(), "--task-queue", tq}
	session := "enc-" + tq[len(tq)-6:]
	code, _, stderr := baton(t, append([]string{"reply", "--session", session}, append(conn, "PLAINTEXT-PROMPT-4242")...)...)
	if code != exitFailure || !strings.Contains(stderr, "PLAINTEXT-OPENAI-7731") {
		t.Fatalf("reply: exit %d, %s (want the failure summary, decoded for the caller)", code, stderr)
	}
	wid := "reply/main/" + session

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hist, err := testsuite.FetchHistory(ctx, srv.Client(), wid, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"PLAINTEXT-OPENAI-7731", "PLAINTEXT-ANTHROPIC-5512", "PLAINTEXT-PROMPT-4242", "does not exist", "gpt-5"} {
		if testsuite.HistoryHolds(hist, s) {
			t.Errorf("the encrypted history shows %q", s)
		}
	}

	code, exported, stderr := baton(t, append([]string{"history", "export", wid}, conn...)...)
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	file := filepath.Join(t.TempDir(), "h.json")
	if err := os.WriteFile(file, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	code, decoded, stderr := baton(t, append([]string{"history", "export", "--decode", wid}, conn...)...)
	// Decoded, the failure message is plain text and the payloads plain JSON (base64 in the file).
	if code != 0 || strings.Contains(decoded, "Encoded failure") || !strings.Contains(decoded, "All models failed (2)") ||
		strings.Contains(decoded, codec.EncodingEncrypted) {
		t.Errorf("export --decode: %d %s\n%s", code, stderr, decoded)
	}

	check := func(label string) {
		t.Helper()
		for _, args := range [][]string{{"replay", file}, append([]string{"replay", "--workflow-id", wid}, conn...)} {
			if code, stdout, stderr := baton(t, args...); code != 0 || !strings.Contains(stdout, "events replay against this code") {
				t.Errorf("%s: baton %v: %d %s %s", label, args, code, stdout, stderr)
			}
		}
		code, stdout, stderr := baton(t, "explain", file)
		if code != 0 || !strings.Contains(stdout, "openai/gpt-5") || !strings.Contains(stdout, "model_not_found") ||
			!strings.Contains(stdout, "anthropic/claude") || !strings.Contains(stdout, "All models failed (2)") ||
			!strings.Contains(stdout, "PLAINTEXT-OPENAI-7731") || strings.Contains(stdout, "Encoded failure") {
			t.Errorf("%s: explain: %d\n%s%s", label, code, stdout, stderr)
		}
	}
	check("with the key")

	// A rotation: the new key encrypts, the old one (BATON_PAYLOAD_KEYS) still reads.
	t.Setenv(codec.EnvKey, oldPayloadKey)
	t.Setenv(codec.EnvOldKeys, testPayloadKey)
	check("after a rotation")

	t.Setenv(codec.EnvKey, "")
	t.Setenv(codec.EnvOldKeys, "")
	if code, stdout, stderr := baton(t, "explain", file); !strings.Contains(stdout+stderr, "encrypted") || strings.Contains(stdout, "PLAINTEXT") {
		t.Errorf("explain without the key: %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr := baton(t, "replay", file); code == 0 {
		t.Errorf("replay without the key passed: %s", stderr)
	}
}
