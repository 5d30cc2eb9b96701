package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

func TestReadLegacyAndImportIdempotently(t *testing.T) {
	li, err := ReadLegacy("testdata/openclaw-state")
	if err != nil {
		t.Fatal(err)
	}
	if len(li.Files) != 5 {
		t.Errorf("files read: %v", li.Files)
	}
	main := li.Agents["main"]
	if main == nil || len(main.Credentials) != 5 || len(main.Skipped) != 1 || !strings.Contains(main.Skipped[0], "vault:ref") {
		t.Fatalf("agent main: %+v", main)
	}
	desc := strings.Join(li.Describe(), "\n")
	for _, want := range []string{"agent main: profile google-antigravity:user@gmail.com (oauth)", "agent main: profile openrouter:default (api_key)",
		"agent main: order openai = openai:user@example.com, openai:api-key-backup", "agent ops: profile google:default (token)"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q:\n%s", want, desc)
		}
	}
	for _, secret := range []string{"sk-ant-legacy-1", "acc-legacy", "tok-legacy", "ga-acc"} {
		if strings.Contains(desc, secret) {
			t.Errorf("the description shows a secret")
		}
	}

	eachBackend(t, func(t *testing.T, s *Store) {
		for i := 0; i < 2; i++ { // twice: the second import changes nothing
			if err := s.ImportLegacy(ctx, li); err != nil {
				t.Fatal(err)
			}
		}
		list, err := s.ListProfiles(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 5 {
			t.Fatalf("profiles after two imports: %+v", list)
		}
		c, err := s.Secret(ctx, "main", "openai:user@example.com")
		if err != nil || c.Access != "acc-legacy" || !c.Expires.Equal(time.UnixMilli(1736160000000).UTC()) {
			t.Errorf("the agent's own profile wins over oauth.json: %+v, %v", c, err)
		}
		if c, _ := s.Secret(ctx, "main", "google-antigravity:user@gmail.com"); c.ProjectID != "p-1" || c.Refresh != "ga-ref" {
			t.Errorf("oauth.json import: %+v", c)
		}
		st, _ := s.Stats(ctx, "main", "openai:api-key-backup")
		if st.ErrorCount != 2 || !st.CooldownUntil.Equal(time.UnixMilli(1736160600000).UTC()) || st.CooldownModel != "gpt-5" || st.CooldownReason != policy.ReasonRateLimit {
			t.Errorf("usage stats: %+v", st)
		}
		if st, _ := s.Stats(ctx, "main", "anthropic:default"); st.DisabledReason != policy.ReasonBilling || st.FailureCounts[policy.ReasonBilling] != 1 {
			t.Errorf("billing disable: %+v", st)
		}
		if orders, _ := s.Orders(ctx, "main"); len(orders["openai"]) != 2 {
			t.Errorf("order: %v", orders)
		}
		if lg, _ := s.LastGood(ctx, "main"); lg["openai"] != "openai:user@example.com" {
			t.Errorf("lastGood: %v", lg)
		}
		if ops, _ := s.ListProfiles(ctx, "ops"); len(ops) != 1 || ops[0].Type != policy.TypeToken || ops[0].Stats.ErrorCount != 1 {
			t.Errorf("agent ops: %+v", ops)
		}
	})
}

func TestReadLegacyNamesTheBadFileAndReturnsNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "agents", "main", "agent", "auth-state.json")
	if err := os.MkdirAll(filepath.Dir(bad), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(bad), "auth-profiles.json"), []byte(`{"version":1,"profiles":{"openai:a":{"type":"api_key","provider":"openai","key":"sk"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"order": [}`), 0o600); err != nil {
		t.Fatal(err)
	}
	li, err := ReadLegacy(dir)
	if err == nil || li != nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("got %v, %v; want an error naming %s", li, err, bad)
	}
	missingKey := filepath.Join(t.TempDir(), "agents", "main", "agent")
	_ = os.MkdirAll(missingKey, 0o700)
	_ = os.WriteFile(filepath.Join(missingKey, "auth-profiles.json"), []byte(`{"profiles":{"openai:a":{"type":"api_key","provider":"openai"}}}`), 0o600)
	if _, err := ReadLegacy(filepath.Dir(filepath.Dir(filepath.Dir(missingKey)))); err == nil || !strings.Contains(err.Error(), "profiles.openai:a") {
		t.Errorf("a profile without its key: %v", err)
	}
	if _, err := ReadLegacy(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing state dir")
	}
}

// OpenClaw's aws-sdk profiles (the AWS credential chain, no secret) come in as ambient ones.
func TestDoctorTakesOpenClawsAWSSDKProfiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agents", "main", "agent")
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "auth-profiles.json"), []byte(`{"version":1,"profiles":{"bedrock:default":{"type":"aws-sdk","provider":"bedrock"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	li, err := ReadLegacy(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := li.Agents["main"].Credentials; len(c) != 1 || c[0].Type != policy.TypeAmbient {
		t.Errorf("credentials %+v", c)
	}
}
