package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/batonhq/baton/provider"
)

// The top-level fields of a messages request that baton reads; every other one (metadata too, of
// which baton also reads user_id) goes to Turn.Extra.
var anthropicConsumed = map[string]bool{
	"model": true, "max_tokens": true, "system": true, "messages": true, "tools": true,
	"tool_choice": true, "temperature": true, "top_p": true, "stop_sequences": true,
	"thinking": true, "stream": true, "fallbacks": true, "wait_for_cooldown": true,
}

// DecodeAnthropic reads an Anthropic /v1/messages request body, naming the field that is wrong.
func DecodeAnthropic(body []byte) (Request, *Error) {
	top, e := decodeBody(body)
	if e != nil {
		return Request{}, e
	}
	d := anthropicDecoder{turnBuilder{top: top, loc: &locator{
		toolName:   func(i int) string { return fmt.Sprintf("tools[%d].name", i) },
		toolSchema: func(i int) string { return fmt.Sprintf("tools[%d].input_schema", i) },
		toolChoice: "tool_choice",
	}}}
	req, e := d.decode()
	if e != nil {
		return Request{}, e
	}
	return req, nil
}

type anthropicDecoder struct{ turnBuilder }

func (d *anthropicDecoder) decode() (Request, *Error) {
	req, e := readEnvelope(d.top)
	if e != nil {
		return req, e
	}
	if req.Stream, e = asFlag(d.top["stream"], "stream"); e != nil {
		return req, e
	}
	md, e := asObject(d.top["metadata"], "metadata")
	if e != nil {
		return req, e
	}
	if req.Session, e = asString(md["user_id"], "metadata.user_id"); e != nil {
		return req, e
	}
	if e := d.system(); e != nil {
		return req, e
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
	keepThinking, e := d.params()
	if e != nil {
		return req, e
	}
	d.turn.Wire = provider.WireAnthropic
	d.turn.Extra = extra(d.top, consumedExcept(anthropicConsumed, map[string]bool{"thinking": keepThinking}))
	if e := d.loc.check(d.turn); e != nil {
		return req, e
	}
	req.Turn = d.turn
	return req, nil
}

// system is a system message first: a string, or text blocks (one part each, cache_control kept).
func (d *anthropicDecoder) system() *Error {
	raw := d.top["system"]
	if isNull(raw) {
		return nil
	}
	if isString(raw) {
		s, _ := asString(raw, "system")
		if s != "" {
			d.add(provider.Message{Role: provider.RoleSystem, Content: []provider.Part{provider.TextPart(s)}}, []partPaths{{}})
		}
		return nil
	}
	blocks, e := asArray(raw, "system")
	if e != nil {
		return BadRequest("system", "system: want a string or an array of text blocks")
	}
	var parts []provider.Part
	var paths []partPaths
	for k, br := range blocks {
		bf := fmt.Sprintf("system[%d]", k)
		bo, typ, e := typedObject(br, bf, "want a text block {type: \"text\", text}")
		if e != nil {
			return e
		}
		if typ != "text" {
			return BadRequest(bf+".type", "%s.type: %q; want \"text\"", bf, typ)
		}
		text, e := asString(bo["text"], bf+".text")
		if e != nil {
			return e
		}
		parts = append(parts, provider.Part{Type: provider.PartText, Text: text, CacheControl: rawCopy(bo["cache_control"])})
		paths = append(paths, partPaths{})
	}
	if len(parts) > 0 {
		d.add(provider.Message{Role: provider.RoleSystem, Content: parts}, paths)
	}
	return nil
}

// message reads one message; a user message's tool_result blocks become tool messages (one per
// block, in order) in its place, followed by its other blocks as a user message.
func (d *anthropicDecoder) message(i int, raw json.RawMessage) *Error {
	field := fmt.Sprintf("messages[%d]", i)
	mo, e := asObject(raw, field)
	if e != nil || mo == nil {
		return BadRequest(field, "%s: want an object with role and content", field)
	}
	var role string
	if json.Unmarshal(mo["role"], &role) != nil {
		return BadRequest(field+".role", "%s.role: want user or assistant", field)
	}
	if role != provider.RoleUser && role != provider.RoleAssistant {
		return BadRequest(field+".role", "%s.role: %q is not user or assistant", field, role)
	}
	content := mo["content"]
	if isString(content) {
		s, _ := asString(content, field+".content")
		d.add(provider.Message{Role: role, Content: []provider.Part{provider.TextPart(s)}}, []partPaths{{}})
		return nil
	}
	blocks, e := asArray(content, field+".content")
	if e != nil || blocks == nil {
		return BadRequest(field+".content", "%s.content: want a string or an array of content blocks", field)
	}
	var parts []provider.Part
	var paths []partPaths
	results := 0
	for j, br := range blocks {
		bf := fmt.Sprintf("%s.content[%d]", field, j)
		p, pp, e := anthropicBlock(bf, br, role)
		if e != nil {
			return e
		}
		if p.Type == provider.PartToolResult {
			d.add(provider.Message{Role: provider.RoleTool, Content: []provider.Part{p}}, []partPaths{pp})
			results++
			continue
		}
		parts, paths = append(parts, p), append(paths, pp)
	}
	if results == 0 || len(parts) > 0 {
		d.add(provider.Message{Role: role, Content: parts}, paths)
	}
	return nil
}

// Where each block type may appear ("": either role).
var anthropicBlockRoles = map[string]string{
	"text": "", "image": provider.RoleUser, "tool_result": provider.RoleUser,
	"tool_use": provider.RoleAssistant, "thinking": provider.RoleAssistant, "redacted_thinking": provider.RoleAssistant,
}

func anthropicBlock(bf string, raw json.RawMessage, role string) (provider.Part, partPaths, *Error) {
	bo, typ, e := typedObject(raw, bf, "want a content block {type, …}")
	if e != nil {
		return provider.Part{}, partPaths{}, e
	}
	want, known := anthropicBlockRoles[typ]
	if !known {
		return provider.Part{}, partPaths{}, BadRequest(bf, "%s: %q blocks are not supported", bf, typ)
	}
	if want != "" && want != role {
		return provider.Part{}, partPaths{}, BadRequest(bf+".type", "%s.type: %q blocks belong in %s messages", bf, typ, want)
	}
	cache := rawCopy(bo["cache_control"])
	str := func(key string) (string, *Error) { return asString(bo[key], bf+"."+key) }
	switch typ {
	case "text":
		text, e := str("text")
		return provider.Part{Type: provider.PartText, Text: text, CacheControl: cache}, partPaths{}, e
	case "image":
		p, pp, e := anthropicImage(bf, bo)
		p.CacheControl = cache
		return p, pp, e
	case "tool_use":
		id, e := requiredString(bo, bf, "id", "want the tool call's id")
		if e != nil {
			return provider.Part{}, partPaths{}, e
		}
		name, e := requiredString(bo, bf, "name", "want the tool's name")
		if e != nil {
			return provider.Part{}, partPaths{}, e
		}
		return provider.Part{Type: provider.PartToolCall, CallID: id, Name: name, Arguments: compactJSON(bo["input"]), CacheControl: cache}, partPaths{}, nil
	case "tool_result":
		id, e := str("tool_use_id")
		if e != nil {
			return provider.Part{}, partPaths{}, e
		}
		isErr, e := asFlag(bo["is_error"], bf+".is_error")
		if e != nil {
			return provider.Part{}, partPaths{}, e
		}
		p := provider.Part{Type: provider.PartToolResult, CallID: id, IsError: isErr, CacheControl: cache}
		pp := partPaths{callID: bf + ".tool_use_id"}
		content := bo["content"]
		switch {
		case isNull(content):
		case isString(content):
			if s, _ := asString(content, bf+".content"); s != "" {
				p.Result, pp.inner = []provider.Part{provider.TextPart(s)}, []partPaths{{}}
			}
		default:
			blocks, e := asArray(content, bf+".content")
			if e != nil {
				return provider.Part{}, partPaths{}, BadRequest(bf+".content", "%s.content: want a string or an array of text and image blocks", bf)
			}
			for k, ir := range blocks {
				inf := fmt.Sprintf("%s.content[%d]", bf, k)
				_, ityp, e := typedObject(ir, inf, "want a text or image block")
				if e != nil {
					return provider.Part{}, partPaths{}, e
				}
				if ityp != "text" && ityp != "image" {
					return provider.Part{}, partPaths{}, BadRequest(inf, "%s: %q blocks are not supported in a tool result (text, image)", inf, ityp)
				}
				ip, ipp, e := anthropicBlock(inf, ir, provider.RoleUser)
				if e != nil {
					return provider.Part{}, partPaths{}, e
				}
				p.Result, pp.inner = append(p.Result, ip), append(pp.inner, ipp)
			}
		}
		return p, pp, nil
	case "thinking":
		text, e := str("thinking")
		if e != nil {
			return provider.Part{}, partPaths{}, e
		}
		sig, e := str("signature")
		return provider.Part{Type: provider.PartReasoning, Text: text, Signature: sig}, partPaths{}, e
	default: // redacted_thinking
		data, e := str("data")
		return provider.Part{Type: provider.PartReasoning, Redacted: data}, partPaths{}, e
	}
}

func anthropicImage(bf string, bo object) (provider.Part, partPaths, *Error) {
	sf := bf + ".source"
	src, e := asObject(bo["source"], sf)
	if e != nil || src == nil {
		return provider.Part{}, partPaths{}, BadRequest(sf, "%s: want {type: \"base64\", media_type, data} or {type: \"url\", url}", sf)
	}
	typ, e := asString(src["type"], sf+".type")
	if e != nil {
		return provider.Part{}, partPaths{}, e
	}
	switch typ {
	case "base64":
		mt, e := asString(src["media_type"], sf+".media_type")
		if e != nil {
			return provider.Part{}, partPaths{}, e
		}
		if !provider.IsImageType(mt) {
			return provider.Part{}, partPaths{}, BadRequest(sf+".media_type", "%s.media_type: %q is not an image type (image/png, image/jpeg, image/gif, image/webp)", sf, mt)
		}
		s, e := asString(src["data"], sf+".data")
		if e != nil {
			return provider.Part{}, partPaths{}, e
		}
		data, err := provider.DecodeImageBase64(s)
		if err != nil {
			return provider.Part{}, partPaths{}, BadRequest(sf+".data", "%s.data: %v", sf, err)
		}
		return provider.Part{Type: provider.PartImage, MediaType: mt, Data: data}, partPaths{image: sf + ".data", mediaType: sf + ".media_type"}, nil
	case "url":
		url, e := asString(src["url"], sf+".url")
		if e != nil {
			return provider.Part{}, partPaths{}, e
		}
		if lower := strings.ToLower(url); !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") {
			return provider.Part{}, partPaths{}, BadRequest(sf+".url", "%s.url: want an http(s) URL", sf)
		}
		return provider.Part{Type: provider.PartImage, URL: url}, partPaths{image: sf + ".url"}, nil
	}
	return provider.Part{}, partPaths{}, BadRequest(sf+".type", "%s.type: %q image sources are not supported (base64, url)", sf, typ)
}

