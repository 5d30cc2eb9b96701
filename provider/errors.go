package provider

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	oassestream "github.com/openai/openai-go/v3/packages/ssestream"
)

// The one parser of a provider's failure. Whatever a failed answer said (a JSON error object in
// the body or inside the message, an HTML page from a gateway, Retry-After and reset headers, a
// usage-limit body) is read here, once, into the fields of Error; the classifier and the retry
// hints (policy.Classify, policy.RetryHintAt) read those fields and parse nothing again.

// RetryInfo is what a failed answer said about when to come back, as it said it: read from the
// headers and the body without a clock (policy.RetryHintAt reads it at a time). Its shape is
// policy.RetryInfo's, field for field (activities.FailureOf converts one to the other).
type RetryInfo struct {
	// After is retry-after-ms, else Retry-After in seconds (HasAfter: one was given, 0 included),
	// saturated rather than overflowed; AfterDate is a Retry-After given as an HTTP date instead.
	After     time.Duration `json:"after,omitempty"`
	HasAfter  bool          `json:"hasAfter,omitempty"`
	AfterDate time.Time     `json:"afterDate,omitzero"`
	// HeaderResetAt is Anthropic's unified usage-limit reset header; BodyResetAt and BodyResetIn
	// are a usage-limit body's resets_at and (when it gives no valid resets_at) resets_in_seconds.
	HeaderResetAt time.Time     `json:"headerResetAt,omitzero"`
	BodyResetAt   time.Time     `json:"bodyResetAt,omitzero"`
	BodyResetIn   time.Duration `json:"bodyResetIn,omitempty"`
}

// Parse reads a failed exchange once, into what the classifier and the retry hints read: the
// message as it came (e.Message, which may hold a provider's JSON error object after a status or
// a short wrapper, or be an HTML page), the body (the whole of it; BodyPreview is set from it,
// and with no body, nil, BodyPreview is read as the body), and the hint headers (e.Headers). A
// code or a type already set is kept. It sets Message to the error's own message, Type and Code
// from the error objects, Wrapped, Detail, Page, DetailPage and Retry. Call it once, where the
// failure is made (it is not idempotent: the message it leaves is no longer the one that came).
func (e *Error) Parse(body []byte) *Error {
	if body != nil {
		e.BodyPreview = preview(body)
	} else {
		body = []byte(e.BodyPreview)
	}
	bodyText := strings.TrimSpace(e.BodyPreview)
	obj, decoded := parseErrorObject(strings.TrimSpace(string(body)))

	// The body: an error object's message, type and code, else its text.
	msg, detail := e.Message, bodyText
	if msg == "" && bodyText != "" && !strings.HasPrefix(bodyText, "{") {
		msg = bodyText
	}
	if decoded && obj.said() {
		detail = strings.TrimSpace(obj.Message)
		if msg == "" {
			msg = obj.Message
		}
		if e.Type == "" {
			e.Type = obj.Type
		}
		if e.Code == "" {
			e.Code = obj.Code
		}
	}

	// The message: an HTML page, or an error object after a status or a short wrapper.
	raw := strings.TrimSpace(msg)
	text := raw
	e.Page = isHTMLPage(raw)
	if !e.Page {
		if o, ok := embeddedErrorObject(raw); ok {
			e.Type, e.Code = firstNonBlank(e.Type, o.Type), firstNonBlank(e.Code, o.Code)
			text = firstNonBlank(strings.TrimSpace(o.Message), raw)
		}
	}
	e.Message, e.Wrapped = text, ""
	if text != raw {
		e.Wrapped = raw
	}
	e.Detail, e.DetailPage = detail, isHTMLPage(detail)
	e.Retry = retryInfo(e.Headers, obj, decoded)
	return e
}

// errorObject is the error object of an OpenAI ({"error":{message,type,code}}) or Anthropic
// ({"type":"error","error":{type,message}}) response, or a bare {message,type,code}; a
// usage-limit body (Codex style) adds resets_at or resets_in_seconds, at either level.
type errorObject struct {
	Message string
	Type    string
	Code    string
	resets
}

// said reports whether the object says anything of an error.
func (o errorObject) said() bool { return o.Message != "" || o.Type != "" || o.Code != "" }

// resets are a usage-limit body's reset fields, raw: a value of the wrong type is no reset, and
// does not spoil the rest of the object.
type resets struct {
	ResetsAt json.RawMessage `json:"resets_at"`
	ResetsIn json.RawMessage `json:"resets_in_seconds"`
}

