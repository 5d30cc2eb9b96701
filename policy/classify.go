package policy

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Reason is why an attempt failed, in the seeds' vocabulary. The empty Reason means "not a
// failover signal".
type Reason string

// The reasons a failure can have.
const (
	ReasonNone            Reason = ""
	ReasonRateLimit       Reason = "rate_limit"
	ReasonOverloaded      Reason = "overloaded"
	ReasonBilling         Reason = "billing"
	ReasonAuth            Reason = "auth"
	ReasonAuthPermanent   Reason = "auth_permanent"
	ReasonTimeout         Reason = "timeout"
	ReasonFormat          Reason = "format"
	ReasonModelNotFound   Reason = "model_not_found"
	ReasonSessionExpired  Reason = "session_expired"
	ReasonContextOverflow Reason = "context_overflow"
	ReasonEmptyResponse   Reason = "empty_response"
	ReasonNoErrorDetails  Reason = "no_error_details"
	ReasonUnclassified    Reason = "unclassified"
)

// AllReasons lists every reason, for validation and documentation.
var AllReasons = []Reason{ReasonRateLimit, ReasonOverloaded, ReasonBilling, ReasonAuth, ReasonAuthPermanent,
	ReasonTimeout, ReasonFormat, ReasonModelNotFound, ReasonSessionExpired, ReasonContextOverflow,
	ReasonEmptyResponse, ReasonNoErrorDetails, ReasonUnclassified}

// NetErrorKind is how a transport failed before any HTTP answer.
type NetErrorKind string

// Transport failure kinds.
const (
	NetReset   NetErrorKind = "reset"
	NetRefused NetErrorKind = "refused"
	NetDNS     NetErrorKind = "dns"
	NetTLS     NetErrorKind = "tls"
	NetTimeout NetErrorKind = "timeout"
	NetEOF     NetErrorKind = "eof"
)

// Failure is a failed exchange with a provider, as the adapter saw it.
type Failure struct {
	Provider string       `json:"provider,omitempty"`
	Status   int          `json:"status,omitempty"`
	Code     string       `json:"code,omitempty"` // provider error code, e.g. rate_limit_exceeded
	Type     string       `json:"type,omitempty"` // provider error type, e.g. overloaded_error
	Message  string       `json:"message,omitempty"`
	Body     string       `json:"body,omitempty"`
	Net      NetErrorKind `json:"net,omitempty"`
}

// reasonServerError is OpenClaw's server_error, which DESIGN.md folds into timeout. It lives only
// inside the classifier: a 400/422 must tell a server-error reading of its text (not a signal of
// its own: format) from a timeout, and Classify maps it to timeout on the way out.
const reasonServerError Reason = "server_error"

// Classify turns a failure into a reason (ReasonNone: not a failover signal). Precedence, as
// DESIGN.md fixes it: context overflow > billing > rate-limit text > overloaded text or 529 >
// other server errors (timeout).
func Classify(f Failure) Reason {
	if r := classify(f); r != reasonServerError {
		return r
	}
	return ReasonTimeout
}

func classify(f Failure) Reason {
	f, detail := withBodyFields(f)
	provider := NormalizeProvider(f.Provider)
	raw := strings.TrimSpace(f.Message)
	if prefix, ok := htmlPage(raw); ok {
		// A gateway's page says nothing about the model; only its status does.
		status := f.Status
		if status == 0 {
			status = leadingStatus(prefix)
		}
		return htmlPageReason(status)
	}
	// A JSON error object after a status or wrapper prefix is read like a body: its message first.
	text := raw
	if e, ok := embeddedErrorBody(raw); ok {
		f.Type, f.Code = firstNonEmpty(f.Type, e.Type), firstNonEmpty(f.Code, e.Code)
		text = firstNonEmpty(strings.TrimSpace(e.Message), raw)
	}
	hint := f.Status
	if hint == 0 {
		hint = leadingStatus(raw) // "429 …" keeps billing words from deciding, as a 429 does
	}
	r := classifyMessage(text, provider, hint)
	if r == ReasonNone && text != raw {
		r = classifyMessage(raw, provider, hint) // the object's own markers ("type":"server_error")
	}
	// The body may say more than the message (a wrapper like "400 Bad Request").
	if detail != "" && detail != text && detail != raw {
		if _, page := htmlPage(detail); !page {
			r = mergeDetail(r, classifyMessage(detail, provider, hint))
		}
	}
	said := r // what the words say, before the type and the code
	if r == ReasonNone && f.Type != "" {
		r = classifyType(f.Type, strings.ToLower(text+"\n"+detail))
	}
	if codeReason := classifyCode(f.Code); codeReason == ReasonAuthPermanent {
		return codeReason // a deactivated workspace beats any status
	} else if r == ReasonNone {
		r = codeReason
	}
	if r == ReasonContextOverflow {
		return r
	}
	status := f.Status
	if status == 0 {
		status = statusFromText(raw, r)
	}
	if status != 0 {
		return classifyStatus(status, r, said, statusText{text: text, detail: detail, body: f.Body})
	}
	if r == ReasonNone && f.Net != "" {
		return ReasonTimeout // a transport failure before any answer
	}
	return r
}

