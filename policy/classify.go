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

// Classify turns a failure into a reason (ReasonNone: not a failover signal). Precedence, as
// DESIGN.md fixes it: context overflow > billing > rate-limit text > overloaded text or 529 >
// other server errors (timeout).
func Classify(f Failure) Reason {
	f, detail := withBodyFields(f)
	provider := NormalizeProvider(f.Provider)
	msg := strings.TrimSpace(f.Message)
	r := classifyMessage(msg, provider, f.Status)
	// The body may say more than the message (a wrapper like "400 Bad Request").
	if detail != "" && detail != msg {
		r = mergeDetail(r, classifyMessage(detail, provider, f.Status))
	}
	if r == ReasonNone && f.Type != "" {
		r = classifyType(f.Type)
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
	if status == 0 && r == ReasonNone {
		// "429 Too Many Requests" as bare text; "402 records processed" is prose, not billing.
		if status = leadingStatus(msg); status == 402 && !hard402Re.MatchString(strings.ToLower(msg)) {
			status = 0
		}
	}
	if status != 0 {
		return classifyStatus(status, r, f)
	}
	if r == ReasonNone && f.Net != "" {
		return ReasonTimeout // a transport failure before any answer
	}
	return r
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
	// A JSON message carries its own type (Anthropic's stream error events arrive this way).
	if f.Type == "" && strings.HasPrefix(strings.TrimSpace(f.Message), "{") {
		if e, ok := parseErrorBody(strings.TrimSpace(f.Message)); ok {
			f.Type = e.Type
		}
	}
	return f, detail
}

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
	if json.Unmarshal([]byte(s), &raw) != nil {
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

func classifyType(t string) Reason {
	switch strings.ToLower(t) {
	case "invalid_request_error":
		return ReasonFormat
	case "server_error", "upstream_error", "api_error":
		return ReasonTimeout
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

// classifyStatus maps an HTTP status, keeping what the message says where the seeds let it.
func classifyStatus(status int, r Reason, f Failure) Reason {
	msg, body := strings.TrimSpace(f.Message), f.Body
	switch {
	case status == 402:
		if msg == "" && body == "" {
			return ReasonBilling
		}
		return classify402(firstNonEmpty(msg, body))
	case status == 429:
		// A 429 that says the money ran out (OpenAI's insufficient_quota) is billing.
		if r == ReasonBilling || isBillingText(strings.ToLower(msg)) || isBillingText(strings.ToLower(body)) ||
			classifyType(f.Type) == ReasonBilling || classifyCode(f.Code) == ReasonBilling {
			return ReasonBilling
		}
		return ReasonRateLimit
	case status == 401 || status == 403:
		switch {
		case r == ReasonAuthPermanent || r == ReasonBilling:
			return r
		case authPermanent.match(strings.ToLower(msg)):
			return ReasonAuthPermanent
		}
		return ReasonAuth
	case status == 408:
		return ReasonTimeout
	case status == 410:
		switch r {
		case ReasonSessionExpired, ReasonBilling, ReasonAuthPermanent, ReasonAuth:
			return r
		}
		return ReasonTimeout
	case status == 404:
		switch r {
		case ReasonSessionExpired, ReasonBilling, ReasonAuthPermanent, ReasonAuth, ReasonFormat:
			return r
		}
		return ReasonModelNotFound
	case status == 529:
		return ReasonOverloaded
	case status == 499 || (status >= 500 && status <= 599):
		switch r {
		case ReasonBilling, ReasonRateLimit, ReasonOverloaded, ReasonAuth, ReasonAuthPermanent:
			return r
		}
		return ReasonTimeout
	case status == 400 || status == 422:
		if r != ReasonNone {
			return r
		}
		if isNoBody(msg) && isNoBody(body) {
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

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

var noBodyRe = regexp.MustCompile(`(?i)^\s*(\d{3}\s+)?(status code\s*)?(\(no body\)|no body|no body response|no response body)?\s*$`)

func isNoBody(s string) bool { return noBodyRe.MatchString(s) }

var leadingStatusRe = regexp.MustCompile(`(?i)^\s*(?:error:\s*)?(?:http\s*)?([1-5]\d\d)\b`)

// leadingStatus reads a status at the start of a message ("429 Too Many Requests").
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

// String is the reason's name, "none" for ReasonNone (the `baton classify` contract).
func (r Reason) String() string {
	if r == ReasonNone {
		return "none"
	}
	return string(r)
}
