package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/ui"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

func TestMain(m *testing.M) { testsuite.Main(m) }

const twoModelConfig = `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude-sonnet-4-5"]}}}}`

var threeKeys = []store.Credential{
	{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-ui-a-0000"},
	{ID: "openai:b", Provider: "openai", Type: "api_key", Key: "sk-ui-b-0000"},
	{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-ui-ant-0000"},
}

// An outage of the primary: both openai keys are rate-limited, anthropic answers.
var outage = []fakeprovider.Rule{
	{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5"}, Respond: []fakeprovider.Response{{Status: 429,
		Headers: map[string]string{"retry-after": "0"},
		Body:    `{"error":{"message":"Rate limit reached for gpt-5 in organization org-x on requests per min (RPM)","type":"requests","code":"rate_limit_exceeded"}}`}}},
	{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "an answer from the fallback"}}},
}

// failover runs a reply of session through the outage and returns its run.
func failover(t *testing.T, c client.Client, tq, session string) client.WorkflowRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := workflows.StartReply(ctx, c, tq, workflows.ReplyRequest{Agent: "main", Session: session, Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	var res policy.ReplyResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Served.Provider != "anthropic" || len(res.Attempts) != 3 {
		t.Fatalf("the reply did not fail over as scripted: %+v %+v", res.Served, res.Attempts)
	}
	return run
}

func serveUI(t *testing.T, o ui.Options) string {
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix, ui.New(o))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// boardWhenListed waits until visibility lists the run on the board (filtered to its session).
func boardWhenListed(t *testing.T, base, session string, run client.WorkflowRun) string {
	t.Helper()
	u := base + "/ui/?session=" + url.QueryEscape(session)
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := get(t, u)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", u, code, body)
		}
		if strings.Contains(element(body, `data-run-id="`+run.GetRunID()+`"`, "</tr>"), "anthropic/claude-sonnet-4-5</code>") {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("the board never listed run %s with its final model:\n%s", run.GetRunID(), body)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// element returns the element of the page that opens with a tag holding attr (up to its end tag).
func element(page, attr, end string) string {
	i := strings.Index(page, attr)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(page[:i], "<")
	j := strings.Index(page[i:], end)
	if j < 0 {
		return page[start:]
	}
	return page[start : i+j+len(end)]
}

var countdown = regexp.MustCompile(`data-until="[^"]+"[^>]*>(\d+[hms])+ left<`)

// checkBoard: the cooled-down keys with their model and countdown, the session moved to the
// fallback with its origin, the reply with its final model, attempts and reason.
func checkBoard(t *testing.T, page, session string, run client.WorkflowRun) {
	t.Helper()
	for _, id := range []string{"openai:a", "openai:b"} {
		row := element(page, `data-auth-profile="`+id+`"`, "</tr>")
		if !strings.Contains(row, `data-state="cooldown"`) || !strings.Contains(row, "<code>gpt-5</code> only") ||
			!strings.Contains(row, "rate_limit") || !countdown.MatchString(row) || !strings.Contains(row, "step 1 of the cooldown ladder (1 min)") {
			t.Errorf("profile %s is not shown cooling down on gpt-5 with its countdown:\n%s", id, row)
		}
	}
	if row := element(page, `data-auth-profile="anthropic:default"`, "</tr>"); !strings.Contains(row, `data-state="available"`) || strings.Contains(row, "never") {
		t.Errorf("anthropic:default is not shown available and used:\n%s", row)
	}
	row := element(page, `data-session="`+session+`"`, "</tr>")
	if !strings.Contains(row, `data-active="anthropic/claude-sonnet-4-5"`) || !strings.Contains(row, `data-origin="openai/gpt-5"`) ||
		!strings.Contains(row, "rate_limit") || !strings.Contains(row, "anthropic:default") || !countdown.MatchString(row) {
		t.Errorf("session %s is not shown on the fallback, with its origin, reason and re-probe countdown:\n%s", session, row)
	}
	row = element(page, `data-run-id="`+run.GetRunID()+`"`, "</tr>")
	for _, want := range []string{"anthropic/claude-sonnet-4-5", "<td>3</td>", "rate_limit", "failed over", `href="/ui/reply?id=` + url.QueryEscape(run.GetID()),
		"http://127.0.0.1:8233/namespaces/default/workflows/" + url.PathEscape(run.GetID()) + "/" + run.GetRunID() + "/history"} {
		if !strings.Contains(row, strings.ReplaceAll(want, "&", "&amp;")) {
			t.Errorf("the reply's row lacks %q:\n%s", want, row)
		}
	}
}

// checkReply: every attempt in the picture and in the table, the fallback write, the notice.
func checkReply(t *testing.T, page string) {
	t.Helper()
	want := []string{"openai:a rate_limit", "openai:a rate_limit", "openai:a rate_limit", "openai:b rate_limit", "openai:b rate_limit",
		"openai:b rate_limit", "anthropic:default succeeded"}
	bars := regexp.MustCompile(`<g class="bt-step bt-attempt[^"]*" data-step="\d+" data-model="[^"]*" data-auth-profile="([^"]*)" data-outcome="([^"]*)" data-reason="([^"]*)"`).FindAllStringSubmatch(page, -1)
	rows := regexp.MustCompile(`<tr class="step step-attempt" data-step="\d+" data-kind="attempt" data-model="[^"]*" data-auth-profile="([^"]*)" data-outcome="([^"]*)" data-reason="([^"]*)"`).FindAllStringSubmatch(page, -1)
	for name, found := range map[string][][]string{"picture": bars, "table": rows} {
		var got []string
		for _, m := range found {
			if m[2] == "succeeded" {
				got = append(got, m[1]+" succeeded")
			} else {
				got = append(got, m[1]+" "+m[3])
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("attempts in the %s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	for _, want := range []string{`class="bt-step bt-write"`, "fallback written", "↪️ Model Fallback: anthropic/claude-sonnet-4-5 (selected openai/gpt-5",
		`data-model="openai/gpt-5"`, `data-model="anthropic/claude-sonnet-4-5"`, "answered", "write fallback"} {
		if !strings.Contains(page, want) {
			t.Errorf("the reply page lacks %q", want)
		}
	}
}

// TestTheBoardAndAReplyInABrowser runs a reply that rotates a key and falls back, then opens the
// board and the reply's page in headless Chromium: the DOM after its scripts ran shows the
// cooled-down profiles and every attempt; screenshots are kept (BATON_TEST_ARTIFACTS).
func TestTheBoardAndAReplyInABrowser(t *testing.T) {
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, outage)
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	session := fmt.Sprintf("ui-%d", time.Now().UnixNano())
	run := failover(t, c, tq, session)

	base := serveUI(t, ui.Options{Client: c, Namespace: "default", Store: w.Store, Config: w.Config.Get,
		WebUIURL: "http://127.0.0.1:8233", DataConverter: converter.GetDefaultDataConverter()})
	// The server's HTML first (no browser needed).
	board := boardWhenListed(t, base, session, run)
	checkBoard(t, board, session, run)
	replyURL := base + "/ui/reply?id=" + url.QueryEscape(run.GetID()) + "&run=" + run.GetRunID()
	code, reply := get(t, replyURL)
	if code != http.StatusOK {
		t.Fatalf("reply page: %d\n%s", code, reply)
	}
	checkReply(t, reply)
	code, svg := get(t, base+"/ui/reply.svg?id="+url.QueryEscape(run.GetID()))
	if code != http.StatusOK || !strings.HasPrefix(svg, "<svg") || strings.Count(svg, `class="bt-step bt-attempt`) != 7 {
		t.Errorf("reply.svg: %d\n%.300s", code, svg)
	}

	chrome := findChromium(t)
	boardURL := base + "/ui/?session=" + url.QueryEscape(session)
	dom := chromium(t, chrome, "--dump-dom", boardURL)
	if !strings.Contains(dom, `data-js="ready"`) {
		t.Errorf("the board's script did not run:\n%.500s", dom)
	}
	checkBoard(t, dom, session, run)
	dom = chromium(t, chrome, "--dump-dom", replyURL)
	if !strings.Contains(dom, `data-js="ready"`) {
		t.Errorf("the reply page's script did not run:\n%.500s", dom)
	}
	checkReply(t, dom)

	dir := os.Getenv("BATON_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]string{"ui-board.png": boardURL, "ui-reply.png": replyURL} {
		file := filepath.Join(dir, name)
		chromium(t, chrome, "--screenshot="+file, "--window-size=1400,1000", u)
		if st, err := os.Stat(file); err != nil || st.Size() < 10_000 {
			t.Errorf("screenshot %s: %v", file, err)
		} else {
			t.Logf("screenshot: %s", file)
		}
	}
}

// TestThePageReadsEncryptedReplies: with BATON_PAYLOAD_KEY the histories are unreadable to the
// server; the page decodes them with the key, and says so when it has none.
func TestThePageReadsEncryptedReplies(t *testing.T) {
	dc, err := codec.DataConverter("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if err != nil {
		t.Fatal(err)
	}
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, outage)
	plain := testsuite.Client(t)
	encrypted, err := client.NewClientFromExisting(plain, client.Options{DataConverter: dc})
	if err != nil {
		t.Fatal(err)
	}
	defer encrypted.Close()
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, encrypted, tq, w.Acts)
	session := fmt.Sprintf("enc-%d", time.Now().UnixNano())
	run := failover(t, encrypted, tq, session)

	base := serveUI(t, ui.Options{Client: encrypted, Namespace: "default", Store: w.Store, Config: w.Config.Get, DataConverter: dc,
		WebUIURL: "http://127.0.0.1:8233"})
	checkBoard(t, boardWhenListed(t, base, session, run), session, run)
	replyURL := "/ui/reply?id=" + url.QueryEscape(run.GetID()) + "&run=" + run.GetRunID()
	code, page := get(t, base+replyURL)
	if code != http.StatusOK {
		t.Fatalf("reply page: %d\n%s", code, page)
	}
	checkReply(t, page)
	if strings.Contains(page, "encrypted") {
		t.Error("the page says the payloads are encrypted though it has the key")
	}

	// Without the key: the steps are there, their contents are not, and the page says why.
	keyless := serveUI(t, ui.Options{Client: plain, Namespace: "default", Store: w.Store, DataConverter: converter.GetDefaultDataConverter()})
	code, page = get(t, keyless+replyURL)
	if code != http.StatusOK || !strings.Contains(page, "the payloads are encrypted and no key was given (BATON_PAYLOAD_KEY)") {
		t.Errorf("keyless reply page: %d\n%s", code, page)
	}
	if strings.Contains(page, "openai:a") || strings.Contains(page, "gpt-5") {
		t.Error("the keyless page shows what only the key can read")
	}
}

// findChromium is the browser for the test: skipped outside CI when there is none, a failure in CI.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("BATON_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "" {
		t.Skip("no chromium on PATH (CI installs Debian's chromium); the page's HTML was checked without a browser")
	}
	t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium")
	return ""
}

// chromium runs headless Chromium once and returns what it printed (the DOM with --dump-dom).
func chromium(t *testing.T, path string, args ...string) string {
	t.Helper()
	profile, err := os.MkdirTemp("", "baton-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + profile}
	cmd := exec.CommandContext(ctx, path, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, tailLines(stderr.String(), 20))
	}
	return string(out)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestARunningReplyShowsWhereItIs: while the fallback takes its time, the reply's page shows the
// attempts so far, the one in flight, and the status query's candidate; it refreshes itself.
func TestARunningReplyShowsWhereItIs(t *testing.T) {
	slow := []fakeprovider.Rule{outage[0], {Match: fakeprovider.Match{Provider: "anthropic"},
		Respond: []fakeprovider.Response{{Text: "late", DelayMs: 4000}}}}
	w := testsuite.NewWorld(t, twoModelConfig, threeKeys, slow)
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := workflows.StartReply(ctx, c, tq, workflows.ReplyRequest{Agent: "main", Session: fmt.Sprintf("run-%d", time.Now().UnixNano()),
		Message: "hi", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	base := serveUI(t, ui.Options{Client: c, Namespace: "default", Store: w.Store, DataConverter: converter.GetDefaultDataConverter()})
	u := base + "/ui/reply?id=" + url.QueryEscape(run.GetID()) + "&run=" + run.GetRunID()
	var page string
	for deadline := time.Now().Add(20 * time.Second); ; {
		_, page = get(t, u)
		// The primary's attempts run (and fail) first: wait for the fallback's to be in flight.
		if strings.Contains(page, "bt-attempt bt-running") && strings.Contains(page, `data-model="anthropic/claude-sonnet-4-5" data-auth-profile="anthropic:default" data-outcome="running"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no attempt in flight on the page:\n%s", page)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{`<body data-refresh="2">`, "pill-running", "trying <code>anthropic/claude-sonnet-4-5</code> with <code>anthropic:default</code>",
		`data-kind="attempt" data-model="anthropic/claude-sonnet-4-5" data-auth-profile="anthropic:default" data-outcome="running"`, `class="bt-now"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the running reply's page lacks %q", want)
		}
	}
	if got := strings.Count(page, `data-outcome="failed"`); got != 12 { // 6 bars, 6 rows
		t.Errorf("%d failed attempts shown, want 6 in the picture and 6 in the table", got)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, page = get(t, u); !strings.Contains(page, `<body data-refresh="0">`) || !strings.Contains(page, "pill-answered") {
		t.Errorf("the ended reply's page still refreshes or is not answered:\n%.2000s", page)
	}
}