func (d *anthropicDecoder) tools() *Error {
	tools, e := asArray(d.top["tools"], "tools")
	if e != nil {
		return e
	}
	for i, raw := range tools {
		tf := fmt.Sprintf("tools[%d]", i)
		to, typ, e := typedObject(raw, tf, "want {name, description, input_schema}")
		if e != nil {
			return e
		}
		if typ != "" && typ != "custom" {
			return BadRequest(tf, "%s: %q server tools are not supported", tf, typ)
		}
		t, e := readTool(to, tf, "input_schema")
		if e != nil {
			return e
		}
		t.CacheControl = rawCopy(to["cache_control"])
		d.turn.Tools = append(d.turn.Tools, t)
	}
	raw := d.top["tool_choice"]
	if isNull(raw) {
		return nil
	}
	tc, typ, e := typedObject(raw, "tool_choice", "want {type: auto|any|tool|none, name}")
	if e != nil {
		return e
	}
	switch typ {
	case "auto":
		d.turn.ToolChoice = &provider.ToolChoice{Type: provider.ToolChoiceAuto}
	case "any":
		d.turn.ToolChoice = &provider.ToolChoice{Type: provider.ToolChoiceRequired}
	case "none":
		d.turn.ToolChoice = &provider.ToolChoice{Type: provider.ToolChoiceNone}
	case "tool":
		if d.turn.ToolChoice, e = namedToolChoice(tc, "tool_choice"); e != nil {
			return e
		}
	default:
		return BadRequest("tool_choice.type", "tool_choice.type: %q is not auto, any, tool or none", typ)
	}
	dp, e := asBool(tc["disable_parallel_tool_use"], "tool_choice.disable_parallel_tool_use")
	if e != nil {
		return e
	}
	if dp != nil && *dp {
		d.turn.ParallelToolCalls = ptr(false)
	}
	return nil
}

