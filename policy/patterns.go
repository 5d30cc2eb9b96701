package policy

import (
	"regexp"
	"strings"
)

// Message patterns, matched against the lower-cased message. They follow OpenClaw's lists
// (shared/reference/openclaw-failover-spec.md §2), compiled once.

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

var (
	imageDimensionRe = re(`image dimensions exceed max allowed size|image exceeds \d+ ?mb maximum`)
	imageInputRe     = re(`\bdoes not support image inputs?\b|\bunsupported image input\b`)
	noEndpointsRe    = re(`\bno endpoints found\b`)
	imageSupportRe   = re(`\bsupport image input\b`)

	sessionExpiredRe = re(`\b(session (not found|does not exist|expired|invalid)|conversation (not found|does not exist|expired|invalid)|no conversation found|no such session|invalid session|(session|conversation) id not found)\b`)

	modelNotFoundRe = re(`\bunknown model\b|\bmodel[_ ]not[_ ]found\b|\bmodel\s+\S+\s+not found\b|\bmodel id \S+ not found\b|\bmodel_is_deactivated\b|\bmodel\s+\S+\s+does not exist\b|\bno such model\b|\bthe model .{1,80} does not exist\b`)

	replayInvalidRe = re(`\bprevious_response_id\b.*\b(invalid|unknown|not found|does not exist|expired|mismatch)\b|\btool_(use|call)\.(input|arguments)\b.*\b(missing|required)\b|\bincorrect role information\b|\broles must alternate\b|\binput item id does not belong to this connection\b`)
	thinkingSigRe   = re(`\bthinking\b.*(\b(invalid|expired)\b.*\bsignature\b|\bsignature\b.*\b(invalid|expired)\b)`)

	// 402 markers and the billing text around them.
	hard402Re     = re(`["']?(status|code)["']?\s*[:=]\s*402\b|\bhttp\s*402\b|\berror(\s+code)?\s*[:=]?\s*402\b|\b(got|returned|received)\s+(a\s+)?402\b|^\s*402\s+(payment required\b|.*used up your points\b|no available asset for api access\b)`)
	wrapper402Re  = re(`^\s*(error:\s*)?(http\s*402\s*:?\s*)?(402\s+)?(payment required\s*:?\s*)?`)
	urlRe         = re(`https?://\S+`)
	billingHintRe = re(`insufficient credits|insufficient quota|credit balance|insufficient balance|plans & billing|add more credits|top up|billing hard limit|hard limit reached`)
	planLimitRe   = re(`(upgrade your plan|upgrade plan|current plan|subscription).*\blimit|\blimit\b.*(upgrade your plan|upgrade plan|current plan|subscription)`)
	maxAllowedRe  = re(`maximum allowed.*\blimit|\blimit\b.*maximum allowed`)
	subQuotaRe    = re(`subscription quota limit`)
	subQuotaWinRe = re(`automatic quota refresh|rolling time window`)
	retryWordRe   = re(`try again|retry|temporary|cooldown`)
	usageLimitRe  = re(`usage limit|rate limit|organization usage`)
	periodRe      = re(`\b(daily|weekly|monthly)\b`)
	spendLimitRe  = re(`usage limit|spend(ing)? limit`)
	resetRe       = re(`\breset`)
	orgRe         = re(`\b(organization|workspace)\b`)
	orgLimitEndRe = re(`spend(ing)? limit|billing period|exceeded|reached|exhausted`)
	limitRe       = re(`\blimit`)
	periodicUseRe = re(`\b(daily|weekly|monthly)(/(daily|weekly|monthly))* (usage )?limits?( (exhausted|reached|exceeded))?\b`)

	billingRe         = re(`payment required|insufficient credits|used\s+all\s+available\s+credits|(monthly\s+)?spend(ing)?\s+limit|insufficient[_ ]quota|\b(go|free)usagelimiterror\b|available balance|out of budget|credit balance|plans & billing|insufficient[_ ]balance|\binsufficient\s+\w+\s+balance\b|insufficient usd or diem balance|requires?\s+more\s+credits|out of extra usage|draw from your extra usage|extra usage is required|余额不足|账户余额不足|欠费|账户已欠费|"code"\s*:\s*"invalidsubscription"|does not have a valid coding\s*plan subscription|"code"\s*:\s*1311\b|current subscription plan.*(does not|doesn't|not).*include access|model.*not available.*current plan|\b(got|returned|received)\s+(a\s+)?402\b`)
	billingHeadRe     = re(`^\s*(error:\s*)?(billing|billing error|credit balance|insufficient credits?|payment required|http 402)\b`)
	billingHeadWordRe = re(`upgrade|credits|payment|purchase|subscription|plan`)
	records402Re      = re(`\b402\s+records\b`)

	rateLimitRe = re(`rate[_ ]limit|too many (concurrent )?requests|\bthrottl(ing[_]?exception|ing|ed)\b|\bconcurrency limit\b.*\b(breached|reached)\b|model_cooldown|exceeded your current quota|\bresource[_ -]?exhausted\b|\bquota[_ -]?exceeded\b|\bquota (limit )?(exceeded|exhausted|depleted|reached)\b|usage limit|\btpm\b|tokens per minute|tokens per day|请求过于频繁|调用频率|频率限制|配额不足|配额已用尽|额度不足|额度已用尽|` +
		`(^|\b(https?|status(code)?|response(code)?|http status)\W{0,6})429\b|"(status|code)"\s*:\s*429\b|\b429\b.{0,3}(rate limit(ed|ing)?|too many requests|resource has been exhausted|quota (exceeded|exhausted|depleted|reached))`)

	overloadedRe = re(`overloaded|\b(selected\s+)?model\s+(is\s+)?at capacity\b|\bservice([_ ]temporarily)?[_ ]unavailable\b|high demand|high load|modelnotreadyexception|服务过载|当前负载过高|访问量过大`)

	errorStopRe        = re(`\bfinish_reason:\s*error\b|\bstop reason:\s*error\b|\bunhandled stop reason:\s*error\b|\breason:\s*error\b`)
	structuredSrvRe    = re(`"(type|code)"\s*:\s*"(server_error|upstream_error)"`)
	oauthPermanentRe   = re(`invalid_grant|access token could not be refreshed because you have since logged out|authentication session could not be refreshed automatically|refresh token (is )?(invalid|expired|revoked)`)
	authPermanentRe    = re(`api[_ ]?key[_ ]?(revoked|deactivated|deleted)|deactivated[_ ]workspace|key has been disabled|key has been revoked|account has been deactivated|not allowed for this organization`)
	authRe             = re(`invalid[_ ]?api[_ ]?key($|[^a-z0-9])|api[_ ]?key[_ ]?(is[_ ]?)?(invalid|not[_ ]?valid)($|[^a-z0-9])|could not (authenticate|validate).*(api[_ ]?key|credentials)|permission_error|incorrect api key|invalid token|authentication|re-authenticate|oauth token refresh failed|unauthorized|forbidden|access denied|insufficient permissions?|missing scopes?:|expired|\b401\b|\b403\b|no credentials found|no api key found|\bfailed to (extract|parse|validate|decode)\b.*\btoken\b|"code"\s*:\s*1113\b|无权访问|认证失败|鉴权失败|密钥无效|apikey 无效|\bce-011\b`)
	unknownErrorRe     = re(`^\s*an unknown error occurred\.?\s*$`)
	serverErrorRe      = re(`an error occurred while processing|internal server error|internal_error|server_error|bad gateway|gateway timeout|upstream error|upstream connect error|connection reset|内部错误|服务器错误|服务器内部错误|系统错误|系统繁忙|系统异常|\bhttp\s+5\d\d\b|^\s*status:\s*internal server error\s*$`)
	apiErrorTypeRe     = re(`"type"\s*:\s*"api_error"`)
	transientRe        = re(`internal server error|overload|temporarily unavailable|service unavailable|unknown error|server error|bad gateway|gateway timeout|upstream error|backend error|try again later|temporarily.+unable|unexpected error`)
	formatRe           = re(`string should match pattern|tool_use\.id|tool_use_id|messages\.1\.content\.1\.tool_use\.id|invalid request format|tool call id was.*must be|does not support assistant message prefill|conversation must end with a user message|agent harness .* does not support .*provider is not one of`)
	timeoutRe          = re(`timeout|timed out|deadline exceeded|got status: internal.*code: 500|"status"\s*:\s*"internal".*"code"\s*:\s*500|connection error|network error|network request failed|fetch failed|socket hang up|^stream disconnected before completion(:.*)?$|^premature close of server response while trying to fetch|^([\w -]*stream ended (before (message_?stop|(a )?terminal (finish reason|response event|event))|without (a terminal )?finish[_ ]reason)|responses stream ended with unresolved tool calls|google sse stream ended with an incomplete frame)[.!]?$|网络错误|网络异常|服务暂时不可用|服务繁忙|请求超时|连接超时|连接错误|\beconn(refused|reset|aborted)\b|\benetunreach\b|\behostunreach\b|\behostdown\b|\benetreset\b|\betimedout\b|\besockettimedout\b|\bepipe\b|\benotfound\b|\beai_again\b|without sending (any )?chunks?|\b(unhandled )?stop reason:\s*(abort|malformed_response|network_error)\b|\breason:\s*(abort|malformed_response|network_error)\b|\bfinish_reason:\s*(abort|malformed_response|network_error)\b|\boperation was aborted\b|\bstream (was )?(closed|aborted)\b|^terminated$|^stream_read_error$|\bund_err_(socket|connect|headers?|body|req_content_length_mismatch|aborted|closed)\b|^request failed$|\brequest failed after repeated internal retries\b|^llm request failed\.$`)
	noErrorDetailsText = "unknown error (no error details in response)"

	// Provider-scoped matchers: the same words mean different things at different providers.
	openRouterProviderErrorRe = re(`^\s*provider returned error\s*$`)
	keyLimitRe                = re(`\bkey limit exceeded\b`)
)

