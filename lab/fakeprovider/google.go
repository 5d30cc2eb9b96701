package fakeprovider

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The Gemini API and Vertex AI, the model named in the path:
//
//	POST /p/{provider}/{version}/models/{model}:streamGenerateContent?alt=sse   the Gemini API: the key
//	POST /p/{provider}/{version}/models/{model}:generateContent                 in x-goog-api-key or ?key=
//	POST /p/{provider}/{version}/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent
//	POST /p/{provider}/{version}/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent
//	POST /p/{provider}/{version}/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:streamRawPredict
//	POST /p/{provider}/{version}/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict
//	POST /p/{provider}/token                                                     a service account's token
//
// Vertex AI's calls carry an access token as a bearer. Without the /p/{provider} prefix the
// provider is "google" (the Gemini API's paths) or "vertex". The version is any v1… segment. A
// call without its credential (no key, no bearer), on a path or a method Google does not serve, or
// with a body that is not JSON, is answered as Google answers it, and not recorded.
//
// A Gemini answer streams as Google's SSE (data: lines, CRLF-separated), each chunk a
// GenerateContentResponse: the Thinking's words as thought parts first (not counted), then a chunk
// per piece of text, then one per tool call (a functionCall part, whole, with the call's ID only
// when the script gives one, as the Gemini API often sends none), then a last chunk with an empty
// text part, the finishReason and the usage. The Signature goes (as its bytes in base64, the
// field's encoding) on the first call's part as thoughtSignature, or, without calls, on the last
// chunk's part. The knobs count the text pieces and the calls (a call is one chunk). StreamError
// goes out as a chunk {"error": StreamError} (Google's error object: code, message, status),
// first or after StreamErrorAfterChunks. Finish is in Gemini's words ("STOP", "MAX_TOKENS",
// "SAFETY", "MALFORMED_FUNCTION_CALL", …; OpenAI's "stop", "length", "tool_calls" and
// "content_filter" are read as Gemini's); by default STOP. Usage: promptTokenCount is Input,
// cachedContentTokenCount Cached, thoughtsTokenCount the Thinking's words (at most Output), and
// candidatesTokenCount the rest of Output. A prefill is a final model turn ("honour" continues a
// true prefill of Text; "reject" answers 400 with PrefillRejectionGoogle).
//
// Anthropic's models on Vertex AI answer as the Messages wire does (respond.go), once the body
// is Vertex AI's: no "model" (the path names it) and an "anthropic_version".
//
// The token endpoint answers a service account's signed JWT assertion (the JWT bearer grant) with
// the access token "ya29.fake-" + the assertion's iss (the account's email), which a test maps to
// a profile (AddCredential). It records nothing: only model calls are calls. The signature is not
// checked (the fake knows no key), the claims are: an assertion without iss, or expired, is
// refused as Google refuses it (invalid_grant).

// PrefillRejectionGoogle is the body of a prefill rejection on Google's wire, in Google's error
// shape.
const PrefillRejectionGoogle = `{"error":{"code":400,"message":"This model does not support assistant message prefill. The conversation must end with a user message.","status":"INVALID_ARGUMENT"}}`

// Google's answers to calls that never reach a model.
const (
	googleNoKey      = `{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED"}}`
	googleNoToken    = `{"error":{"code":401,"message":"Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.","status":"UNAUTHENTICATED"}}`
	googleNotJSON    = `{"error":{"code":400,"message":"Invalid JSON payload received. Unexpected token.","status":"INVALID_ARGUMENT"}}`
	googleNoSuchPath = `{"error":{"code":404,"message":"The requested URL was not found on this server.","status":"NOT_FOUND"}}`
)

// FakeAccessToken is the access token the token endpoint gives a service account.
func FakeAccessToken(email string) string { return "ya29.fake-" + email }

