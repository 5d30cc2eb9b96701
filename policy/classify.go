package policy

import (
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

// Failure is a failed exchange with a provider as the provider layer parsed it, once
// (provider.Error, which activities.FailureOf maps here): the input of Classify, AttemptReason and
// RetryHintAt. They read its fields and parse nothing: the JSON error object a body or a message
// held is already read into Message, Type, Code and Detail, an HTML page already recognised (Page).
type Failure struct {
	Provider string `json:"provider,omitempty"`
	Status   int    `json:"status,omitempty"`
	Code     string `json:"code,omitempty"` // provider error code, e.g. rate_limit_exceeded
	Type     string `json:"type,omitempty"` // provider error type, e.g. overloaded_error
	// Message is the error's own message: that of the JSON error object the body or the message
	// held, else the message, else the body's text.
	Message string `json:"message,omitempty"`
	// Wrapped is the message as it came when it held an error object after a status or a short
	// wrapper ("429 {"error":{…}}"): its words are read when the object's say nothing ("": the
	// message came as Message is).
	Wrapped string `json:"wrapped,omitempty"`
	// Detail is what the body says (its error object's message, or its text); Body is the body.
	Detail string `json:"detail,omitempty"`
	Body   string `json:"body,omitempty"`
	// Page: the message is an HTML page (a proxy's or a gateway's), whose words say nothing, only its
	// status; DetailPage: the detail is one.
	Page       bool         `json:"page,omitempty"`
	DetailPage bool         `json:"detailPage,omitempty"`
	Net        NetErrorKind `json:"net,omitempty"`
	// Stream is how the stream failed, if it did (AttemptReason reads it; Classify does not).
	Stream StreamFault `json:"stream,omitempty"`
	// Retry is what the answer said about when to come back, as it said it (RetryHintAt).
	Retry RetryInfo `json:"retry,omitzero"`
}

// StreamFault is how a stream failed, or never started: the provider layer's Fault* words.
type StreamFault string

// Stream faults.
const (
	FaultResponseTimeout StreamFault = "response_timeout"    // no response headers in time
	FaultCut             StreamFault = "cut"                 // ended without the protocol's terminator
	FaultStall           StreamFault = "stall"               // went silent longer than the idle timeout
	FaultFirstToken      StreamFault = "first_token_timeout" // nothing within the first-token timeout
	FaultMalformed       StreamFault = "malformed"           // a chunk that is not valid JSON
	FaultInBandError     StreamFault = "in_band_error"       // an error event inside a 200 stream
	FaultEmpty           StreamFault = "empty"               // a 200 with no content
	FaultAttemptTimeout  StreamFault = "attempt_timeout"     // the whole attempt outlasted its bound
	FaultSlow            StreamFault = "too_slow"            // alive, but under the throughput floor
)

// AttemptReason is why a failed attempt failed. Stream faults are decided by their kind, as
// DESIGN.md says: a cut, a stall, a first-token, response or attempt timeout, a stream under its
// throughput floor and a malformed chunk are timeouts, an empty 200 is empty_response; a transport failure with no answer at all (reset,
// refused, DNS, TLS) is a timeout whatever it says; anything else, an in-band error event
// included (read like a body without a status), is classified (Classify).
func AttemptReason(f Failure) Reason {
	switch f.Stream {
	case FaultCut, FaultStall, FaultFirstToken, FaultResponseTimeout, FaultMalformed, FaultAttemptTimeout, FaultSlow:
		return ReasonTimeout
	case FaultEmpty:
		return ReasonEmptyResponse
	}
	if f.Status == 0 && f.Stream == "" && f.Net != "" {
		return ReasonTimeout
	}
	return Classify(f)
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
	provider := NormalizeProvider(f.Provider)
	// text is the error's own message; raw the message as it came (a status or wrapper and an
	// error object), whose words count when the object's say nothing.
	text := strings.TrimSpace(f.Message)
	raw := text
	if f.Wrapped != "" {
		raw = strings.TrimSpace(f.Wrapped)
	}
	detail := f.Detail
	if f.Page {
		// A gateway's page says nothing about the model; only its status does.
		status := f.Status
		if status == 0 {
			status = leadingStatus(raw) // the wrapper before the page: "502 <!DOCTYPE html>…"
		}
		return htmlPageReason(status)
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
	if detail != "" && detail != text && detail != raw && !f.DetailPage {
		r = mergeDetail(r, classifyMessage(detail, provider, hint))
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
	case "SERVER_ERROR": // the Responses API's in-band error events name their kind only in code
		return reasonServerError
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
	case said == ReasonNone && coded == ReasonOverloaded,
		strings.Contains(lowerText, "modelnotreadyexception"), strings.Contains(lowerDetail, "modelnotreadyexception"):
		// A busy model, in the seeds' words (ModelNotReadyException), or as a cloud's adapter
		// names it, is an overload though it comes as a 429.
		return ReasonOverloaded
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
