package testsuite

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/store"
)

// ServiceAccount is a Google service account's JSON key file with a fresh RSA key, whose
// token_uri is tokenURI (the fake provider's /p/{provider}/token in tests). Its private key is
// registered as a secret: no history or log may hold it.
func ServiceAccount(t testing.TB, email, tokenURI string) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 1024) // a test key: its size does not matter here
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	data, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "acme-ai", "private_key_id": "k1",
		"private_key": pemKey, "client_email": email, "token_uri": tokenURI}) // strings only: cannot fail
	RegisterSecret(pemKey[40:80]) // a line of the key's body: what a leak would show
	return string(data)
}

// The clouds' test profiles (AddCloudProfiles): an AWS example key pair and a service account.
const (
	AWSKeyID            = "AKIAIOSFODNN7EXAMPLE"
	AWSSecretKey        = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	ServiceAccountEmail = "baton@acme-ai.iam.gserviceaccount.com"
)

// AddCloudProfiles stores bedrock:keys (an AWS key pair) and vertex:sa (a service account whose
// token_uri is the fake's token endpoint) for the main agent, and tells the fake whose calls
// carry them: Bedrock's signed with the pair, Vertex AI's with the account's token.
func (w *World) AddCloudProfiles(t testing.TB) {
	t.Helper()
	RegisterSecret(AWSSecretKey)
	for _, c := range []store.Credential{
		{ID: "bedrock:keys", Provider: "bedrock", Type: "aws_keys", AccessKeyID: AWSKeyID, SecretAccessKey: AWSSecretKey},
		{ID: "vertex:sa", Provider: "vertex", Type: "service_account", ServiceAccount: ServiceAccount(t, ServiceAccountEmail, w.Fake.URL()+"/p/vertex/token")},
	} {
		if err := w.Store.PutCredential(context.Background(), "main", c); err != nil {
			t.Fatal(err)
		}
	}
	w.Fake.AddCredential(AWSKeyID, "bedrock:keys")
	w.Fake.AddCredential(fakeprovider.FakeAccessToken(ServiceAccountEmail), "vertex:sa")
}
