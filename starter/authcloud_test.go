package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
)

// `auth add` takes the clouds' credentials, and refuses a malformed one naming what is wrong,
// writing nothing and never echoing the secret.
func TestAuthAddTakesTheCloudsCredentials(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "baton.db")
	t.Setenv(store.SecretKeyEnv, "")
	defer func() { stdin = os.Stdin }()
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := testsuite.ServiceAccount(t, "baton@acme-ai.iam.gserviceaccount.com", "https://oauth2.googleapis.com/token")
	const keyID, secret = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

	refused := []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"a swapped pair", keyID + "\n", []string{"--provider", "bedrock", "--type", "aws_keys", "--access-key-id", secret}, "access key id is not an AWS access key id"},
		{"a pair whose secret is the key id", keyID + "\n", []string{"--provider", "bedrock", "--type", "aws_keys", "--access-key-id", keyID}, "the pair is swapped"},
		{"half a secret", secret[:20] + "\n", []string{"--provider", "bedrock", "--type", "aws_keys", "--access-key-id", keyID}, "secret access key is not one (40 characters"},
		{"a temporary key without its token", secret + "\n", []string{"--provider", "bedrock", "--type", "aws_keys", "--access-key-id", "ASIAIOSFODNN7EXAMPLE"}, "needs its session token"},
		{"no key id", secret + "\n", []string{"--provider", "bedrock", "--type", "aws_keys"}, "without an access key id"},
		{"a key id on another type", "sk-1\n", []string{"--provider", "openai", "--access-key-id", keyID}, "--access-key-id and --session-token are for --type aws_keys"},
		{"no key file", "", []string{"--provider", "vertex", "--type", "service_account"}, "needs --key-file"},
		{"a file that is not JSON", "", []string{"--provider", "vertex", "--type", "service_account", "--key-file", file("a.json", "-----BEGIN PRIVATE KEY-----")}, "is not JSON"},
		{"a person's login", "", []string{"--provider", "vertex", "--type", "service_account", "--key-file", file("b.json", `{"type":"authorized_user","client_id":"x","refresh_token":"1//secret"}`)}, `type is "authorized_user"`},
		{"a mangled private key", "", []string{"--provider", "vertex", "--type", "service_account", "--key-file",
			file("c.json", strings.Replace(good, "MII", "XXX", 1))}, "private_key does not parse"},
		{"a secret on an ambient profile", "", []string{"--provider", "bedrock", "--type", "ambient", "--key", "sk-1"}, "ambient stores no secret"},
		{"an unknown type", "x\n", []string{"--provider", "bedrock", "--type", "aws"}, `type "aws" is not one of api_key, oauth, token, aws_keys, service_account, ambient`},
	}
	for _, c := range refused {
		stdin = strings.NewReader(c.stdin)
		code, _, stderr := baton(t, append([]string{"auth", "add", "--store", url}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: %d %q, want exit %d naming %q", c.name, code, stderr, exitUsage, c.want)
		}
		if strings.Contains(stderr, secret) || strings.Contains(stderr, "PRIVATE KEY") || strings.Contains(stderr, "1//secret") {
			t.Errorf("%s: the secret is in the message: %s", c.name, stderr)
		}
	}
	if code, out, _ := baton(t, "auth", "list", "--store", url); code == 0 && strings.Contains(out, ":default") {
		t.Errorf("a refused profile was written: %s", out)
	}

	stdin = strings.NewReader(secret + "\n")
	if code, _, stderr := baton(t, "auth", "add", "--store", url, "--provider", "bedrock", "--type", "aws_keys", "--access-key-id", keyID); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := baton(t, "auth", "add", "--store", url, "--provider", "vertex", "--type", "service_account", "--key-file", file("good.json", good)); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := baton(t, "auth", "add", "--store", url, "--provider", "google", "--type", "ambient", "--id", "google:adc"); code != 0 {
		t.Fatal(stderr)
	}
	st, err := store.Open(t.Context(), url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aws, err := st.Secret(t.Context(), "main", "bedrock:default")
	if err != nil || aws.AccessKeyID != keyID || aws.SecretAccessKey != secret || aws.Type != "aws_keys" {
		t.Errorf("bedrock:default = %+v, %v", aws.Type, err)
	}
	sa, err := st.Secret(t.Context(), "main", "vertex:default")
	if err != nil || sa.ServiceAccount != good {
		t.Errorf("vertex:default: %v", err)
	}
}