// statusFromText reads a status written at the start of a message that came without one. 401 and
// 403 are that status whatever the words (which may only make them billing or auth_permanent); a
// 402 only before a billing, quota, credit, plan or limit word, so "402 parcels delivered" stays
// prose; a 429 always, as its words were read as a 429's (classify429); any other status only when
// the words themselves say nothing.
func statusFromText(raw string, r Reason) int {
	switch s := leadingStatus(raw); {
	case s == 401 || s == 403 || s == 429:
		return s
	case s == 402:
		if lower := strings.ToLower(raw); lead402Re.MatchString(lower) || hard402Re.MatchString(lower) {
			return 402
		}
		return 0
	case r == ReasonNone:
		return s
	}
	return 0
}

// mergeDetail combines the message's reason with a detail's: overflow from either wins, a billing
// detail beats a rate-limit message, a format message yields to a more specific detail.
func mergeDetail(msg, detail Reason) Reason {
	switch {
	case detail == ReasonNone:
		return msg
	case msg == ReasonNone, detail == ReasonContextOverflow:
		return detail
	case msg == ReasonRateLimit && detail == ReasonBilling:
		return detail
	case msg == ReasonFormat:
		return detail
	}
	return msg
}

// withBodyFields fills message, type and code from an OpenAI- or Anthropic-shaped JSON body.
// It also returns the body's own text (its message when JSON) for classification as a detail.
func withBodyFields(f Failure) (Failure, string) {
	body := strings.TrimSpace(f.Body)
	detail := body
	if f.Message == "" && body != "" && !strings.HasPrefix(body, "{") {
		f.Message = body
	}
	if e, ok := parseErrorBody(body); ok {
		detail = strings.TrimSpace(e.Message)
		if f.Message == "" {
			f.Message = e.Message
		}
		if f.Type == "" {
			f.Type = e.Type
		}
		if f.Code == "" {
			f.Code = e.Code
		}
	}
	return f, detail
}

// embeddedErrorBody decodes a JSON error object that is the message, or follows a short wrapper
// ("400 ", "Error: 529 ", "API Error: "). Text after the object is ignored.
func embeddedErrorBody(s string) (ErrorBody, bool) {
	i := strings.IndexByte(s, '{')
	if i < 0 || i > maxWrapperLen {
		return ErrorBody{}, false
	}
	return parseErrorBody(s[i:])
}

// maxWrapperLen bounds what may stand before an embedded error object: a status and a label, not
// a sentence that happens to quote JSON.
const maxWrapperLen = 80

// ErrorBody is the error object of an OpenAI ({"error":{message,type,code}}) or Anthropic
// ({"type":"error","error":{type,message}}) response.
type ErrorBody struct {
	Message string
	Type    string
	Code    string
}

