package policy

import "testing"

// classifyCase is one row of a rule's table: a failure and the reason it must get.
type classifyCase struct {
	name string
	f    Failure
	want Reason
}

func runClassifyCases(t *testing.T, cases []classifyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := classifyAsCame(c.f); got != c.want {
				t.Errorf("Classify(%+v) = %s, want %s", c.f, got, c.want)
			}
		})
	}
}

var precedenceCases = []classifyCase{
	{"a 529 that speaks of rate limits is rate_limit", Failure{Status: 529, Message: "Rate limit exceeded, please slow down"}, ReasonRateLimit},
	{"a 529 whose body speaks of a per-minute limit is rate_limit", Failure{Status: 529, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`}, ReasonRateLimit},
	{"a 529 that speaks of money is billing", Failure{Status: 529, Message: "Your credit balance is too low to access the API"}, ReasonBilling},
	{"a 529 that says overloaded is overloaded", Failure{Status: 529, Message: "Overloaded"}, ReasonOverloaded},
	{"a bare 529 is overloaded", Failure{Status: 529}, ReasonOverloaded},
	{"a 529 with server words is still overloaded", Failure{Status: 529, Message: "Internal server error"}, ReasonOverloaded},
	{"a 529 with auth words is still overloaded", Failure{Status: 529, Message: "unauthorized"}, ReasonOverloaded},
	{"context overflow beats a 529", Failure{Status: 529, Message: "prompt is too long: 210000 tokens > 200000 maximum"}, ReasonContextOverflow},
	{"a 503 that speaks of rate limits is rate_limit", Failure{Status: 503, Message: "rate limit exceeded for this model"}, ReasonRateLimit},
	{"a 500 that speaks of money is billing", Failure{Status: 500, Message: "insufficient credits"}, ReasonBilling},
	{"a 502 that says overloaded is overloaded", Failure{Status: 502, Message: "upstream overloaded"}, ReasonOverloaded},
	{"a 500 with server words is a server error (timeout)", Failure{Status: 500, Message: "Internal Server Error"}, ReasonTimeout},
	{"a 408 that speaks of rate limits is rate_limit", Failure{Status: 408, Message: "too many requests, slow down"}, ReasonRateLimit},
	{"a bare 408 is timeout", Failure{Status: 408}, ReasonTimeout},
	{"a 410 that speaks of overload is overloaded", Failure{Status: 410, Message: "model overloaded, try later"}, ReasonOverloaded},
	{"rate-limit text beats overloaded text", Failure{Status: 503, Message: "overloaded: rate limit reached"}, ReasonRateLimit},
	{"billing text beats rate-limit text", Failure{Message: "rate limit: insufficient credits"}, ReasonBilling},
}

// Issue 20, item 1: DESIGN.md's precedence holds for every status, 529 included.
func TestClassifyPrecedenceHoldsForEveryStatus(t *testing.T) {
	runClassifyCases(t, precedenceCases)
	// A 529 about rate limits is scoped to the model and still retried in place.
	r := Classify(Failure{Status: 529, Message: "Rate limit exceeded"})
	if !ModelScoped(r) {
		t.Errorf("a 529 rate limit must cool one model, got %s", r)
	}
	if plan := AfterFailure(FailedAttempt{Outcome: AttemptOutcome{Status: 529, Reason: r}}); plan.Step != StepRetry {
		t.Error("a 529 is retried in place whatever its reason")
	}
}

var overflowCases = []classifyCase{
	{"llama.cpp: a prompt of N tokens exceeds the available context size, without article", Failure{Message: "Prompt of 70000 tokens exceeds available context size of 65536"}, ReasonContextOverflow},
	{"llama.cpp server: the request exceeds the available context size", Failure{Status: 400, Message: "the request exceeds the available context size, try increasing it"}, ReasonContextOverflow},
	{"a validation error's inputs must be at most N tokens", Failure{Message: "422: `inputs` must be at most 8192 tokens"}, ReasonContextOverflow},
	{"TGI: inputs tokens plus max_new_tokens must be <= N", Failure{Status: 422, Message: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 500 `max_new_tokens`"}, ReasonContextOverflow},
	{"inputs must have less than N tokens", Failure{Status: 422, Message: "Input validation error: `inputs` must have less than 1024 tokens. Given: 2000"}, ReasonContextOverflow},
	{"Cohere: total tokens in the prompt cannot exceed N", Failure{Status: 400, Message: "too many tokens: total number of tokens in the prompt cannot exceed 4081 - received 5000"}, ReasonContextOverflow},
	{"OpenAI Responses: your input exceeds the context window", Failure{Status: 400, Message: "Your input exceeds the context window of this model. Please adjust your input and try again."}, ReasonContextOverflow},
	{"Gemini: the input token count exceeds the maximum number of tokens", Failure{Status: 400, Message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}, ReasonContextOverflow},
	{"vLLM: the prompt is longer than the maximum model length", Failure{Status: 400, Message: "The decoder prompt (length 5000) is longer than the maximum model length of 4096."}, ReasonContextOverflow},
	{"Anthropic: input length and max_tokens exceed the context limit, with backticks", Failure{Status: 400, Message: "input length and `max_tokens` exceed context limit: 197626 + 21333 > 200000, decrease input length or `max_tokens` and try again"}, ReasonContextOverflow},
	{"OpenAI: maximum context length with what you requested", Failure{Status: 400, Message: "This model's maximum context length is 128000 tokens. However, you requested 130000 tokens (129000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."}, ReasonContextOverflow},
	{"a request whose tokens exceed the model's context window, model name with a dot", Failure{Message: "request of 9000 tokens for llama-3.1 exceeds the model's context window (8192)"}, ReasonContextOverflow},
	{"reversed: the context window is smaller than the prompt", Failure{Message: "the context window of 8192 tokens is smaller than the prompt (9000 tokens)"}, ReasonContextOverflow},
	{"the tokens in the messages exceed a limit given in parentheses", Failure{Status: 400, Message: "Invalid request: the total number of tokens in messages (5000) exceeds the limit (4096)"}, ReasonContextOverflow},
	{"input tokens exceed a configured limit of N tokens", Failure{Message: "Input tokens exceed the configured limit of 272000 tokens"}, ReasonContextOverflow},
	{"passive: the context size has been exceeded", Failure{Message: "context size has been exceeded"}, ReasonContextOverflow},
	{"passive: the context length was exceeded", Failure{Message: "The context length of 4096 was exceeded by the request"}, ReasonContextOverflow},
	{"the agent's own Context overflow: label", Failure{Message: "Context overflow: prompt too large for the model."}, ReasonContextOverflow},
	{"Kimi: exceeded model token limit", Failure{Message: "Invalid request: exceeded model token limit: 131072"}, ReasonContextOverflow},
	{"Chinese: input exceeds the context length limit", Failure{Message: "输入超出上下文长度限制"}, ReasonContextOverflow},
	{"Chinese: the context length is over the model's limit", Failure{Message: "请求的上下文长度超过模型限制"}, ReasonContextOverflow},
	{"Chinese: the context is too long", Failure{Message: "错误：上下文过长"}, ReasonContextOverflow},
	{"Chinese: a request to compress the context", Failure{Message: "请压缩上下文后重试"}, ReasonContextOverflow},
	{"English: a request to compress the context", Failure{Message: "Please compress the context and try again"}, ReasonContextOverflow},
	{"the code form context_window_exceeded", Failure{Code: "context_window_exceeded", Message: "context_window_exceeded"}, ReasonContextOverflow},
	{"the code form model_context_window_exceeded", Failure{Message: "model_context_window_exceeded"}, ReasonContextOverflow},
	{"overflow under a 404 keeps overflow", Failure{Status: 404, Message: "The prompt exceeds the model's context length"}, ReasonContextOverflow},
}
var notOverflowCases = []classifyCase{
	{"a context window too small for the config is not overflow", Failure{Message: "Context window too small: minimum is 16000 tokens"}, ReasonNone},
	{"chatter that mentions overflow is not overflow", Failure{Message: "Let's investigate the context overflow bug"}, ReasonNone},
	{"a compaction failure that names it mid-sentence is not overflow", Failure{Message: "Auto-compaction failed after context overflow: no summary model"}, ReasonNone},
	{"prompt too large for this model is not overflow", Failure{Message: "prompt too large for this model"}, ReasonNone},
	{"the free-text headline Context window exceeded is not overflow", Failure{Message: "Context window exceeded: asked for 9000 tokens"}, ReasonNone},
	{"a TPM ceiling is a rate limit", Failure{Status: 429, Message: "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000."}, ReasonRateLimit},
	{"too many tokens inside a rate-limit text is a rate limit", Failure{Message: "too many tokens in the request: rate limit exceeded"}, ReasonRateLimit},
	{"the window stated against what you requested is not overflow", Failure{Message: "Model context window is 128k tokens, you requested 256k tokens"}, ReasonNone},
	{"a request over an upload limit is not overflow", Failure{Message: "request size exceeds upload limit"}, ReasonNone},
	{"max_tokens over the output maximum is format", Failure{Status: 400, Message: "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-opus-4"}, ReasonFormat},
	{"max_new_tokens over its bound is format", Failure{Status: 422, Message: "Input validation error: `max_new_tokens` must be <= 2048. Given: 4096"}, ReasonFormat},
	{"a file over the maximum allowed file size is format", Failure{Status: 400, Message: "The request exceeds the maximum allowed file size"}, ReasonFormat},
	{"a number bound without tokens is format", Failure{Status: 422, Message: "Input validation error: `temperature` must be at most 2"}, ReasonFormat},
	{"a context deadline is a timeout", Failure{Message: "request failed: context deadline exceeded"}, ReasonTimeout},
}

// providerOverflowCases: each provider's own overflow wording, as its error body's message says it
// (issue 26): a phrasing read as format falls back instead of stopping for compaction.
var providerOverflowCases = []classifyCase{
	// OpenAI (chat completions, code context_length_exceeded).
	{"OpenAI: your messages resulted in N tokens", Failure{Status: 400, Code: "context_length_exceeded", Message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages."}, ReasonContextOverflow},
	{"OpenAI: messages and functions", Failure{Status: 400, Message: "This model's maximum context length is 16385 tokens. However, your messages resulted in 17020 tokens (16500 in the messages, 520 in the functions). Please reduce the length of the messages or functions."}, ReasonContextOverflow},
	{"OpenAI completions/embeddings: your prompt; or completion length", Failure{Status: 400, Message: "This model's maximum context length is 8192 tokens, however you requested 9013 tokens (9013 in your prompt; 0 for the completion). Please reduce your prompt; or completion length."}, ReasonContextOverflow},
	{"OpenAI: the body's own JSON, code context_length_exceeded", Failure{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`}, ReasonContextOverflow},
	{"OpenAI: input tokens exceed the configured limit", Failure{Status: 400, Code: "context_length_exceeded", Message: "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 301234 tokens. Please reduce the length of the messages."}, ReasonContextOverflow},
	// OpenAI Responses API (and Codex).
	{"OpenAI Responses: input exceeds the context window, JSON body", Failure{Status: 400, Body: `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`}, ReasonContextOverflow},
	{"Codex: ran out of room in the context window", Failure{Message: "Codex ran out of room in the model's context window. Start a new conversation or clear earlier history before retrying."}, ReasonContextOverflow},
	// Azure OpenAI.
	{"Azure OpenAI: maximum context length, JSON body", Failure{Provider: "azure-openai", Status: 400, Body: `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9102 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded","status":400}}`}, ReasonContextOverflow},
	// Anthropic (and Anthropic on Vertex).
	{"Anthropic: prompt is too long, JSON body", Failure{Provider: "anthropic", Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`}, ReasonContextOverflow},
	{"Anthropic: input length and max_tokens exceed the context limit", Failure{Provider: "anthropic", Status: 400, Message: "input length and `max_tokens` exceed context limit: 188240 + 32000 > 200000, decrease input length or `max_tokens` and try again"}, ReasonContextOverflow},
	{"Anthropic: request_too_large at 413", Failure{Provider: "anthropic", Status: 413, Body: `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`}, ReasonContextOverflow},
	// Google Gemini API and Vertex AI.
	{"Gemini: the input token count exceeds the maximum, JSON body", Failure{Provider: "google", Status: 400, Body: `{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`}, ReasonContextOverflow},
	{"Gemini: the maximum with no parentheses", Failure{Provider: "google", Status: 400, Message: "The input token count exceeds the maximum number of tokens allowed 1048576."}, ReasonContextOverflow},
	{"Vertex AI: the input token count is N but the model only supports up to M", Failure{Provider: "google-vertex", Status: 400, Message: "Unable to submit request because the input token count is 1146418 but model only supports up to 1048576. Reduce the input token count and try again. You can also use the CountTokens API to calculate prompt token count and billable characters. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/send-multimodal-prompts"}, ReasonContextOverflow},
	// AWS Bedrock.
	{"Bedrock: input is too long for requested model", Failure{Provider: "amazon-bedrock", Status: 400, Message: "ValidationException: Input is too long for requested model."}, ReasonContextOverflow},
	{"Bedrock: the operation's ValidationException wording", Failure{Provider: "amazon-bedrock", Status: 400, Message: "An error occurred (ValidationException) when calling the InvokeModel operation: Input is too long for requested model."}, ReasonContextOverflow},
	{"Bedrock Converse: the model returned an error", Failure{Provider: "amazon-bedrock", Status: 400, Message: "ValidationException: The model returned the following errors: prompt is too long: 200512 tokens > 200000 maximum"}, ReasonContextOverflow},
	{"Bedrock Titan: too many input tokens", Failure{Provider: "amazon-bedrock", Status: 400, Message: "ValidationException: 400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 11967"}, ReasonContextOverflow},
	{"Bedrock: input token count exceeds the maximum number of input tokens", Failure{Provider: "amazon-bedrock", Status: 400, Message: "ValidationException: Input token count exceeds the maximum number of input tokens"}, ReasonContextOverflow},
	// Mistral.
	{"Mistral: prompt contains N tokens, too large for the model's context", Failure{Provider: "mistral", Status: 400, Body: `{"object":"error","message":"Prompt contains 40162 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_message_error","param":null,"code":"3051"}`}, ReasonContextOverflow},
	// Cohere.
	{"Cohere: too many tokens, size limit exceeded", Failure{Provider: "cohere", Status: 400, Message: "too many tokens: size limit exceeded by 11326 tokens. Try using shorter or fewer inputs, or setting prompt_truncation='AUTO'."}, ReasonContextOverflow},
	{"Cohere: the prompt cannot exceed N tokens", Failure{Provider: "cohere", Status: 400, Body: `{"message":"too many tokens: total number of tokens in the prompt cannot exceed 4081 - received 4458. Try using a shorter prompt, or enabling prompt truncating. See https://docs.cohere.com/reference/generate for more details."}`}, ReasonContextOverflow},
	// Groq, Cerebras, DeepSeek, OpenRouter, Fireworks, SGLang (OpenAI-compatible servers).
	{"Groq: maximum context length", Failure{Provider: "groq", Status: 400, Code: "context_length_exceeded", Message: "Please reduce the length of the messages or completion."}, ReasonContextOverflow},
	{"Cerebras: current length while limit", Failure{Provider: "cerebras", Status: 400, Code: "context_length_exceeded", Message: "Please reduce the length of the messages or completion. Current length is 8500 while limit is 8192"}, ReasonContextOverflow},
	{"DeepSeek: maximum context length", Failure{Provider: "deepseek", Status: 400, Body: `{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 70123 tokens (62123 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`}, ReasonContextOverflow},
	{"OpenRouter: this endpoint's maximum context length", Failure{Provider: "openrouter", Status: 400, Body: `{"error":{"message":"This endpoint's maximum context length is 200000 tokens. However, you requested about 245328 tokens (237136 of text input, 8192 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400}}`}, ReasonContextOverflow},
	{"Fireworks: the prompt is too long for the model's maximum", Failure{Provider: "fireworks", Status: 400, Message: "The prompt is too long: 33012, model maximum context length: 32768"}, ReasonContextOverflow},
	{"Fireworks/SGLang: requested token count exceeds the maximum context length", Failure{Provider: "fireworks", Status: 400, Message: "Requested token count exceeds the model's maximum context length of 131072 tokens. You requested a total of 140000 tokens: 130000 tokens from the input messages and 10000 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit."}, ReasonContextOverflow},
	{"SGLang: the input is longer than the model's context length", Failure{Status: 400, Message: "The input (5012 tokens) is longer than the model's context length (4096 tokens)."}, ReasonContextOverflow},
	// xAI.
	{"xAI: the maximum prompt length is N but the request contains M tokens", Failure{Provider: "xai", Status: 400, Body: `{"code":"Client specified an invalid argument","error":"This model's maximum prompt length is 131072 but the request contains 165707 tokens."}`}, ReasonContextOverflow},
	// Moonshot/Kimi.
	{"Moonshot: your request exceeded model token limit", Failure{Provider: "moonshot", Status: 400, Message: "Invalid request: Your request exceeded model token limit: 131072"}, ReasonContextOverflow},
	// Together, Hugging Face TGI, vLLM.
	{"Together/TGI: inputs tokens + max_new_tokens must be <= N", Failure{Provider: "together", Status: 422, Message: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8193. Given: 8000 `inputs` tokens and 512 `max_new_tokens`"}, ReasonContextOverflow},
	{"Hugging Face: input is too long for this model", Failure{Provider: "huggingface", Status: 400, Message: "Input is too long for this model, shorten your input or use 'parameters': {'truncation': 'only_first'} to run the model only on the first part."}, ReasonContextOverflow},
	{"vLLM: maximum context length and your request has N input tokens", Failure{Provider: "vllm", Status: 400, Message: "This model's maximum context length is 4096 tokens. However, your request has 5012 input tokens. Please reduce the length of the input messages."}, ReasonContextOverflow},
	{"vLLM: max_tokens too large for the context left", Failure{Provider: "vllm", Status: 400, Message: "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 8192 tokens and your request has 5000 input tokens (4096 > 8192 - 5000)."}, ReasonContextOverflow},
	{"vLLM: input prompt is too long and exceeds the limit", Failure{Provider: "vllm", Status: 400, Message: "Input prompt (4200 tokens) is too long and exceeds limit of 4096"}, ReasonContextOverflow},
	{"vLLM v1: the decoder prompt is longer than the maximum model length", Failure{Provider: "vllm", Status: 400, Message: "The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens."}, ReasonContextOverflow},
	// llama.cpp server and LM Studio.
	{"llama.cpp: the request exceeds the available context size, JSON body", Failure{Provider: "llamacpp", Status: 400, Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":70000,"n_ctx":65536}}`}, ReasonContextOverflow},
	{"llama.cpp: request of N tokens exceeds the available context size of M tokens", Failure{Provider: "llamacpp", Status: 400, Message: "request (70000 tokens) exceeds the available context size (65536 tokens), try increasing it"}, ReasonContextOverflow},
	{"llama.cpp: the tokens to keep are more than the context length", Failure{Provider: "lmstudio", Status: 400, Message: "The number of tokens to keep from the initial prompt is greater than the context length."}, ReasonContextOverflow},
	{"llama.cpp embeddings: the input is larger than the max context size", Failure{Provider: "llamacpp", Status: 400, Message: "input is larger than the max context size. skipping"}, ReasonContextOverflow},
	{"LM Studio: loaded with a context length that is not enough", Failure{Provider: "lmstudio", Status: 400, Message: "Trying to keep the first 9324 tokens when context the overflows. However, the model is loaded with context length of only 8192 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}, ReasonContextOverflow},
	// Ollama.
	{"Ollama: the input length exceeds the context length", Failure{Provider: "ollama", Status: 400, Message: "the input length exceeds the context length"}, ReasonContextOverflow},
	{"Ollama: input length exceeds maximum context length", Failure{Provider: "ollama", Status: 400, Body: `{"error":"input length exceeds maximum context length"}`}, ReasonContextOverflow},
	{"Ollama: input after truncation exceeds maximum context length", Failure{Provider: "ollama", Status: 400, Message: "input after truncation exceeds maximum context length"}, ReasonContextOverflow},
	{"Ollama: prompt too long; exceeded max context length by N tokens", Failure{Provider: "ollama", Status: 400, Message: "prompt too long; exceeded max context length by 1523 tokens"}, ReasonContextOverflow},
	// GitHub Models / Copilot.
	{"GitHub Copilot: prompt token count exceeds the limit", Failure{Provider: "github-copilot", Status: 400, Code: "model_max_prompt_tokens_exceeded", Message: "prompt token count of 140312 exceeds the limit of 128000"}, ReasonContextOverflow},
	{"GitHub Models: request body too large, max size in tokens, at 413", Failure{Provider: "github-models", Status: 413, Code: "tokens_limit_reached", Message: "Request body too large for gpt-4o model. Max size: 8000 tokens."}, ReasonContextOverflow},
	// Cloudflare Workers AI.
	{"Workers AI: input and output tokens exceeded the context window limit", Failure{Provider: "cloudflare-workers-ai", Status: 400, Message: "AiError: The estimated number of input and maximum output tokens (9000) exceeded this model context window limit (8192)."}, ReasonContextOverflow},
	// Alibaba DashScope (Qwen) and Zhipu (GLM).
	{"DashScope: range of input length should be [1, N]", Failure{Provider: "qwen", Status: 400, Body: `{"error":{"code":"invalid_parameter_error","param":null,"message":"Range of input length should be [1, 129024]","type":"invalid_request_error"}}`}, ReasonContextOverflow},
	{"Zhipu: prompt 超长", Failure{Provider: "zai", Status: 400, Body: `{"error":{"code":"1261","message":"Prompt 超长"}}`}, ReasonContextOverflow},
}

// What providers say that only looks like an overflow: a rate limit on tokens, an output bound.
var providerNotOverflowCases = []classifyCase{
	{"Groq: a TPM ceiling is a rate limit", Failure{Provider: "groq", Status: 413, Message: "Request too large for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 19500, please reduce your message size and try again."}, ReasonRateLimit},
	{"Anthropic: input tokens per minute is a rate limit", Failure{Provider: "anthropic", Status: 429, Message: "This request would exceed the rate limit for your organization of 40,000 input tokens per minute."}, ReasonRateLimit},
	{"Bedrock: max tokens over the model's output limit is format", Failure{Provider: "amazon-bedrock", Status: 400, Message: "ValidationException: The maximum tokens you requested exceeds the model limit of 8192. Try again with a maximum tokens value that is lower than 8192."}, ReasonFormat},
	{"OpenAI: max_tokens too large for the model is format", Failure{Status: 400, Message: "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000."}, ReasonFormat},
	{"Gemini: a payload over the request size is format", Failure{Provider: "google", Status: 400, Message: "Request payload size exceeds the limit: 20971520 bytes."}, ReasonFormat},
	{"DashScope: a parameter range that is not input length is format", Failure{Provider: "qwen", Status: 400, Message: "Range of max_tokens should be [1, 8192]"}, ReasonFormat},
	{"Zhipu: a parameter that is too long is format", Failure{Provider: "zai", Status: 400, Message: "参数 tools 超长"}, ReasonFormat},
}

// Issue 20, item 2: context overflow is read by meaning, not by phrase.
func TestContextOverflowByMeaning(t *testing.T) {
	runClassifyCases(t, overflowCases)
	runClassifyCases(t, notOverflowCases)
	runClassifyCases(t, providerOverflowCases)
	runClassifyCases(t, providerNotOverflowCases)
}

var leadingStatusCases = []classifyCase{
	{"a text starting with 401 is auth", Failure{Message: "401 Unauthorized"}, ReasonAuth},
	{"a leading 401 beats other words", Failure{Message: "Error: 401 model not found"}, ReasonAuth},
	{"HTTP 403 with words of a session is auth", Failure{Message: "HTTP 403: your session expired"}, ReasonAuth},
	{"a leading 403 whose words speak of money is billing", Failure{Message: "403 Forbidden: insufficient credits"}, ReasonBilling},
	{"a leading 401 whose words say revoked is auth_permanent", Failure{Message: "Error: HTTP 401: API key revoked"}, ReasonAuthPermanent},
	{"a leading 402 before a credit word is billing", Failure{Message: "402 You have run out of credits"}, ReasonBilling},
	{"a leading 402 before a plan limit is billing", Failure{Message: "Error: 402 plan limit reached"}, ReasonBilling},
	{"a leading 402 before a weekly usage limit is rate_limit", Failure{Message: "402 weekly usage limit reached, try again Monday"}, ReasonRateLimit},
	{"402 parcels delivered stays prose", Failure{Message: "402 parcels delivered"}, ReasonNone},
	{"402 records processed stays prose", Failure{Message: "402 records processed"}, ReasonNone},
	{"a status in the middle of a sentence is not read", Failure{Message: "Room 503 is booked"}, ReasonNone},
	{"a longer number is not a status", Failure{Message: "4010 tokens processed"}, ReasonNone},
	{"a leading 503 counts when the words say nothing", Failure{Message: "503 upstream hiccup"}, ReasonTimeout},
	// Inside the 402 rule, a periodic limit is temporary only as usage or spend, or with a reset.
	{"HTTP 402: a monthly limit exhausted is billing", Failure{Message: "HTTP 402: monthly limit exhausted"}, ReasonBilling},
	{"a 402 monthly limit exhausted is billing", Failure{Status: 402, Message: "monthly limit exhausted"}, ReasonBilling},
	{"HTTP 402: a monthly limit with a reset is rate_limit", Failure{Message: "HTTP 402: monthly limit reached, resets on the 1st"}, ReasonRateLimit},
	{"a 402 daily spend limit is rate_limit", Failure{Status: 402, Message: "daily spend limit reached"}, ReasonRateLimit},
	{"a 402 weekly usage limit is rate_limit", Failure{Status: 402, Message: "weekly usage limit exhausted"}, ReasonRateLimit},
	{"a weekly limit with no status stays rate_limit", Failure{Message: "weekly limit reached"}, ReasonRateLimit},
}

// Issue 20, item 3: a status at the start of a text that came without one.
func TestClassifyStatusAtTheStartOfTheText(t *testing.T) {
	runClassifyCases(t, leadingStatusCases)
}

var quotaAt429Cases = []classifyCase{
	{"Bedrock's ModelNotReadyException is an overload though a 429", Failure{Status: 429, Message: "ModelNotReadyException: The model is not ready to serve inference requests."}, ReasonOverloaded},
	{"a 429 a cloud's adapter codes as overloaded is one", Failure{Status: 429, Code: "OVERLOADED", Type: "ModelNotReadyException", Message: "Model is not ready."}, ReasonOverloaded},
	{"a 429 that says overloaded in other words stays a rate limit", Failure{Status: 429, Message: "The engine is currently overloaded, please try again later"}, ReasonRateLimit},
	{"Google's deadline is a timeout, not an expired credential", Failure{Status: 504, Code: "SERVER_ERROR", Type: "DEADLINE_EXCEEDED", Message: "Deadline expired before operation could complete."}, ReasonTimeout},
	{"a quota exceeded is rate_limit though the code says insufficient_quota", Failure{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota, please check your plan and billing details."}, ReasonRateLimit},
	{"an allotment used up is rate_limit though the type says insufficient_quota", Failure{Status: 429, Type: "insufficient_quota", Message: "You have exceeded your monthly allotment of requests"}, ReasonRateLimit},
	{"Google's quota exceeded is rate_limit", Failure{Status: 429, Message: "Quota exceeded for quota metric 'Generate Content API requests per minute'"}, ReasonRateLimit},
	{"a 429 that speaks of balance is billing", Failure{Status: 429, Message: "Insufficient account balance"}, ReasonBilling},
	{"a 429 that speaks of credits is billing", Failure{Status: 429, Message: "Your credit balance is too low"}, ReasonBilling},
	{"a 429 that speaks of payment is billing", Failure{Status: 429, Message: "Payment required to continue"}, ReasonBilling},
	{"a 429 asking for extra usage is billing", Failure{Status: 429, Message: "Extra usage is required for long context requests"}, ReasonBilling},
	{"a billing code alone is billing", Failure{Status: 429, Code: "insufficient_quota"}, ReasonBilling},
	{"a billing type alone is billing", Failure{Status: 429, Type: "insufficient_quota"}, ReasonBilling},
	{"a billing code under words that say nothing is billing", Failure{Status: 429, Code: "insufficient_quota", Message: "Something went wrong"}, ReasonBilling},
	{"a billing code under words of a rate limit is rate_limit", Failure{Status: 429, Code: "insufficient_quota", Message: "Too Many Requests"}, ReasonRateLimit},
	{"a leading 429 whose words speak of money is billing", Failure{Message: "429: insufficient credits, please top up"}, ReasonBilling},
	{"a leading 429 with a quota text is rate_limit", Failure{Message: "429 insufficient_quota: You exceeded your current quota"}, ReasonRateLimit},
}

// Issue 20, item 4: at 429 the message decides before the code.
func TestClassify429MessageBeforeCode(t *testing.T) {
	runClassifyCases(t, quotaAt429Cases)
}

// page is a gateway's HTML page whose words must not be read.
const page = "<!DOCTYPE html><html><head><title>Service Unavailable</title></head><body>insufficient credits, rate limit, overloaded</body></html>"

var wrapperCases = []classifyCase{
	// A JSON error object after a status or wrapper prefix is read like a body.
	{"an object after a status is read, message first", Failure{Message: `400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`}, ReasonContextOverflow},
	{"an object after Error: and a status", Failure{Message: `Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, ReasonOverloaded},
	{"an object after API Error: with an auth message", Failure{Message: `API Error: 401 {"error":{"message":"Invalid API key","type":"authentication_error"}}`}, ReasonAuth},
	{"an object whose message is empty is read by its type", Failure{Message: `429 {"error":{"message":"","type":"rate_limit_error"}}`}, ReasonRateLimit},
	{"text after the object is ignored", Failure{Message: `HTTP 500: {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}} (request id abc)`}, ReasonTimeout},
	{"the object's message decides over its type", Failure{Status: 400, Message: `{"error":{"type":"invalid_request_error","message":"Your credit balance is too low"}}`}, ReasonBilling},
	// An HTML page is not read for words: its status decides.
	{"a 502 page is timeout", Failure{Status: 502, Message: "<html><head><title>502 Bad Gateway</title></head></html>"}, ReasonTimeout},
	{"a 503 page is timeout, not overloaded", Failure{Status: 503, Message: page}, ReasonTimeout},
	{"a 499 page is timeout", Failure{Status: 499, Body: page}, ReasonTimeout},
	{"a 401 page is auth", Failure{Status: 401, Message: page}, ReasonAuth},
	{"a 403 page is auth, whatever it says of credits", Failure{Status: 403, Message: page}, ReasonAuth},
	{"a 407 page is auth", Failure{Status: 407, Message: page}, ReasonAuth},
	{"a 429 page is rate_limit, whatever it says of credits", Failure{Status: 429, Message: page}, ReasonRateLimit},
	{"a 402 page is billing", Failure{Status: 402, Message: page}, ReasonBilling},
	{"a page with no status is no signal", Failure{Message: page}, ReasonNone},
	{"a page after a status in the text", Failure{Message: "502 " + page}, ReasonTimeout},
	{"a page in the body under a plain message reads the message", Failure{Status: 500, Message: "insufficient credits", Body: page}, ReasonBilling},
	// A 400/422 that is only a wrapper and a no-body phrase is no signal.
	{"Error: HTTP 422: No response body is no signal", Failure{Message: "Error: HTTP 422: No response body"}, ReasonNone},
	{"400 status code (no body) is no signal", Failure{Status: 400, Message: "400 status code (no body)"}, ReasonNone},
	{"a bare status line is no signal", Failure{Status: 422, Message: "Request failed with status code 422"}, ReasonNone},
	{"400 Bad Request says more than a wrapper: format", Failure{Status: 400, Message: "400 Bad Request"}, ReasonFormat},
	// Under 400/422 a server-error reading does not count.
	{"a 400 whose words say internal server error is format", Failure{Status: 400, Message: "Internal server error"}, ReasonFormat},
	{"a 422 with an api_error body is format", Failure{Status: 422, Message: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`}, ReasonFormat},
	{"a 400 finished with an error stop reason is format", Failure{Status: 400, Message: "finish_reason: error"}, ReasonFormat},
	{"a 400 that timed out keeps timeout", Failure{Status: 400, Message: "Request timed out"}, ReasonTimeout},
	// api_error is a server error only with a transient phrase.
	{"api_error with a transient phrase is a server error", Failure{Message: `{"type":"error","error":{"type":"api_error","message":"backend error"}}`}, ReasonTimeout},
	{"api_error type with an unexpected error is a server error", Failure{Type: "api_error", Message: "An unexpected error occurred"}, ReasonTimeout},
	{"api_error without a transient phrase is no signal", Failure{Message: `{"type":"error","error":{"type":"api_error","message":"Something went wrong with your tool input"}}`}, ReasonNone},
	{"api_error type alone is no signal", Failure{Type: "api_error"}, ReasonNone},
	// The RPC status INTERNAL with code 500, in any order, spacing or quoting.
	{"code before status, JSON", Failure{Message: `{"error":{"code":500,"message":"oops","status":"INTERNAL"}}`}, ReasonTimeout},
	{"status before code, prose", Failure{Message: "got status: INTERNAL. code: 500"}, ReasonTimeout},
	{"single quotes and equals signs", Failure{Message: "status = 'INTERNAL', code = 500"}, ReasonTimeout},
	{"no spaces", Failure{Message: "code:500 status:INTERNAL"}, ReasonTimeout},
	{"INTERNAL without code 500 is no signal", Failure{Message: `{"status":"INTERNAL","code":13}`}, ReasonNone},
	{"code 500 without INTERNAL is no signal", Failure{Message: "the job ended with exit code 500"}, ReasonNone},
	{"INTERNAL with code 500 under a 400 is format", Failure{Status: 400, Message: `{"error":{"code":500,"status":"INTERNAL"}}`}, ReasonFormat},
}

// Issue 20, item 5: wrappers and pages.
func TestClassifyWrappersAndPages(t *testing.T) {
	runClassifyCases(t, wrapperCases)
}

var familyCases = []classifyCase{
	// insufficient <a few words> balance: billing.
	{"insufficient account balance", Failure{Message: "Insufficient account balance"}, ReasonBilling},
	{"insufficient balance with three words between", Failure{Message: "insufficient USD or DIEM balance"}, ReasonBilling},
	{"insufficient prepaid credit balance", Failure{Message: "Error: insufficient prepaid credit balance for this request"}, ReasonBilling},
	{"a balance that is insufficient", Failure{Message: "Your balance is insufficient, please recharge"}, ReasonBilling},
	{"insufficient permissions to view a balance is auth", Failure{Message: "insufficient permissions to view the balance"}, ReasonAuth},
	// The current access key banned, Chinese, either order: auth.
	{"the current AK made banned requests and is forbidden", Failure{Message: "当前AK存在违规请求，已被禁止访问"}, ReasonAuth},
	{"forbidden first, then the current AK", Failure{Message: "禁止访问：当前 AK 存在违规请求"}, ReasonAuth},
	{"CE-011", Failure{Message: "CE-011: request rejected"}, ReasonAuth},
	{"too-frequent requests are a rate limit, not a ban", Failure{Message: "当前请求过于频繁"}, ReasonRateLimit},
	{"forbidden alone is no ban", Failure{Message: "禁止访问该资源"}, ReasonNone},
	// The Claude CLI's login words: auth, for that provider only.
	{"claude-cli not logged in", Failure{Provider: "claude-cli", Message: "Not logged in · Please run /login"}, ReasonAuth},
	{"claude-cli OAuth refresh failed", Failure{Provider: "claude-cli", Message: "Failed to authenticate: OAuth session expired and could not be refreshed"}, ReasonAuth},
	{"not logged in elsewhere is no signal", Failure{Provider: "anthropic", Message: "Not logged in · Please run /login"}, ReasonNone},
	{"an expired OAuth session elsewhere is the session's", Failure{Provider: "anthropic", Message: "Failed to authenticate: OAuth session expired and could not be refreshed"}, ReasonSessionExpired},
	// thinking with an invalid or expired signature, any word order: format, before auth's "expired".
	{"an invalid signature in a thinking block", Failure{Message: "messages.1.content.0: Invalid `signature` in `thinking` block"}, ReasonFormat},
	{"thinking before an invalid signature", Failure{Message: "thinking block has an invalid signature"}, ReasonFormat},
	{"a thinking signature that expired", Failure{Message: "The signature of the thinking block has expired"}, ReasonFormat},
	{"a redacted thinking signature that expired", Failure{Message: "redacted_thinking: signature expired"}, ReasonFormat},
	{"an expired signature without thinking is auth", Failure{Message: "Request signature expired"}, ReasonAuth},
	{"thinking without a bad signature is no signal", Failure{Message: "thinking blocks cannot be modified"}, ReasonNone},
}

// Issue 20, item 6: families the spec lists, beyond one literal each.
func TestClassifyFamilies(t *testing.T) {
	runClassifyCases(t, familyCases)
}

// allRuleCases is every row of the rule tables, the fuzz target's seeds among them.
func allRuleCases() []classifyCase {
	var all []classifyCase
	for _, table := range [][]classifyCase{precedenceCases, overflowCases, notOverflowCases, providerOverflowCases, providerNotOverflowCases, leadingStatusCases,
		quotaAt429Cases, wrapperCases, familyCases} {
		all = append(all, table...)
	}
	return all
}
