package store

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// The clouds' credentials are checked before they are stored, so that a pasted half, a swapped
// pair or the wrong file is named at `auth add`, not discovered as an outage. Messages name the
// field and never repeat a secret.

var (
	// An AWS access key id: AKIA (long-term) or ASIA (temporary, with a session token), then 16
	// upper-case letters and digits.
	awsKeyIDRe = regexp.MustCompile(`^(AKIA|ASIA)[A-Z0-9]{16}$`)
	// A secret access key: 40 characters of base64's alphabet.
	awsSecretRe = regexp.MustCompile(`^[A-Za-z0-9/+]{40}$`)
)

func checkAWSKeys(c Credential) error {
	switch {
	case c.AccessKeyID == "":
		return fmt.Errorf("profile %q: aws_keys without an access key id (--access-key-id AKIA…)", c.ID)
	case !awsKeyIDRe.MatchString(c.AccessKeyID):
		return fmt.Errorf("profile %q: the access key id is not an AWS access key id (AKIA or ASIA and 16 upper-case letters or digits; %d characters given)", c.ID, len(c.AccessKeyID))
	case c.SecretAccessKey == "":
		return fmt.Errorf("profile %q: aws_keys without a secret access key", c.ID)
	case awsKeyIDRe.MatchString(c.SecretAccessKey):
		return fmt.Errorf("profile %q: the secret access key is an access key id: the pair is swapped", c.ID)
	case !awsSecretRe.MatchString(c.SecretAccessKey):
		return fmt.Errorf("profile %q: the secret access key is not one (40 characters of letters, digits, / and +; %d given)", c.ID, len(c.SecretAccessKey))
	case strings.HasPrefix(c.AccessKeyID, "ASIA") && c.SessionToken == "":
		return fmt.Errorf("profile %q: %s… is a temporary key: it needs its session token (--session-token)", c.ID, c.AccessKeyID[:4])
	}
	return nil
}

// serviceAccountKey is the part of a Google service account's JSON key that is checked.
type serviceAccountKey struct {
	Type        string `json:"type"`
	ProjectID   string `json:"project_id"`
	PrivateKey  string `json:"private_key"`
	ClientEmail string `json:"client_email"`
	TokenURI    string `json:"token_uri"`
}

func checkServiceAccount(c Credential) error {
	if strings.TrimSpace(c.ServiceAccount) == "" {
		return fmt.Errorf("profile %q: service_account without its JSON key (--key-file FILE)", c.ID)
	}
	var k serviceAccountKey
	if err := json.Unmarshal([]byte(c.ServiceAccount), &k); err != nil {
		return fmt.Errorf("profile %q: the service account key is not JSON (a Google service account's key file): %s", c.ID, jsonProblem(err))
	}
	switch {
	case k.Type != "service_account":
		return fmt.Errorf("profile %q: the key file's type is %q, not \"service_account\" (an authorized_user file is a person's login: use a service account's key, or type ambient)", c.ID, k.Type)
	case !strings.Contains(k.ClientEmail, "@"):
		return fmt.Errorf("profile %q: the key file has no client_email", c.ID)
	case k.PrivateKey == "":
		return fmt.Errorf("profile %q: the key file has no private_key", c.ID)
	}
	block, _ := pem.Decode([]byte(k.PrivateKey))
	if block == nil {
		return fmt.Errorf("profile %q: the key file's private_key is not a PEM block", c.ID)
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if _, err1 := x509.ParsePKCS1PrivateKey(block.Bytes); err1 != nil {
			return fmt.Errorf("profile %q: the key file's private_key does not parse as an RSA private key", c.ID)
		}
	}
	if k.TokenURI != "" {
		if u, err := url.Parse(k.TokenURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("profile %q: the key file's token_uri %q is not a URL", c.ID, k.TokenURI)
		}
	}
	return nil
}

// jsonProblem says where JSON went wrong without quoting it (it holds a private key).
func jsonProblem(err error) string {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Sprintf("invalid at byte %d", se.Offset)
	}
	return "not an object of the expected fields"
}
