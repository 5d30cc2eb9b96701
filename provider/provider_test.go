package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

const secret = "sk-test-secret-key-123456"

func intp(n int) *int { return &n }

func start(t *testing.T, rules []fakeprovider.Rule) *fakeprovider.Server {
	t.Helper()
	fp := fakeprovider.New(rules, map[string]string{secret: "p:a"})
	if err := fp.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fp.Close() })
	return fp
}

func request(fp *fakeprovider.Server, providerID string) provider.Request {
	anthropic := providerID == "anthropic"
	return provider.Request{
		Provider: providerID, Model: "m", BaseURL: fp.BaseURL(providerID, anthropic),
		Credential:      provider.Credential{Type: "api_key", Key: secret},
		Turn:            provider.Turn{Messages: []provider.Message{system("be brief"), user("hi")}},
		ResponseTimeout: 500 * time.Millisecond, FirstTokenTimeout: 500 * time.Millisecond, IdleTimeout: 300 * time.Millisecond,
	}
}

func TestEveryFaultKindGivesTheRightFailureOnBothAdapters(t *testing.T) {
	t.Parallel() // mostly waiting on clocks, each on servers of its own
	text := "the quick brown fox jumps over the lazy dog"
	cases := []struct {
		name  string
		resp  fakeprovider.Response
		check func(t *testing.T, e *provider.Error)
	}{
		{"a 429 with Retry-After and an OpenAI-shaped body",
			fakeprovider.Response{Status: 429, Headers: map[string]string{"retry-after": "2", "retry-after-ms": "2000"},
				Body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
			func(t *testing.T, e *provider.Error) {
				if e.Status != 429 || e.Message != "Rate limit reached" || e.Code != "rate_limit_exceeded" || e.Type != "requests" ||
					e.Headers["retry-after"] != "2" || e.Headers["retry-after-ms"] != "2000" || e.Stream != "" {
					t.Errorf("%+v", e)
				}
			}},
		{"a 529 with an Anthropic-shaped body",
			fakeprovider.Response{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			func(t *testing.T, e *provider.Error) {
				if e.Status != 529 || e.Type != "overloaded_error" || e.Message != "Overloaded" {
					t.Errorf("%+v", e)
				}
			}},
		{"a connection reset before headers",
			fakeprovider.Response{Reset: true},
			func(t *testing.T, e *provider.Error) {
				if e.Status != 0 || e.Net != "reset" && e.Net != "eof" {
					t.Errorf("%+v", e)
				}
			}},
		{"a delay before the headers beyond the response timeout",
			fakeprovider.Response{DelayMs: 2000, Text: text},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultResponseTimeout || e.Net != "timeout" || e.Partial {
					t.Errorf("%+v", e)
				}
			}},
		{"a stream cut after 3 chunks",
			fakeprovider.Response{Text: text, CutAfterChunks: intp(3)},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultCut || !e.Partial {
					t.Errorf("%+v", e)
				}
			}},
		{"a stream that stalls after 2 chunks",
			fakeprovider.Response{Text: text, StallAfterChunks: intp(2), StallMs: 3000},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultStall || !e.Partial {
					t.Errorf("%+v", e)
				}
			}},
		{"a malformed chunk",
			fakeprovider.Response{Text: text, MalformedChunk: intp(2)},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultMalformed {
					t.Errorf("%+v", e)
				}
			}},
		{"an in-band error event",
			fakeprovider.Response{StreamError: json.RawMessage(`{"type":"overloaded_error","message":"Overloaded mid-stream"}`)},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultInBandError || e.Status != 0 || !strings.Contains(e.Message, "Overloaded mid-stream") {
					t.Errorf("%+v", e)
				}
			}},
		{"a 200 with no content",
			fakeprovider.Response{Empty: true},
			func(t *testing.T, e *provider.Error) {
				if e.Stream != provider.FaultEmpty {
					t.Errorf("%+v", e)
				}
			}},
		{"a 401 that echoes the key",
			fakeprovider.Response{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + secret + `","type":"invalid_request_error","code":"invalid_api_key"}}`},
			func(t *testing.T, e *provider.Error) {
				if e.Status != 401 || e.Code != "invalid_api_key" {
					t.Errorf("%+v", e)
				}
			}},
	}
	for _, p := range []string{"openai", "anthropic"} {
		for _, c := range cases {
			t.Run(p+"/"+c.name, func(t *testing.T) {
				fp := start(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{c.resp}}})
				resp, err := provider.Complete(context.Background(), request(fp, p))
				var e *provider.Error
				if !errors.As(err, &e) {
					t.Fatalf("got %+v, %v; want a *provider.Error (never a success with partial text)", resp, err)
				}
				if resp.Answer.Text != "" {
					t.Errorf("partial text returned: %q", resp.Answer.Text)
				}
				c.check(t, e)
				if strings.Contains(err.Error(), secret) || strings.Contains(e.BodyPreview, secret) || strings.Contains(e.Message, secret) {
					t.Errorf("the key leaks into the error: %v", err)
				}
			})
		}
	}
}

