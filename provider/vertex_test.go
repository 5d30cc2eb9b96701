package provider

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
)

// Vertex AI against the fake provider's Vertex routes and token endpoint (this file is inside the
// package: it reads what the Gemini wire drops and the token cache).

const vertexGiven = "ya29.a-given-access-token"

func vertexFake(t *testing.T, rules []fakeprovider.Rule) *fakeprovider.Server {
	t.Helper()
	fp := fakeprovider.New(rules, map[string]string{vertexGiven: "vertex:token"})
	if err := fp.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fp.Close() })
	return fp
}

// vertexRecorder is a transport that keeps the path and query of every request it sends (the token
// requests and the model calls: Complete sends both through Request.HTTPClient's transport).
type vertexRecorder struct {
	mu   sync.Mutex
	urls []string
}

func (r *vertexRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.urls = append(r.urls, req.URL.Path)
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (r *vertexRecorder) sent() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.urls)
}

func (r *vertexRecorder) count(suffix string) int {
	n := 0
	for _, u := range r.sent() {
		if strings.HasSuffix(u, suffix) {
			n++
		}
	}
	return n
}

// vertexRequest is a call to model on the fake's Vertex AI, in us-east5 of proj-1, with a given
// access token.
func vertexRequest(fp *fakeprovider.Server, model string, turn Turn) (Request, *vertexRecorder) {
	rec := &vertexRecorder{}
	return Request{Provider: "vertex", API: APIVertexAI, Model: model, BaseURL: fp.URL() + "/p/vertex", Region: "us-east5", Project: "proj-1",
		Credential: Credential{Type: "token", Token: vertexGiven}, Turn: turn, HTTPClient: &http.Client{Transport: rec},
		ResponseTimeout: 2 * time.Second, FirstTokenTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second}, rec
}

func vertexBody(t *testing.T, fp *fakeprovider.Server, n int) map[string]any {
	t.Helper()
	calls := fp.Calls()
	if len(calls) < n {
		t.Fatalf("%d calls, want %d", len(calls), n)
	}
	var body map[string]any
	if err := json.Unmarshal(calls[n-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func vertexSameJSON(t *testing.T, got any, want string) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v\n%s", err, want)
	}
	b, _ := json.Marshal(got)
	_ = json.Unmarshal(b, &g)
	if gb, _ := json.Marshal(g); string(gb) != func() string { wb, _ := json.Marshal(w); return string(wb) }() {
		t.Errorf("sent:\n%s\nwant:\n%s", gb, want)
	}
}

// vertexReason is the reason a policy gives e, mapped as activities.FailureOf maps it.
func vertexReason(e *Error) policy.Reason {
	return policy.AttemptReason(policy.Failure{Provider: "vertex", Status: e.Status, Code: e.Code, Type: e.Type, Message: e.Message,
		Wrapped: e.Wrapped, Detail: e.Detail, Body: e.BodyPreview, Page: e.Page, DetailPage: e.DetailPage,
		Net: policy.NetErrorKind(e.Net), Stream: policy.StreamFault(e.Stream)})
}

var (
	vertexKeyOnce sync.Once
	vertexKeyPEM  string
)

// vertexServiceAccount is a service account's JSON key whose token_uri is tokenURI.
func vertexServiceAccount(t *testing.T, email, project, tokenURI string) string {
	t.Helper()
	vertexKeyOnce.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		der, _ := x509.MarshalPKCS8PrivateKey(key)
		vertexKeyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	})
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": project, "private_key_id": "0123456789abcdef0123456789abcdef01234567",
		"private_key": vertexKeyPEM, "client_email": email, "client_id": "1234567890", "token_uri": tokenURI})
	return string(b)
}

