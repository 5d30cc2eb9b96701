package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// chunks splits a healthy answer into deterministic pieces (a word and its trailing space), so
// that a truncated answer is always detectable against the script.
func chunks(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// argPieces splits a tool call's arguments into deterministic pieces of about 8 bytes, never
// inside a UTF-8 character.
func argPieces(args string) []string {
	var out []string
	for len(args) > 0 {
		n := min(8, len(args))
		for n < len(args) && !utf8.RuneStart(args[n]) {
			n++
		}
		out = append(out, args[:n])
		args = args[n:]
	}
	return out
}

// arguments is a tool call's JSON text, {} when the script leaves it out.
func (tc ToolCall) arguments() string {
	if tc.Arguments == "" {
		return "{}"
	}
	return tc.Arguments
}

func (tc ToolCall) id(i int, anthropic bool) string {
	switch {
	case tc.ID != "":
		return tc.ID
	case anthropic:
		return fmt.Sprintf("toolu_fake_%d", i+1)
	}
	return fmt.Sprintf("call_fake_%d", i+1)
}

// finish is the finish (OpenAI) or stop (Anthropic) reason.
func (r Response) finish(anthropic bool) string {
	switch {
	case r.Finish != "":
		return r.Finish
	case anthropic && len(r.ToolCalls) > 0:
		return "tool_use"
	case anthropic:
		return "end_turn"
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

// textBlock reports whether an Anthropic answer has a text block: when it has text, or nothing
// else to say.
func (r Response) textBlock() bool { return r.Text != "" || len(r.ToolCalls) == 0 }

// countedChunks is how many chunks the failure knobs count in a full stream.
func (r Response) countedChunks() int {
	n := len(chunks(r.Text))
	for _, tc := range r.ToolCalls {
		n += 1 + len(argPieces(tc.arguments()))
	}
	return n
}

func openAIUsage(u Usage) map[string]any {
	m := map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output}
	if u.Cached > 0 {
		m["prompt_tokens_details"] = map[string]int{"cached_tokens": u.Cached}
	}
	return m
}

func anthropicUsage(u Usage, output int) map[string]int {
	m := map[string]int{"input_tokens": u.Input - u.Cached, "output_tokens": output}
	if u.Cached > 0 {
		m["cache_read_input_tokens"] = u.Cached
	}
	return m
}

// answered plays what every wire does alike before an answer: the delay, a reset, the scripted
// headers, a failure status with its body. It reports whether that was the whole answer.
func answered(w http.ResponseWriter, r *http.Request, resp Response) bool {
	if resp.DelayMs > 0 {
		select {
		case <-time.After(time.Duration(resp.DelayMs) * time.Millisecond):
		case <-r.Context().Done():
			return true
		}
	}
	if resp.Reset {
		resetConnection(w)
		return true
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.Status)
		_, _ = w.Write([]byte(resp.Body))
		return true
	}
	return false
}

// usage is what a healthy answer reports: the scripted usage, else 10 in and a token a chunk.
func (r Response) usage() Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	return Usage{Input: 10, Output: r.countedChunks()}
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request, resp Response, model string, stream bool, format wireFormat, n int) {
	if answered(w, r, resp) {
		return
	}
	usage := resp.usage()
	if !stream {
		if format == formatResponses {
			respondResponsesWhole(w, resp, model, usage)
			return
		}
		s.respondWhole(w, resp, model, usage, format == formatAnthropic)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush() // the headers go out at once, as a streaming server sends them
	}
	write := func(event, data string) {
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	if resp.Empty {
		return // headers, then nothing
	}
	c := &counter{r: r, resp: resp, write: write, first: func() { s.stamp(n, func(c *Call) { c.FirstContentAt = time.Now() }) }}
	switch format {
	case formatAnthropic:
		streamAnthropic(c, resp, model, usage, write)
	case formatResponses:
		streamResponses(c, resp, model, usage)
	default:
		streamOpenAI(c, resp, model, usage, write)
	}
}

// stop reports whether the stream ends (cut, stall) before piece i is sent.
func stopBefore(r *http.Request, resp Response, i int) bool {
	if resp.CutAfterChunks != nil && i >= *resp.CutAfterChunks {
		return true
	}
	if resp.StallAfterChunks != nil && i >= *resp.StallAfterChunks {
		select {
		case <-time.After(time.Duration(resp.StallMs) * time.Millisecond):
		case <-r.Context().Done():
		}
		return true
	}
	return false
}

// counter sends the chunks the failure knobs count.
type counter struct {
	r     *http.Request
	resp  Response
	write func(event, data string)
	sent  int
	first func() // called as the first counted chunk goes out
	// inBand writes the wire's error event (StreamErrorAfterChunks).
	inBand func()
}

// stopped reports whether the stream ends before the next counted chunk: cut, stalled, or ended by
// an in-band error event mid-answer.
func (c *counter) stopped() bool {
	if e := c.resp.StreamErrorAfterChunks; e != nil && len(c.resp.StreamError) > 0 && c.sent >= *e {
		if c.inBand != nil {
			c.inBand()
			c.inBand = nil
		}
		return true
	}
	return stopBefore(c.r, c.resp, c.sent)
}

// send writes the next counted chunk (or, if it is the malformed one, the start of it) and reports
// false when the stream ends before it.
func (c *counter) send(event, data, malformed string) bool {
	if c.sent > 0 && c.resp.ChunkDelayMs > 0 {
		select {
		case <-time.After(time.Duration(c.resp.ChunkDelayMs) * time.Millisecond):
		case <-c.r.Context().Done():
			return false
		}
	}
	if c.stopped() {
		return false
	}
	if c.sent == 0 && c.first != nil {
		c.first()
	}
	c.sent++
	if c.resp.MalformedChunk != nil && *c.resp.MalformedChunk == c.sent {
		data = malformed
	}
	c.write(event, data)
	return true
}

func openAIChunk(model string, delta map[string]any, finish any) string {
	return string(mustJSON(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}))
}

