package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/serve"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
)

func TestServeNeedsATokenOffLoopback(t *testing.T) {
	for listen, wantErr := range map[string]bool{"127.0.0.1:8080": false, "localhost:8080": false, "[::1]:8080": false, "0.0.0.0:8080": true, "10.0.0.5:80": true} {
		if err := checkServeAuth(listen, ""); (err != nil) != wantErr {
			t.Errorf("%s without a token: %v", listen, err)
		}
	}
	if err := checkServeAuth("0.0.0.0:8080", "s3cret"); err != nil {
		t.Error(err)
	}
}

func TestServeRefusesABadKeepAliveAtStart(t *testing.T) {
	t.Setenv("BATON_SERVE_KEEPALIVE", "soon")
	var errOut strings.Builder
	if code := runServe(context.Background(), []string{"--config", ""}, io.Discard, &errOut); code != exitUsage ||
		!strings.Contains(errOut.String(), `BATON_SERVE_KEEPALIVE: "soon" is not a positive duration`) {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
}

// serveWithDoor serves w as `baton serve` does (the shared queue's worker, and a door for its
// callers' attempts); it returns the server's URL and the shared queue.
func serveWithDoor(t *testing.T, w *testsuite.World) (url, taskQueue string) {
	t.Helper()
	tq, door := testsuite.StartServeWorkers(t, w)
	h := httptest.NewServer(serve.New(serve.Options{Client: testsuite.SharedServer(t).Client(), TaskQueue: tq, Config: w.Config, Content: w.Store,
		Streams: door.Hub, StreamQueue: door.Queue, Responses: w.Store}))
	t.Cleanup(h.Close)
	return h.URL, tq
}

func TestAModelSwitchDuringAReplyFromServeRestartsWithTheUsersChoice(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-switch-a"}}, []fakeprovider.Rule{
			{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5"}, Respond: []fakeprovider.Response{{DelayMs: 1500, Status: 500, Body: `{"error":{"message":"boom"}}`}}},
			{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5-mini"}, Respond: []fakeprovider.Response{{Text: "from the user's choice"}}},
		})
	srv := testsuite.SharedServer(t)
	url, tq := serveWithDoor(t, w)
	done := make(chan string, 1)
	go func() {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"agent:main","user":"sw","messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		done <- string(body)
	}()
	for deadline := time.Now().Add(20 * time.Second); len(w.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	code, _, stderr := baton(t, "session", "model", "sw", "openai/gpt-5-mini", "--store", w.StoreURL, "--address", srv.HostPort(),
		"--task-queue", tq)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	body := <-done
	if !strings.Contains(body, "from the user's choice") || !strings.Contains(body, `"model":"openai/gpt-5-mini"`) {
		t.Errorf("serve answered %s", body)
	}
}

// `baton reply cancel ID` aborts a reply whose attempt runs on the shared worker: the attempt
// hears of it on its next heartbeat and closes the provider connection within a second.
func TestReplyCancelAbortsAReplyOnTheSharedWorker(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`, []store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-cancel-a"},
		{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-cancel-b"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{DelayMs: 30000, Text: "too late"}}}})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	run, err := srv.Client().ExecuteWorkflow(context.Background(), workflows.ReplyStartOptions("", tq, "main", ""), workflows.ReplyWorkflowName,
		workflows.ReplyRequest{Agent: "main", Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(w.Fake.Calls()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no provider call")
		}
	}
	cancelled := time.Now()
	if code, out, stderr := baton(t, "reply", "cancel", run.GetID(), "--address", srv.HostPort(), "--task-queue", tq); code != 0 || !strings.Contains(out, "cancelled") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	err = run.Get(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), policy.ErrAborted) {
		t.Errorf("the reply ended with %v, want AbortedError", err)
	}
	testsuite.ClosedAndAlone(t, w.Fake, cancelled, "the cancel")
}

// `baton reply attach` prints a reply's answer from its start whichever door started it: a
// background Responses reply (by its response id, from its event log) and a Chat Completions one
// (by its workflow ID, once it ends).
func TestReplyAttachPrintsTheAnswerForAnyDoor(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5"}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-attach-a"}},
		[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{
			{Text: "the first answer, streamed slowly", ChunkDelayMs: 100}, {Text: "the second answer"}}}})
	srv := testsuite.SharedServer(t)
	url, tq := serveWithDoor(t, w)
	resp, body := testsuite.Post(t, url+"/v1/responses", `{"model":"openai/gpt-5","input":"one","background":true}`, nil)
	var r struct{ ID string }
	if err := json.Unmarshal([]byte(body), &r); err != nil || resp.StatusCode != 200 || r.ID == "" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	conn := []string{"--store", w.StoreURL, "--address", srv.HostPort(), "--task-queue", tq}
	// Attached while it streams: the whole answer, from its start.
	if code, out, stderr := baton(t, append([]string{"reply", "attach", r.ID}, conn...)...); code != 0 || out != "the first answer, streamed slowly\n" {
		t.Errorf("attach %s: exit %d %q %s", r.ID, code, out, stderr)
	}
	resp, body = testsuite.Post(t, url+"/v1/chat/completions", `{"model":"openai/gpt-5","messages":[{"role":"user","content":"two"}]}`, nil)
	wf := resp.Header.Get("x-baton-workflow-id")
	if resp.StatusCode != 200 || wf == "" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if code, out, stderr := baton(t, append([]string{"reply", "attach", wf}, conn...)...); code != 0 || out != "the second answer\n" {
		t.Errorf("attach %s: exit %d %q %s", wf, code, out, stderr)
	}
	if code, _, stderr := baton(t, append([]string{"reply", "attach", "resp_nope"}, conn...)...); code != exitFailure || !strings.Contains(stderr, "no such response") {
		t.Errorf("an unknown response: exit %d %s", code, stderr)
	}
}