// vertexPEMLines are the key's base64 lines: none may show in an error.
func vertexPEMLines() []string {
	var out []string
	for _, l := range strings.Split(vertexKeyPEM, "\n") {
		if len(l) > 16 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

func TestVertexGeminiWithAServiceAccount(t *testing.T) {
	fp := vertexFake(t, []fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "vertex"}, Respond: []fakeprovider.Response{
		{Text: "hello there", Usage: &fakeprovider.Usage{Input: 9, Output: 2, Cached: 3}}}}})
	const email = "baton@sa-project.iam.gserviceaccount.com"
	fp.AddCredential(fakeprovider.FakeAccessToken(email), "vertex:sa")
	req, rec := vertexRequest(fp, "gemini-2.5-pro", TextTurn("hi"))
	req.Project = "" // the key's project_id
	req.Credential = Credential{Type: CredentialServiceAccount, ServiceAccount: vertexServiceAccount(t, email, "sa-project", fp.URL()+"/p/vertex/token")}
	for i := 1; i <= 2; i++ {
		resp, err := Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if a := resp.Answer; a.Text != "hello there" || a.Usage != (Usage{Input: 9, Output: 2, CachedInput: 3}) || a.FinishReason != FinishStop {
			t.Errorf("%+v", a)
		}
	}
	// The key was traded once for a token, which went as the bearer of both calls (the fake
	// knows the token's profile), to the region's Gemini model in the key's project.
	if n := rec.count("/token"); n != 1 {
		t.Errorf("%d token requests, want 1 (%q)", n, rec.sent())
	}
	for i, c := range fp.Calls() {
		if c.Provider != "vertex" || c.Model != "gemini-2.5-pro" || c.Profile != "vertex:sa" || !c.Stream {
			t.Errorf("call %d: %+v", i, c)
		}
	}
	if got := rec.sent()[1]; got != "/p/vertex/v1/projects/sa-project/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent" {
		t.Errorf("path %s", got)
	}
	vertexSameJSON(t, vertexBody(t, fp, 1), `{"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {}}`)
}

func TestVertexAmbientCredentials(t *testing.T) {
	fp := vertexFake(t, nil)
	const email = "ambient@adc-project.iam.gserviceaccount.com"
	fp.AddCredential(fakeprovider.FakeAccessToken(email), "vertex:adc")
	file := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(file, []byte(vertexServiceAccount(t, email, "adc-project", fp.URL()+"/token")), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", file)
	vertexTokens.mu.Lock()
	delete(vertexTokens.entries, "ambient")
	vertexTokens.mu.Unlock()
	req, rec := vertexRequest(fp, "gemini-2.5-flash", TextTurn("hi"))
	req.Project, req.Credential = "", Credential{Type: CredentialAmbient}
	if _, err := Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// The application-default credentials' token, and their project, without the prefix the
	// fake's provider routes would add.
	if c := fp.Calls()[0]; c.Profile != "vertex:adc" || c.Provider != "vertex" {
		t.Errorf("%+v", c)
	}
	if got := rec.sent(); len(got) != 2 || got[0] != "/token" || !strings.Contains(got[1], "/projects/adc-project/locations/us-east5/") {
		t.Errorf("sent %q", got)
	}
	// The project comes from the cache as the token does.
	if _, err := Complete(context.Background(), req); err != nil || rec.count("/token") != 1 {
		t.Errorf("%v, %d token requests", err, rec.count("/token"))
	}
}

func TestAServiceAccountKeyNeverShowsInAnError(t *testing.T) {
	var sa string
	// The worst token endpoint: it quotes the key back in its refusal.
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": "Invalid JWT Signature. Key: " + strings.Join(vertexPEMLines(), "")})
	}))
	t.Cleanup(tokens.Close)
	fp := vertexFake(t, nil)
	sa = vertexServiceAccount(t, "gone@p.iam.gserviceaccount.com", "p", tokens.URL)
	req, _ := vertexRequest(fp, "gemini-2.5-pro", TextTurn("hi"))
	req.Credential = Credential{Type: CredentialServiceAccount, ServiceAccount: sa}
	_, err := Complete(context.Background(), req)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeOAuthRefreshFailed || !strings.Contains(e.Message, "invalid_grant") || vertexReason(e) != policy.ReasonAuthPermanent {
		t.Fatalf("%+v", err)
	}
	for _, line := range vertexPEMLines() {
		if strings.Contains(err.Error(), line) || strings.Contains(e.BodyPreview, line) || strings.Contains(e.Detail, line) {
			t.Fatalf("the private key shows: %v", err)
		}
	}
	if len(fp.Calls()) != 0 {
		t.Errorf("a model call without a token: %+v", fp.Calls())
	}

	// A key that does not parse is the configuration's, and says nothing of itself.
	bad := strings.Replace(sa, "MII", "XXX", 1)
	req.Credential.ServiceAccount = bad
	_, err = Complete(context.Background(), req)
	if !errors.As(err, &e) || vertexReason(e) != policy.ReasonAuthPermanent || e.Net != "" {
		t.Fatalf("%+v", err)
	}
	for _, line := range vertexPEMLines() {
		if strings.Contains(err.Error(), line[3:]) {
			t.Fatalf("the private key shows: %v", err)
		}
	}
	// A token endpoint that cannot be reached is a network failure, not the key's.
	tokens.Close()
	req.Credential.ServiceAccount = sa
	_, err = Complete(context.Background(), req)
	if !errors.As(err, &e) || e.Net != "refused" || vertexReason(e) != policy.ReasonTimeout {
		t.Fatalf("%+v", err)
	}
}

