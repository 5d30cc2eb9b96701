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
	d := openAIDecoder{turnBuilder{top: top, loc: &locator{
		toolName:       func(i int) string { return fmt.Sprintf("tools[%d].function.name", i) },
		toolSchema:     func(i int) string { return fmt.Sprintf("tools[%d].function.parameters", i) },
		toolChoice:     "tool_choice",
		responseFormat: "response_format.json_schema.schema",
	}}}
	req, e := d.decode()
	if e != nil {
		return Request{}, e
	}
	return req, nil
}

type openAIDecoder struct{ turnBuilder }

func (d *openAIDecoder) decode() (Request, *Error) {
	req, e := readEnvelope(d.top)
	if e != nil {
		return req, e
	}
	if req.Stream, e = asFlag(d.top["stream"], "stream"); e != nil {
		return req, e
	}
	so, e := asObject(d.top["stream_options"], "stream_options")
	if e != nil {
		return req, e
	}
	if so != nil {
		if req.IncludeUsage, e = asFlag(so["include_usage"], "stream_options.include_usage"); e != nil {
			return req, e
		}
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
		callID, e := requiredString(mo, field, "tool_call_id", "want the id of the tool call this message answers")
		if e != nil {
			return e
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
		co, typ, e := typedObject(raw, cf, "want {id, type: \"function\", function: {name, arguments}}")
		if e != nil {
			return e
		}
		if typ != "" && typ != "function" {
			return BadRequest(cf+".type", "%s.type: %q tool calls are not supported; want \"function\"", cf, typ)
		}
		id, e := requiredString(co, cf, "id", "want the tool call's id")
		if e != nil {
			return e
		}
		fn, e := asObject(co["function"], cf+".function")
		if e != nil {
			return e
		}
		if fn == nil {
			return BadRequest(cf+".function", "%s.function: want {name, arguments}", cf)
		}
		name, e := requiredString(fn, cf+".function", "name", "want the tool's name")
		if e != nil {
			return e
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
	return contentParts(field, raw, func(pf, typ string, po object) (provider.Part, partPaths, *Error) {
		switch {
		case typ == "text":
			text, e := asString(po["text"], pf+".text")
			return provider.Part{Type: provider.PartText, Text: text, CacheControl: rawCopy(po["cache_control"])}, partPaths{}, e
		case typ == "refusal" && role == provider.RoleAssistant:
			text, e := asString(po["refusal"], pf+".refusal")
			return provider.TextPart(text), partPaths{}, e
		case typ == "image_url" && role == provider.RoleUser:
			p, e := openAIImage(pf, po)
			return p, partPaths{image: pf + ".image_url.url"}, e
		case (typ == "input_audio" || typ == "file") && role == provider.RoleUser:
			return provider.Part{}, partPaths{}, BadRequest(pf, "%s: %s parts are not supported", pf, typ)
		case typ == "image_url" || typ == "input_audio" || typ == "file" || typ == "refusal":
			return provider.Part{}, partPaths{}, BadRequest(pf+".type", "%s.type: %q parts are not allowed in a %s message", pf, typ, role)
		default:
			return provider.Part{}, partPaths{}, BadRequest(pf+".type", "%s.type: %q is not a content part type baton knows (text, image_url)", pf, typ)
		}
	})
}

// contentParts reads content as both OpenAI doors take it: a string (one text part), or an array
// of content parts {type, …}, each read by part.
func contentParts(field string, raw json.RawMessage, part func(pf, typ string, po object) (provider.Part, partPaths, *Error)) ([]provider.Part, []partPaths, *Error) {
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
		po, typ, e := typedObject(pr, pf, "want a content part {type, …}")
		if e != nil {
			return nil, nil, e
		}
		p, pp, e := part(pf, typ, po)
		if e != nil {
			return nil, nil, e
		}
		parts, paths = append(parts, p), append(paths, pp)
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
	return imageURL(iu, pf+".image_url", "url")
}

// imageURL is an image as both OpenAI doors take it: o[urlKey] an http(s) URL, or a data: URL with
// the image inline, and o's detail; path is o's.
func imageURL(o object, path, urlKey string) (provider.Part, *Error) {
	uf := path + "." + urlKey
	url, e := asString(o[urlKey], uf)
	if e != nil {
		return provider.Part{}, e
	}
	detail, e := asString(o["detail"], path+".detail")
	if e != nil {
		return provider.Part{}, e
	}
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
		to, typ, e := typedObject(raw, tf, "want {type: \"function\", function: {name, description, parameters}}")
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
		t, e := readTool(fn, tf+".function", "parameters")
		if e != nil {
			return e
		}
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
	const named = "{type: \"function\", function: {name}}"
	if isString(raw) {
		return toolChoiceMode(raw, named)
	}
	o, typ, e := typedObject(raw, "tool_choice", "want auto, none, required or "+named)
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
	return namedToolChoice(fn, "tool_choice.function")
}

// toolChoiceMode reads a tool_choice given as a string, as both OpenAI doors take it: auto, none
// or required; named is the other shape the refusal offers.
func toolChoiceMode(raw json.RawMessage, named string) (*provider.ToolChoice, *Error) {
	s, _ := asString(raw, "tool_choice")
	switch s {
	case provider.ToolChoiceAuto, provider.ToolChoiceNone, provider.ToolChoiceRequired:
		return &provider.ToolChoice{Type: s}, nil
	}
	return nil, BadRequest("tool_choice", "tool_choice: %q is not auto, none, required or %s", s, named)
}

func (d *openAIDecoder) params() *Error {
	p := &d.turn.Params
	e := readSampling(d.top, p)
	if e != nil {
		return e
	}
	for _, f := range []struct {
		key string
		dst **float64
	}{{"presence_penalty", &p.PresencePenalty}, {"frequency_penalty", &p.FrequencyPenalty}} {
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
		if p.ResponseFormat, e = jsonSchemaFormat(js, "response_format.json_schema"); e != nil {
			return e
		}
	default:
		return BadRequest("response_format.type", "response_format.type: %q is not text, json_object or json_schema", typ)
	}
	return nil
}

// jsonSchemaFormat is a json_schema response format, as both OpenAI doors give it (o, at path):
// a function tool's fields, with the schema under schema.
func jsonSchemaFormat(o object, path string) (*provider.ResponseFormat, *Error) {
	t, e := readTool(o, path, "schema")
	if e != nil {
		return nil, e
	}
	return &provider.ResponseFormat{Type: provider.FormatJSONSchema, Name: t.Name, Description: t.Description, Strict: t.Strict, Schema: t.Schema}, nil
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
