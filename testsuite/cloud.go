package testsuite

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"
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
