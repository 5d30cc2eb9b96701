package policy

import (
	"regexp"
	"strings"
)

// Message patterns, matched against the lower-cased message. They follow OpenClaw's lists
// (shared/reference/openclaw-failover-spec.md §2), compiled once.

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

var (
	imageDimension = lits("image dimensions exceed max allowed size").with("image exceeds", `image exceeds \d+ ?mb maximum`)
	imageInput     = matcher{}.with("image input", `\bdoes not support image inputs?\b|\bunsupported image input\b`)

	sessionExpired = matcher{}.with("session|conversation", `\b(session (not found|does not exist|expired|invalid)|conversation (not found|does not exist|expired|invalid)|no conversation found|no such session|invalid session|(session|conversation) id not found)\b`)

	modelNotFound = lits("model_not_found", "model not found", "model_is_deactivated", "no such model").
			with("unknown model", `\bunknown model\b`).
			with("model", `\bmodel\s+\S+\s+not found\b|\bmodel id \S+ not found\b|\bmodel\s+\S+\s+does not exist\b|\bthe model .{1,80} does not exist\b`)

	replayInvalid = lits("incorrect role information", "roles must alternate", "input item id does not belong to this connection").
			with("previous_response_id", `\bprevious_response_id\b.*\b(invalid|unknown|not found|does not exist|expired|mismatch)\b`).
			with("tool_use.|tool_call.", `\btool_(use|call)\.(input|arguments)\b.*\b(missing|required)\b`)

	billing = lits("payment required", "insufficient credits", "insufficient_quota", "insufficient quota", "available balance",
		"out of budget", "credit balance", "plans & billing", "insufficient_balance", "insufficient balance",
		"out of extra usage", "draw from your extra usage", "extra usage is required", "余额不足", "欠费").
		with("credits", `used\s+all\s+available\s+credits|requires?\s+more\s+credits`).
		with("limit", `spend(ing)?\s+limit`).
		with("usagelimiterror", `\b(go|free)usagelimiterror\b`).
		with("invalidsubscription", `"code"\s*:\s*"invalidsubscription"`).
		with("coding", `does not have a valid coding\s*plan subscription`).
		with("1311", `"code"\s*:\s*1311\b`).
		with("subscription plan", `current subscription plan.*(does not|doesn't|not).*include access`).
		with("current plan", `model.*not available.*current plan`).
		with("402", `\b(got|returned|received)\s+(a\s+)?402\b`)
	insufficientRe    = re(`\binsufficient((?:\s+[\w-]+){0,3})\s+balance\b`)
	balanceShortRe    = re(`\bbalance\s+(?:is\s+)?(?:insufficient|too low|not enough)\b`)
	notMoneyWordRe    = re(`\b(?:to|for|of|permissions?|privileges?|scopes?|access|rights)\b`)
	billingHeadRe     = re(`^\s*(error:\s*)?(billing|billing error|credit balance|insufficient credits?|payment required|http 402)\b`)
	billingHeadWordRe = re(`upgrade|credits|payment|purchase|subscription|plan`)
	records402Re      = re(`\b402\s+records\b`)

	// 402 markers and the billing text around them (classify402 runs for 402s only).
	hard402Re     = re(`["']?(status|code)["']?\s*[:=]\s*402\b|\bhttp\s*402\b|\berror(\s+code)?\s*[:=]?\s*402\b|\b(got|returned|received)\s+(a\s+)?402\b|^\s*402\s+(payment required\b|.*used up your points\b|no available asset for api access\b)`)
	lead402Re     = re(`^\s*(?:error\s*:?\s*)?(?:http(?:/[\d.]+)?\s*:?\s*)?402\b.*\b(?:billing|bill|payment|pay|paid|quota|credits?|balance|funds?|plans?|subscription|limits?|spend(?:ing)?|budget|top[ -]?up|purchase|upgrade)\b`)
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

	periodicUse = matcher{}.with("daily|weekly|monthly", `\b(daily|weekly|monthly)(/(daily|weekly|monthly))* (usage )?limits?( (exhausted|reached|exceeded))?\b`)

	rateLimit = lits("rate_limit", "rate limit", "too many requests", "too many concurrent requests", "model_cooldown",
		"exceeded your current quota", "usage limit", "tokens per minute", "tokens per day",
		"请求过于频繁", "调用频率", "频率限制", "配额不足", "配额已用尽", "额度不足", "额度已用尽").
		with("throttl", `\bthrottl(ing[_]?exception|ing|ed)\b`).
		with("concurrency limit", `\bconcurrency limit\b.*\b(breached|reached)\b`).
		with("exhausted", `\bresource[_ -]?exhausted\b`).
		with("quota", `\bquota[_ -]?exceeded\b|\bquota (limit )?(exceeded|exhausted|depleted|reached)\b`).
		// A quota or allotment used up, in either order ("exceeded your monthly allotment").
		with("quota|allotment|allowance", `\b(?:quota|allotment|allowance)s?\b[^.;\n]{0,40}\b(?:exceeded|exhausted|used up|depleted|reached)\b|\b(?:exceeded|exhausted|used up|depleted|reached)\b[^.;\n]{0,40}\b(?:quota|allotment|allowance)s?\b`).
		with("tpm", `\btpm\b`).
		with("429", `(^|\b(https?|status(code)?|response(code)?|http status)\W{0,6})429\b|"(status|code)"\s*:\s*429\b|\b429\b.{0,3}(rate limit(ed|ing)?|too many requests|resource has been exhausted|quota (exceeded|exhausted|depleted|reached))`)

	overloaded = lits("overloaded", "high demand", "high load", "modelnotreadyexception", "服务过载", "当前负载过高", "访问量过大").
			with("capacity", `\b(selected\s+)?model\s+(is\s+)?at capacity\b`).
			with("unavailable", `\bservice([_ ]temporarily)?[_ ]unavailable\b`)

	errorStop      = matcher{}.with("reason", `\bfinish_reason:\s*error\b|\bstop reason:\s*error\b|\breason:\s*error\b`)
	structuredSrv  = matcher{}.with("server_error|upstream_error", `"(type|code)"\s*:\s*"(server_error|upstream_error)"`)
	oauthPermanent = lits("invalid_grant", "access token could not be refreshed because you have since logged out", "authentication session could not be refreshed automatically").with("refresh token", `refresh token (is )?(invalid|expired|revoked)`)
	authPermanent  = lits("deactivated_workspace", "deactivated workspace", "key has been disabled", "key has been revoked", "account has been deactivated", "not allowed for this organization").with("key", `api[_ ]?key[_ ]?(revoked|deactivated|deleted)`)
	auth           = lits("permission_error", "incorrect api key", "invalid token", "authentication", "re-authenticate", "oauth token refresh failed", "unauthorized", "forbidden", "access denied", "insufficient permission", "expired", "no credentials found", "no api key found", "无权访问", "认证失败", "鉴权失败", "密钥无效", "apikey 无效", "ce-011").
			with("key", `invalid[_ ]?api[_ ]?key($|[^a-z0-9])|api[_ ]?key[_ ]?(is[_ ]?)?(invalid|not[_ ]?valid)($|[^a-z0-9])`).
			with("could not", `could not (authenticate|validate).*(api[_ ]?key|credentials)`).
			with("missing scope", `missing scopes?:`).
			with("401|403", `\b40[13]\b`).
			with("token", `\bfailed to (extract|parse|validate|decode)\b.*\btoken\b`).
			with("1113", `"code"\s*:\s*1113\b`).
			with("当前", `当前\s*ak.*(违规请求|禁止访问)|(违规请求|禁止访问).*当前\s*ak`)
	unknownErrorRe = re(`^\s*an unknown error occurred\.?\s*$`)
	serverError    = lits("an error occurred while processing", "internal server error", "internal_error", "server_error", "bad gateway",
		"gateway timeout", "upstream error", "upstream connect error", "connection reset", "内部错误", "服务器错误", "系统错误", "系统繁忙", "系统异常").
		with("http", `\bhttp\s+5\d\d\b`).
		with("status", `^\s*status:\s*internal server error\s*$`)
	apiErrorType = matcher{}.with("api_error", `"type"\s*:\s*"api_error"`)
	transient    = lits("internal server error", "overload", "temporarily unavailable", "service unavailable", "unknown error", "server error",
		"bad gateway", "gateway timeout", "upstream error", "backend error", "try again later", "unexpected error").
		with("temporarily", `temporarily.+unable`)
	format = lits("string should match pattern", "tool_use.id", "tool_use_id", "invalid request format", "does not support assistant message prefill", "conversation must end with a user message").
		with("tool call id was", `tool call id was.*must be`).
		with("agent harness", `agent harness .* does not support .*provider is not one of`)
	timeout = lits("timeout", "timed out", "deadline exceeded", "connection error", "network error", "network request failed", "fetch failed",
		"socket hang up", "operation was aborted", "request failed after repeated internal retries", "网络错误", "网络异常", "服务暂时不可用", "服务繁忙", "请求超时", "连接超时", "连接错误").
		exactly("terminated", "stream_read_error", "request failed", "llm request failed.").
		with("stream disconnected", `^stream disconnected before completion(:.*)?$`).
		with("premature close", `^premature close of server response while trying to fetch`).
		with("stream ended|incomplete frame", `^([\w -]*stream ended (before (message_?stop|(a )?terminal (finish reason|response event|event))|without (a terminal )?finish[_ ]reason)|responses stream ended with unresolved tool calls|google sse stream ended with an incomplete frame)[.!]?$`).
		with("econn|enetunreach|ehostunreach|ehostdown|enetreset|etimedout|esockettimedout|epipe|enotfound|eai_again", `\beconn(refused|reset|aborted)\b|\benetunreach\b|\behostunreach\b|\behostdown\b|\benetreset\b|\betimedout\b|\besockettimedout\b|\bepipe\b|\benotfound\b|\beai_again\b`).
		with("without sending", `without sending (any )?chunks?`).
		with("reason", `\b(unhandled )?stop reason:\s*(abort|malformed_response|network_error)\b|\breason:\s*(abort|malformed_response|network_error)\b|\bfinish_reason:\s*(abort|malformed_response|network_error)\b`).
		with("stream", `\bstream (was )?(closed|aborted)\b`).
		with("und_err_", `\bund_err_(socket|connect|headers?|body|req_content_length_mismatch|aborted|closed)\b`)
	noErrorDetailsText = "unknown error (no error details in response)"

	// The RPC status INTERNAL with code 500, in any order, spacing or quoting.
	rpcInternalRe = re(`\bstatus\W{0,6}internal\b`)
	rpcCode500Re  = re(`\bcode\W{0,6}500\b`)

	// The Claude CLI's own words for a missing or dead login (claude-cli only).
	claudeCLIAuth = matcher{}.with("not logged in", `\bnot logged in\b.*/login\b`).
			with("failed to authenticate", `\bfailed to authenticate\b.*\boauth\b.*\b(expired|refresh|refreshed)\b`)

	thinkingSignatureRe = re(`\b(invalid|expired)\b.{0,60}\bsignature|\bsignature\b.{0,60}\b(invalid|expired)\b`)

	// Provider-scoped matchers: the same words mean different things at different providers.
	openRouterProviderErrorRe = re(`^\s*provider returned error\s*$`)
	keyLimitRe                = re(`\bkey limit exceeded\b`)
)

