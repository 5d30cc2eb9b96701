package wire

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/batonhq/baton/provider"
)

// The top-level fields of a chat completion request that baton reads; every other one goes to
// Turn.Extra.
var openAIConsumed = map[string]bool{
	"model": true, "messages": true, "stream": true, "stream_options": true, "user": true,
	"fallbacks": true, "wait_for_cooldown": true, "n": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true,
	"temperature": true, "top_p": true, "max_tokens": true, "max_completion_tokens": true,
	"stop": true, "seed": true, "presence_penalty": true, "frequency_penalty": true,
	"response_format": true, "reasoning_effort": true,
}

// DecodeOpenAI reads an OpenAI /v1/chat/completions request body, naming the field that is wrong.
func DecodeOpenAI(body []byte) (Request, *Error) {
	top, e := decodeBody(body)
	if e != nil {
		return Request{}, e
	}
	d := openAIDecoder{top: top, loc: &locator{
		toolName:       func(i int) string { return fmt.Sprintf("tools[%d].function.name", i) },
		toolSchema:     func(i int) string { return fmt.Sprintf("tools[%d].function.parameters", i) },
		toolChoice:     "tool_choice",
		responseFormat: "response_format.json_schema.schema",
	}}
	req, e := d.decode()
	if e != nil {
		return Request{}, e
	}
	return req, nil
}

type openAIDecoder struct {
	top  object
	loc  *locator
	turn provider.Turn
}

func (d *openAIDecoder) decode() (Request, *Error) {
	var req Request
	var e *Error
	if req.Model, e = checkModel(d.top); e != nil {
		return req, e
	}
	if req.Fallbacks, e = readFallbacks(d.top); e != nil {
		return req, e
	}
	if req.WaitForCooldown, e = readWait(d.top); e != nil {
		return req, e
	}
	stream, e := asBool(d.top["stream"], "stream")
	if e != nil {
		return req, e
	}
	req.Stream = stream != nil && *stream
	so, e := asObject(d.top["stream_options"], "stream_options")
	if e != nil {
		return req, e
	}
	if so != nil {
		iu, e := asBool(so["include_usage"], "stream_options.include_usage")
		if e != nil {
			return req, e
		}
		req.IncludeUsage = iu != nil && *iu
	}
	if req.Session, e = asString(d.top["user"], "user"); e != nil {
		return req, e
	}
	n, e := asInteger(d.top["n"], "n")
	if e != nil {
		return req, e
	}
	if n != nil && *n != 1 {
		return req, BadRequest("n", "n: baton answers with one choice; want 1 (or leave n out)")
	}
	msgs, e := asArray(d.top["messages"], "messages")
	if e != nil || len(msgs) == 0 {
		return req, BadRequest("messages", "messages: want a non-empty array of {role, content}")
	}
	for i, raw := range msgs {
		if e := d.message(i, raw); e != nil {
			return req, e
		}
	}
	if e := d.tools(); e != nil {
		return req, e
	}
	if e := d.params(); e != nil {
		return req, e
	}
	d.turn.Wire = provider.WireOpenAI
	d.turn.Extra = extra(d.top, openAIConsumed)
	if e := d.loc.check(d.turn); e != nil {
		return req, e
	}
	req.Turn = d.turn
	return req, nil
}

func (d *openAIDecoder) add(m provider.Message, paths []partPaths) {
	d.turn.Messages = append(d.turn.Messages, m)
	d.loc.parts = append(d.loc.parts, paths)
}

