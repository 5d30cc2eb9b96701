package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// Amazon Bedrock's Converse API: POST {URL}/p/{provider}/model/{modelId}/converse-stream (the
// answer as an AWS event stream) and .../converse (whole), or the same without /p/{provider}
// (provider "bedrock"); the base URL to configure is {URL}/p/{provider} (BedrockBaseURL). The
// model id comes path-escaped (":" as %3A, an ARN's "/" as %2F) and is read unescaped.
//
// The profile is found from the credential: the access key id of a SigV4 Authorization header
// (AWS4-HMAC-SHA256 Credential=AKID/date/region/bedrock/aws4_request, …; the signature is not
// checked, the scope must name the bedrock service), or a Bedrock API key sent as a bearer token.
// A call without either is refused 403 as Bedrock refuses it (MissingAuthenticationTokenException),
// one scoped to another service too (InvalidSignatureException), before any rule is read.
//
// The stream is binary frames (application/vnd.amazon.eventstream), each with :event-type,
// :content-type application/json and :message-type event, and a JSON payload padded with Bedrock's
// "p" field: messageStart; a reasoning block when the script has Thinking or Signature
// (reasoningContent text deltas, then the Signature as a signature delta; not counted); the text
// block's deltas (Bedrock starts no text block: its first delta opens it); per tool call a
// contentBlockStart with its toolUseId (the script's ID, else tooluse_fake_N) and name, then its
// input in pieces; messageStop with the stop reason (Finish in Bedrock's words: end_turn, or
// tool_use with tool calls, by default; max_tokens, stop_sequence, guardrail_intervened,
// content_filtered as scripted); and last the metadata event with the usage (inputTokens counts
// what was not read from the cache, as Bedrock's does: Input-Cached; cacheReadInputTokens is
// Cached). The knobs count chunks as on the other wires: the text deltas, then per call its start
// and its input pieces.
//
// StreamError is an exception frame (:message-type exception): its :exception-type is the
// object's "__type" (a short name or a namespaced one, "ThrottlingException" or
// "com.amazon.bedrock#ThrottlingException"), else its "code", else internalServerException,
// written as the stream's member name (throttlingException); its payload is StreamError as
// scripted, e.g. {"__type":"ThrottlingException","message":"Too many requests, please wait before
// trying again."}. It comes after messageStart, first or after StreamErrorAfterChunks. A
// MalformedChunk is a whole frame whose JSON payload breaks off.
//
// Failure statuses answer with the rule's Status, Body and Headers as scripted: Bedrock names the
// exception in x-amzn-ErrorType ("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
// and words it in {"message": …}. A prefill is a final assistant message (Converse has no prefix
// flag), honoured or ignored as Response.Prefill says, and rejected with a ValidationException
// (PrefillRejectionBedrock).

// PrefillRejectionBedrock is the body of Bedrock's ValidationException for a model that does not
// take a final assistant message (the model's own error, relayed).
const PrefillRejectionBedrock = `{"message":"The model returned the following errors: This model does not support assistant message prefill. The conversation must end with a user message."}`

// bedrockErrorType is x-amzn-ErrorType for an exception.
func bedrockErrorType(name string) string {
	return name + ":http://internal.amazon.com/coral/com.amazon.bedrock/"
}

// bedrockPadding is Bedrock's "p" field, which pads events to hide their length.
const bedrockPadding = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"

// BedrockBaseURL is what to configure as the base URL of a Bedrock provider.
func (s *Server) BedrockBaseURL(provider string) string { return s.URL() + "/p/" + provider }

// bedrockRoute reads a Converse path: the operation (converse or converse-stream) and the model.
func bedrockRoute(r *http.Request) (op, model string, ok bool) {
	p := r.URL.EscapedPath()
	if rest, found := strings.CutPrefix(p, "/p/"); found {
		_, p, _ = strings.Cut(rest, "/")
		p = "/" + p
	}
	rest, found := strings.CutPrefix(p, "/model/")
	i := strings.LastIndexByte(rest, '/')
	if !found || i <= 0 {
		return "", "", false
	}
	op = rest[i+1:]
	if op != "converse" && op != "converse-stream" {
		return "", "", false
	}
	model, err := url.PathUnescape(rest[:i])
	return op, model, err == nil
}

// bedrockFailure is an exception as Bedrock answers it before any rule: the status, the name in
// x-amzn-ErrorType, the message in the body.
func bedrockFailure(status int, name, message string) *Response {
	return &Response{Status: status, Headers: map[string]string{"x-amzn-ErrorType": bedrockErrorType(name)},
		Body: string(mustJSON(map[string]string{"message": message}))}
}