// params reads the sampling controls; keepThinking when thinking is of a type baton does not model
// (adaptive, …), which then goes to Extra for Anthropic candidates.
func (d *anthropicDecoder) params() (keepThinking bool, _ *Error) {
	p := &d.turn.Params
	var e *Error
	if p.MaxTokens, e = asInteger(d.top["max_tokens"], "max_tokens"); e != nil {
		return false, e
	}
	if e = readSampling(d.top, p); e != nil {
		return false, e
	}
	if p.Stop, e = asStrings(d.top["stop_sequences"], "stop_sequences"); e != nil {
		return false, e
	}
	th, e := asObject(d.top["thinking"], "thinking")
	if e != nil || th == nil {
		return false, e
	}
	typ, e := asString(th["type"], "thinking.type")
	if e != nil {
		return false, e
	}
	switch typ {
	case "enabled":
		b, e := asInteger(th["budget_tokens"], "thinking.budget_tokens")
		if e != nil {
			return false, e
		}
		if b == nil {
			return false, BadRequest("thinking.budget_tokens", "thinking.budget_tokens: want the thinking budget in tokens")
		}
		p.ThinkingBudget = b
	case "disabled":
	default:
		return true, nil
	}
	return false, nil
}

// --- encoding ---

type anthropicContent struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      *string         `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func anthropicUsageOf(u provider.Usage) anthropicUsage {
	return anthropicUsage{InputTokens: max(0, u.Input-u.CachedInput), OutputTokens: u.Output, CacheReadInputTokens: u.CachedInput}
}

type anthropicMessage struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []anthropicContent `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        anthropicUsage     `json:"usage"`
}