func (d *openAIDecoder) message(i int, raw json.RawMessage) *Error {
	field := fmt.Sprintf("messages[%d]", i)
	mo, e := asObject(raw, field)
	if e != nil || mo == nil {
		return BadRequest(field, "%s: want an object with role and content", field)
	}
	var role string
	if json.Unmarshal(mo["role"], &role) != nil {
		return BadRequest(field+".role", "%s.role: want system, developer, user, assistant or tool", field)
	}
	content := mo["content"]
	switch role {
	case provider.RoleSystem, provider.RoleDeveloper, provider.RoleUser:
		if isNull(content) {
			return BadRequest(field+".content", "%s.content: want a string or an array of content parts", field)
		}
		parts, paths, e := openAIParts(field+".content", content, role)
		if e != nil {
			return e
		}
		d.add(provider.Message{Role: role, Content: parts}, paths)
	case provider.RoleAssistant:
		return d.assistant(field, mo)
	case provider.RoleTool:
		callID, e := asString(mo["tool_call_id"], field+".tool_call_id")
		if e != nil {
			return e
		}
		if callID == "" {
			return BadRequest(field+".tool_call_id", "%s.tool_call_id: want the id of the tool call this message answers", field)
		}
		var result []provider.Part
		if !isNull(content) {
			parts, _, e := openAIParts(field+".content", content, role)
			if e != nil {
				return e
			}
			for _, p := range parts {
				if p.Type != provider.PartText || p.Text != "" {
					result = append(result, p)
				}
			}
		}
		d.add(provider.Message{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult, CallID: callID, Result: result}}},
			[]partPaths{{callID: field + ".tool_call_id"}})
	default:
		return BadRequest(field+".role", "%s.role: %q is not system, developer, user, assistant or tool", field, role)
	}
	return nil
}

func (d *openAIDecoder) assistant(field string, mo object) *Error {
	for _, k := range []string{"function_call", "audio"} {
		if !isNull(mo[k]) {
			return BadRequest(field+"."+k, "%s.%s: not supported (baton keeps text, tool_calls and reasoning_content)", field, k)
		}
	}
	var parts []provider.Part
	var paths []partPaths
	reasoning, e := asString(mo["reasoning_content"], field+".reasoning_content")
	if e != nil {
		return e
	}
	if reasoning != "" {
		parts, paths = append(parts, provider.Part{Type: provider.PartReasoning, Text: reasoning}), append(paths, partPaths{})
	}
	if content := mo["content"]; !isNull(content) {
		cp, cpaths, e := openAIParts(field+".content", content, provider.RoleAssistant)
		if e != nil {
			return e
		}
		for k, p := range cp {
			if p.Type == provider.PartText && p.Text == "" {
				continue
			}
			parts, paths = append(parts, p), append(paths, cpaths[k])
		}
	}
	refusal, e := asString(mo["refusal"], field+".refusal")
	if e != nil {
		return e
	}
	if refusal != "" {
		parts, paths = append(parts, provider.TextPart(refusal)), append(paths, partPaths{})
	}
	calls, e := asArray(mo["tool_calls"], field+".tool_calls")
	if e != nil {
		return e
	}
	for k, raw := range calls {
		cf := fmt.Sprintf("%s.tool_calls[%d]", field, k)
		co, e := asObject(raw, cf)
		if e != nil || co == nil {
			return BadRequest(cf, "%s: want {id, type: \"function\", function: {name, arguments}}", cf)
		}
		typ, e := asString(co["type"], cf+".type")
		if e != nil {
			return e
		}
		if typ != "" && typ != "function" {
			return BadRequest(cf+".type", "%s.type: %q tool calls are not supported; want \"function\"", cf, typ)
		}
		id, e := asString(co["id"], cf+".id")
		if e != nil {
			return e
		}
		if id == "" {
			return BadRequest(cf+".id", "%s.id: want the tool call's id", cf)
		}
		fn, e := asObject(co["function"], cf+".function")
		if e != nil {
			return e
		}
		if fn == nil {
			return BadRequest(cf+".function", "%s.function: want {name, arguments}", cf)
		}
		name, e := asString(fn["name"], cf+".function.name")
		if e != nil {
			return e
		}
		if name == "" {
			return BadRequest(cf+".function.name", "%s.function.name: want the tool's name", cf)
		}
		args, e := asString(fn["arguments"], cf+".function.arguments")
		if e != nil {
			return e
		}
		parts = append(parts, provider.Part{Type: provider.PartToolCall, CallID: id, Name: name, Arguments: args})
		paths = append(paths, partPaths{})
	}
	d.add(provider.Message{Role: provider.RoleAssistant, Content: parts}, paths)
	return nil
}