// bedrockCredential is the credential a call carries (an access key id, or an API key), or the
// refusal of a call that carries none Bedrock would read.
func bedrockCredential(r *http.Request) (string, *Response) {
	auth := r.Header.Get("Authorization")
	if token, ok := strings.CutPrefix(auth, "Bearer "); ok && token != "" {
		return token, nil
	}
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "", bedrockFailure(http.StatusForbidden, "MissingAuthenticationTokenException", "Missing Authentication Token")
	}
	var scope string
	for _, field := range strings.Split(rest, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(field), "Credential="); ok {
			scope = v
		}
	}
	parts := strings.Split(scope, "/") // AKID/date/region/service/aws4_request
	if len(parts) != 5 || parts[0] == "" || parts[4] != "aws4_request" {
		return "", bedrockFailure(http.StatusForbidden, "IncompleteSignatureException",
			"Authorization header requires 'Credential' parameter. Authorization="+auth[:min(len(auth), 40)])
	}
	if parts[3] != "bedrock" {
		return "", bedrockFailure(http.StatusForbidden, "InvalidSignatureException",
			"Credential should be scoped to correct service: 'bedrock'. ")
	}
	return parts[0], nil
}

// serveBedrock answers a Converse call; false for a path that is not one. It reads the path
// itself, escaped (a model id may hold an escaped "/").
func (s *Server) serveBedrock(w http.ResponseWriter, r *http.Request, provider, _ string) bool {
	op, model, ok := bedrockRoute(r)
	if !ok {
		return false
	}
	if provider == "" {
		provider = "bedrock"
	}
	w.Header().Set("x-amzn-RequestId", "fake-bedrock-request")
	if r.Method != http.MethodPost {
		http.Error(w, `{"message":"Method not allowed"}`, http.StatusMethodNotAllowed)
		return true
	}
	secret, refused := bedrockCredential(r)
	if refused != nil {
		answered(w, r, *refused)
		return true
	}
	data, ok := readBody(w, r)
	if !ok {
		return true
	}
	var body struct {
		Messages   json.RawMessage `json:"messages"`
		ToolConfig struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		answered(w, r, *bedrockFailure(http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again."))
		return true
	}
	tools := 0
	for _, t := range body.ToolConfig.Tools {
		if _, ok := t["toolSpec"]; ok { // a cachePoint entry is no tool
			tools++
		}
	}
	stream := op == "converse-stream"
	resp, call := s.take(incoming{provider: provider, model: model, secret: secret, stream: stream,
		messages: body.Messages, last: readLastBedrock(body.Messages), tools: tools, body: data})
	defer s.stamp(call.N, func(c *Call) { c.EndedAt = time.Now() })
	if call.Prefill == "rejected" {
		resp = *bedrockFailure(http.StatusBadRequest, "ValidationException", "")
		resp.Body = PrefillRejectionBedrock
	}
	if answered(w, r, resp) {
		return true
	}
	usage := resp.usage()
	if !stream {
		respondBedrockWhole(w, resp, usage)
		return true
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	enc := eventstream.NewEncoder()
	frame := func(headers eventstream.Headers, payload string) {
		_ = enc.Encode(w, eventstream.Message{Headers: headers, Payload: []byte(payload)})
		if flusher != nil {
			flusher.Flush()
		}
	}
	write := func(event, payload string) {
		frame(eventstream.Headers{
			{Name: ":event-type", Value: eventstream.StringValue(event)},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("event")},
		}, payload)
	}
	if resp.Empty {
		return true // headers, then nothing
	}
	c := &counter{r: r, resp: resp, write: write, first: func() { s.stamp(call.N, func(c *Call) { c.FirstContentAt = time.Now() }) }}
	c.inBand = func() {
		frame(eventstream.Headers{
			{Name: ":exception-type", Value: eventstream.StringValue(bedrockException(resp.StreamError))},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("exception")},
		}, string(resp.StreamError))
	}
	streamBedrock(c, resp, usage)
	return true
}

// bedrockException is the stream member an exception frame names: StreamError's __type (or code),
// short and in lower camel case, else internalServerException.
func bedrockException(raw json.RawMessage) string {
	var e struct {
		Type string `json:"__type"`
		Code string `json:"code"`
	}
	_ = json.Unmarshal(raw, &e)
	name := e.Type
	if name == "" {
		name = e.Code
	}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, '#'); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		return "internalServerException"
	}
	return strings.ToLower(name[:1]) + name[1:]
}