// anthropicStopReason is a finish reason in Anthropic's words.
func anthropicStopReason(reason string, toolCalls bool) string {
	switch finishReason(reason, toolCalls) {
	case provider.FinishLength:
		return "max_tokens"
	case provider.FinishToolCalls:
		return "tool_use"
	case provider.FinishContentFilter:
		return "refusal"
	}
	return "end_turn"
}

// toolInput is a tool call's arguments as the JSON value Anthropic's input is ({} when there are
// none, or when they are not JSON).
func toolInput(args string) json.RawMessage {
	var b bytes.Buffer
	if strings.TrimSpace(args) == "" || json.Compact(&b, []byte(args)) != nil {
		return json.RawMessage(`{}`)
	}
	return b.Bytes()
}

func reasoningBlock(p provider.Part) anthropicContent {
	if p.Redacted != "" {
		return anthropicContent{Type: "redacted_thinking", Data: p.Redacted}
	}
	return anthropicContent{Type: "thinking", Thinking: ptr(p.Text), Signature: ptr(p.Signature)}
}

// AnthropicResponse is a Messages API message for a finished answer: thinking blocks, the text,
// then the tool calls.
func AnthropicResponse(r Reply) []byte {
	a := r.Answer
	content := []anthropicContent{}
	for _, p := range a.Reasoning {
		if p.Text != "" || p.Redacted != "" || p.Signature != "" {
			content = append(content, reasoningBlock(p))
		}
	}
	if a.Text != "" || len(a.ToolCalls) == 0 {
		content = append(content, anthropicContent{Type: "text", Text: ptr(a.Text)})
	}
	for _, c := range a.ToolCalls {
		content = append(content, anthropicContent{Type: "tool_use", ID: c.ID, Name: ptr(c.Name), Input: toolInput(c.Arguments)})
	}
	return marshal(anthropicMessage{ID: r.ID, Type: "message", Role: "assistant", Model: r.Model, Content: content,
		StopReason: ptr(anthropicStopReason(a.FinishReason, len(a.ToolCalls) > 0)), Usage: anthropicUsageOf(a.Usage)})
}