// openAIParts reads a message's content: a string, or an array of content parts (images only in
// user messages, refusals only in assistant messages).
func openAIParts(field string, raw json.RawMessage, role string) ([]provider.Part, []partPaths, *Error) {
	if isString(raw) {
		s, e := asString(raw, field)
		if e != nil {
			return nil, nil, e
		}
		return []provider.Part{provider.TextPart(s)}, []partPaths{{}}, nil
	}
	arr, e := asArray(raw, field)
	if e != nil || arr == nil {
		return nil, nil, BadRequest(field, "%s: want a string or an array of content parts", field)
	}
	var parts []provider.Part
	var paths []partPaths
	for j, pr := range arr {
		pf := fmt.Sprintf("%s[%d]", field, j)
		po, e := asObject(pr, pf)
		if e != nil || po == nil {
			return nil, nil, BadRequest(pf, "%s: want a content part {type, …}", pf)
		}
		typ, e := asString(po["type"], pf+".type")
		if e != nil {
			return nil, nil, e
		}
		switch {
		case typ == "text":
			text, e := asString(po["text"], pf+".text")
			if e != nil {
				return nil, nil, e
			}
			parts = append(parts, provider.Part{Type: provider.PartText, Text: text, CacheControl: rawCopy(po["cache_control"])})
			paths = append(paths, partPaths{})
		case typ == "refusal" && role == provider.RoleAssistant:
			text, e := asString(po["refusal"], pf+".refusal")
			if e != nil {
				return nil, nil, e
			}
			parts = append(parts, provider.TextPart(text))
			paths = append(paths, partPaths{})
		case typ == "image_url" && role == provider.RoleUser:
			p, e := openAIImage(pf, po)
			if e != nil {
				return nil, nil, e
			}
			parts = append(parts, p)
			paths = append(paths, partPaths{image: pf + ".image_url.url"})
		case (typ == "input_audio" || typ == "file") && role == provider.RoleUser:
			return nil, nil, BadRequest(pf, "%s: %s parts are not supported", pf, typ)
		case typ == "image_url" || typ == "input_audio" || typ == "file" || typ == "refusal":
			return nil, nil, BadRequest(pf+".type", "%s.type: %q parts are not allowed in a %s message", pf, typ, role)
		default:
			return nil, nil, BadRequest(pf+".type", "%s.type: %q is not a content part type baton knows (text, image_url)", pf, typ)
		}
	}
	return parts, paths, nil
}

func openAIImage(pf string, po object) (provider.Part, *Error) {
	iu, e := asObject(po["image_url"], pf+".image_url")
	if e != nil {
		return provider.Part{}, e
	}
	if iu == nil {
		return provider.Part{}, BadRequest(pf+".image_url", "%s.image_url: want {url, detail}", pf)
	}
	url, e := asString(iu["url"], pf+".image_url.url")
	if e != nil {
		return provider.Part{}, e
	}
	detail, e := asString(iu["detail"], pf+".image_url.detail")
	if e != nil {
		return provider.Part{}, e
	}
	uf := pf + ".image_url.url"
	p := provider.Part{Type: provider.PartImage, Detail: detail}
	lower := strings.ToLower(url)
	switch {
	case strings.HasPrefix(url, "data:"):
		mt, data, err := provider.ParseDataURL(url)
		if err != nil {
			return provider.Part{}, BadRequest(uf, "%s: %v", uf, err)
		}
		p.MediaType, p.Data = mt, data
	case strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://"):
		p.URL = url
	default:
		return provider.Part{}, BadRequest(uf, "%s: want an http(s) URL or a data: URL (data:image/png;base64,…)", uf)
	}
	return p, nil
}

