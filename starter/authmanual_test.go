package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	_ "modernc.org/sqlite"
)

// `baton auth disable` keeps a profile out of every chain, whatever the ladder does, until
// `baton auth enable`: replies through a real worker never call it meanwhile.
func TestAuthDisableKeepsAProfileOutOfEveryChainUntilEnabled(t *testing.T) {
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["anthropic/claude"]}}}}`,
		[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-man-a"},
			{ID: "openai:b", Provider: "openai", Type: "api_key", Key: "sk-man-b"},
			{ID: "anthropic:default", Provider: "anthropic", Type: "api_key", Key: "sk-man-c"}},
		[]fakeprovider.Rule{{Respond: []fakeprovider.Response{{Text: "ok"}}}})
	srv := testsuite.SharedServer(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, srv.Client(), tq, w.Acts)
	conn := []string{"--address", srv.HostPort(), "--task-queue", tq}
	st := []string{"--store", w.StoreURL}
	profilesCalled := func() []string {
		var out []string
		for _, c := range w.Fake.Calls() {
			out = append(out, c.Profile)
		}
		return out
	}
	reply := func() {
		t.Helper()
		if code, _, stderr := baton(t, append([]string{"reply"}, append(conn, "hi")...)...); code != 0 {
			t.Fatalf("reply: %s", stderr)
		}
	}

	if code, out, stderr := baton(t, append([]string{"auth", "disable", "openai:a", "--note", "leaked"}, st...)...); code != 0 || !strings.Contains(out, "Disabled openai:a") {
		t.Fatalf("disable: %d %s %s", code, out, stderr)
	}
	// The ladder's own reset does not lift it.
	if code, _, stderr := baton(t, append([]string{"auth", "clear-cooldown", "openai:a"}, st...)...); code != 0 {
		t.Fatalf("clear-cooldown: %s", stderr)
	}
	_, list, _ := baton(t, append([]string{"auth", "list", "--json"}, st...)...)
	var rows []struct{ ID, State, Note string }
	if err := json.Unmarshal([]byte(list), &rows); err != nil || len(rows) != 3 || rows[0].ID != "openai:a" || rows[0].State != "manually disabled" || rows[0].Note != "leaked" {
		t.Fatalf("auth list: %v %s", err, list)
	}
	for range 3 {
		reply()
	}
	if got := profilesCalled(); len(got) != 3 || strings.Contains(strings.Join(got, ","), "openai:a") {
		t.Fatalf("calls while disabled: %v", got)
	}

	if code, out, _ := baton(t, append([]string{"auth", "enable", "openai:a"}, st...)...); code != 0 || !strings.Contains(out, "Enabled openai:a") {
		t.Fatalf("enable: %d %s", code, out)
	}
	before := len(profilesCalled())
	for range 3 {
		reply()
	}
	if got := profilesCalled()[before:]; !strings.Contains(strings.Join(got, ","), "openai:a") {
		t.Errorf("calls after enable: %v", got)
	}

	// remove: gone from the listing and the store, its secret with it.
	if code, out, stderr := baton(t, append([]string{"auth", "remove", "openai:a"}, st...)...); code != 0 || !strings.Contains(out, "Removed openai:a") {
		t.Fatalf("remove: %d %s %s", code, out, stderr)
	}
	if code, _, stderr := baton(t, append([]string{"auth", "remove", "openai:a"}, st...)...); code != exitFailure || !strings.Contains(stderr, `no profile "openai:a"`) {
		t.Errorf("removing twice: %d %s", code, stderr)
	}
	if _, list, _ := baton(t, append([]string{"auth", "list"}, st...)...); strings.Contains(list, "openai:a") {
		t.Errorf("listed after remove: %s", list)
	}
}

// `baton auth rekey` seals a plain store's secrets, then a store opened without the key is
// refused naming the key; a wrong current key writes nothing.
func TestAuthRekey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baton.db")
	url := "sqlite://" + path
	t.Setenv(store.SecretKeyEnv, "")
	t.Setenv(store.SecretKeyNewEnv, "")
	stdin = strings.NewReader("sk-rekey-plain\n")
	defer func() { stdin = os.Stdin }()
	if code, _, stderr := baton(t, "auth", "add", "--store", url, "--provider", "openai"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := baton(t, "auth", "rekey", "--store", url); code != exitUsage || !strings.Contains(stderr, store.SecretKeyNewEnv) {
		t.Errorf("without a new key: %d %s", code, stderr)
	}
	keyA, keyB := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	t.Setenv(store.SecretKeyNewEnv, keyA)
	code, out, stderr := baton(t, "auth", "rekey", "--store", url)
	if code != 0 || !strings.Contains(out, "Re-sealed 1 secret(s)") {
		t.Fatalf("rekey: %d %s %s", code, out, stderr)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var raw string
	if err := db.QueryRow(`SELECT secret_json FROM auth_profiles`).Scan(&raw); err != nil || strings.Contains(raw, "sk-rekey-plain") {
		t.Fatalf("after rekey the row holds %q (%v)", raw, err)
	}
	rawA, _ := codec.ParseKey(keyA)
	idA, _ := store.SecretKeyID(rawA)
	// Without the key (still unset): refused, naming key A.
	if code, _, stderr := baton(t, "auth", "list", "--store", url); code != exitFailure || !strings.Contains(stderr, idA) || !strings.Contains(stderr, store.SecretKeyEnv) {
		t.Errorf("list without the key: %d %s", code, stderr)
	}
	// A wrong current key: refused at open, nothing written.
	t.Setenv(store.SecretKeyEnv, keyB)
	t.Setenv(store.SecretKeyNewEnv, keyB)
	if code, _, stderr := baton(t, "auth", "rekey", "--store", url); code != exitFailure || !strings.Contains(stderr, idA) {
		t.Errorf("rekey with the wrong current key: %d %s", code, stderr)
	}
	var after string
	_ = db.QueryRow(`SELECT secret_json FROM auth_profiles`).Scan(&after)
	if after != raw {
		t.Error("a refused rekey wrote")
	}
	t.Setenv(store.SecretKeyEnv, keyA)
	if code, out, stderr := baton(t, "auth", "list", "--store", url); code != 0 || !strings.Contains(out, "openai:default") {
		t.Errorf("list with the key: %d %s %s", code, out, stderr)
	}
}
