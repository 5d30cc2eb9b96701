package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
)

func TestConfigCheckPrintsEveryProblemWithItsLine(t *testing.T) {
	w := testsuite.NewWorld(t, `{}`, []store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-check-a"}}, nil)
	file := filepath.Join(t.TempDir(), "openclaw.json5")
	_ = os.WriteFile(file, []byte("{\n  agents: {defaults: {model: {primary: \"openai/gpt-5\",\n    fallbacks: [\"xai/grok-4\"]}}},\n  models: {providers: {corp: {api: \"soap\"}}},\n}"), 0o600)
	code, out, _ := baton(t, "config", "check", file, "--store", w.StoreURL)
	if code != exitFailure || !strings.Contains(out, "models.providers.corp.api (line 4") ||
		!strings.Contains(out, `fallbacks[0] (line 3, column 17): xai/grok-4: provider "xai" has no models.providers entry and no stored profile`) ||
		strings.Contains(out, "openai/gpt-5") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	good := filepath.Join(t.TempDir(), "good.json5")
	_ = os.WriteFile(good, []byte(`{agents: {defaults: {model: "openai/gpt-5"}}}`), 0o600)
	if code, out, stderr := baton(t, "config", "check", good, "--store", w.StoreURL); code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("a good config: exit %d %s %s", code, out, stderr)
	}
	// A --store that is not there is said, and not created.
	missing := filepath.Join(t.TempDir(), "nope.db")
	if code, _, stderr := baton(t, "config", "check", good, "--store", "sqlite://"+missing); code != exitFailure || !strings.Contains(stderr, "does not exist") {
		t.Errorf("a missing store: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("config check created %s", missing)
	}
}

// config check names a cloud provider that lacks its region, with its line, and a stored profile
// its provider's API cannot take.
func TestConfigCheckKnowsTheClouds(t *testing.T) {
	w := testsuite.NewWorld(t, `{}`, []store.Credential{
		{ID: "vertex:key", Provider: "vertex", Type: "api_key", Key: "sk-vertex-wrong"},
		{ID: "bedrock:env", Provider: "bedrock", Type: "ambient"},
	}, nil)
	file := filepath.Join(t.TempDir(), "openclaw.json5")
	_ = os.WriteFile(file, []byte("{\n  models: {providers: {\n    bedrock: {api: \"bedrock-converse\", region: \"us-east-1\"},\n    vertex: {api: \"vertex-ai\"},\n  }}}"), 0o600)
	code, out, _ := baton(t, "config", "check", file, "--store", w.StoreURL)
	if code != exitFailure || !strings.Contains(out, "models.providers.vertex.region (line 4") ||
		!strings.Contains(out, "profile vertex:key (agent main) is api_key, which vertex-ai cannot take: store one of service_account, ambient, token, oauth") ||
		strings.Contains(out, "bedrock:env") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