// Context overflow never fails over (compaction owns it): it is read by meaning, what was sent
// against what the model holds, and nothing that only mentions it counts.
const (
	// Within one sentence: a dot counts only when text follows it at once ("llama-3.1").
	ovGap   = `(?:[^.;!?\n]|\.\S){0,60}`
	ovShort = `(?:[^.;!?\n]|\.\S){0,30}`
	// What was sent.
	ovSubject = `(?:\bprompt|\binputs?|\brequest|\bmessages?|\bconversation|\btokens|\btoken count)\b`
	// It exceeds, or must stay under, what follows.
	ovVerb = `(?:\bexceed(?:s|ed|ing)?\b|\b(?:is|are|was|were)\s+(?:greater|larger|longer|more|bigger)\s+than\b|` +
		`\b(?:is|are)\s+too\s+(?:long|large|big)\s+for\b|\b(?:does\s+not|doesn't|do\s+not|don't|cannot|can't|will\s+not|won't)\s+fit(?:\s+in(?:to)?)?\b|` +
		`\b(?:must|should)\s+(?:not\s+exceed\b|be\s+(?:at\s+most\b|less\s+than(?:\s+or\s+equal\s+to)?\b|smaller\s+than\b|shorter\s+than\b|no\s+(?:more|longer|larger)\s+than\b|<=?))|` +
		`\bmust\s+have\s+(?:less|fewer)\s+than\b|\b(?:cannot|can't)\s+exceed\b|>)`
	// The model's context: its size, length, window, budget, token limit or maximum.
	ovContext = `(?:\bcontext[ _-]?(?:window|length|size|limit|budget|token\s+limit)|\btoken\s+limit|` +
		`\bmax(?:imum)?\s+(?:context|model|input|prompt|sequence|number\s+of(?:\s+input)?\s+tokens|allowed(?:\s+input)?\s+tokens|size|length|tokens?)|` +
		`\d+\s*k?\s+maximum)\b`
)