// AnthropicStream writes a Messages API event stream, delta by delta: message_start and a ping
// before the first block, blocks numbered from 0, then message_delta and message_stop on Finish,
// or an error event on Error. Calls after Finish or Error do nothing.
//
// A text or thinking block is closed when a block of another kind starts. A tool_use block stays
// open until the next tool call starts or Finish, so that arguments arriving after some text (calls
// interleaved with text) still reach an open block: the stream is then interleaved, which the SDKs
// accept (they address blocks by index). Arguments for a call whose block a later call closed are
// still sent to its index (OpenAI streams a call's arguments before the next call starts).
type AnthropicStream struct {
	w             io.Writer
	flush         func()
	id, model     string
	input         provider.Usage
	started, done bool
	err           error
	blocks        int         // blocks started
	open          int         // the open text or thinking block (-1: none)
	openKind      string      // its kind: text, thinking
	openTool      int         // the open tool_use block (-1: none)
	toolBlocks    map[int]int // tool call index → block index
	madeCalls     bool
}

// NewAnthropicStream is a stream writer to w; flush (may be nil) is called after each event;
// inputUsage is the usage message_start reports.
func NewAnthropicStream(w io.Writer, flush func(), id, model string, inputUsage provider.Usage) *AnthropicStream {
	return &AnthropicStream{w: w, flush: flush, id: id, model: model, input: inputUsage, open: -1, openTool: -1, toolBlocks: map[int]int{}}
}

// Err is the first error writing to w.
func (s *AnthropicStream) Err() error { return s.err }

func (s *AnthropicStream) event(name string, v any) {
	if s.err != nil {
		return
	}
	if _, s.err = s.w.Write(sseEvent(name, marshal(v))); s.err == nil && s.flush != nil {
		s.flush()
	}
}

type anthropicEvent struct {
	Type         string            `json:"type"`
	Message      *anthropicMessage `json:"message,omitempty"`
	Index        *int              `json:"index,omitempty"`
	ContentBlock *anthropicContent `json:"content_block,omitempty"`
	Delta        any               `json:"delta,omitempty"`
	Usage        any               `json:"usage,omitempty"`
}

type anthropicDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	PartialJSON string `json:"partial_json,omitempty"`
	Thinking    string `json:"thinking,omitempty"`
	Signature   string `json:"signature,omitempty"`
}

type anthropicMessageDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

type anthropicDeltaUsage struct {
	InputTokens          *int64 `json:"input_tokens,omitempty"`
	CacheReadInputTokens *int64 `json:"cache_read_input_tokens,omitempty"`
	OutputTokens         int64  `json:"output_tokens"`
}

// begin sends message_start and a ping once; false once the stream is over.
func (s *AnthropicStream) begin() bool {
	if s.done {
		return false
	}
	if !s.started {
		s.started = true
		s.event("message_start", anthropicEvent{Type: "message_start", Message: &anthropicMessage{ID: s.id, Type: "message", Role: "assistant",
			Model: s.model, Content: []anthropicContent{}, Usage: anthropicUsageOf(provider.Usage{Input: s.input.Input, CachedInput: s.input.CachedInput})}})
		s.event("ping", anthropicEvent{Type: "ping"})
	}
	return true
}

// startBlock starts a block (closing the open text or thinking block) and returns its index.
func (s *AnthropicStream) startBlock(kind string, block anthropicContent) int {
	s.closeBlock()
	idx := s.blocks
	s.blocks++
	s.event("content_block_start", anthropicEvent{Type: "content_block_start", Index: &idx, ContentBlock: &block})
	s.open, s.openKind = idx, kind
	return idx
}

