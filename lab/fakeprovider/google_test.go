package fakeprovider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"
)

// geminiClient is the official SDK on the fake's Gemini API (or Vertex AI, with a bearer).
func geminiClient(t *testing.T, fp *Server, vertex bool) *genai.Client {
	t.Helper()
	cc := &genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: "sk-test",
		HTTPOptions: genai.HTTPOptions{BaseURL: fp.URL() + "/p/gemini", APIVersion: "v1beta"}}
	if vertex {
		cc = &genai.ClientConfig{Backend: genai.BackendVertexAI, Project: "proj", Location: "us-east5",
			HTTPClient:  &http.Client{Transport: bearer("sk-test")},
			HTTPOptions: genai.HTTPOptions{BaseURL: fp.URL(), APIVersion: "v1"}}
	}
	client, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

var geminiTools = &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get_weather"}, {Name: "get_time"}}}}}

// checkGemini checks what the SDK made of the scripted answer: thoughts, the text, two calls (the
// first signed, with the scripted id), the finish and the usage.
func checkGemini(t *testing.T, parts []*genai.Part, finish genai.FinishReason, u *genai.GenerateContentResponseUsageMetadata) {
	t.Helper()
	var thoughts, text strings.Builder
	var calls []*genai.Part
	for _, p := range parts {
		switch {
		case p.Thought:
			thoughts.WriteString(p.Text)
		case p.FunctionCall != nil:
			calls = append(calls, p)
		default:
			text.WriteString(p.Text)
		}
	}
	if thoughts.String() != "the user wants weather" || text.String() != "let me check" || finish != genai.FinishReasonStop {
		t.Errorf("thoughts %q text %q finish %s", thoughts.String(), text.String(), finish)
	}
	if len(calls) != 2 || calls[0].FunctionCall.Name != "get_weather" || calls[0].FunctionCall.ID != "call_weather_1" ||
		calls[0].FunctionCall.Args["placename"] != "Zürich" || string(calls[0].ThoughtSignature) != "sig-abc" ||
		calls[1].FunctionCall.Name != "get_time" || calls[1].FunctionCall.ID != "call_time_2" || len(calls[1].ThoughtSignature) != 0 {
		t.Errorf("calls %+v", calls)
	}
	if u == nil || u.PromptTokenCount != 100 || u.CachedContentTokenCount != 64 || u.ThoughtsTokenCount != 4 || u.CandidatesTokenCount != 16 || u.TotalTokenCount != 120 {
		t.Errorf("usage %+v", u)
	}
}

func TestGeminiReachesTheSDK(t *testing.T) {
	for _, vertex := range []bool{false, true} {
		for _, stream := range []bool{false, true} {
			t.Run(map[bool]string{false: "gemini", true: "vertex"}[vertex]+map[bool]string{false: " whole", true: " stream"}[stream], func(t *testing.T) {
				fp := startFake(t, []Rule{{Respond: []Response{{Thinking: "the user wants weather", Signature: "sig-abc", Text: "let me check",
					ToolCalls: toolCalls, Usage: &Usage{Input: 100, Output: 20, Cached: 64}}}}})
				client := geminiClient(t, fp, vertex)
				contents := genai.Text("weather in Zürich?")
				if !stream {
					r, err := client.Models.GenerateContent(context.Background(), "gemini-2.5-pro", contents, geminiTools)
					if err != nil {
						t.Fatal(err)
					}
					checkGemini(t, r.Candidates[0].Content.Parts, r.Candidates[0].FinishReason, r.UsageMetadata)
				} else {
					var parts []*genai.Part
					var finish genai.FinishReason
					var usage *genai.GenerateContentResponseUsageMetadata
					n := 0
					for r, err := range client.Models.GenerateContentStream(context.Background(), "gemini-2.5-pro", contents, geminiTools) {
						if err != nil {
							t.Fatal(err)
						}
						n++
						parts = append(parts, r.Candidates[0].Content.Parts...)
						finish, usage = r.Candidates[0].FinishReason, r.UsageMetadata
					}
					// Thoughts (4 words), text (3), a chunk per call (2), the finish.
					if n != 10 {
						t.Errorf("%d chunks", n)
					}
					checkGemini(t, parts, finish, usage)
				}
				provider := map[bool]string{false: "gemini", true: "vertex"}[vertex]
				calls := fp.Calls()
				if len(calls) != 1 || calls[0].Provider != provider || calls[0].Model != "gemini-2.5-pro" || calls[0].Profile != "p:test" ||
					calls[0].Stream != stream || calls[0].Tools != 2 || calls[0].Outcome != "tool calls" {
					t.Errorf("calls %+v", calls)
				}
				var body struct {
					Contents []*genai.Content `json:"contents"`
				}
				if err := json.Unmarshal(calls[0].Body, &body); err != nil || len(body.Contents) != 1 || body.Contents[0].Parts[0].Text != "weather in Zürich?" {
					t.Errorf("recorded body %s: %v", calls[0].Body, err)
				}
			})
		}
	}
}