func TestVertexClaudeToolCallRoundTrip(t *testing.T) {
	weather := fakeprovider.ToolCall{ID: "toolu_weather_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	fp := vertexFake(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{{ToolCalls: []fakeprovider.ToolCall{weather}}, {Text: "18 C in Paris"}}}})
	turn := Turn{Messages: []Message{{Role: RoleUser, Content: []Part{TextPart("weather in Paris?")}}},
		Tools: []Tool{{Name: "get_weather", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}}
	req, rec := vertexRequest(fp, "claude-sonnet-4@20250514", turn)
	req.Region = "global"
	var calls []ToolCall
	req.OnDelta = func(d Delta) {
		if d.ToolCall != nil {
			calls = append(calls, *d.ToolCall)
		}
	}
	resp, err := Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := ToolCall{ID: "toolu_weather_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	if a := resp.Answer; len(a.ToolCalls) != 1 || a.ToolCalls[0] != want || a.FinishReason != FinishToolCalls || !slices.Equal(calls, a.ToolCalls) {
		t.Fatalf("%+v (handed out %+v)", a, calls)
	}
	if c := fp.Calls()[0]; c.Provider != "vertex" || c.Model != "claude-sonnet-4@20250514" || c.Profile != "vertex:token" || !c.Stream || c.Tools != 1 {
		t.Errorf("%+v", c)
	}
	if got := rec.sent()[0]; got != "/p/vertex/v1/projects/proj-1/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict" {
		t.Errorf("path %s", got)
	}
	body := vertexBody(t, fp, 1)
	if body["anthropic_version"] != "vertex-2023-10-16" || body["model"] != nil || body["stream"] != true || body["max_tokens"] == nil {
		t.Errorf("body %v", body)
	}

	// The next turn: the call and its result, the Messages translation whole.
	turn.Messages = append(turn.Messages, Message{Role: RoleAssistant, Content: []Part{{Type: PartToolCall, CallID: want.ID, Name: want.Name, Arguments: want.Arguments}}},
		Message{Role: RoleTool, Content: []Part{{Type: PartToolResult, CallID: want.ID, Result: []Part{TextPart("18 C")}}}})
	req.Turn = turn
	resp, err = Complete(context.Background(), req)
	if err != nil || resp.Answer.Text != "18 C in Paris" {
		t.Fatalf("%+v %v", resp, err)
	}
	vertexSameJSON(t, vertexBody(t, fp, 2)["messages"].([]any)[1:], `[
		{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_weather_1", "name": "get_weather", "input": {"city": "Paris"}}]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_weather_1", "content": [{"type": "text", "text": "18 C"}]}]}]`)
}

func TestVertexNeedsARegionAndAProject(t *testing.T) {
	fp := vertexFake(t, nil)
	for _, c := range []struct {
		name, want string
		set        func(*Request)
	}{
		{"no region", "models.providers.vertex.region", func(r *Request) { r.Region = "" }},
		{"a region that is no location", `region "us-east5.evil.example/x"`, func(r *Request) { r.Region = "us-east5.evil.example/x" }},
		{"no project", "models.providers.vertex.project", func(r *Request) { r.Project = "" }},
		{"a credential Vertex AI does not take", `"api_key" credential`, func(r *Request) { r.Credential = Credential{Type: "api_key", Key: "AIza-key"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := vertexRequest(fp, "gemini-2.5-pro", TextTurn("hi"))
			c.set(&req)
			_, err := Complete(context.Background(), req)
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Message, c.want) || e.Net != "" || vertexReason(e) != policy.ReasonAuthPermanent {
				t.Errorf("%+v", err)
			}
		})
	}
	if len(fp.Calls()) != 0 {
		t.Errorf("calls %+v", fp.Calls())
	}
}

func TestVertexErrorsClassify(t *testing.T) {
	streamErr := json.RawMessage(`{"type":"overloaded_error","message":"Overloaded"}`)
	for _, c := range []struct {
		name, model string
		resp        fakeprovider.Response
		status      int
		typ, code   string
		reason      policy.Reason
	}{
		{"a quota, the object in an array", "gemini-2.5-pro", fakeprovider.Response{Status: 429, Body: `[{"error":{"code":429,"message":"Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.","status":"RESOURCE_EXHAUSTED"}}]`},
			429, "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED", policy.ReasonRateLimit},
		{"an input over the window, as a 404", "gemini-2.5-pro", fakeprovider.Response{Status: 404, Body: `{"error":{"code":404,"message":"The input token count (2000000) exceeds the maximum number of tokens allowed (1048576).","status":"NOT_FOUND"}}`},
			404, "NOT_FOUND", "CONTEXT_LENGTH_EXCEEDED", policy.ReasonContextOverflow},
		{"an input over the window, as a 400", "gemini-2.5-pro", fakeprovider.Response{Status: 400, Body: `{"error":{"code":400,"message":"Unable to submit request because the input token count is 1361047 but model only supports up to 1048576. Reduce the input token count and try again. You can also use the CountTokens API to calculate prompt token count and billable characters. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/send-request-with-gemini","status":"INVALID_ARGUMENT"}}`},
			400, "INVALID_ARGUMENT", "CONTEXT_LENGTH_EXCEEDED", policy.ReasonContextOverflow},
		{"a publisher model the project cannot reach", "gemini-9", fakeprovider.Response{Status: 404, Body: "{\"error\":{\"code\":404,\"message\":\"Publisher Model `projects/proj-1/locations/us-east5/publishers/google/models/gemini-9` was not found or your project does not have access to it. Please ensure you are using a valid model version. For more information, see: https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions\",\"status\":\"NOT_FOUND\"}}"},
			404, "NOT_FOUND", "MODEL_NOT_FOUND", policy.ReasonModelNotFound},
		{"a permission the account lacks", "gemini-2.5-pro", fakeprovider.Response{Status: 403, Body: `{"error":{"code":403,"message":"Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-pro' (or it may not exist).","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"IAM_PERMISSION_DENIED","domain":"aiplatform.googleapis.com","metadata":{"permission":"aiplatform.endpoints.predict"}}]}}`},
			403, "PERMISSION_DENIED", "INVALID_API_KEY", policy.ReasonAuth},
		{"Claude overloaded, in Anthropic's words", "claude-sonnet-4@20250514", fakeprovider.Response{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			529, "overloaded_error", "", policy.ReasonOverloaded},
		{"Claude's quota, in Google's words", "claude-sonnet-4@20250514", fakeprovider.Response{Status: 429, Body: `{"error":{"code":429,"message":"Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: anthropic-claude-sonnet-4. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.","status":"RESOURCE_EXHAUSTED"}}`},
			429, "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED", policy.ReasonRateLimit},
		{"Claude's prompt too long", "claude-sonnet-4@20250514", fakeprovider.Response{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`},
			400, "invalid_request_error", "", policy.ReasonContextOverflow},
		{"Claude overloaded mid-answer", "claude-sonnet-4@20250514", fakeprovider.Response{Text: "so far it went", StreamError: streamErr, StreamErrorAfterChunks: vertexInt(2)},
			0, "overloaded_error", "", policy.ReasonOverloaded},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := vertexFake(t, []fakeprovider.Rule{{Respond: []fakeprovider.Response{c.resp}}})
			req, _ := vertexRequest(fp, c.model, TextTurn("hi"))
			_, err := Complete(context.Background(), req)
			var e *Error
			if !errors.As(err, &e) || e.Status != c.status || e.Type != c.typ || e.Code != c.code || strings.HasPrefix(e.Message, "{") || strings.HasPrefix(e.Message, "[") {
				t.Fatalf("%+v", err)
			}
			if reason := vertexReason(e); reason != c.reason {
				t.Errorf("classified %s, want %s", reason, c.reason)
			}
			if strings.Contains(err.Error(), vertexGiven) || strings.Contains(e.BodyPreview, vertexGiven) {
				t.Errorf("the token leaks: %+v", e)
			}
		})
	}
}

func vertexInt(n int) *int { return &n }

func TestVertexEndpointsAndPublishers(t *testing.T) {
	for region, want := range map[string]string{"global": "https://aiplatform.googleapis.com", "us-east5": "https://us-east5-aiplatform.googleapis.com",
		"eu": "https://aiplatform.eu.rep.googleapis.com"} {
		if got := vertexEndpoint(region); got != want {
			t.Errorf("%s: %s, want %s", region, got, want)
		}
	}
	for model, want := range map[string]string{"claude-opus-4-1@20250805": "claude-opus-4-1@20250805", "anthropic/claude-3-5-haiku": "claude-3-5-haiku",
		"publishers/anthropic/models/claude-sonnet-4": "claude-sonnet-4", "gemini-2.5-pro": "", "google/gemini-2.5-pro": ""} {
		if got, ok := vertexClaude(model); ok != (want != "") || ok && got != want {
			t.Errorf("%s: %q %v", model, got, ok)
		}
	}
}

// The Gemini wire's drops (Dropped reads them through geminiDrops), alike for both backends.
func TestWhatTheGeminiWireDrops(t *testing.T) {
	img := Part{Type: PartImage, URL: "http://example.com/cat.png", Detail: "high"}
	sys := TextPart("be brief")
	sys.CacheControl = json.RawMessage(`{"type":"ephemeral"}`)
	turn := Turn{
		Messages: []Message{
			{Role: RoleSystem, Content: []Part{sys, {Type: PartImage, Data: []byte("\x89PNG\r\n\x1a\n")}}},
			{Role: RoleUser, Content: []Part{TextPart("look"), img}},
			{Role: RoleAssistant, Content: []Part{
				{Type: PartReasoning, Text: "anthropic's", Signature: "sig=="},
				{Type: PartReasoning, Text: "openai's", ReasoningID: "rs_1", Encrypted: "enc"},
				{Type: PartReasoning, Text: "plain"},
				{Type: PartToolCall, CallID: "c1", Name: "f", Arguments: `{}`}}},
			{Role: RoleTool, Content: []Part{{Type: PartToolResult, CallID: "c1", Result: []Part{TextPart("ok")}}, TextPart("stray")}},
			{Role: RoleTool, Content: []Part{{Type: PartToolResult, CallID: "nowhere", Result: []Part{TextPart("?")}}}},
		},
		Tools:             []Tool{{Name: "f", Strict: vertexPtr(true), CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}},
		ParallelToolCalls: vertexPtr(false),
		Params: Params{Seed: vertexPtr(int64(1) << 40), Stop: []string{"a", "b", "c", "d", "e", "f"}, ReasoningEffort: "none",
			ResponseFormat: &ResponseFormat{Type: FormatJSONSchema, Name: "n", Description: "d", Strict: vertexPtr(true), Schema: json.RawMessage(`{"type":"object"}`)}},
	}
	d := &drops{}
	geminiDrops(turn, d)
	got := slices.Clone(d.list)
	slices.Sort(got)
	want := []string{"messages.content.cacheControl", "messages.content.detail", "messages.content.image (a URL Gemini cannot take)",
		"messages.content.image (in a system message)", "messages.content.reasoning (not a Gemini thought signature)",
		"messages.content.reasoning (without a signature)", "messages.content.text (in a tool message)",
		"messages.content.tool_result (answering no call of the turn)", "parallelToolCalls",
		"params.reasoningEffort", "params.responseFormat.description", "params.responseFormat.name", "params.responseFormat.strict",
		"params.seed", "params.stop", "tools.cacheControl", "tools.strict"}
	if !slices.Equal(got, want) {
		t.Errorf("drops\n%q\nwant\n%q", got, want)
	}
	// What is dropped does not go: five stop sequences, no seed, no thinking config.
	contents, config := geminiRequest(turn, nil)
	if len(config.StopSequences) != 5 || config.Seed != nil || config.ThinkingConfig != nil || len(contents) != 3 {
		t.Errorf("%+v %d contents", config, len(contents))
	}
	// A turn the wire carries whole drops nothing.
	whole := &drops{}
	if geminiDrops(TextTurn("hi"), whole); len(whole.list) != 0 {
		t.Errorf("%q", whole.list)
	}
}

func vertexPtr[T any](v T) *T { return &v }