// parseErrorObject decodes an error object of either shape from s (text after the object is
// ignored). decoded: s held a JSON object.
func parseErrorObject(s string) (out errorObject, decoded bool) {
	if !strings.HasPrefix(s, "{") {
		return errorObject{}, false
	}
	var raw struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		resets
	}
	if json.NewDecoder(strings.NewReader(s)).Decode(&raw) != nil {
		return errorObject{}, false
	}
	out = errorObject{Message: raw.Message, Type: raw.Type, Code: codeString(raw.Code), resets: raw.resets}
	if out.Type == "error" {
		out.Type = ""
	}
	if len(raw.Error) > 0 {
		var inner struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			resets
		}
		if json.Unmarshal(raw.Error, &inner) == nil {
			r := out.resets
			if string(raw.Error) != "null" {
				r = inner.resets // an error object speaks for the body
			}
			out = errorObject{Message: inner.Message, Type: inner.Type, Code: codeString(inner.Code), resets: r}
		} else {
			var text string
			if json.Unmarshal(raw.Error, &text) == nil {
				out.Message = text
			}
		}
	}
	return out, true
}

// codeString is an error code, a string or a number.
func codeString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.Trim(string(raw), `"`)
}

// maxWrapperLen bounds what may stand before an error object or a page inside a message: a status
// and a label ("400 ", "Error: 529 ", "API Error: "), not a sentence that happens to quote JSON.
const maxWrapperLen = 80

// embeddedErrorObject decodes an error object that is the message, or follows a short wrapper.
func embeddedErrorObject(s string) (errorObject, bool) {
	i := strings.IndexByte(s, '{')
	if i < 0 || i > maxWrapperLen {
		return errorObject{}, false
	}
	o, decoded := parseErrorObject(s[i:])
	return o, decoded && o.said()
}

// isHTMLPage reports a text that is an HTML page (after at most a short wrapper), as a proxy or a
// gateway sends in place of the provider's answer: its words say nothing about the model.
func isHTMLPage(s string) bool {
	i := strings.IndexByte(s, '<')
	if i < 0 || i > maxWrapperLen {
		return false
	}
	head := strings.ToLower(s[i:min(len(s), i+len("<!doctype html"))])
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

func firstNonBlank(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// retryInfo reads retry-after-ms, Retry-After (seconds or an HTTP date), Anthropic's unified reset
// header (names case-insensitive) and a usage-limit body's resets.
func retryInfo(headers map[string]string, obj errorObject, decoded bool) RetryInfo {
	var r RetryInfo
	get := func(name string) string {
		for k, v := range headers {
			if strings.EqualFold(k, name) {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if ms, ok := nonNegative(get("retry-after-ms")); ok {
		r.After, r.HasAfter = duration(ms, time.Millisecond), true
	}
	if ra := get("retry-after"); ra != "" && !r.HasAfter {
		if sec, ok := nonNegative(ra); ok {
			r.After, r.HasAfter = duration(sec, time.Second), true
		} else if t, ok := parseHTTPDate(ra); ok {
			r.AfterDate = t
		}
	}
	if reset := get("anthropic-ratelimit-unified-reset"); reset != "" {
		if sec, err := strconv.ParseInt(reset, 10, 64); err == nil && sec > 0 {
			r.HeaderResetAt = time.Unix(sec, 0).UTC()
		}
	}
	if !decoded {
		return r
	}
	var at, in float64
	switch {
	case json.Unmarshal(obj.ResetsAt, &at) == nil && at > 0 && at < 1e11: // epoch seconds, not milliseconds
		r.BodyResetAt = time.Unix(int64(at), 0).UTC()
	case json.Unmarshal(obj.ResetsIn, &in) == nil && in > 0 && !math.IsInf(in, 0):
		r.BodyResetIn = duration(in, time.Second)
	}
	return r
}

// nonNegative reads a number that is neither negative nor infinite.
func nonNegative(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && f >= 0 && !math.IsInf(f, 0)
}

// duration is n units, saturated rather than overflowed (the policy caps hints far below).
func duration(n float64, unit time.Duration) time.Duration {
	if f := n * float64(unit); f < math.MaxInt64 {
		return time.Duration(f)
	}
	return math.MaxInt64
}

// parseHTTPDate reads the three date forms HTTP allows (RFC 9110 §5.6.7).
func parseHTTPDate(s string) (time.Time, bool) {
	for _, layout := range []string{"Mon, 02 Jan 2006 15:04:05 GMT", "Monday, 02-Jan-06 15:04:05 GMT", "Mon Jan _2 15:04:05 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func isStreamErrorEvent(err error) bool {
	var se *oassestream.StreamError
	return errors.As(err, &se) || strings.HasPrefix(err.Error(), "received error while streaming")
}

func streamErrorData(err error) []byte {
	var se *oassestream.StreamError
	if errors.As(err, &se) {
		return se.Event.Data
	}
	msg := strings.TrimPrefix(err.Error(), "received error while streaming: ")
	return []byte(msg)
}

func isJSONError(err error) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syntax) || errors.As(err, &typ) || strings.Contains(err.Error(), "invalid character")
}