// geminiEvents reads a raw Gemini stream: each event a data line, CRLF-separated.
func geminiEvents(t *testing.T, raw string) []string {
	t.Helper()
	var out []string
	for _, frame := range strings.Split(raw, "\r\n\r\n") {
		if frame == "" {
			continue
		}
		data, ok := strings.CutPrefix(frame, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("not one data line: %q", frame)
		}
		out = append(out, data)
	}
	return out
}

func TestGeminiStreamKnobs(t *testing.T) {
	overloaded := json.RawMessage(`{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}`)
	for _, c := range []struct {
		name  string
		resp  Response
		check func(t *testing.T, events []string)
	}{
		{"a cut after two chunks: no finish", Response{Text: "one two three", CutAfterChunks: intp(2)}, func(t *testing.T, ev []string) {
			if len(ev) != 2 || strings.Contains(strings.Join(ev, ""), "finishReason") || !strings.Contains(ev[1], `"text":"two "`) {
				t.Errorf("%q", ev)
			}
		}},
		{"a call is one chunk", Response{Text: "a", ToolCalls: toolCalls, CutAfterChunks: intp(2)}, func(t *testing.T, ev []string) {
			if len(ev) != 2 || !strings.Contains(ev[1], `"functionCall":{"args":{"placename":"Zürich","days":[1,2,3],"unit":"celsius"},"id":"call_weather_1","name":"get_weather"}`) {
				t.Errorf("%q", ev)
			}
		}},
		{"a malformed second chunk, the stream going on", Response{Text: "one two three", MalformedChunk: intp(2)}, func(t *testing.T, ev []string) {
			if len(ev) != 4 || json.Valid([]byte(ev[1])) || !json.Valid([]byte(ev[2])) {
				t.Errorf("%q", ev)
			}
		}},
		{"an error object after a chunk", Response{Text: "one two three", StreamError: overloaded, StreamErrorAfterChunks: intp(1)}, func(t *testing.T, ev []string) {
			if len(ev) != 2 || ev[1] != `{"error":`+string(overloaded)+`}` {
				t.Errorf("%q", ev)
			}
		}},
		{"an error object first", Response{Text: "one", StreamError: overloaded}, func(t *testing.T, ev []string) {
			if len(ev) != 1 || !strings.HasPrefix(ev[0], `{"error":{"code":503`) {
				t.Errorf("%q", ev)
			}
		}},
		{"headers and nothing", Response{Text: "one", Empty: true}, func(t *testing.T, ev []string) {
			if len(ev) != 0 {
				t.Errorf("%q", ev)
			}
		}},
		{"a text answer's signature on its last chunk, thoughts uncounted", Response{Thinking: "hm hm", Text: "one two", Signature: "s", CutAfterChunks: intp(5), Finish: "length"},
			func(t *testing.T, ev []string) {
				if len(ev) != 5 || !strings.Contains(ev[0], `"thought":true`) ||
					!strings.Contains(ev[4], `"finishReason":"MAX_TOKENS"`) || !strings.Contains(ev[4], `"thoughtSignature":"`+base64.StdEncoding.EncodeToString([]byte("s"))+`"`) ||
					!strings.Contains(ev[4], `"thoughtsTokenCount":2`) {
					t.Errorf("%q", ev)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := startFake(t, []Rule{{Respond: []Response{c.resp}}})
			resp, data := post(t, fp.URL()+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
				map[string]string{"x-goog-api-key": "sk-test"})
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %s", resp.StatusCode, data)
			}
			c.check(t, geminiEvents(t, data))
			if call := fp.Calls()[0]; call.Provider != "google" || call.Profile != "p:test" {
				t.Errorf("%+v", call)
			}
		})
	}
}

func TestGoogleStatusesAndCredentials(t *testing.T) {
	const quota = `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`
	fp := startFake(t, []Rule{{Match: Match{Model: "busy"}, Respond: []Response{{Status: 429, Body: quota, Headers: map[string]string{"x-goog-x": "1"}}}},
		{Match: Match{Model: "picky"}, Respond: []Response{{Text: "a b", Prefill: "reject"}}}})
	gemini := fp.URL() + "/v1beta/models/"
	vertex := fp.URL() + "/v1/projects/proj/locations/us-east5/publishers/"
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	key := map[string]string{"x-goog-api-key": "sk-test"}
	for _, c := range []struct {
		name, url, body string
		headers         map[string]string
		status          int
		want            string
	}{
		{"a scripted status and body", gemini + "busy:generateContent", body, key, 429, quota},
		{"the key in the query", gemini + "m:generateContent?key=sk-test", body, nil, 200, `"text":"ok"`},
		{"no key", gemini + "m:generateContent", body, nil, 403, `"status":"PERMISSION_DENIED"`},
		{"no token", vertex + "google/models/m:generateContent", body, key, 401, `"status":"UNAUTHENTICATED"`},
		{"a publisher there is not", vertex + "meta/models/m:generateContent", body, map[string]string{"Authorization": "Bearer sk-test"}, 404, `"status":"NOT_FOUND"`},
		{"a method there is not", gemini + "m:countTokens", body, key, 404, `"status":"NOT_FOUND"`},
		{"a body that is not JSON", gemini + "m:generateContent", `{"contents":`, key, 400, `"status":"INVALID_ARGUMENT"`},
		{"a prefill refused in Google's words", gemini + "picky:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"a"}]}]}`, key,
			400, PrefillRejectionGoogle},
	} {
		resp, data := post(t, c.url, c.body, c.headers)
		if resp.StatusCode != c.status || !strings.Contains(data, c.want) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, data)
		}
	}
	// Calls refused before a model saw them are not calls.
	calls := fp.Calls()
	if len(calls) != 3 || calls[0].Outcome != "status 429" || calls[1].Profile != "p:test" || calls[2].Prefill != "rejected" {
		t.Errorf("calls %+v", calls)
	}
}