// Context overflow never fails over (compaction owns it), so it is matched narrowly.
var (
	overflowRe    = re(`request_too_large|request exceeds the maximum size|context[_ ]length[_ ]exceeded|maximum context length|prompt is too long|\b413\b.*request entity too large|request size exceeds model context window|exceeded model token limit|input length and max_tokens exceed context limit|max_tokens would exceed context window|model_context_window_exceeded|context_window_exceeded|上下文过长|上下文超出限制|超出最大上下文长度|input is too long|input token count exceeds the maximum number of input tokens|input exceeds the maximum number of tokens|exceeds the available context size|inputs tokens \+ max_new_tokens must be <=|ran out of room in the model's context window|context window exceeded|too many tokens in (the )?(prompt|request)`)
	notOverflowRe = re(`context window too small|you requested \d+k? tokens|investigate|upload limit|prompt template`)
	tpmHintRe     = re(`\btpm\b|tokens per minute|tokens per day|rate[_ ]limit`)
)

// IsContextOverflow reports a message that says the prompt does not fit the model.
func IsContextOverflow(msg string) bool {
	lower := strings.ToLower(msg)
	return isContextOverflowLower(lower)
}

func isContextOverflowLower(lower string) bool {
	if strings.Contains(lower, "extra usage is required for long context") {
		return false // Anthropic's billing text; DESIGN.md keeps it billing
	}
	if tpmHintRe.MatchString(lower) || notOverflowRe.MatchString(lower) {
		return false
	}
	return overflowRe.MatchString(lower)
}

