package policy

import "testing"

func TestClassify(t *testing.T) {
	cases := []struct {
		name string
		f    Failure
		want Reason
	}{
		// Status mappings.
		{"a 401 with no text is auth", Failure{Status: 401}, ReasonAuth},
		{"a 403 saying the key was revoked is auth_permanent", Failure{Status: 403, Message: "API key revoked"}, ReasonAuthPermanent},
		{"a 403 with billing text is billing", Failure{Status: 403, Message: "insufficient credits"}, ReasonBilling},
		{"a bare 402 is billing", Failure{Status: 402}, ReasonBilling},
		{"a 402 with a retryable periodic limit is rate_limit", Failure{Status: 402, Message: "weekly usage limit exhausted, try again later"}, ReasonRateLimit},
		{"a 402 subscription quota with a rolling window is rate_limit", Failure{Status: 402, Message: "subscription quota limit reached; rolling time window"}, ReasonRateLimit},
		{"a 402 asking to top up is billing", Failure{Status: 402, Message: "Please top up your account"}, ReasonBilling},
		{"a 404 is model_not_found", Failure{Status: 404, Message: "Not Found"}, ReasonModelNotFound},
		{"a 404 whose text says the session expired keeps session_expired", Failure{Status: 404, Message: "session not found"}, ReasonSessionExpired},
		{"a 408 is timeout", Failure{Status: 408}, ReasonTimeout},
		{"a bare 410 is transport, not session expiry", Failure{Status: 410, Message: "Gone"}, ReasonTimeout},
		{"a 410 saying the conversation expired is session_expired", Failure{Status: 410, Message: "conversation expired"}, ReasonSessionExpired},
		{"a 429 is rate_limit", Failure{Status: 429}, ReasonRateLimit},
		{"a 429 with money words stays billing", Failure{Status: 429, Message: "Insufficient balance. Please top up your account"}, ReasonBilling},
		{"a 500 is a server error, which is timeout", Failure{Status: 500, Message: "Internal Server Error"}, ReasonTimeout},
		{"a 502 is timeout", Failure{Status: 502}, ReasonTimeout},
		{"a 503 saying service unavailable is overloaded", Failure{Status: 503, Message: "Service Unavailable"}, ReasonOverloaded},
		{"a 529 is overloaded", Failure{Status: 529}, ReasonOverloaded},
		{"a Responses stream's server_error event, with no status and vague words, is a server error, which is timeout",
			Failure{Code: "server_error", Message: "The model had a problem with your request."}, ReasonTimeout},
		{"a 400 with no body is not a failover signal", Failure{Status: 400, Message: "400 status code (no body)"}, ReasonNone},
		{"a 422 with no body is not a failover signal", Failure{Status: 422}, ReasonNone},
		{"a 400 with a body that says nothing known is format", Failure{Status: 400, Message: "Invalid value for 'temperature'"}, ReasonFormat},
		{"a 400 with billing text is billing", Failure{Status: 400, Message: "Your credit balance is too low"}, ReasonBilling},
		{"a 413 is context overflow", Failure{Status: 413}, ReasonContextOverflow},
		{"a leading status in bare text counts", Failure{Message: "429 Too Many Requests"}, ReasonRateLimit},
		{"prose with 402 is not billing", Failure{Message: "402 records processed"}, ReasonNone},

		// JSON bodies.
		{"an OpenAI rate-limit body", Failure{Status: 429, Body: `{"error":{"message":"Rate limit reached for gpt-5","type":"requests","code":"rate_limit_exceeded"}}`}, ReasonRateLimit},
		{"an OpenAI quota body at 429 is a rate limit: the message decides before the code", Failure{Status: 429, Body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`}, ReasonRateLimit},
		{"an Anthropic overloaded body", Failure{Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, ReasonOverloaded},
		{"an Anthropic invalid-request body is format", Failure{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages: text content blocks must be non-empty"}}`}, ReasonFormat},
		{"an Anthropic authentication body is auth", Failure{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}, ReasonAuth},
		{"a body wrapped by a short message is read", Failure{Status: 400, Message: "400 Bad Request", Body: `{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}`}, ReasonContextOverflow},
		{"an error type with no message", Failure{Type: "rate_limit_error"}, ReasonRateLimit},

		// Provider-scoped matchers.
		{"OpenRouter's 'Provider returned error' is timeout", Failure{Provider: "openrouter", Message: "Provider returned error"}, ReasonTimeout},
		{"elsewhere it means nothing", Failure{Provider: "openai", Message: "Provider returned error"}, ReasonNone},
		{"OpenRouter's 403 Key limit exceeded is billing", Failure{Provider: "OpenRouter", Status: 403, Message: "Key limit exceeded"}, ReasonBilling},
		{"another provider's 403 Key limit exceeded is auth", Failure{Provider: "openai", Status: 403, Message: "Key limit exceeded"}, ReasonAuth},

		// Stop reasons and server text.
		{"finish_reason: error", Failure{Message: "finish_reason: error"}, ReasonTimeout},
		{"a stream that ended before message_stop", Failure{Message: "anthropic stream ended before message_stop"}, ReasonTimeout},
		{"a plugin's own stream text is not a timeout", Failure{Message: "Ollama API stream ended without a final response"}, ReasonNone},
		{"bad gateway text", Failure{Message: "502 Bad Gateway"}, ReasonTimeout},
		{"a structured server_error code", Failure{Message: `{"code":"server_error","message":"x"}`}, ReasonTimeout},
		{"LLM request failed. exactly", Failure{Message: "LLM request failed."}, ReasonTimeout},
		{"LLM request failed: with detail is not", Failure{Message: "LLM request failed: something"}, ReasonNone},

		// Context overflow, which never fails over, and what only looks like it.
		{"maximum context length", Failure{Status: 400, Message: "This model's maximum context length is 128000 tokens"}, ReasonContextOverflow},
		{"overflow under a 5xx keeps overflow", Failure{Status: 500, Message: "context_length_exceeded"}, ReasonContextOverflow},
		{"Vertex overflow under a 404", Failure{Status: 404, Message: "input exceeds the maximum number of tokens"}, ReasonContextOverflow},
		{"context window too small is not overflow", Failure{Message: "Context window too small: minimum is 16000"}, ReasonNone},
		{"chatter about an overflow bug is not overflow", Failure{Message: "Let's investigate the context overflow bug"}, ReasonNone},
		{"a TPM limit is a rate limit, not overflow", Failure{Status: 429, Message: "Request too large for gpt-5 on tokens per minute (TPM): Limit 30000"}, ReasonRateLimit},

		// Auth.
		{"invalid api key", Failure{Message: "Invalid API key"}, ReasonAuth},
		{"an invalid keystore is not an invalid key", Failure{Message: "INVALID API KEYSTORE path"}, ReasonNone},
		{"invalid_grant on refresh is auth_permanent", Failure{Message: "OAuth refresh failed: invalid_grant"}, ReasonAuthPermanent},
		{"a failed OAuth refresh is auth_permanent", Failure{Code: "oauth_refresh_failed", Message: "OAuth refresh failed at https://x"}, ReasonAuthPermanent},
		{"a deactivated workspace code beats the status", Failure{Status: 429, Code: "DEACTIVATED_WORKSPACE"}, ReasonAuthPermanent},

		// Other reasons.
		{"unknown model", Failure{Message: "Unknown model: openai/gpt-5.3-codex"}, ReasonModelNotFound},
		{"roles must alternate", Failure{Message: "roles must alternate"}, ReasonFormat},
		{"unsupported image input", Failure{Message: "this model does not support image input"}, ReasonFormat},
		{"an image too large is not a failover signal", Failure{Message: "image exceeds 5 MB maximum"}, ReasonNone},
		{"a throttling code", Failure{Code: "ThrottlingException"}, ReasonRateLimit},
		{"a connection reset before any answer", Failure{Net: NetReset}, ReasonTimeout},
		{"a TLS failure before any answer", Failure{Net: NetTLS}, ReasonTimeout},
		{"nothing at all", Failure{}, ReasonNone},
		{"a Markdown page mentioning billing is not billing", Failure{Message: "## Plans\npayment required\n## Billing\n"}, ReasonNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := classifyAsCame(c.f); got != c.want {
				t.Errorf("Classify(%+v) = %s, want %s", c.f, got, c.want)
			}
		})
	}
}

func FuzzClassify(f *testing.F) {
	f.Add("openai", 429, "Rate limit reached", `{"error":{"message":"x"}}`, "rate_limit_exceeded")
	f.Add("openrouter", 403, "Key limit exceeded", "", "")
	f.Add("", 0, "\xff{\"error\":", "{", "")
	// Every example of the rule tables (issue 20), so the fuzzer starts from real provider texts.
	for _, c := range allRuleCases() {
		f.Add(c.f.Provider, c.f.Status, c.f.Message, c.f.Body, c.f.Code)
	}
	f.Fuzz(func(t *testing.T, provider string, status int, msg, body, code string) {
		in := parsed(Failure{Provider: provider, Status: status, Message: msg, Body: body, Code: code})
		r := Classify(in)
		if r != ReasonNone && !validReason(r) {
			t.Fatalf("unknown reason %q", r) // the classifier's own server_error never leaks
		}
		if again := Classify(in); again != r {
			t.Fatalf("not deterministic: %s then %s", r, again)
		}
	})
}

func validReason(r Reason) bool {
	for _, v := range AllReasons {
		if v == r {
			return true
		}
	}
	return false
}