func (s *AnthropicStream) stop(idx int) {
	s.event("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: &idx})
}

// closeBlock closes the open text or thinking block.
func (s *AnthropicStream) closeBlock() {
	if s.open >= 0 {
		s.stop(s.open)
		s.open, s.openKind = -1, ""
	}
}

// closeTool closes the open tool_use block.
func (s *AnthropicStream) closeTool() {
	if s.openTool >= 0 {
		s.stop(s.openTool)
		s.openTool = -1
	}
}

func (s *AnthropicStream) delta(idx int, d anthropicDelta) {
	s.event("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: &idx, Delta: d})
}

// Text sends a piece of the answer's text (in a text block).
func (s *AnthropicStream) Text(delta string) {
	if !s.begin() || delta == "" {
		return
	}
	if s.openKind != "text" {
		s.startBlock("text", anthropicContent{Type: "text", Text: ptr("")})
	}
	s.delta(s.open, anthropicDelta{Type: "text_delta", Text: delta})
}

func (s *AnthropicStream) startThinking() {
	if s.openKind != "thinking" {
		s.startBlock("thinking", anthropicContent{Type: "thinking", Thinking: ptr(""), Signature: ptr("")})
	}
}

// Thinking sends a piece of a thinking block's text.
func (s *AnthropicStream) Thinking(delta string) {
	if !s.begin() || delta == "" {
		return
	}
	s.startThinking()
	s.delta(s.open, anthropicDelta{Type: "thinking_delta", Thinking: delta})
}

// Signature ends the thinking block with its signature.
func (s *AnthropicStream) Signature(sig string) {
	if !s.begin() {
		return
	}
	s.startThinking()
	if sig != "" {
		s.delta(s.open, anthropicDelta{Type: "signature_delta", Signature: sig})
	}
	s.closeBlock()
}

// RedactedThinking sends a redacted thinking block.
func (s *AnthropicStream) RedactedThinking(data string) {
	if !s.begin() {
		return
	}
	s.startBlock("redacted_thinking", anthropicContent{Type: "redacted_thinking", Data: data})
	s.closeBlock()
}

// ToolCall starts the index'th tool call (a tool_use block).
func (s *AnthropicStream) ToolCall(index int, id, name string) {
	if !s.begin() {
		return
	}
	s.madeCalls = true
	s.closeTool()
	idx := s.startBlock("tool_use", anthropicContent{Type: "tool_use", ID: id, Name: ptr(name), Input: json.RawMessage(`{}`)})
	s.open, s.openKind, s.openTool = -1, "", idx
	s.toolBlocks[index] = idx
}

// ToolArgs sends a piece of the index'th tool call's arguments.
func (s *AnthropicStream) ToolArgs(index int, delta string) {
	if !s.begin() || delta == "" {
		return
	}
	idx, ok := s.toolBlocks[index]
	if !ok {
		s.ToolCall(index, "", "")
		idx = s.toolBlocks[index]
	}
	s.delta(idx, anthropicDelta{Type: "input_json_delta", PartialJSON: delta})
}

// Finish closes the open blocks and ends the message with its stop reason (end_turn, or tool_use
// after tool calls, when empty) and usage.
func (s *AnthropicStream) Finish(reason string, usage provider.Usage) {
	if !s.begin() {
		return
	}
	if s.openTool >= 0 && s.openTool < s.open {
		s.closeTool()
	}
	s.closeBlock()
	s.closeTool()
	if s.blocks == 0 {
		s.startBlock("text", anthropicContent{Type: "text", Text: ptr("")})
		s.closeBlock()
	}
	s.done = true
	u := anthropicDeltaUsage{OutputTokens: usage.Output}
	if usage.Input > 0 {
		au := anthropicUsageOf(usage)
		u.InputTokens, u.CacheReadInputTokens = &au.InputTokens, &au.CacheReadInputTokens
	}
	s.event("message_delta", anthropicEvent{Type: "message_delta",
		Delta: anthropicMessageDelta{StopReason: anthropicStopReason(reason, s.madeCalls)}, Usage: u})
	s.event("message_stop", anthropicEvent{Type: "message_stop"})
}

// Error ends the stream with an error event and no message_stop.
func (s *AnthropicStream) Error(e *Error) {
	if s.done {
		return
	}
	s.done = true
	s.event("error", json.RawMessage(anthropicErrorJSON(inStream(e))))
}