func (s *Server) serveGoogle(w http.ResponseWriter, r *http.Request, provider, path string) bool {
	if path == "/token" {
		serveToken(w, r)
		return true
	}
	version, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok || !strings.HasPrefix(version, "v1") {
		return false
	}
	switch {
	case strings.HasPrefix(rest, "models/"):
		model, method, ok := strings.Cut(strings.TrimPrefix(rest, "models/"), ":")
		if !ok || model == "" || strings.Contains(model, "/") {
			googleAnswer(w, http.StatusNotFound, googleNoSuchPath)
			return true
		}
		key := r.Header.Get("x-goog-api-key")
		if key == "" {
			key = r.URL.Query().Get("key")
		}
		if key == "" {
			googleAnswer(w, http.StatusForbidden, googleNoKey)
			return true
		}
		s.serveGemini(w, r, cmpOr(provider, "google"), model, method, key)
		return true
	case strings.HasPrefix(rest, "projects/"):
		// projects/{p}/locations/{l}/publishers/{publisher}/models/{model}:{method}
		seg := strings.SplitN(rest, "/", 8)
		if len(seg) != 8 || seg[2] != "locations" || seg[4] != "publishers" || seg[6] != "models" {
			googleAnswer(w, http.StatusNotFound, googleNoSuchPath)
			return true
		}
		model, method, ok := strings.Cut(seg[7], ":")
		if !ok || model == "" || strings.Contains(model, "/") {
			googleAnswer(w, http.StatusNotFound, googleNoSuchPath)
			return true
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" {
			googleAnswer(w, http.StatusUnauthorized, googleNoToken)
			return true
		}
		provider = cmpOr(provider, "vertex")
		switch seg[5] {
		case "google":
			s.serveGemini(w, r, provider, model, method, token)
		case "anthropic":
			s.serveVertexClaude(w, r, provider, model, method)
		default:
			googleAnswer(w, http.StatusNotFound, googleNoSuchPath)
		}
		return true
	}
	return false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func googleAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// serveGemini answers generateContent (whole) or streamGenerateContent (SSE).
func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request, provider, model, method, secret string) {
	stream := method == "streamGenerateContent"
	if !stream && method != "generateContent" {
		googleAnswer(w, http.StatusNotFound, googleNoSuchPath)
		return
	}
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	var body struct {
		Contents json.RawMessage `json:"contents"`
		Tools    []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if json.Unmarshal(data, &body) != nil {
		googleAnswer(w, http.StatusBadRequest, googleNotJSON)
		return
	}
	tools := 0
	for _, t := range body.Tools {
		tools += len(t.FunctionDeclarations)
	}
	resp, call := s.take(incoming{provider: provider, model: model, secret: secret, stream: stream,
		messages: body.Contents, last: readLastContent(body.Contents), tools: tools, body: data})
	defer s.stamp(call.N, func(c *Call) { c.EndedAt = time.Now() })
	if call.Prefill == "rejected" {
		resp.Body = PrefillRejectionGoogle
	}
	if answered(w, r, resp) {
		return
	}
	usage := resp.usage()
	if !stream {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(mustJSON(geminiWhole(resp, model, usage)))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	if resp.Empty {
		return // headers, then nothing
	}
	write := func(_, data string) {
		fmt.Fprintf(w, "data: %s\r\n\r\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	c := &counter{r: r, resp: resp, write: write, first: func() { s.stamp(call.N, func(c *Call) { c.FirstContentAt = time.Now() }) }}
	streamGemini(c, resp, model, usage)
}

// geminiFinish is the answer's finishReason in Gemini's words.
func (r Response) geminiFinish() string {
	switch r.Finish {
	case "", "stop", "tool_calls":
		return "STOP"
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	}
	return r.Finish
}

func (r Response) signature() string { return base64.StdEncoding.EncodeToString([]byte(r.Signature)) }

// geminiCall is a tool call's functionCall part; the first carries the signature.
func geminiCall(r Response, i int) map[string]any {
	fc := map[string]any{"name": r.ToolCalls[i].Name, "args": rawJSON(r.ToolCalls[i].arguments())}
	if r.ToolCalls[i].ID != "" {
		fc["id"] = r.ToolCalls[i].ID
	}
	part := map[string]any{"functionCall": fc}
	if i == 0 && r.Signature != "" {
		part["thoughtSignature"] = r.signature()
	}
	return part
}

// geminiResponse is a GenerateContentResponse: the candidate's parts, its finishReason ("" for
// none) and the usage.
func geminiResponse(model string, parts []any, finish string, usage map[string]int) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	return map[string]any{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": model, "responseId": "fake-response"}
}

// geminiChunk is a GenerateContentResponse as a stream's chunk.
func geminiChunk(model string, parts []any, finish string, usage map[string]int) string {
	return string(mustJSON(geminiResponse(model, parts, finish, usage)))
}

// geminiUsage is the answer's usageMetadata: thoughts are part of Output, as the other wires count.
func geminiUsage(u Usage, r Response) map[string]int {
	thoughts := min(len(chunks(r.Thinking)), u.Output)
	m := map[string]int{"promptTokenCount": u.Input, "candidatesTokenCount": u.Output - thoughts, "totalTokenCount": u.Input + u.Output}
	if u.Cached > 0 {
		m["cachedContentTokenCount"] = u.Cached
	}
	if thoughts > 0 {
		m["thoughtsTokenCount"] = thoughts
	}
	return m
}

func streamGemini(c *counter, resp Response, model string, usage Usage) {
	c.inBand = func() { c.write("", string(mustJSON(map[string]json.RawMessage{"error": resp.StreamError}))) }
	if len(resp.StreamError) > 0 && resp.StreamErrorAfterChunks == nil {
		c.inBand()
		return
	}
	// Every chunk says the prompt's count so far, as Gemini's do; the last one says everything.
	running := map[string]int{"promptTokenCount": usage.Input, "totalTokenCount": usage.Input}
	for _, piece := range chunks(resp.Thinking) {
		c.write("", geminiChunk(model, []any{map[string]any{"text": piece, "thought": true}}, "", running))
	}
	for _, piece := range chunks(resp.Text) {
		if !c.send("", geminiChunk(model, []any{map[string]any{"text": piece}}, "", running),
			`{"candidates":[{"content":{"role":"model","parts":[{"text":`) {
			return
		}
	}
	for i := range resp.ToolCalls {
		if !c.send("", geminiChunk(model, []any{geminiCall(resp, i)}, "", running),
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":`) {
			return
		}
	}
	if c.stopped() {
		return
	}
	last := map[string]any{"text": ""}
	if resp.Signature != "" && len(resp.ToolCalls) == 0 {
		last["thoughtSignature"] = resp.signature()
	}
	c.write("", geminiChunk(model, []any{last}, resp.geminiFinish(), geminiUsage(usage, resp)))
}

// geminiWhole is generateContent's answer.
func geminiWhole(resp Response, model string, usage Usage) map[string]any {
	parts := []any{}
	if !resp.Empty {
		if resp.Thinking != "" {
			parts = append(parts, map[string]any{"text": resp.Thinking, "thought": true})
		}
		if resp.Text != "" || len(resp.ToolCalls) == 0 {
			text := map[string]any{"text": resp.Text}
			if resp.Signature != "" && len(resp.ToolCalls) == 0 {
				text["thoughtSignature"] = resp.signature()
			}
			parts = append(parts, text)
		}
		for i := range resp.ToolCalls {
			parts = append(parts, geminiCall(resp, i))
		}
	}
	return geminiResponse(model, parts, resp.geminiFinish(), geminiUsage(usage, resp))
}

// readLastContent reads the last of a request's contents: a model turn is a prefill (this wire has
// no prefix flag), its text its text parts' (thoughts aside).
func readLastContent(contents json.RawMessage) lastMessage {
	var list []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text    string `json:"text"`
			Thought bool   `json:"thought"`
		} `json:"parts"`
	}
	if json.Unmarshal(contents, &list) != nil || len(list) == 0 || list[len(list)-1].Role != "model" {
		return lastMessage{}
	}
	var b strings.Builder
	for _, p := range list[len(list)-1].Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return lastMessage{assistant: true, prefix: true, text: b.String()}
}

// serveVertexClaude answers Anthropic's models on Vertex AI, as the Messages wire does, once the
// body is Vertex AI's.
func (s *Server) serveVertexClaude(w http.ResponseWriter, r *http.Request, provider, model, method string) {
	if method != "streamRawPredict" && method != "rawPredict" {
		googleAnswer(w, http.StatusNotFound, googleNoSuchPath)
		return
	}
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	var body struct {
		Model   json.RawMessage `json:"model"`
		Version string          `json:"anthropic_version"`
	}
	refuse := func(message string) {
		googleAnswer(w, http.StatusBadRequest, string(mustJSON(map[string]any{"type": "error",
			"error": map[string]string{"type": "invalid_request_error", "message": message}})))
	}
	switch {
	case json.Unmarshal(data, &body) != nil:
		refuse("The request body is not valid JSON.")
		return
	case body.Version == "":
		refuse("anthropic_version: Field required")
		return
	case body.Model != nil:
		refuse("model: Extra inputs are not permitted")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	s.serveJSON(w, r, provider, formatAnthropic, model)
}

// jwtBearer is the OAuth grant of a service account's signed assertion.
const jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// serveToken answers a service account's token request.
func serveToken(w http.ResponseWriter, r *http.Request) {
	refuse := func(code, description string) {
		googleAnswer(w, http.StatusBadRequest, string(mustJSON(map[string]string{"error": code, "error_description": description})))
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		refuse("invalid_request", "Invalid request.")
		return
	}
	if g := r.PostForm.Get("grant_type"); g != jwtBearer {
		refuse("unsupported_grant_type", "Invalid grant_type: "+g)
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	var claims struct {
		Iss string `json:"iss"`
		Exp int64  `json:"exp"`
	}
	if len(parts) != 3 {
		refuse("invalid_grant", "Invalid JWT: the assertion is not a signed JWT.")
		return
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, &claims) != nil || claims.Iss == "" {
		refuse("invalid_grant", "Invalid JWT: the claims are not readable, or name no issuer.")
		return
	}
	if claims.Exp != 0 && time.Unix(claims.Exp, 0).Before(time.Now()) {
		refuse("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(mustJSON(map[string]any{"access_token": FakeAccessToken(claims.Iss), "expires_in": 3600, "token_type": "Bearer"}))
}