func streamOpenAI(c *counter, resp Response, model string, usage Usage, write func(string, string)) {
	c.inBand = func() { write("", string(mustJSON(map[string]json.RawMessage{"error": resp.StreamError}))) }
	if len(resp.StreamError) > 0 && resp.StreamErrorAfterChunks == nil {
		c.inBand()
		return
	}
	for _, piece := range chunks(resp.Text) {
		if !c.send("", openAIChunk(model, map[string]any{"role": "assistant", "content": piece}, nil),
			`{"id":"chatcmpl-fake","choices":[{"delta":{"content":`) {
			return
		}
	}
	for i, tc := range resp.ToolCalls {
		if !c.send("", openAIChunk(model, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"index": i, "id": tc.id(i, false), "type": "function", "function": map[string]string{"name": tc.Name, "arguments": ""}}}}, nil),
			`{"id":"chatcmpl-fake","choices":[{"delta":{"tool_calls":[{"index":`) {
			return
		}
		for _, piece := range argPieces(tc.arguments()) {
			if !c.send("", openAIChunk(model, map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]string{"arguments": piece}}}}, nil),
				`{"id":"chatcmpl-fake","choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":`) {
				return
			}
		}
	}
	if c.stopped() {
		return
	}
	write("", openAIChunk(model, map[string]any{}, resp.finish(false)))
	write("", string(mustJSON(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []any{},
		"usage": openAIUsage(usage),
	})))
	write("", "[DONE]")
}

