package store

import (
	"path/filepath"
	"strings"
	"testing"
)

// The clouds' secrets are sealed like the others, and read back whole.
func TestTheCloudsSecretsAreSealed(t *testing.T) {
	s, err := openWithKey(t, "sqlite://"+filepath.Join(t.TempDir(), "b.db"), keyA)
	if err != nil {
		t.Fatal(err)
	}
	const secret, token = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "FwoGZXIvYXdzEJr-session-token"
	aws := Credential{ID: "bedrock:keys", Provider: "bedrock", Type: "aws_keys", AccessKeyID: "ASIAIOSFODNN7EXAMPLE", SecretAccessKey: secret, SessionToken: token}
	if err := s.PutCredential(ctx, "main", aws); err != nil {
		t.Fatal(err)
	}
	for _, raw := range rawSecrets(t, s) {
		if strings.Contains(raw, secret) || strings.Contains(raw, token) || strings.Contains(raw, "ASIAIOSFODNN7EXAMPLE") {
			t.Errorf("a cloud secret lies in the clear: %s", raw)
		}
	}
	got, err := s.Secret(ctx, "main", "bedrock:keys")
	if err != nil || got.AccessKeyID != aws.AccessKeyID || got.SecretAccessKey != secret || got.SessionToken != token {
		t.Errorf("read back %v: %v", got.Type, err)
	}
}