func (d *openAIDecoder) tools() *Error {
	tools, e := asArray(d.top["tools"], "tools")
	if e != nil {
		return e
	}
	for i, raw := range tools {
		tf := fmt.Sprintf("tools[%d]", i)
		to, e := asObject(raw, tf)
		if e != nil || to == nil {
			return BadRequest(tf, "%s: want {type: \"function\", function: {name, description, parameters}}", tf)
		}
		typ, e := asString(to["type"], tf+".type")
		if e != nil {
			return e
		}
		if typ != "function" {
			return BadRequest(tf+".type", "%s.type: %q tools are not supported; want \"function\"", tf, typ)
		}
		fn, e := asObject(to["function"], tf+".function")
		if e != nil {
			return e
		}
		if fn == nil {
			return BadRequest(tf+".function", "%s.function: want {name, description, parameters}", tf)
		}
		var t provider.Tool
		if t.Name, e = asString(fn["name"], tf+".function.name"); e != nil {
			return e
		}
		if t.Description, e = asString(fn["description"], tf+".function.description"); e != nil {
			return e
		}
		if t.Strict, e = asBool(fn["strict"], tf+".function.strict"); e != nil {
			return e
		}
		t.Schema = rawCopy(fn["parameters"])
		t.CacheControl = rawCopy(to["cache_control"])
		d.turn.Tools = append(d.turn.Tools, t)
	}
	if raw := d.top["tool_choice"]; !isNull(raw) {
		tc, e := openAIToolChoice(raw)
		if e != nil {
			return e
		}
		d.turn.ToolChoice = tc
	}
	ptc, e := asBool(d.top["parallel_tool_calls"], "parallel_tool_calls")
	if e != nil {
		return e
	}
	d.turn.ParallelToolCalls = ptc
	return nil
}

func openAIToolChoice(raw json.RawMessage) (*provider.ToolChoice, *Error) {
	if isString(raw) {
		s, _ := asString(raw, "tool_choice")
		switch s {
		case provider.ToolChoiceAuto, provider.ToolChoiceNone, provider.ToolChoiceRequired:
			return &provider.ToolChoice{Type: s}, nil
		}
		return nil, BadRequest("tool_choice", "tool_choice: %q is not auto, none, required or {type: \"function\", function: {name}}", s)
	}
	o, e := asObject(raw, "tool_choice")
	if e != nil {
		return nil, BadRequest("tool_choice", "tool_choice: want auto, none, required or {type: \"function\", function: {name}}")
	}
	typ, e := asString(o["type"], "tool_choice.type")
	if e != nil {
		return nil, e
	}
	if typ != "function" {
		return nil, BadRequest("tool_choice.type", "tool_choice.type: %q is not supported; want \"function\"", typ)
	}
	fn, e := asObject(o["function"], "tool_choice.function")
	if e != nil {
		return nil, e
	}
	name, e := asString(fn["name"], "tool_choice.function.name")
	if e != nil {
		return nil, e
	}
	if name == "" {
		return nil, BadRequest("tool_choice.function.name", "tool_choice.function.name: want the name of one of the tools")
	}
	return &provider.ToolChoice{Type: provider.ToolChoiceNamed, Name: name}, nil
}

func (d *openAIDecoder) params() *Error {
	p := &d.turn.Params
	var e *Error
	for _, f := range []struct {
		key string
		dst **float64
	}{{"temperature", &p.Temperature}, {"top_p", &p.TopP}, {"presence_penalty", &p.PresencePenalty}, {"frequency_penalty", &p.FrequencyPenalty}} {
		if *f.dst, e = asNumber(d.top[f.key], f.key); e != nil {
			return e
		}
	}
	if p.Seed, e = asInteger(d.top["seed"], "seed"); e != nil {
		return e
	}
	mt, e := asInteger(d.top["max_tokens"], "max_tokens")
	if e != nil {
		return e
	}
	mct, e := asInteger(d.top["max_completion_tokens"], "max_completion_tokens")
	if e != nil {
		return e
	}
	switch {
	case mct != nil:
		p.MaxTokens, p.MaxTokensField = mct, "max_completion_tokens"
	case mt != nil:
		p.MaxTokens, p.MaxTokensField = mt, "max_tokens"
	}
	if raw := d.top["stop"]; isString(raw) {
		s, _ := asString(raw, "stop")
		p.Stop = []string{s}
	} else if p.Stop, e = asStrings(raw, "stop"); e != nil {
		return BadRequest("stop", "stop: want a string or an array of strings")
	}
	if p.ReasoningEffort, e = asString(d.top["reasoning_effort"], "reasoning_effort"); e != nil {
		return e
	}
	rf, e := asObject(d.top["response_format"], "response_format")
	if e != nil || rf == nil {
		return e
	}
	typ, e := asString(rf["type"], "response_format.type")
	if e != nil {
		return e
	}
	switch typ {
	case provider.FormatText, provider.FormatJSONObject:
		p.ResponseFormat = &provider.ResponseFormat{Type: typ}
	case provider.FormatJSONSchema:
		js, e := asObject(rf["json_schema"], "response_format.json_schema")
		if e != nil {
			return e
		}
		if js == nil {
			return BadRequest("response_format.json_schema", "response_format.json_schema: want {name, description, schema, strict}")
		}
		f := &provider.ResponseFormat{Type: typ, Schema: rawCopy(js["schema"])}
		if f.Name, e = asString(js["name"], "response_format.json_schema.name"); e != nil {
			return e
		}
		if f.Description, e = asString(js["description"], "response_format.json_schema.description"); e != nil {
			return e
		}
		if f.Strict, e = asBool(js["strict"], "response_format.json_schema.strict"); e != nil {
			return e
		}
		p.ResponseFormat = f
	default:
		return BadRequest("response_format.type", "response_format.type: %q is not text, json_object or json_schema", typ)
	}
	return nil
}

