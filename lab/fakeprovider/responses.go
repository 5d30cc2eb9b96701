package fakeprovider

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// OpenAI's Responses API: POST {URL}/p/{provider}/v1/responses, streamed or not, answering the
// same scripted Responses as Chat Completions does. The answer's output is a reasoning item (when
// the script has Thinking or Signature: its summary is Thinking, its encrypted_content Signature,
// or an opaque stand-in), a message item (Text), then a function_call item per tool call. Every
// streamed event is named (event: TYPE) and carries its sequence_number, from 0.
//
// The knobs count chunks as on the other wires (the text deltas, then per call its
// output_item.added and its argument deltas; the reasoning item comes before and is not counted).
// Finish is in this API's words: completed (the default; "stop" and "tool_calls" mean it too),
// "failed" (the stream ends with response.failed, and a whole answer has status failed), or an
// incomplete reason ("max_output_tokens", "content_filter"; "length" is max_output_tokens), which
// ends the stream with response.incomplete. StreamError goes out as an error event (code, message
// and param: an object with a type but no code gives its type as the code, this API's errors having
// no type), or, with Finish "failed", as the error of response.failed (a server_error when the
// script gives none); first, or after StreamErrorAfterChunks. Usage adds
// input_tokens_details.cached_tokens (Cached) and output_tokens_details.reasoning_tokens (the
// Thinking's words, at most Output).
//
// A prefill is a final assistant message item (this API has no prefix flag), honoured, ignored or
// rejected (with PrefillRejectionOpenAI) as Response.Prefill says.

// The fake's item ids.
const (
	responseID      = "resp_fake"
	reasoningItemID = "rs_fake_1"
	messageItemID   = "msg_fake_1"
)

// responsesEnd is how the answer ends: its status, and an incomplete one's reason.
func (r Response) responsesEnd() (status, reason string) {
	switch r.Finish {
	case "", "completed", "stop", "tool_calls":
		return "completed", ""
	case "failed":
		return "failed", ""
	case "length", "incomplete":
		return "incomplete", "max_output_tokens"
	}
	return "incomplete", r.Finish
}

// responsesError is the scripted error in this API's words.
func responsesError(raw json.RawMessage) map[string]any {
	out := map[string]any{"code": "server_error", "message": "An error occurred while processing your request.", "param": nil}
	var e map[string]any
	if json.Unmarshal(raw, &e) != nil || e == nil {
		return out
	}
	out["code"], out["message"], out["param"] = e["code"], e["message"], e["param"]
	if out["code"] == nil {
		out["code"] = e["type"]
	}
	return out
}

// failure is the error object of a failed response (code and message).
func (r Response) failure() map[string]any {
	e := responsesError(r.StreamError)
	return map[string]any{"code": e["code"], "message": e["message"]}
}

func (r Response) hasReasoning() bool { return r.Thinking != "" || r.Signature != "" }

// encrypted is the reasoning item's encrypted content: the Signature, else a stand-in.
func (r Response) encrypted() string {
	if r.Signature != "" {
		return r.Signature
	}
	return "fake-encrypted:" + base64.StdEncoding.EncodeToString([]byte(r.Thinking))
}

func summaryPart(text string) map[string]any {
	return map[string]any{"type": "summary_text", "text": text}
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
}

func (r Response) reasoningItem() map[string]any {
	summary := []any{}
	if r.Thinking != "" {
		summary = append(summary, summaryPart(r.Thinking))
	}
	return map[string]any{"id": reasoningItemID, "type": "reasoning", "summary": summary, "encrypted_content": r.encrypted()}
}

func messageItem(status string, content ...any) map[string]any {
	if content == nil {
		content = []any{}
	}
	return map[string]any{"id": messageItemID, "type": "message", "role": "assistant", "status": status, "content": content}
}

func functionCallItem(i int, tc ToolCall, status, args string) map[string]any {
	return map[string]any{"id": fmt.Sprintf("fc_fake_%d", i+1), "type": "function_call", "call_id": tc.id(i, false),
		"name": tc.Name, "arguments": args, "status": status}
}

func responsesUsage(u Usage, r Response) map[string]any {
	reasoning := min(len(chunks(r.Thinking)), u.Output)
	return map[string]any{"input_tokens": u.Input, "input_tokens_details": map[string]int{"cached_tokens": u.Cached},
		"output_tokens": u.Output, "output_tokens_details": map[string]int{"reasoning_tokens": reasoning}, "total_tokens": u.Input + u.Output}
}

// responseObject is the response: whole, or in the stream's lifecycle events.
func responseObject(model, status string, output []any, usage, failure any, reason string) map[string]any {
	var incomplete any
	if reason != "" {
		incomplete = map[string]string{"reason": reason}
	}
	if output == nil {
		output = []any{}
	}
	return map[string]any{"id": responseID, "object": "response", "created_at": 0, "status": status, "model": model,
		"output": output, "usage": usage, "error": failure, "incomplete_details": incomplete}
}

func respondResponsesWhole(w http.ResponseWriter, resp Response, model string, usage Usage) {
	w.Header().Set("Content-Type", "application/json")
	status, reason := resp.responsesEnd()
	output := []any{}
	if !resp.Empty {
		if resp.hasReasoning() {
			output = append(output, resp.reasoningItem())
		}
		if resp.textBlock() {
			output = append(output, messageItem("completed", outputText(resp.Text)))
		}
		for i, tc := range resp.ToolCalls {
			output = append(output, functionCallItem(i, tc, "completed", tc.arguments()))
		}
	}
	var failure any
	if status == "failed" {
		failure = resp.failure()
	}
	_, _ = w.Write(mustJSON(responseObject(model, status, output, responsesUsage(usage, resp), failure, reason)))
}

