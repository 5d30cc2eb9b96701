package testsuite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
)

// With BATON_PAYLOAD_KEY, prompts and answers are unreadable in the server's history, and
// readable again through the codec.
func TestEncryptedPayloadsAreUnreadableInTheHistory(t *testing.T) {
	dc, err := codec.DataConverter("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if err != nil {
		t.Fatal(err)
	}
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Respond: []fakeprovider.Response{{Text: "the confidential answer"}}},
	})
	plain := testsuite.Client(t)
	encrypted, err := client.NewClientFromExisting(plain, client.Options{DataConverter: dc})
	if err != nil {
		t.Fatal(err)
	}
	defer encrypted.Close()
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, encrypted, tq, w.Acts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := encrypted.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName,
		workflows.ReplyRequest{Agent: "main", Session: "enc", Message: "the confidential prompt"})
	if err != nil {
		t.Fatal(err)
	}
	var res policy.ReplyResult
	if err := run.Get(ctx, &res); err != nil || res.Text != "the confidential answer" {
		t.Fatalf("%+v %v", res, err)
	}
	hist, err := testsuite.FetchHistory(ctx, plain, run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	// In any field or payload bytes, not only in the JSON (which shows payloads in base64).
	for _, s := range []string{"confidential", "openai:a", "gpt-5", "sk-"} {
		if testsuite.HistoryHolds(hist, s) {
			t.Errorf("the history shows %q", s)
		}
	}
	if !testsuite.HistoryHolds(hist, codec.EncodingEncrypted) {
		t.Error("no encrypted payload in the history")
	}
}

// With the failure converter too (what the worker and the CLI use), a reply whose models all
// failed leaves neither the provider's error text nor the failure summary readable in the
// history, while the client still reads the summary.
func TestEncryptedFailuresHoldNoProviderText(t *testing.T) {
	c, err := codec.Parse("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "")
	if err != nil {
		t.Fatal(err)
	}
	conv := c.Converters()
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, []fakeprovider.Rule{
		{Respond: []fakeprovider.Response{{Status: 404, Body: `{"error":{"message":"The model does not exist: PROVIDER-TEXT-3131"}}`}}},
	})
	plain := testsuite.Client(t)
	encrypted, err := client.NewClientFromExisting(plain, client.Options{DataConverter: conv.Data, FailureConverter: conv.Failure})
	if err != nil {
		t.Fatal(err)
	}
	defer encrypted.Close()
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, encrypted, tq, w.Acts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := encrypted.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName,
		workflows.ReplyRequest{Agent: "main", Message: "the confidential prompt"})
	if err != nil {
		t.Fatal(err)
	}
	err = run.Get(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "PROVIDER-TEXT-3131") {
		t.Fatalf("the caller should read the summary: %v", err)
	}
	hist, err := testsuite.FetchHistory(ctx, plain, run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"PROVIDER-TEXT-3131", "does not exist", "All models failed", "confidential"} {
		if testsuite.HistoryHolds(hist, s) {
			t.Errorf("the history shows %q", s)
		}
	}
}