func TestGeminiPrefillHonoured(t *testing.T) {
	fp := startFake(t, []Rule{{Respond: []Response{{Text: "The quick brown fox.", Prefill: "honour"}}}})
	client := geminiClient(t, fp, false)
	contents := []*genai.Content{genai.NewContentFromText("say it", genai.RoleUser), genai.NewContentFromText("The quick ", genai.RoleModel)}
	r, err := client.Models.GenerateContent(context.Background(), "m", contents, nil)
	// What follows the prefill (trimmed as callers send it), its leading space included.
	if err != nil || r.Text() != " brown fox." || fp.Calls()[0].Prefill != "honoured" {
		t.Errorf("%v %v %+v", r, err, fp.Calls())
	}
}

func TestVertexClaudeAnswersAsMessages(t *testing.T) {
	fp := startFake(t, []Rule{{Respond: []Response{{Text: "hello there"}}}})
	url := fp.URL() + "/p/vertex/v1/projects/proj/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict"
	auth := map[string]string{"Authorization": "Bearer sk-test"}
	for _, c := range []struct{ name, body, want string }{
		{"no anthropic_version", `{"max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "anthropic_version: Field required"},
		{"a model in the body", `{"model":"claude","anthropic_version":"vertex-2023-10-16","max_tokens":5,"stream":true,"messages":[]}`, "model: Extra inputs are not permitted"},
	} {
		if resp, data := post(t, url, c.body, auth); resp.StatusCode != 400 || !strings.Contains(data, `"type":"invalid_request_error"`) || !strings.Contains(data, c.want) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, data)
		}
	}
	resp, data := post(t, url, `{"anthropic_version":"vertex-2023-10-16","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, auth)
	if resp.StatusCode != 200 || !strings.HasPrefix(data, "event: message_start") || !strings.Contains(data, `"text":"there"`) ||
		!strings.HasSuffix(strings.TrimSpace(data), `data: {"type":"message_stop"}`) {
		t.Errorf("%d %s", resp.StatusCode, data)
	}
	calls := fp.Calls()
	if len(calls) != 1 || calls[0].Provider != "vertex" || calls[0].Model != "claude-sonnet-4@20250514" || calls[0].Profile != "p:test" || !calls[0].Stream {
		t.Errorf("calls %+v", calls)
	}
}

// jwt is an assertion as a service account signs it (the fake does not check the signature).
func jwt(claims map[string]any) string {
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	return enc(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + enc(claims) + ".c2lnbmF0dXJl"
}

func TestTheTokenEndpoint(t *testing.T) {
	fp := startFake(t, nil)
	form := func(grant, assertion string) string {
		return url.Values{"grant_type": {grant}, "assertion": {assertion}}.Encode()
	}
	formHeaders := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	now := time.Now().Unix()
	for _, c := range []struct{ name, url, body, want string }{
		{"a token for the account", fp.URL() + "/p/vertex/token", form(jwtBearer, jwt(map[string]any{"iss": "sa@p.iam.gserviceaccount.com", "exp": now + 3600})),
			`{"access_token":"ya29.fake-sa@p.iam.gserviceaccount.com","expires_in":3600,"token_type":"Bearer"}`},
		{"without the prefix", fp.URL() + "/token", form(jwtBearer, jwt(map[string]any{"iss": "b@p.iam.gserviceaccount.com"})), `"access_token":"ya29.fake-b@p.iam.gserviceaccount.com"`},
		{"another grant", fp.URL() + "/token", form("refresh_token", "x"), `"error":"unsupported_grant_type"`},
		{"no issuer", fp.URL() + "/token", form(jwtBearer, jwt(map[string]any{"exp": now + 60})), `"error":"invalid_grant"`},
		{"expired", fp.URL() + "/token", form(jwtBearer, jwt(map[string]any{"iss": "a@p", "exp": now - 60})), `Token must be a short-lived token`},
		{"not a JWT", fp.URL() + "/token", form(jwtBearer, "abc"), `"error":"invalid_grant"`},
	} {
		_, data := post(t, c.url, c.body, formHeaders)
		if !strings.Contains(data, c.want) {
			t.Errorf("%s: %s", c.name, data)
		}
	}
	if calls := fp.Calls(); len(calls) != 0 {
		t.Errorf("token requests recorded as calls: %+v", calls)
	}
}
