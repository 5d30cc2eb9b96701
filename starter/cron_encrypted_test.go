package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"go.temporal.io/sdk/client"
)

// With BATON_PAYLOAD_KEY the schedule's memo and action are encrypted: `cron describe` reads them
// (and a failed run's summary) through the key; `cron add --wait` asks for the durable wait.
func TestCronDescribeReadsAnEncryptedSchedule(t *testing.T) {
	t.Setenv(codec.EnvKey, testPayloadKey)
	t.Setenv(codec.EnvOldKeys, "")
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5"}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-cenc-a"}},
		[]fakeprovider.Rule{{Respond: []fakeprovider.Response{{Status: 404, Body: `{"error":{"message":"The model does not exist CRON-SECRET-TEXT"}}`}}}})
	srv := testsuite.SharedServer(t)
	conv, _ := codec.ConvertersFromEnv(os.LookupEnv)
	enc, err := client.NewClientFromExisting(srv.Client(), client.Options{DataConverter: conv.Data, FailureConverter: conv.Failure})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, enc, tq, w.Acts)
	conn := []string{"--address", srv.HostPort(), "--task-queue", tq}
	job := "enc-" + tq[len(tq)-6:]
	run := func(args ...string) (int, string, string) {
		return baton(t, append(append([]string{"cron"}, args...), conn...)...)
	}
	if code, _, stderr := run("add", job, "--cron", "0 9 * * *", "--tz", "Europe/Berlin", "--model", "openai/gpt-5", "--no-fallbacks", "--wait", "30m", "secret digest"); code != 0 {
		t.Fatalf("add: %s", stderr)
	}
	defer run("delete", job)
	// The memo is encrypted: read without the key it would say nothing.
	d, err := srv.Client().ScheduleClient().GetHandle(context.Background(), cronPrefix+job).Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if raw := d.Memo.GetFields()["cron"]; raw == nil || string(raw.GetMetadata()["encoding"]) != codec.EncodingEncrypted {
		t.Fatalf("the memo is not encrypted: %v", raw)
	}
	if _, described, _ := run("describe", job); !strings.Contains(described, "cron:   0 9 * * * (Europe/Berlin)") ||
		!strings.Contains(described, "model openai/gpt-5 (strict)") || !strings.Contains(described, "waits up to 30m0s for a cooldown") {
		t.Errorf("describe:\n%s", described)
	}
	// A run's failure summary is encrypted too; describe decodes it.
	strict := job + "-now"
	if code, _, stderr := run("add", strict, "--cron", "0 9 * * *", "--model", "openai/gpt-5", "--no-fallbacks", "secret digest"); code != 0 {
		t.Fatalf("add: %s", stderr)
	}
	defer run("delete", strict)
	if code, _, stderr := run("trigger", strict); code != 0 {
		t.Fatal(stderr)
	}
	var described string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, described, _ = run("describe", strict)
		if strings.Contains(described, "failed:") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(described, "CRON-SECRET-TEXT") || strings.Contains(described, "Encoded failure") {
		t.Errorf("describe of the failed run:\n%s", described)
	}
	if code, listed, _ := run("list"); code != 0 || strings.Contains(listed, "unreadable") {
		t.Errorf("list: %s", listed)
	}
}