func TestBothAdaptersStreamACompleteAnswer(t *testing.T) {
	for _, p := range []string{"openai", "anthropic"} {
		t.Run(p, func(t *testing.T) {
			fp := start(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: p, Model: "m", Profile: "p:a"},
				Respond: []fakeprovider.Response{{Text: "an answer in five words", Usage: &fakeprovider.Usage{Input: 12, Output: 5}}}}})
			chunks := 0
			req := request(fp, p)
			req.OnChunk = func() { chunks++ }
			resp, err := provider.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if a := resp.Answer; a.Text != "an answer in five words" || a.Usage.Input != 12 || a.Usage.Output != 5 || a.FinishReason != provider.FinishStop {
				t.Errorf("%+v", resp)
			}
			if chunks < 5 {
				t.Errorf("heartbeat called %d times, want one per chunk", chunks)
			}
			calls := fp.Calls()
			if len(calls) != 1 || calls[0].Provider != p || calls[0].Profile != "p:a" || !calls[0].Stream {
				t.Errorf("calls %+v", calls)
			}
		})
	}
}

func TestOpenAICompatibleBaseURLRouting(t *testing.T) {
	fp := start(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "ollama"}, Respond: []fakeprovider.Response{{Text: "from ollama"}}}})
	req := request(fp, "ollama")
	resp, err := provider.Complete(context.Background(), req)
	if err != nil || resp.Answer.Text != "from ollama" {
		t.Fatalf("%+v %v", resp, err)
	}
	if _, err := provider.Complete(context.Background(), provider.Request{Provider: "nowhere", Model: "m"}); err == nil ||
		!strings.Contains(err.Error(), "models.providers.nowhere.baseUrl") {
		t.Errorf("an unknown provider without a base URL: %v", err)
	}
}

func TestConnectionRefusedKeepsItsKind(t *testing.T) {
	_, err := provider.Complete(context.Background(), provider.Request{Provider: "openai", Model: "m", BaseURL: "http://127.0.0.1:1/v1",
		Credential: provider.Credential{Key: secret}})
	var e *provider.Error
	if !errors.As(err, &e) || e.Net != "refused" {
		t.Fatalf("%v", err)
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"key sk-abcdef123456 leaked":       "key sk-*** leaked",
		"Authorization: Bearer abc.def-gh": "Authorization: Bea***",
		"x " + secret + " y":               "x *** y",
	} {
		if got := provider.Mask(in, secret); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnExpiredOAuthTokenIsRefreshedFirst(t *testing.T) {
	fp := start(t, nil)
	fp.AddCredential("fresh-access", "openai:me@example.com")
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("refresh_token") != "good-refresh" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"refresh token revoked"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"fresh-access","token_type":"Bearer","expires_in":3600,"refresh_token":"next-refresh"}`))
	}))
	defer tokens.Close()

	req := request(fp, "openai")
	req.TokenURL = tokens.URL
	req.Credential = provider.Credential{Type: "oauth", Access: "stale-access", Refresh: "good-refresh", Expires: time.Now().Add(-time.Minute)}
	resp, err := provider.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Refreshed == nil || resp.Refreshed.Access != "fresh-access" || resp.Refreshed.Refresh != "next-refresh" {
		t.Fatalf("refreshed %+v", resp.Refreshed)
	}
	if calls := fp.Calls(); len(calls) != 1 || calls[0].Profile != "openai:me@example.com" {
		t.Errorf("the call did not use the refreshed token: %+v", calls)
	}

	req.Credential.Refresh = "revoked-refresh"
	_, err = provider.Complete(context.Background(), req)
	var e *provider.Error
	if !errors.As(err, &e) || e.Code != provider.CodeOAuthRefreshFailed || !strings.Contains(e.Message, "invalid_grant") {
		t.Fatalf("a failed refresh: %v", err)
	}
	if reason := policy.Classify(policy.Failure{Code: e.Code, Message: e.Message}); reason != policy.ReasonAuthPermanent {
		t.Errorf("a failed refresh classifies as %s, want auth_permanent", reason)
	}
	if len(fp.Calls()) != 1 {
		t.Error("a failed refresh must not call the model")
	}

	// A token not yet expired is used as it is.
	req.Credential = provider.Credential{Type: "oauth", Access: "fresh-access", Refresh: "revoked-refresh", Expires: time.Now().Add(time.Hour)}
	if resp, err := provider.Complete(context.Background(), req); err != nil || resp.Refreshed != nil {
		t.Errorf("%+v %v", resp, err)
	}
}

func TestTLSAgainstAPlainServerKeepsItsKind(t *testing.T) {
	fp := start(t, nil)
	_, err := provider.Complete(context.Background(), provider.Request{Provider: "openai", Model: "m",
		BaseURL: strings.Replace(fp.BaseURL("openai", false), "http://", "https://", 1), Credential: provider.Credential{Key: secret}})
	var e *provider.Error
	if !errors.As(err, &e) || e.Net != "tls" {
		t.Fatalf("%v (%+v)", err, e)
	}
}