// bedrockEvent is an event's payload, padded as Bedrock pads it.
func bedrockEvent(fields map[string]any) string {
	fields["p"] = bedrockPadding[:len(fields)*7%len(bedrockPadding)+1]
	return string(mustJSON(fields))
}

func bedrockToolID(tc ToolCall, i int) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("tooluse_fake_%d", i+1)
}

// bedrockUsage is Converse's usage: inputTokens without the tokens read from the cache.
func bedrockUsage(u Usage) map[string]int {
	m := map[string]int{"inputTokens": u.Input - u.Cached, "outputTokens": u.Output, "totalTokens": u.Input + u.Output}
	if u.Cached > 0 {
		m["cacheReadInputTokens"] = u.Cached
	}
	return m
}

func streamBedrock(c *counter, resp Response, usage Usage) {
	write := c.write
	write("messageStart", bedrockEvent(map[string]any{"role": "assistant"}))
	if len(resp.StreamError) > 0 && resp.StreamErrorAfterChunks == nil {
		c.inBand()
		return
	}
	index := 0
	delta := func(d map[string]any) string {
		return bedrockEvent(map[string]any{"contentBlockIndex": index, "delta": d})
	}
	blockStop := func() {
		write("contentBlockStop", bedrockEvent(map[string]any{"contentBlockIndex": index}))
		index++
	}
	if resp.hasReasoning() {
		for _, piece := range chunks(resp.Thinking) {
			write("contentBlockDelta", delta(map[string]any{"reasoningContent": map[string]string{"text": piece}}))
		}
		if resp.Signature != "" {
			write("contentBlockDelta", delta(map[string]any{"reasoningContent": map[string]string{"signature": resp.Signature}}))
		}
		blockStop()
	}
	if resp.Text != "" {
		for _, piece := range chunks(resp.Text) {
			if !c.send("contentBlockDelta", delta(map[string]any{"text": piece}),
				fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"text":`, index)) {
				return
			}
		}
		if c.stopped() {
			return
		}
		blockStop()
	}
	for i, tc := range resp.ToolCalls {
		start := bedrockEvent(map[string]any{"contentBlockIndex": index,
			"start": map[string]any{"toolUse": map[string]string{"toolUseId": bedrockToolID(tc, i), "name": tc.Name}}})
		if !c.send("contentBlockStart", start, fmt.Sprintf(`{"contentBlockIndex":%d,"start":{"toolUse":{"toolUseId":`, index)) {
			return
		}
		for _, piece := range argPieces(tc.arguments()) {
			if !c.send("contentBlockDelta", delta(map[string]any{"toolUse": map[string]string{"input": piece}}),
				fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"toolUse":{"input":`, index)) {
				return
			}
		}
		if c.stopped() {
			return
		}
		blockStop()
	}
	if c.stopped() {
		return
	}
	write("messageStop", bedrockEvent(map[string]any{"stopReason": resp.finish(true)}))
	write("metadata", bedrockEvent(map[string]any{"usage": bedrockUsage(usage), "metrics": map[string]int{"latencyMs": 42}}))
}

func respondBedrockWhole(w http.ResponseWriter, resp Response, usage Usage) {
	content := []any{}
	if !resp.Empty {
		if resp.hasReasoning() {
			content = append(content, map[string]any{"reasoningContent": map[string]any{
				"reasoningText": map[string]string{"text": resp.Thinking, "signature": resp.Signature}}})
		}
		if resp.Text != "" || len(resp.ToolCalls) == 0 {
			content = append(content, map[string]string{"text": resp.Text})
		}
		for i, tc := range resp.ToolCalls {
			content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": bedrockToolID(tc, i), "name": tc.Name,
				"input": rawJSON(tc.arguments())}})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(mustJSON(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": resp.finish(true), "usage": bedrockUsage(usage), "metrics": map[string]int{"latencyMs": 42},
	}))
}

// readLastBedrock reads the last of a Converse request's messages: an assistant message is a
// prefill (Converse has no prefix flag), its text the text of its content blocks.
func readLastBedrock(messages json.RawMessage) lastMessage {
	var list []struct {
		Role    string `json:"role"`
		Content []struct {
			Text *string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(messages, &list) != nil || len(list) == 0 || list[len(list)-1].Role != "assistant" {
		return lastMessage{}
	}
	var b strings.Builder
	for _, c := range list[len(list)-1].Content {
		if c.Text != nil {
			b.WriteString(*c.Text)
		}
	}
	return lastMessage{assistant: true, prefix: true, text: b.String()}
}