func streamResponses(c *counter, resp Response, model string, usage Usage) {
	// Each event's sequence number is given as it goes out: a chunk the knobs hold back takes none.
	seq, send := 0, c.write
	write := func(event, data string) {
		if strings.HasSuffix(data, "}") {
			data = fmt.Sprintf(`%s,"sequence_number":%d}`, data[:len(data)-1], seq)
		}
		seq++
		send(event, data)
	}
	c.write = write
	event := func(typ string, fields map[string]any) string {
		fields["type"] = typ
		return string(mustJSON(fields))
	}
	emit := func(typ string, fields map[string]any) { write(typ, event(typ, fields)) }
	status, reason := resp.responsesEnd()
	var output []any // the items done so far

	emit("response.created", map[string]any{"response": responseObject(model, "in_progress", nil, nil, nil, "")})
	emit("response.in_progress", map[string]any{"response": responseObject(model, "in_progress", nil, nil, nil, "")})
	c.inBand = func() {
		if status == "failed" {
			emit("response.failed", map[string]any{"response": responseObject(model, "failed", output, nil, resp.failure(), "")})
			return
		}
		emit("error", responsesError(resp.StreamError))
	}
	if len(resp.StreamError) > 0 && resp.StreamErrorAfterChunks == nil {
		c.inBand()
		return
	}

	index := 0
	if resp.hasReasoning() {
		emit("response.output_item.added", map[string]any{"output_index": index,
			"item": map[string]any{"id": reasoningItemID, "type": "reasoning", "summary": []any{}}})
		if resp.Thinking != "" {
			at := func(fields map[string]any) map[string]any {
				fields["item_id"], fields["output_index"], fields["summary_index"] = reasoningItemID, index, 0
				return fields
			}
			emit("response.reasoning_summary_part.added", at(map[string]any{"part": summaryPart("")}))
			for _, piece := range chunks(resp.Thinking) {
				emit("response.reasoning_summary_text.delta", at(map[string]any{"delta": piece}))
			}
			emit("response.reasoning_summary_text.done", at(map[string]any{"text": resp.Thinking}))
			emit("response.reasoning_summary_part.done", at(map[string]any{"part": summaryPart(resp.Thinking)}))
		}
		item := resp.reasoningItem()
		emit("response.output_item.done", map[string]any{"output_index": index, "item": item})
		output = append(output, item)
		index++
	}

	if resp.textBlock() {
		at := func(fields map[string]any) map[string]any {
			fields["item_id"], fields["output_index"], fields["content_index"] = messageItemID, index, 0
			return fields
		}
		emit("response.output_item.added", map[string]any{"output_index": index, "item": messageItem("in_progress")})
		emit("response.content_part.added", at(map[string]any{"part": outputText("")}))
		for _, piece := range chunks(resp.Text) {
			if !c.send("response.output_text.delta", event("response.output_text.delta", at(map[string]any{"delta": piece, "logprobs": []any{}})),
				`{"type":"response.output_text.delta","item_id":"msg_fake_1","delta":`) {
				return
			}
		}
		if c.stopped() {
			return
		}
		emit("response.output_text.done", at(map[string]any{"text": resp.Text, "logprobs": []any{}}))
		emit("response.content_part.done", at(map[string]any{"part": outputText(resp.Text)}))
		item := messageItem("completed", outputText(resp.Text))
		emit("response.output_item.done", map[string]any{"output_index": index, "item": item})
		output = append(output, item)
		index++
	}

	for i, tc := range resp.ToolCalls {
		id := fmt.Sprintf("fc_fake_%d", i+1)
		if !c.send("response.output_item.added", event("response.output_item.added", map[string]any{"output_index": index,
			"item": functionCallItem(i, tc, "in_progress", "")}), `{"type":"response.output_item.added","item":{"type":"function_call","id":`) {
			return
		}
		for _, piece := range argPieces(tc.arguments()) {
			if !c.send("response.function_call_arguments.delta", event("response.function_call_arguments.delta",
				map[string]any{"item_id": id, "output_index": index, "delta": piece}),
				`{"type":"response.function_call_arguments.delta","item_id":"`+id+`","delta":`) {
				return
			}
		}
		if c.stopped() {
			return
		}
		emit("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": index, "arguments": tc.arguments()})
		item := functionCallItem(i, tc, "completed", tc.arguments())
		emit("response.output_item.done", map[string]any{"output_index": index, "item": item})
		output = append(output, item)
		index++
	}
	if c.stopped() {
		return
	}
	switch status {
	case "failed":
		emit("response.failed", map[string]any{"response": responseObject(model, "failed", output, nil, resp.failure(), "")})
	case "incomplete":
		emit("response.incomplete", map[string]any{"response": responseObject(model, "incomplete", output, responsesUsage(usage, resp), nil, reason)})
	default:
		emit("response.completed", map[string]any{"response": responseObject(model, "completed", output, responsesUsage(usage, resp), nil, "")})
	}
}

// readLastInput reads the last of a Responses request's input items. A string input is one user
// message; anything unreadable counts as no prefill.
func readLastInput(input json.RawMessage) lastMessage {
	var items []json.RawMessage
	if json.Unmarshal(input, &items) != nil || len(items) == 0 {
		return lastMessage{}
	}
	var m struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(items[len(items)-1], &m) != nil || m.Role != "assistant" || (m.Type != "" && m.Type != "message") {
		return lastMessage{}
	}
	// No prefix flag on this wire: a final assistant message is all a prefill can be.
	return lastMessage{assistant: true, prefix: true, text: inputText(m.Content)}
}

// inputText is the text of an input message's content: a string, or its text parts joined.
func inputText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "output_text", "input_text", "text":
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