var (
	overflow = lits("request_too_large", "request exceeds the maximum size", "context length exceeded", "context_length_exceeded",
		"maximum context length", "prompt is too long", "exceeded model token limit", "max_tokens would exceed context window",
		"model_context_window_exceeded", "context_window_exceeded", "input is too long", "ran out of room in the model's context window").
		with("413", `\b413\b.*request entity too large`).
		// Too many tokens of what was sent (Bedrock Titan: "Too many input tokens. Max input tokens: …").
		with("too many", `too many (?:input |prompt )?tokens in (?:the |your )?(?:prompt|request|input|messages?|conversation)\b|\btoo many (?:input|prompt) tokens\b`).
		with("context|token|max", ovSubject+ovGap+ovVerb+ovShort+ovContext).
		with("context|token|max", ovContext+ovGap+`(?:\b(?:is|are)\s+(?:less|smaller|shorter|fewer)\s+than|\btoo\s+small\s+for|\b(?:cannot|can't|can\s+not)\s+(?:fit|hold|accommodate)|\bnot\s+(?:large|big|long)\s+enough\s+for)\b`+ovGap+ovSubject).
		with("exceeded", ovContext+ovShort+`\b(?:(?:has|have)\s+been|was|were|is|are)\s+exceeded\b`).
		with("exceed", `\bexceed(?:s|ed|ing)?\s+(?:the\s+)?models?'?s?\s+(?:max(?:imum)?\s+)?(?:context|token)\s+(?:limit|length|window|size)\b`).
		// With no subject, after a clause that named it (Ollama: "prompt too long; exceeded max context length by N tokens").
		with("exceed", `\bexceed(?:s|ed|ing)?\s+(?:the\s+)?(?:max(?:imum)?\s+|available\s+)?context[ _-]?(?:limit|length|window|size)\b`).
		// What was sent, then what the model holds (Vertex: "the input token count is N but model only supports up to M").
		with("support|allow|accept|handle|can take&model", ovSubject+ovGap+`\b(?:but|while|whereas|however)\b,?\s+(?:the\s+|this\s+)?model\s+(?:only\s+)?(?:supports?|allows?|accepts?|handles?|can\s+(?:handle|take|accept))\s+(?:up\s+to|at\s+most|a\s+max(?:imum)?\s+of)\s+\d`).
		// The model's maximum, then what was sent (xAI: "maximum prompt length is N but the request contains M tokens").
		with("but|however|while|whereas&context|token|max", ovContext+ovGap+`\b(?:but|however|while|whereas)\b,?`+ovShort+ovSubject+`\s+(?:contains?|has|have|had|is|are|was|were|resulted\s+in|requires?|needs?|uses?)\s+(?:about\s+|approximately\s+|~\s*)?\d`).
		// The allowed range of the input's length (DashScope: "Range of input length should be [1, N]").
		with("input", `\binput\s+(?:length|tokens?)\s+(?:should|must)\s+be\s+(?:in\s+)?\[\s*\d+\s*,\s*\d+\s*\]`).
		with("overflow", `^\W*(?:error:\s*)?context overflow:`).
		with("上下文", `上下文.{0,10}(?:超出|超过|过长)|(?:超出|超过).{0,10}上下文|压缩上下文|上下文.{0,6}压缩`).
		// The prompt or input itself too long (Zhipu 1261: "Prompt 超长"); a parameter that is too long is not.
		with("超长|过长|超出|超过", `(?:prompt|提示词|输入|消息)\s*(?:内容|长度)?\s*(?:超长|过长)|(?:prompt|提示词|输入|消息)的?\s*(?:长度|token\s*数量?)\s*(?:超出|超过)`).
		with("compress|compact|shorten|trim|reduce", `\b(?:please|try to|you (?:must|need to|should))\s+(?:compress|compact|shorten|trim|reduce)\s+(?:the\s+|your\s+)?(?:context|conversation|chat history)\b|\breduce the length of the (?:messages?|prompt|input)\b`).
		// A request for a shorter input (LM Studio: "…context length of only N tokens, which is not enough. … provide a shorter input").
		with("shorter", `\b(?:provide|use|send|try(?:\s+using)?)\s+(?:a\s+)?shorter\s+(?:input|prompt)s?\b`)
	// A bound with only a number ("`inputs` must be at most 8192 tokens") counts when tokens are named.
	overflowBoundRe = re(ovSubject + ovGap + ovVerb + `(?:\s+[a-z']+){0,4}?\s*\(?\d[\d,_]*\s*k?\b(?:\)?\s*tokens?\b)?`)
	tokensWordRe    = re(`\btokens?\b`)
	// A bound whose subject is the output's size ("the maximum tokens you requested exceeds the model
	// limit of 8192", Bedrock) is a parameter to lower, not a prompt to compact.
	outputBoundRe = re(`(?:\bmax(?:imum)?|\boutput|\bcompletion)[ _]$`)
	notOverflow   = lits("context window too small", "investigate", "upload limit", "prompt template")
	tpmHint       = lits("tokens per minute", "tokens per min", "tokens per day", "rate_limit", "rate limit").with("tpm", `\btpm\b`)
)

