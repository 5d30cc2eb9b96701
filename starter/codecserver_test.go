package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batonhq/baton/internal/codec"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
)

// The codec server decrypts for one origin and one token only.
func TestCodecServerRequiresATokenAndTheUIsOrigin(t *testing.T) {
	c, _ := codec.Parse(testPayloadKey, "")
	enc, _ := c.Converters().Data.ToPayload("PLAINTEXT-CODEC")
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{enc}})
	const token = "0123456789abcdef0123"
	srv := httptest.NewServer(codec.Handler(c, token, "http://ui.example:8233"))
	defer srv.Close()
	post := func(path, origin, auth string) (int, string, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String(), resp.Header
	}
	decoded := func(s string) string {
		var ps commonpb.Payloads
		if err := protojson.Unmarshal([]byte(s), &ps); err != nil || len(ps.Payloads) != 1 {
			return ""
		}
		var v string
		_ = converter.GetDefaultDataConverter().FromPayload(ps.Payloads[0], &v)
		return v
	}
	if code, b, _ := post("/decode", "", ""); code != http.StatusUnauthorized || strings.Contains(b, "PLAINTEXT") {
		t.Errorf("no token: %d %s", code, b)
	}
	if code, _, _ := post("/decode", "", "wrong-token-wrong-token"); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", code)
	}
	if code, b, h := post("/decode", "http://evil.example", token); code != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" || strings.Contains(b, "PLAINTEXT") {
		t.Errorf("another origin: %d %q %s", code, h.Get("Access-Control-Allow-Origin"), b)
	}
	if code, b, h := post("/decode", "http://ui.example:8233", token); code != 200 || decoded(b) != "PLAINTEXT-CODEC" || h.Get("Access-Control-Allow-Origin") != "http://ui.example:8233" {
		t.Errorf("the UI with the bearer token: %d %q %s", code, h.Get("Access-Control-Allow-Origin"), b)
	}
	// The Web UI's endpoint carries the token as its first path segment.
	if code, b, _ := post("/"+token+"/decode", "http://ui.example:8233", ""); code != 200 || decoded(b) != "PLAINTEXT-CODEC" {
		t.Errorf("the token in the path: %d %s", code, b)
	}
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/"+token+"/decode", nil)
	req.Header.Set("Origin", "http://ui.example:8233")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://ui.example:8233" {
		t.Errorf("preflight: %v %v", resp, err)
	}
}

func TestCodecServerRefusesToStartWithoutAToken(t *testing.T) {
	t.Setenv(codec.EnvKey, testPayloadKey)
	t.Setenv(codecTokenEnv, "")
	if code, _, stderr := baton(t, "codec-server", "--listen", "127.0.0.1:0"); code != exitUsage || !strings.Contains(stderr, codecTokenEnv) {
		t.Errorf("no token: %d %s", code, stderr)
	}
	t.Setenv(codecTokenEnv, "0123456789abcdef0123")
	if code, _, stderr := baton(t, "codec-server", "--origin", "*"); code != exitUsage || !strings.Contains(stderr, "--origin") {
		t.Errorf("a wildcard origin: %d %s", code, stderr)
	}
}