// --- encoding ---

type openAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type openAIToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIMessage struct {
	Role             string           `json:"role"`
	Content          *string          `json:"content"`
	Refusal          *string          `json:"refusal"`
	ToolCalls        []openAIToolCall `json:"tool_calls,omitempty"`
	ReasoningContent string           `json:"reasoning_content,omitempty"`
}

type openAIChoice struct {
	Index        int           `json:"index"`
	Message      openAIMessage `json:"message"`
	FinishReason string        `json:"finish_reason"`
	Logprobs     *struct{}     `json:"logprobs"`
}

type openAIPromptDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type openAIUsage struct {
	PromptTokens        int64               `json:"prompt_tokens"`
	CompletionTokens    int64               `json:"completion_tokens"`
	TotalTokens         int64               `json:"total_tokens"`
	PromptTokensDetails openAIPromptDetails `json:"prompt_tokens_details"`
}

func openAIUsageOf(u provider.Usage) openAIUsage {
	return openAIUsage{PromptTokens: u.Input, CompletionTokens: u.Output, TotalTokens: u.Input + u.Output,
		PromptTokensDetails: openAIPromptDetails{CachedTokens: u.CachedInput}}
}

type openAICompletion struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []openAIChoice `json:"choices"`
	Usage   openAIUsage    `json:"usage"`
}

