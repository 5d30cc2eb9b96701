// Package wire translates between the wire formats callers speak (OpenAI's chat completions,
// Anthropic's messages) and baton's turn model (provider.Turn, provider.Answer). It does no I/O
// beyond writing to the http.ResponseWriter or io.Writer it is given.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Error is a refusal or failure in the caller's wire; Param names the field (JSON path like
// messages[2].content[0].image_url).
type Error struct {
	Status     int
	Type       string // OpenAI's (invalid_request_error, rate_limit_error, server_error) or Anthropic's
	Code       string
	Param      string
	Message    string
	RetryAfter int // seconds; a Retry-After header when > 0
}

func (e *Error) Error() string { return e.Message }

// BadRequest is a 400 invalid_request_error naming param.
func BadRequest(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) status() int {
	if e.Status < 100 || e.Status > 999 {
		return http.StatusInternalServerError
	}
	return e.Status
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type openAIErrorBody struct {
	Error openAIErrorDetail `json:"error"`
}

type openAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// openAIErrorJSON is {"error": {message, type, param, code}}, param and code null when empty.
func openAIErrorJSON(e *Error) []byte {
	typ := e.Type
	if typ == "" {
		typ = openAITypeFor(e.status())
	}
	return marshal(openAIErrorBody{Error: openAIErrorDetail{Message: e.Message, Type: typ, Param: nullable(e.Param), Code: nullable(e.Code)}})
}

func openAITypeFor(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// WriteOpenAIError writes e as OpenAI does: {"error": {message, type, param, code}}, with a
// Retry-After header when RetryAfter > 0.
func WriteOpenAIError(w http.ResponseWriter, e *Error) {
	writeErrorHeaders(w, e)
	_, _ = w.Write(append(openAIErrorJSON(e), '\n'))
}

func writeErrorHeaders(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.status())
}

// Anthropic's error types.
var anthropicTypes = map[string]bool{
	"invalid_request_error": true, "authentication_error": true, "permission_error": true,
	"not_found_error": true, "request_too_large": true, "rate_limit_error": true,
	"api_error": true, "overloaded_error": true, "billing_error": true, "timeout_error": true,
}

// anthropicType is e's type in Anthropic's words: an Anthropic-only type as given, otherwise
// (OpenAI's types, which invalid_request_error and rate_limit_error share) from the status.
func anthropicType(e *Error) string {
	if anthropicTypes[e.Type] && e.Type != "invalid_request_error" && e.Type != "rate_limit_error" {
		return e.Type
	}
	switch s := e.status(); {
	case s == http.StatusUnauthorized:
		return "authentication_error"
	case s == http.StatusForbidden:
		return "permission_error"
	case s == http.StatusNotFound:
		return "not_found_error"
	case s == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case s == http.StatusTooManyRequests:
		return "rate_limit_error"
	case s == http.StatusServiceUnavailable || s == 529:
		return "overloaded_error"
	case s >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

type anthropicErrorBody struct {
	Type  string               `json:"type"`
	Error anthropicErrorDetail `json:"error"`
}

type anthropicErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func anthropicErrorJSON(e *Error) []byte {
	return marshal(anthropicErrorBody{Type: "error", Error: anthropicErrorDetail{Type: anthropicType(e), Message: e.Message}})
}

// WriteAnthropicError writes e as Anthropic does: {"type": "error", "error": {type, message}},
// with a Retry-After header when RetryAfter > 0.
func WriteAnthropicError(w http.ResponseWriter, e *Error) {
	writeErrorHeaders(w, e)
	_, _ = w.Write(append(anthropicErrorJSON(e), '\n'))
}

// marshal encodes v without escaping <, > and & (as the APIs do).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only a value of ours that cannot be encoded gets here (a bug): say so in the body.
		return []byte(`{"error":{"message":"baton could not encode its response","type":"server_error","param":null,"code":null}}`)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// inStream is e as an error event in a stream, whose headers went out before it: a Retry-After
// the stream cannot carry is said in the message.
func inStream(e *Error) *Error {
	if e.RetryAfter <= 0 {
		return e
	}
	c := *e
	c.Message = fmt.Sprintf("%s (retry after %d s)", e.Message, e.RetryAfter)
	return &c
}