// IsContextOverflow reports a message that says the prompt does not fit the model.
func IsContextOverflow(msg string) bool {
	lower := strings.ToLower(msg)
	return isContextOverflowLower(lower)
}

// isContextOverflowLower: what was sent (prompt, input, request, tokens) exceeds or must stay under
// the model's context (size, length, window, budget, token limit, maximum), in either order or
// in the passive, or is set against what the model supports ("is N but model only supports up to
// M"); a context size "has been exceeded"; too many input tokens; the agent's own "Context
// overflow:" label; Chinese 上下文 with 超出/超过/过长, a prompt 超长; a request to compress the
// context or shorten the input. Never: rate-limit texts (a TPM ceiling is not the context), a
// window too small for the config, chatter about overflow, a bound on the output's size.
func isContextOverflowLower(lower string) bool {
	if strings.Contains(lower, "extra usage is required for long context") {
		return false // Anthropic's billing text; DESIGN.md keeps it billing
	}
	if tpmHint.match(lower) || notOverflow.match(lower) || rateLimit.match(lower) {
		return false
	}
	if overflow.match(lower) {
		return true
	}
	if strings.Contains(lower, "token") {
		for _, ix := range overflowBoundRe.FindAllStringIndex(lower, -1) {
			if tokensWordRe.MatchString(lower[ix[0]:ix[1]]) && !outputBoundRe.MatchString(lower[max(0, ix[0]-12):ix[0]]) {
				return true
			}
		}
	}
	return false
}

