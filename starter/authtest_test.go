package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonhq/baton/lab/fakeprovider"
)

func TestAuthTestMakesOneAttemptAndClassifiesItsFailure(t *testing.T) {
	fp := fakeprovider.New([]fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Status: 429, Headers: map[string]string{"retry-after": "2"},
			Body: `{"error":{"message":"Rate limit reached for gpt-5","type":"requests","code":"rate_limit_exceeded"}}`}}},
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "fine here"}}},
	}, map[string]string{"sk-o": "openai:a", "sk-a": "anthropic:default"})
	if err := fp.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "openclaw.json5")
	if err := os.WriteFile(cfg, []byte(`{models: {providers: {
		openai: {baseUrl: "`+fp.BaseURL("openai", false)+`"},
		anthropic: {baseUrl: "`+fp.BaseURL("anthropic", true)+`", api: "anthropic-messages"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "sqlite://" + filepath.Join(dir, "baton.db")
	for _, add := range [][]string{{"--provider", "openai", "--id", "openai:a", "--key", "sk-o"}, {"--provider", "anthropic", "--key", "sk-a"}} {
		if code, _, stderr := baton(t, append([]string{"auth", "add", "--store", url}, add...)...); code != 0 {
			t.Fatal(stderr)
		}
	}
	code, stdout, _ := baton(t, "auth", "test", "openai:a", "--model", "openai/gpt-5", "--store", url, "--config", cfg)
	if code != exitFailure || !strings.Contains(stdout, "failed: rate_limit (HTTP 429") || !strings.Contains(stdout, "retry after 2s") || strings.Contains(stdout, "sk-o") {
		t.Errorf("a rate-limited profile: exit %d, %s", code, stdout)
	}
	code, stdout, _ = baton(t, "auth", "test", "anthropic:default", "--model", "anthropic/claude", "--store", url, "--config", cfg)
	if code != 0 || !strings.Contains(stdout, `"fine here"`) {
		t.Errorf("a healthy profile: exit %d, %s", code, stdout)
	}
	if code, _, stderr := baton(t, "auth", "test", "anthropic:default", "--model", "openai/gpt-5", "--store", url); code != exitUsage || !strings.Contains(stderr, "not a openai profile") {
		t.Errorf("a profile of another provider: %d %s", code, stderr)
	}
}