// isBillingText applies the billing list, its head rule and the Markdown guard.
func isBillingText(lower string) bool {
	if strings.Count(lower, "## ") > 1 {
		return false // a Markdown document that mentions billing is not a billing error
	}
	if records402Re.MatchString(lower) {
		return false
	}
	if billingRe.MatchString(lower) || hard402Re.MatchString(lower) {
		return true
	}
	return billingHeadRe.MatchString(lower) && billingHeadWordRe.MatchString(lower)
}

// classify402 decides between billing and a retryable limit for a 402 answer.
func classify402(msg string) Reason {
	lower := strings.ToLower(msg)
	lower = urlRe.ReplaceAllString(wrapper402Re.ReplaceAllString(lower, ""), "")
	switch {
	case subQuotaRe.MatchString(lower) && subQuotaWinRe.MatchString(lower):
		return ReasonRateLimit
	case billingHintRe.MatchString(lower) || planLimitRe.MatchString(lower) || maxAllowedRe.MatchString(lower):
		return ReasonBilling
	case rateLimitRe.MatchString(lower) && !strings.Contains(lower, "usage limit"):
		return ReasonRateLimit
	case retryWordRe.MatchString(lower) && usageLimitRe.MatchString(lower),
		periodRe.MatchString(lower) && spendLimitRe.MatchString(lower),
		periodRe.MatchString(lower) && limitRe.MatchString(lower) && resetRe.MatchString(lower),
		periodicUseRe.MatchString(lower),
		orgRe.MatchString(lower) && limitRe.MatchString(lower) && orgLimitEndRe.MatchString(lower):
		return ReasonRateLimit
	}
	return ReasonBilling
}