// OpenAIResponse is a chat.completion for a finished answer.
func OpenAIResponse(r Reply) []byte {
	a := r.Answer
	msg := openAIMessage{Role: "assistant", ReasoningContent: reasoningText(a.Reasoning)}
	if a.Text != "" || len(a.ToolCalls) == 0 {
		msg.Content = ptr(a.Text)
	}
	for _, c := range a.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, openAIToolCall{ID: c.ID, Type: "function", Function: openAIFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	return marshal(openAICompletion{ID: r.ID, Object: "chat.completion", Created: r.Created, Model: r.Model,
		Choices: []openAIChoice{{Index: 0, Message: msg, FinishReason: finishReason(a.FinishReason, len(a.ToolCalls) > 0)}},
		Usage:   openAIUsageOf(a.Usage)})
}

type openAIDeltaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type openAIDeltaToolCall struct {
	Index    int                 `json:"index"`
	ID       string              `json:"id,omitempty"`
	Type     string              `json:"type,omitempty"`
	Function openAIDeltaFunction `json:"function"`
}

type openAIDelta struct {
	Role             string                `json:"role,omitempty"`
	Content          *string               `json:"content,omitempty"`
	ReasoningContent string                `json:"reasoning_content,omitempty"`
	ToolCalls        []openAIDeltaToolCall `json:"tool_calls,omitempty"`
}

type openAIChunkChoice struct {
	Index        int         `json:"index"`
	Delta        openAIDelta `json:"delta"`
	FinishReason *string     `json:"finish_reason"`
	Logprobs     *struct{}   `json:"logprobs"`
}

type openAIChunk struct {
	ID      string              `json:"id"`
	Object  string              `json:"object"`
	Created int64               `json:"created"`
	Model   string              `json:"model"`
	Choices []openAIChunkChoice `json:"choices"`
	Usage   *openAIUsage        `json:"usage,omitempty"`
}

// OpenAIStream writes a chat.completion.chunk event stream, delta by delta. The first call sends
// the role chunk; Finish sends the finish chunk, the usage chunk (when asked for) and [DONE];
// Error sends an error event instead. Calls after Finish or Error do nothing.
type OpenAIStream struct {
	w             io.Writer
	flush         func()
	id, model     string
	created       int64
	includeUsage  bool
	started, done bool
	madeCalls     bool
	err           error
}

// NewOpenAIStream is a stream writer to w; flush (may be nil) is called after each event.
func NewOpenAIStream(w io.Writer, flush func(), id, model string, created int64, includeUsage bool) *OpenAIStream {
	return &OpenAIStream{w: w, flush: flush, id: id, model: model, created: created, includeUsage: includeUsage}
}

// Err is the first error writing to w.
func (s *OpenAIStream) Err() error { return s.err }

// SetModel names the candidate whose text the next chunks carry (after a failover mid-answer, the
// last chunks name the one that finished it).
func (s *OpenAIStream) SetModel(model string) {
	if model != "" {
		s.model = model
	}
}

func (s *OpenAIStream) event(data []byte) {
	if s.err != nil {
		return
	}
	buf := make([]byte, 0, len(data)+8)
	buf = append(append(append(buf, "data: "...), data...), "\n\n"...)
	if _, s.err = s.w.Write(buf); s.err == nil && s.flush != nil {
		s.flush()
	}
}

func (s *OpenAIStream) chunk(delta openAIDelta, finish *string) {
	s.event(marshal(openAIChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
		Choices: []openAIChunkChoice{{Index: 0, Delta: delta, FinishReason: finish}}}))
}

// begin sends the role chunk once; false once the stream is over.
func (s *OpenAIStream) begin() bool {
	if s.done {
		return false
	}
	if !s.started {
		s.started = true
		s.chunk(openAIDelta{Role: "assistant", Content: ptr("")}, nil)
	}
	return true
}

// Text sends a piece of the answer's text.
func (s *OpenAIStream) Text(delta string) {
	if s.begin() && delta != "" {
		s.chunk(openAIDelta{Content: &delta}, nil)
	}
}

// Reasoning sends a piece of the model's reasoning as reasoning_content.
func (s *OpenAIStream) Reasoning(delta string) {
	if s.begin() && delta != "" {
		s.chunk(openAIDelta{ReasoningContent: delta}, nil)
	}
}

// ToolCall starts the index'th tool call.
func (s *OpenAIStream) ToolCall(index int, id, name string) {
	if s.begin() {
		s.madeCalls = true
		s.chunk(openAIDelta{ToolCalls: []openAIDeltaToolCall{{Index: index, ID: id, Type: "function", Function: openAIDeltaFunction{Name: name}}}}, nil)
	}
}

// ToolArgs sends a piece of the index'th tool call's arguments.
func (s *OpenAIStream) ToolArgs(index int, delta string) {
	if s.begin() && delta != "" {
		s.madeCalls = true
		s.chunk(openAIDelta{ToolCalls: []openAIDeltaToolCall{{Index: index, Function: openAIDeltaFunction{Arguments: delta}}}}, nil)
	}
}

// Finish ends the stream: the finish reason (stop, or tool_calls after tool calls, when
// empty), the usage when asked for, and [DONE].
func (s *OpenAIStream) Finish(reason string, usage provider.Usage) {
	if !s.begin() {
		return
	}
	s.done = true
	s.chunk(openAIDelta{}, ptr(finishReason(reason, s.madeCalls)))
	if s.includeUsage {
		u := openAIUsageOf(usage)
		s.event(marshal(openAIChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
			Choices: []openAIChunkChoice{}, Usage: &u}))
	}
	s.event([]byte("[DONE]"))
}

// Error ends the stream with an error event and no [DONE].
func (s *OpenAIStream) Error(e *Error) {
	if s.done {
		return
	}
	s.done = true
	s.event(openAIErrorJSON(inStream(e)))
}