// isBillingText applies the billing list, its head rule and the Markdown guard.
func isBillingText(lower string) bool {
	if strings.Count(lower, "## ") > 1 {
		return false // a Markdown document that mentions billing is not a billing error
	}
	if records402Re.MatchString(lower) {
		return false
	}
	if billing.match(lower) || insufficientBalance(lower) || (strings.Contains(lower, "402") && hard402Re.MatchString(lower)) {
		return true
	}
	return billingHeadRe.MatchString(lower) && billingHeadWordRe.MatchString(lower)
}

// insufficientBalance: "insufficient <a few words> balance" or a balance that "is too low", money
// in any currency; "insufficient permissions to view the balance" is not.
func insufficientBalance(lower string) bool {
	if !strings.Contains(lower, "balance") {
		return false
	}
	if strings.Contains(lower, "insufficient") {
		for _, m := range insufficientRe.FindAllStringSubmatch(lower, -1) {
			if !notMoneyWordRe.MatchString(m[1]) {
				return true
			}
		}
	}
	return balanceShortRe.MatchString(lower)
}

var quotaWordRe = re(`insufficient[_ ]quota`)

// speaksOfMoney is billing text about money (balance, credits, payment), not a quota's name.
func speaksOfMoney(lower string) bool {
	if strings.Contains(lower, "insufficient") {
		lower = quotaWordRe.ReplaceAllString(lower, " ")
	}
	return isBillingText(lower)
}