// parseErrorBody reads an error body of either shape, or a bare {message,type,code}.
func parseErrorBody(s string) (ErrorBody, bool) {
	if !strings.HasPrefix(s, "{") {
		return ErrorBody{}, false
	}
	var raw struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.NewDecoder(strings.NewReader(s)).Decode(&raw) != nil {
		return ErrorBody{}, false
	}
	out := ErrorBody{Message: raw.Message, Type: raw.Type, Code: codeString(raw.Code)}
	if out.Type == "error" {
		out.Type = ""
	}
	if len(raw.Error) > 0 {
		var inner struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(raw.Error, &inner) == nil {
			out = ErrorBody{Message: inner.Message, Type: inner.Type, Code: codeString(inner.Code)}
		} else {
			var text string
			if json.Unmarshal(raw.Error, &text) == nil {
				out.Message = text
			}
		}
	}
	return out, out.Message != "" || out.Type != "" || out.Code != ""
}

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

// classifyType reads a JSON error type when the words say nothing. api_error is Anthropic's
// catch-all: a server error only when the text names something transient.
func classifyType(t, lower string) Reason {
	switch strings.ToLower(t) {
	case "invalid_request_error":
		return ReasonFormat
	case "server_error", "upstream_error":
		return reasonServerError
	case "api_error":
		if transient.match(lower) {
			return reasonServerError
		}
	case "overloaded_error":
		return ReasonOverloaded
	case "rate_limit_error":
		return ReasonRateLimit
	case "authentication_error", "permission_error":
		return ReasonAuth
	case "not_found_error":
		return ReasonModelNotFound
	case "billing_error", "insufficient_quota":
		return ReasonBilling
	}
	return ReasonNone
}

func classifyCode(code string) Reason {
	switch strings.ToUpper(strings.TrimSpace(code)) {
	case "":
		return ReasonNone
	case "UNKNOWN_PARAMETER":
		return ReasonFormat
	case "RESOURCE_EXHAUSTED", "RATE_LIMIT", "RATE_LIMITED", "RATE_LIMIT_EXCEEDED", "TOO_MANY_REQUESTS",
		"THROTTLED", "THROTTLING", "THROTTLINGEXCEPTION", "THROTTLING_EXCEPTION":
		return ReasonRateLimit
	case "DEACTIVATED_WORKSPACE", "OAUTH_REFRESH_FAILED":
		return ReasonAuthPermanent
	case "OVERLOADED", "OVERLOADED_ERROR":
		return ReasonOverloaded
	case "INSUFFICIENT_QUOTA":
		return ReasonBilling
	case "INVALID_API_KEY":
		return ReasonAuth
	case "MODEL_NOT_FOUND":
		return ReasonModelNotFound
	case "CONTEXT_LENGTH_EXCEEDED":
		return ReasonContextOverflow
	case "ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "ETIMEDOUT", "ESOCKETTIMEDOUT", "EPIPE", "ENOTFOUND",
		"EAI_AGAIN", "EHOSTDOWN", "EHOSTUNREACH", "ENETUNREACH", "ENETRESET", "ERR_STREAM_PREMATURE_CLOSE":
		return ReasonTimeout
	}
	return ReasonNone
}

// statusText is what classifyStatus may read besides the reasons: the message (an embedded
// object's message when there is one), the body's detail and the raw body.
type statusText struct{ text, detail, body string }

// classifyStatus maps an HTTP status, keeping what the words say where the seeds let them. r is
// the reading of words, type and code; said that of the words alone.
func classifyStatus(status int, r, said Reason, t statusText) Reason {
	switch {
	case status == 402:
		if t.text == "" && t.body == "" {
			return ReasonBilling
		}
		return classify402(firstNonEmpty(t.text, t.body))
	case status == 429:
		return classify429(said, r, strings.ToLower(t.text), strings.ToLower(t.detail))
	case status == 401 || status == 403 || status == 407:
		switch {
		case r == ReasonAuthPermanent || r == ReasonBilling:
			return r
		case authPermanent.match(strings.ToLower(t.text)):
			return ReasonAuthPermanent
		}
		return ReasonAuth
	case status == 410:
		switch r {
		case ReasonSessionExpired, ReasonBilling, ReasonAuthPermanent, ReasonAuth, ReasonRateLimit, ReasonOverloaded:
			return r
		}
		return ReasonTimeout // a bare 410 is transport, not session expiry
	case status == 404:
		switch r {
		case ReasonSessionExpired, ReasonBilling, ReasonAuthPermanent, ReasonAuth, ReasonFormat:
			return r
		}
		return ReasonModelNotFound
	case status == 408 || status == 499 || (status >= 500 && status <= 599):
		return classifyServerStatus(status, r)
	case status == 400 || status == 422:
		switch {
		case r == reasonServerError:
			return ReasonFormat // a request the server refused is not a server error
		case r != ReasonNone:
			return r
		case isNoBody(t.text) && isNoBody(t.body):
			return ReasonNone // a bare 400 would loop compaction; not a failover signal
		}
		return ReasonFormat
	case status == 413:
		if r == ReasonNone {
			return ReasonContextOverflow
		}
	}
	return r
}

