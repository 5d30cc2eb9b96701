package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
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

func (s *Server) respond(w http.ResponseWriter, r *http.Request, resp Response, model string, stream, anthropic bool) {
	if resp.DelayMs > 0 {
		select {
		case <-time.After(time.Duration(resp.DelayMs) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	if resp.Reset {
		resetConnection(w)
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.Status)
		_, _ = w.Write([]byte(resp.Body))
		return
	}
	usage := Usage{Input: 10, Output: len(chunks(resp.Text))}
	if resp.Usage != nil {
		usage = *resp.Usage
	}
	if !stream {
		s.respondWhole(w, resp, model, usage, anthropic)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
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
	if anthropic {
		streamAnthropic(r, resp, model, usage, write)
	} else {
		streamOpenAI(r, resp, model, usage, write)
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

func streamOpenAI(r *http.Request, resp Response, model string, usage Usage, write func(string, string)) {
	if len(resp.StreamError) > 0 {
		write("", string(mustJSON(map[string]json.RawMessage{"error": resp.StreamError})))
		return
	}
	for i, piece := range chunks(resp.Text) {
		if stopBefore(r, resp, i) {
			return
		}
		if resp.MalformedChunk != nil && *resp.MalformedChunk == i+1 {
			write("", `{"id":"chatcmpl-fake","choices":[{"delta":{"content":`)
			continue
		}
		write("", string(mustJSON(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": piece}, "finish_reason": nil}},
		})))
	}
	if stopBefore(r, resp, len(chunks(resp.Text))) {
		return
	}
	write("", string(mustJSON(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}},
	})))
	write("", string(mustJSON(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []any{},
		"usage": map[string]int{"prompt_tokens": usage.Input, "completion_tokens": usage.Output, "total_tokens": usage.Input + usage.Output},
	})))
	write("", "[DONE]")
}

func streamAnthropic(r *http.Request, resp Response, model string, usage Usage, write func(string, string)) {
	write("message_start", string(mustJSON(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": usage.Input, "output_tokens": 0},
	}})))
	if len(resp.StreamError) > 0 {
		write("error", string(mustJSON(map[string]any{"type": "error", "error": resp.StreamError})))
		return
	}
	write("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i, piece := range chunks(resp.Text) {
		if stopBefore(r, resp, i) {
			return
		}
		if resp.MalformedChunk != nil && *resp.MalformedChunk == i+1 {
			write("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`)
			continue
		}
		write("content_block_delta", string(mustJSON(map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]string{"type": "text_delta", "text": piece}})))
	}
	if stopBefore(r, resp, len(chunks(resp.Text))) {
		return
	}
	write("content_block_stop", `{"type":"content_block_stop","index":0}`)
	write("message_delta", string(mustJSON(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]int{"output_tokens": usage.Output}})))
	write("message_stop", `{"type":"message_stop"}`)
}

func (s *Server) respondWhole(w http.ResponseWriter, resp Response, model string, usage Usage, anthropic bool) {
	w.Header().Set("Content-Type", "application/json")
	if anthropic {
		content := []any{}
		if !resp.Empty {
			content = append(content, map[string]string{"type": "text", "text": resp.Text})
		}
		_, _ = w.Write(mustJSON(map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": "end_turn", "usage": map[string]int{"input_tokens": usage.Input, "output_tokens": usage.Output}}))
		return
	}
	choices := []any{}
	if !resp.Empty {
		choices = append(choices, map[string]any{"index": 0, "message": map[string]string{"role": "assistant", "content": resp.Text}, "finish_reason": "stop"})
	}
	_, _ = w.Write(mustJSON(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model, "choices": choices,
		"usage": map[string]int{"prompt_tokens": usage.Input, "completion_tokens": usage.Output, "total_tokens": usage.Input + usage.Output}}))
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
		panic(err) // only ever called with maps of plain values
	}
	return b
}