// classifyMessage is the message classifier: the first rule that matches wins.
func classifyMessage(msg, provider string, status int) Reason {
	lower := strings.ToLower(strings.TrimSpace(msg))
	if lower == "" {
		return ReasonNone
	}
	switch {
	case imageDimensionRe.MatchString(lower):
		return ReasonNone
	case imageInputRe.MatchString(lower), noEndpointsRe.MatchString(lower) && imageSupportRe.MatchString(lower):
		return ReasonFormat
	case sessionExpiredRe.MatchString(lower):
		return ReasonSessionExpired
	case modelNotFoundRe.MatchString(lower) && !isContextOverflowLower(lower):
		return ReasonModelNotFound
	}
	if r := classifyProviderMessage(lower, provider, status); r != ReasonNone {
		return r
	}
	switch {
	case isContextOverflowLower(lower):
		return ReasonContextOverflow
	case replayInvalidRe.MatchString(lower), thinkingSigRe.MatchString(lower):
		return ReasonFormat
	case hard402Re.MatchString(lower):
		return classify402(lower)
	case status != 429 && isBillingText(lower):
		return ReasonBilling
	case periodicUseRe.MatchString(lower):
		if isBillingText(lower) {
			return ReasonBilling
		}
		return ReasonRateLimit
	case rateLimitRe.MatchString(lower):
		return ReasonRateLimit
	case overloadedRe.MatchString(lower):
		return ReasonOverloaded
	case errorStopRe.MatchString(lower):
		return ReasonTimeout // the provider finished with an error: a server error
	case structuredSrvRe.MatchString(lower) && !authRe.MatchString(lower):
		return ReasonTimeout
	case oauthPermanentRe.MatchString(lower), authPermanentRe.MatchString(lower):
		return ReasonAuthPermanent
	case authRe.MatchString(lower):
		return ReasonAuth
	case unknownErrorRe.MatchString(lower), serverErrorRe.MatchString(lower):
		return ReasonTimeout
	case apiErrorTypeRe.MatchString(lower) && transientRe.MatchString(lower):
		return ReasonTimeout
	case formatRe.MatchString(lower):
		return ReasonFormat
	case lower == noErrorDetailsText:
		return ReasonNoErrorDetails
	case timeoutRe.MatchString(lower):
		return ReasonTimeout
	}
	return ReasonNone
}

// classifyProviderMessage holds rules that apply to one provider only.
func classifyProviderMessage(lower, provider string, status int) Reason {
	switch provider {
	case "openrouter":
		if openRouterProviderErrorRe.MatchString(lower) {
			return ReasonTimeout // OpenRouter's upstream failed; elsewhere these words mean nothing
		}
		if keyLimitRe.MatchString(lower) && (status == 403 || status == 0) {
			return ReasonBilling // the OpenRouter key's spending limit
		}
	}
	if strings.Contains(lower, "concurrency limit reached") || strings.Contains(lower, "throttlingexception") {
		return ReasonRateLimit
	}
	return ReasonNone
}