// invalidThinkingSignature: a thinking block whose signature is invalid or expired, in any word
// order; the request must change, so it is format, tried before the auth words ("expired").
func invalidThinkingSignature(lower string) bool {
	return strings.Contains(lower, "thinking") && strings.Contains(lower, "signature") && thinkingSignatureRe.MatchString(lower)
}

// rpcInternal500: the RPC status INTERNAL with code 500, in any order, spacing or quoting.
func rpcInternal500(lower string) bool {
	return strings.Contains(lower, "internal") && strings.Contains(lower, "500") &&
		rpcInternalRe.MatchString(lower) && rpcCode500Re.MatchString(lower)
}

// classify402 decides between billing and a retryable limit for a 402 answer. A daily, weekly or
// monthly limit is temporary only as a usage or spend limit, or with a reset in sight: "HTTP 402:
// monthly limit exhausted" is money.
func classify402(msg string) Reason {
	lower := strings.ToLower(msg)
	lower = urlRe.ReplaceAllString(wrapper402Re.ReplaceAllString(lower, ""), "")
	switch {
	case subQuotaRe.MatchString(lower) && subQuotaWinRe.MatchString(lower):
		return ReasonRateLimit
	case billingHintRe.MatchString(lower) || planLimitRe.MatchString(lower) || maxAllowedRe.MatchString(lower):
		return ReasonBilling
	case rateLimit.match(lower) && !strings.Contains(lower, "usage limit"):
		return ReasonRateLimit
	case retryWordRe.MatchString(lower) && usageLimitRe.MatchString(lower),
		periodRe.MatchString(lower) && spendLimitRe.MatchString(lower),
		periodRe.MatchString(lower) && limitRe.MatchString(lower) && resetRe.MatchString(lower),
		orgRe.MatchString(lower) && limitRe.MatchString(lower) && orgLimitEndRe.MatchString(lower):
		return ReasonRateLimit
	}
	return ReasonBilling
}

// classifyMessage is the message classifier: the first rule that matches wins. status is the
// failure's status, or the one its text starts with (0: none).
func classifyMessage(msg, provider string, status int) Reason {
	lower := strings.ToLower(strings.TrimSpace(msg))
	if lower == "" {
		return ReasonNone
	}
	switch {
	case imageDimension.match(lower):
		return ReasonNone
	case imageInput.match(lower), strings.Contains(lower, "no endpoints found") && strings.Contains(lower, "support image input"):
		return ReasonFormat
	case provider == "claude-cli" && claudeCLIAuth.match(lower):
		return ReasonAuth // elsewhere an expired OAuth session is the session's, not the key's
	case sessionExpired.match(lower):
		return ReasonSessionExpired
	case modelNotFound.match(lower) && !isContextOverflowLower(lower):
		return ReasonModelNotFound
	}
	if r := classifyProviderMessage(lower, provider, status); r != ReasonNone {
		return r
	}
	switch {
	case isContextOverflowLower(lower):
		return ReasonContextOverflow
	case replayInvalid.match(lower), invalidThinkingSignature(lower):
		return ReasonFormat
	case strings.Contains(lower, "402") && hard402Re.MatchString(lower):
		return classify402(lower)
	case status != 429 && isBillingText(lower):
		return ReasonBilling
	case periodicUse.match(lower):
		if isBillingText(lower) {
			return ReasonBilling
		}
		return ReasonRateLimit
	case rateLimit.match(lower):
		return ReasonRateLimit
	case overloaded.match(lower):
		return ReasonOverloaded
	case errorStop.match(lower):
		return reasonServerError // the provider finished with an error
	case structuredSrv.match(lower) && !auth.match(lower):
		return reasonServerError
	case oauthPermanent.match(lower), authPermanent.match(lower):
		return ReasonAuthPermanent
	case auth.match(lower):
		return ReasonAuth
	case unknownErrorRe.MatchString(lower):
		return ReasonTimeout
	case serverError.match(lower), rpcInternal500(lower):
		return reasonServerError
	case apiErrorType.match(lower) && transient.match(lower):
		return reasonServerError
	case format.match(lower):
		return ReasonFormat
	case lower == noErrorDetailsText:
		return ReasonNoErrorDetails
	case timeout.match(lower):
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
	if strings.Contains(lower, "deadline expired before operation could complete") {
		return ReasonTimeout // gRPC's DEADLINE_EXCEEDED in Google's words: no credential expired
	}
	return ReasonNone
}