func streamAnthropic(c *counter, resp Response, model string, usage Usage, write func(string, string)) {
	write("message_start", string(mustJSON(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": anthropicUsage(usage, 0),
	}})))
	c.inBand = func() { write("error", string(mustJSON(map[string]any{"type": "error", "error": resp.StreamError}))) }
	if len(resp.StreamError) > 0 && resp.StreamErrorAfterChunks == nil {
		c.inBand()
		return
	}
	index := 0
	delta := func(delta map[string]string) string {
		return string(mustJSON(map[string]any{"type": "content_block_delta", "index": index, "delta": delta}))
	}
	blockStop := func() {
		write("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
		index++
	}
	if resp.Thinking != "" || resp.Signature != "" {
		write("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":"","signature":""}}`, index))
		for _, piece := range chunks(resp.Thinking) {
			write("content_block_delta", delta(map[string]string{"type": "thinking_delta", "thinking": piece}))
		}
		if resp.Signature != "" {
			write("content_block_delta", delta(map[string]string{"type": "signature_delta", "signature": resp.Signature}))
		}
		blockStop()
	}
	if resp.textBlock() {
		write("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index))
		for _, piece := range chunks(resp.Text) {
			if !c.send("content_block_delta", delta(map[string]string{"type": "text_delta", "text": piece}),
				fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":`, index)) {
				return
			}
		}
		if c.stopped() {
			return
		}
		blockStop()
	}
	for i, tc := range resp.ToolCalls {
		start := string(mustJSON(map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": tc.id(i, true), "name": tc.Name, "input": map[string]any{}}}))
		if !c.send("content_block_start", start, fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":`, index)) {
			return
		}
		for _, piece := range argPieces(tc.arguments()) {
			if !c.send("content_block_delta", delta(map[string]string{"type": "input_json_delta", "partial_json": piece}),
				fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":`, index)) {
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
	write("message_delta", string(mustJSON(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": resp.finish(true), "stop_sequence": nil}, "usage": map[string]int{"output_tokens": usage.Output}})))
	write("message_stop", `{"type":"message_stop"}`)
}

// rawJSON embeds valid JSON text as is, and anything else (only possible from rules built in Go,
// which skip validation) as a string.
func rawJSON(text string) any {
	if json.Valid([]byte(text)) {
		return json.RawMessage(text)
	}
	return text
}

func (s *Server) respondWhole(w http.ResponseWriter, resp Response, model string, usage Usage, anthropic bool) {
	w.Header().Set("Content-Type", "application/json")
	if anthropic {
		content := []any{}
		if !resp.Empty {
			if resp.Thinking != "" || resp.Signature != "" {
				content = append(content, map[string]string{"type": "thinking", "thinking": resp.Thinking, "signature": resp.Signature})
			}
			if resp.textBlock() {
				content = append(content, map[string]string{"type": "text", "text": resp.Text})
			}
			for i, tc := range resp.ToolCalls {
				content = append(content, map[string]any{"type": "tool_use", "id": tc.id(i, true), "name": tc.Name, "input": rawJSON(tc.arguments())})
			}
		}
		_, _ = w.Write(mustJSON(map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": resp.finish(true), "stop_sequence": nil, "usage": anthropicUsage(usage, usage.Output)}))
		return
	}
	choices := []any{}
	if !resp.Empty {
		message := map[string]any{"role": "assistant", "content": resp.Text}
		if len(resp.ToolCalls) > 0 {
			if resp.Text == "" {
				message["content"] = nil
			}
			calls := []any{}
			for i, tc := range resp.ToolCalls {
				calls = append(calls, map[string]any{"id": tc.id(i, false), "type": "function",
					"function": map[string]string{"name": tc.Name, "arguments": tc.arguments()}})
			}
			message["tool_calls"] = calls
		}
		choices = append(choices, map[string]any{"index": 0, "message": message, "finish_reason": resp.finish(false)})
	}
	_, _ = w.Write(mustJSON(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model, "choices": choices,
		"usage": openAIUsage(usage)}))
}

// resetConnection drops the TCP connection before any header, with an RST where possible.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only ever called with maps of plain values and valid raw JSON
	}
	return b
}

// The bodies of a prefill rejection, as Anthropic sends it for models without prefill support
// and as an OpenAI-compatible server would word it.
const (
	PrefillRejectionAnthropic = `{"type":"error","error":{"type":"invalid_request_error","message":"This model does not support assistant message prefill. The conversation must end with a user message."}}`
	PrefillRejectionOpenAI    = `{"error":{"message":"This model does not support assistant message prefill. The conversation must end with a user message.","type":"invalid_request_error","param":"messages","code":null}}`
)

// lastMessage is what a prefill needs from a request's last message.
type lastMessage struct {
	assistant bool
	prefix    bool // "prefix": true on it, which OpenAI-compatible servers need to continue it
	text      string
}

// readLastMessage reads the last of a request's messages; anything it cannot read counts as no
// prefill, so a malformed request is answered as scripted.
func readLastMessage(messages json.RawMessage) lastMessage {
	var list []json.RawMessage
	if json.Unmarshal(messages, &list) != nil || len(list) == 0 {
		return lastMessage{}
	}
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Prefix  any             `json:"prefix"` // any: a non-boolean must not make the message unreadable
	}
	if json.Unmarshal(list[len(list)-1], &m) != nil || m.Role != "assistant" {
		return lastMessage{}
	}
	return lastMessage{assistant: true, prefix: m.Prefix == true, text: contentText(m.Content)}
}

// contentText is the text of a message's content: a string, or the text parts (OpenAI) or text
// blocks (Anthropic) of an array, joined; other parts and blocks (thinking, tool use) are skipped.
func contentText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []json.RawMessage
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, raw := range parts {
		var part struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &part) == nil && part.Type == "text" {
			b.WriteString(part.Text)
		}
	}
	return b.String()
}

// withPrefill is the response as the scripted model treats the request's last message, and what
// it did with a prefill for the call record.
func (r Response) withPrefill(last lastMessage, anthropic bool) (Response, string) {
	if !last.assistant {
		return r, ""
	}
	switch r.Prefill {
	case "reject":
		// A request check: nothing else scripted happens.
		body := PrefillRejectionOpenAI
		if anthropic {
			body = PrefillRejectionAnthropic
		}
		return Response{Status: http.StatusBadRequest, Body: body}, "rejected"
	case "honour":
		// Anthropic refuses a final assistant message ending in whitespace, so callers trim it.
		p := strings.TrimRightFunc(last.text, unicode.IsSpace)
		if (anthropic || last.prefix) && strings.HasPrefix(r.Text, p) {
			r.Text = r.Text[len(p):]
			return r, "honoured"
		}
	}
	return r, "ignored"
}