// classifyServerStatus applies DESIGN.md's precedence to the timing and server statuses, 529
// included: billing > rate-limit text > overloaded text or 529 > other server errors (timeout).
// Words about auth keep their reason on a 5xx; on a 529 the status speaks before them.
func classifyServerStatus(status int, r Reason) Reason {
	switch r {
	case ReasonBilling, ReasonRateLimit, ReasonOverloaded:
		return r
	}
	if status == 529 {
		return ReasonOverloaded
	}
	if r == ReasonAuth || r == ReasonAuthPermanent {
		return r
	}
	return ReasonTimeout
}

// classify429 lets the words decide before the code: money (balance, credits, payment) is
// billing; any other reading, a quota or allotment exceeded included, is a rate limit even when
// the code says insufficient_quota; a billing code or type counts only when the words say nothing.
func classify429(said, coded Reason, lowerText, lowerDetail string) Reason {
	switch {
	case speaksOfMoney(lowerText), speaksOfMoney(lowerDetail):
		return ReasonBilling
	case said == ReasonNone && coded == ReasonBilling:
		return ReasonBilling
	}
	return ReasonRateLimit
}

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// noBodyRe is a text that is only wrappers (Error:, HTTP, status code, a status) and at most a
// phrase saying the answer had no body.
var noBodyRe = regexp.MustCompile(`(?i)^\s*(?:(?:api\s+)?error\b\s*:?\s*|http(?:/[\d.]+)?\b\s*:?\s*|(?:request\s+failed\s+with\s+)?status(?:\s+code)?\b\s*:?\s*|\d{3}\b\s*:?\s*)*(?:\(?\s*no\s+(?:response\s+)?body(?:\s+response)?\s*\)?)?\s*\.?\s*$`)

func isNoBody(s string) bool { return noBodyRe.MatchString(s) }

var leadingStatusRe = regexp.MustCompile(`(?i)^\s*(?:error\s*:?\s*)?(?:http(?:/[\d.]+)?\s*:?\s*)?([1-5]\d\d)\b`)

// leadingStatus reads a status at the start of a message ("429 Too Many Requests", "Error: HTTP
// 401: …").
func leadingStatus(msg string) int {
	m := leadingStatusRe.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n := 0
	for _, c := range m[1] {
		n = n*10 + int(c-'0')
	}
	return n
}

// htmlPage reports a message that is an HTML page (after at most a short wrapper, returned), as a
// proxy or gateway sends in place of the provider's answer.
func htmlPage(s string) (string, bool) {
	i := strings.IndexByte(s, '<')
	if i < 0 || i > maxWrapperLen {
		return "", false
	}
	head := strings.ToLower(s[i:min(len(s), i+len("<!doctype html"))])
	if strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") {
		return s[:i], true
	}
	return "", false
}

// htmlPageReason is what a page's status alone says; its words are not read.
func htmlPageReason(status int) Reason {
	switch {
	case status == 408 || status == 499 || (status >= 500 && status <= 599):
		return ReasonTimeout
	case status == 401 || status == 403 || status == 407:
		return ReasonAuth
	case status == 429:
		return ReasonRateLimit
	case status == 402:
		return ReasonBilling
	}
	return ReasonNone
}

// String is the reason's name, "none" for ReasonNone (the `baton classify` contract).
func (r Reason) String() string {
	if r == ReasonNone {
		return "none"
	}
	return string(r)
}
