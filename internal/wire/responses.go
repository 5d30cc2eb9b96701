package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/batonhq/baton/provider"
)

// The OpenAI Responses API (/v1/responses) as a front door: its request decoded into the turn
// model, its response object, and its event stream, in the shapes of OpenAI's API (the official
// Go client's responses package decodes them).

// WireResponses is Turn.Wire for a turn a caller sent to the Responses door: its Extra is meant for
// a candidate that speaks the Responses API (config's API name "openai-responses"), not for a Chat
// Completions one, whose top-level fields differ.
const WireResponses = provider.WireResponses

// ResponsesRequest is what a Responses request carries beyond the turn: what the door acts on
// (storing, background, previous_response_id, built-in tools), and what the response object echoes.
//
// The instructions are the turn's first message (system) when not empty. With previous_response_id
// the door puts the stored conversation (without its own instructions, as OpenAI does) between
// them and the input's messages.
type ResponsesRequest struct {
	ResponsesEcho
	// BuiltinTools are the tools (and a tool_choice naming one) that only a candidate speaking the
	// Responses API can carry: the door refuses them unless every candidate does. They are not in
	// Turn.Tools.
	BuiltinTools []BuiltinTool
	// ReasoningItems are the reasoning items passed back in the input, each beside its reasoning
	// part in the turn, which carries it: baton's own restored whole (see reasoningBlob), OpenAI's
	// as its id and encrypted content (Part.ReasoningID, Part.Encrypted) for a Responses candidate.
	ReasoningItems []ResponsesReasoningItem
	// PriorCallResults are function_call_output items whose call is not in the input: only with
	// previous_response_id (otherwise they are refused), for the door to check against the stored
	// conversation and put before Turn.Messages.
	PriorCallResults []PriorCallResult
}

// BuiltinTool is a tool or a tool choice only the Responses API carries.
type BuiltinTool struct {
	Param string          // the caller's field: "tools[2]", or "tool_choice"
	Type  string          // web_search, file_search, mcp, …; allowed_tools for such a tool_choice
	Raw   json.RawMessage // as given
}

// Refusal is the error the door answers with when no Responses candidate can take the tool.
func (t BuiltinTool) Refusal() *Error {
	return BadRequest(t.Param, "%s: %q needs every candidate to speak the Responses API (only function tools cross wires)", t.Param, t.Type)
}

// ResponsesReasoningItem is a reasoning item of the input.
type ResponsesReasoningItem struct {
	Param         string // "input[3]"
	Message, Part int    // its reasoning part: Turn.Messages[Message].Content[Part]
	ID            string
	Raw           json.RawMessage // the item as given
}

// PriorCallResult is a function_call_output answering a call of the stored conversation.
type PriorCallResult struct {
	CallID string
	Param  string // "input[3].call_id"
}

// Refusal is the error the door answers with when the stored conversation has no such call.
func (r PriorCallResult) Refusal() *Error {
	return BadRequest(r.Param, "%s: no tool call found for function call output with call_id %q", r.Param, r.CallID)
}

// ResponsesEcho is what a response object repeats of its request, as the caller gave it (raw JSON
// compacted). Plain data: a door stores it beside a response to rebuild the object or its stream.
type ResponsesEcho struct {
	Store              bool            `json:"store"` // default true
	Background         bool            `json:"background,omitempty"`
	PreviousResponseID string          `json:"previousResponseId,omitempty"`
	Instructions       *string         `json:"instructions,omitempty"`
	Metadata           json.RawMessage `json:"metadata,omitempty"`
	ParallelToolCalls  *bool           `json:"parallelToolCalls,omitempty"`
	ToolChoice         json.RawMessage `json:"toolChoice,omitempty"`
	Tools              json.RawMessage `json:"tools,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	MaxOutputTokens    *int64          `json:"maxOutputTokens,omitempty"`
	Text               json.RawMessage `json:"text,omitempty"`
	Reasoning          json.RawMessage `json:"reasoning,omitempty"`
	User               string          `json:"user,omitempty"`
}

// The top-level fields of a Responses request that baton reads; every other one goes to
// Turn.Extra (metadata too, which the response also echoes), except those refused below.
var responsesConsumed = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "max_output_tokens": true, "temperature": true, "top_p": true,
	"text": true, "reasoning": true, "stream": true, "stream_options": true, "store": true,
	"background": true, "previous_response_id": true, "user": true, "fallbacks": true, "wait_for_cooldown": true,
}

// Top-level fields that would change the answer and that baton cannot carry: refused.
var responsesRefused = []struct{ key, why string }{
	{"conversation", "conversations are not supported; send the items (or previous_response_id)"},
	{"prompt", "prompt templates are not supported; send instructions and input"},
}

// Tool types of the Responses API other than function: built-in (hosted) tools and the tools
// whose calls only the Responses API carries.
var responsesBuiltinTools = map[string]bool{
	"file_search": true, "computer": true, "computer_use": true, "computer_use_preview": true,
	"web_search": true, "web_search_2025_08_26": true, "web_search_preview": true, "web_search_preview_2025_03_11": true,
	"mcp": true, "code_interpreter": true, "programmatic_tool_calling": true, "image_generation": true,
	"local_shell": true, "shell": true, "custom": true, "namespace": true, "tool_search": true, "apply_patch": true,
}

// Tool choices of the Responses API other than a mode or a function.
var responsesBuiltinChoices = map[string]bool{
	"file_search": true, "web_search_preview": true, "web_search_preview_2025_03_11": true, "computer": true,
	"computer_use": true, "computer_use_preview": true, "image_generation": true, "code_interpreter": true,
	"allowed_tools": true, "mcp": true, "custom": true, "programmatic_tool_calling": true, "apply_patch": true, "shell": true,
}

// Input item types of the Responses API that the turn model cannot carry (the calls and outputs of
// built-in tools, compaction, references to stored items).
var responsesOtherItems = map[string]bool{
	"file_search_call": true, "computer_call": true, "computer_call_output": true, "web_search_call": true,
	"tool_search_call": true, "tool_search_output": true, "additional_tools": true, "configuration_update": true,
	"compaction": true, "compaction_trigger": true, "image_generation_call": true, "code_interpreter_call": true,
	"local_shell_call": true, "local_shell_call_output": true, "shell_call": true, "shell_call_output": true,
	"apply_patch_call": true, "apply_patch_call_output": true, "mcp_list_tools": true, "mcp_approval_request": true,
	"mcp_approval_response": true, "mcp_call": true, "custom_tool_call": true, "custom_tool_call_output": true,
	"item_reference": true, "program": true, "program_output": true,
}

// DecodeResponses reads an OpenAI /v1/responses request body, naming the field that is wrong.
// Req.Responses holds what the turn model has no place for.
func DecodeResponses(body []byte) (Request, *Error) {
	top, e := decodeBody(body)
	if e != nil {
		return Request{}, e
	}
	d := responsesDecoder{turnBuilder: turnBuilder{top: top, loc: &locator{
		toolChoice:     "tool_choice",
		responseFormat: "text.format.schema",
	}}, calls: map[string]bool{}}
	d.loc.toolName = func(i int) string { return fmt.Sprintf("tools[%d].name", d.toolIndex[i]) }
	d.loc.toolSchema = func(i int) string { return fmt.Sprintf("tools[%d].parameters", d.toolIndex[i]) }
	req, e := d.decode()
	if e != nil {
		return Request{}, e
	}
	return req, nil
}

type responsesDecoder struct {
	turnBuilder
	rr        ResponsesRequest
	toolIndex []int           // Turn.Tools index → the caller's tools index
	calls     map[string]bool // call ids of the function_call items so far
	assistant bool            // the last message is the assistant's, open to its next items
}

func (d *responsesDecoder) decode() (Request, *Error) {
	req, e := readEnvelope(d.top)
	if e != nil {
		return req, e
	}
	for _, r := range responsesRefused {
		if !isNull(d.top[r.key]) {
			return req, BadRequest(r.key, "%s: %s", r.key, r.why)
		}
	}
	if req.Stream, e = asFlag(d.top["stream"], "stream"); e != nil {
		return req, e
	}
	if so, e := asObject(d.top["stream_options"], "stream_options"); e != nil {
		return req, e
	} else if _, e := asBool(so["include_obfuscation"], "stream_options.include_obfuscation"); e != nil {
		return req, e
	}
	if req.Session, e = asString(d.top["user"], "user"); e != nil {
		return req, e
	}
	if e := d.state(); e != nil {
		return req, e
	}
	if e := d.input(); e != nil {
		return req, e
	}
	if e := d.tools(); e != nil {
		return req, e
	}
	keep, e := d.params()
	if e != nil {
		return req, e
	}
	d.turn.Wire = WireResponses
	d.turn.Extra = extra(d.top, consumedExcept(responsesConsumed, keep))
	if e := d.check(); e != nil {
		return req, e
	}
	d.rr.User = req.Session
	req.Turn, req.Responses = d.turn, &d.rr
	return req, nil
}

// state reads what the door acts on: store, background, previous_response_id.
func (d *responsesDecoder) state() *Error {
	store, e := asBool(d.top["store"], "store")
	if e != nil {
		return e
	}
	d.rr.Store = store == nil || *store
	if d.rr.Background, e = asFlag(d.top["background"], "background"); e != nil {
		return e
	}
	if d.rr.Background && !d.rr.Store {
		return BadRequest("background", "background: a background response must be stored (store: true)")
	}
	d.rr.PreviousResponseID, e = asString(d.top["previous_response_id"], "previous_response_id")
	return e
}

// check runs CheckTurn with the locator. With previous_response_id, results of calls the input does
// not hold are checked as if a message before the turn had made them (the door checks them).
func (d *responsesDecoder) check() *Error {
	if len(d.rr.PriorCallResults) == 0 {
		return d.loc.check(d.turn)
	}
	var prior []provider.Part
	for _, r := range d.rr.PriorCallResults {
		prior = append(prior, provider.Part{Type: provider.PartToolCall, CallID: r.CallID})
	}
	t := d.turn
	t.Messages = append([]provider.Message{{Role: provider.RoleAssistant, Content: prior}}, t.Messages...)
	loc := *d.loc
	loc.parts = append([][]partPaths{make([]partPaths, len(prior))}, d.loc.parts...)
	return loc.check(t)
}

func (d *responsesDecoder) add(m provider.Message, paths []partPaths) {
	d.turnBuilder.add(m, paths)
	d.assistant = m.Role == provider.RoleAssistant
}

// addAssistant adds a part to the assistant's message: consecutive assistant items (reasoning,
// messages, function calls) are one assistant message of the turn.
func (d *responsesDecoder) addAssistant(p provider.Part, pp partPaths) (message, part int) {
	if !d.assistant {
		d.add(provider.Message{Role: provider.RoleAssistant}, nil)
	}
	m := len(d.turn.Messages) - 1
	d.turn.Messages[m].Content = append(d.turn.Messages[m].Content, p)
	d.loc.parts[m] = append(d.loc.parts[m], pp)
	return m, len(d.turn.Messages[m].Content) - 1
}

func (d *responsesDecoder) input() *Error {
	instructions := d.top["instructions"]
	if !isNull(instructions) {
		s, e := asString(instructions, "instructions")
		if e != nil {
			return e
		}
		d.rr.Instructions = &s
		if s != "" {
			d.add(provider.Message{Role: provider.RoleSystem, Content: []provider.Part{provider.TextPart(s)}}, []partPaths{{}})
		}
	}
	raw := d.top["input"]
	if isString(raw) {
		s, _ := asString(raw, "input")
		d.add(provider.Message{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart(s)}}, []partPaths{{}})
		return nil
	}
	items, e := asArray(raw, "input")
	if e != nil || (len(items) == 0 && d.rr.PreviousResponseID == "") {
		return BadRequest("input", "input: want a string or a non-empty array of items")
	}
	for i, ir := range items {
		if e := d.item(i, ir); e != nil {
			return e
		}
	}
	return nil
}

func (d *responsesDecoder) item(i int, raw json.RawMessage) *Error {
	f := fmt.Sprintf("input[%d]", i)
	o, typ, e := typedObject(raw, f, "want an item {type, …}")
	if e != nil {
		return e
	}
	if typ == "" && !isNull(o["role"]) {
		typ = "message" // an easy input message: {role, content}
	}
	switch typ {
	case "message":
		return d.message(f, o)
	case "function_call":
		return d.functionCall(f, o)
	case "function_call_output":
		return d.functionCallOutput(f, o)
	case "reasoning":
		return d.reasoning(f, o, raw)
	case "":
		return BadRequest(f+".type", "%s.type: want message, function_call, function_call_output or reasoning", f)
	}
	if responsesOtherItems[typ] {
		return BadRequest(f+".type", "%s.type: %q items are not supported (baton carries message, function_call, function_call_output and reasoning items)", f, typ)
	}
	return BadRequest(f+".type", "%s.type: %q is not an item type baton knows (message, function_call, function_call_output, reasoning)", f, typ)
}

func (d *responsesDecoder) message(f string, o object) *Error {
	role, e := asString(o["role"], f+".role")
	if e != nil {
		return e
	}
	switch role {
	case provider.RoleUser, provider.RoleAssistant, provider.RoleSystem, provider.RoleDeveloper:
	default:
		return BadRequest(f+".role", "%s.role: %q is not user, assistant, system or developer", f, role)
	}
	content := o["content"]
	if isNull(content) {
		return BadRequest(f+".content", "%s.content: want a string or an array of content parts", f)
	}
	parts, paths, e := responsesParts(f+".content", content, role, role+" messages")
	if e != nil {
		return e
	}
	if role != provider.RoleAssistant {
		d.add(provider.Message{Role: role, Content: parts}, paths)
		return nil
	}
	for k, p := range parts {
		if p.Type == provider.PartText && p.Text == "" {
			continue
		}
		d.addAssistant(p, paths[k])
	}
	if !d.assistant {
		d.addAssistant(provider.TextPart(""), partPaths{}) // an empty assistant message is still a message
	}
	return nil
}

// responsesParts reads a message's content (or a function call's output, as a user's): a string,
// or an array of parts (input_text, input_image in user messages; output_text and refusal in
// assistant messages). where names the place in refusals.
func responsesParts(field string, raw json.RawMessage, role, where string) ([]provider.Part, []partPaths, *Error) {
	assistant := role == provider.RoleAssistant
	return contentParts(field, raw, func(pf, typ string, po object) (provider.Part, partPaths, *Error) {
		switch {
		case typ == "input_text" || (typ == "output_text" && assistant):
			text, e := asString(po["text"], pf+".text")
			return provider.TextPart(text), partPaths{}, e
		case typ == "refusal" && assistant:
			text, e := asString(po["refusal"], pf+".refusal")
			return provider.TextPart(text), partPaths{}, e
		case typ == "input_image" && role == provider.RoleUser:
			p, e := responsesImage(pf, po)
			return p, partPaths{image: pf + ".image_url"}, e
		case typ == "input_file" || typ == "input_audio":
			return provider.Part{}, partPaths{}, BadRequest(pf+".type", "%s.type: %s parts are not supported", pf, typ)
		case typ == "input_image" || typ == "output_text" || typ == "refusal":
			return provider.Part{}, partPaths{}, BadRequest(pf+".type", "%s.type: %q parts are not allowed in %s", pf, typ, where)
		default:
			return provider.Part{}, partPaths{}, BadRequest(pf+".type", "%s.type: %q is not a content part type baton knows (input_text, input_image, output_text, refusal)", pf, typ)
		}
	})
}

// responsesImage reads an input_image part: an http(s) or data: URL (an image by file id is
// refused: baton has no files).
func responsesImage(pf string, po object) (provider.Part, *Error) {
	if id, e := asString(po["file_id"], pf+".file_id"); e != nil {
		return provider.Part{}, e
	} else if id != "" {
		return provider.Part{}, BadRequest(pf+".file_id", "%s.file_id: images by file id are not supported; send image_url (an http(s) or data: URL)", pf)
	}
	return imageURL(po, pf, "image_url")
}

func (d *responsesDecoder) functionCall(f string, o object) *Error {
	callID, e := requiredString(o, f, "call_id", "want the call's id")
	if e != nil {
		return e
	}
	name, e := requiredString(o, f, "name", "want the function's name")
	if e != nil {
		return e
	}
	args, e := asString(o["arguments"], f+".arguments")
	if e != nil {
		return e
	}
	// A namespaced call names a function of a namespace tool, which the turn model cannot hold.
	if ns, e := asString(o["namespace"], f+".namespace"); e != nil {
		return e
	} else if ns != "" {
		return BadRequest(f+".namespace", "%s.namespace: calls of namespace tools are not supported", f)
	}
	d.calls[callID] = true
	d.addAssistant(provider.Part{Type: provider.PartToolCall, CallID: callID, Name: name, Arguments: args}, partPaths{})
	return nil
}

func (d *responsesDecoder) functionCallOutput(f string, o object) *Error {
	callID, e := requiredString(o, f, "call_id", "want the id of the call this output answers")
	if e != nil {
		return e
	}
	p := provider.Part{Type: provider.PartToolResult, CallID: callID}
	pp := partPaths{callID: f + ".call_id"}
	out, of := o["output"], f+".output"
	switch {
	case isNull(out):
		return BadRequest(of, "%s: want a string or an array of input_text and input_image parts", of)
	case isString(out):
		if s, _ := asString(out, of); s != "" {
			p.Result, pp.inner = []provider.Part{provider.TextPart(s)}, []partPaths{{}}
		}
	default:
		parts, paths, e := responsesParts(of, out, provider.RoleUser, "function call outputs")
		if e != nil {
			return e
		}
		for k, r := range parts {
			if r.Type == provider.PartText && r.Text == "" {
				continue
			}
			p.Result, pp.inner = append(p.Result, r), append(pp.inner, paths[k])
		}
	}
	if !d.calls[callID] {
		r := PriorCallResult{CallID: callID, Param: f + ".call_id"}
		if d.rr.PreviousResponseID == "" {
			return r.Refusal()
		}
		d.rr.PriorCallResults = append(d.rr.PriorCallResults, r)
	}
	d.add(provider.Message{Role: provider.RoleTool, Content: []provider.Part{p}}, []partPaths{pp})
	return nil
}

// reasoning reads a reasoning item passed back: its readable text (summary, or else its content)
// into a reasoning part, restored whole when its encrypted content is baton's own.
func (d *responsesDecoder) reasoning(f string, o object, raw json.RawMessage) *Error {
	id, e := asString(o["id"], f+".id")
	if e != nil {
		return e
	}
	enc, e := asString(o["encrypted_content"], f+".encrypted_content")
	if e != nil {
		return e
	}
	summary, e := responsesTexts(f+".summary", o["summary"], "summary_text")
	if e != nil {
		return e
	}
	content, e := responsesTexts(f+".content", o["content"], "reasoning_text")
	if e != nil {
		return e
	}
	text := summary
	if text == "" {
		text = content
	}
	p := provider.Part{Type: provider.PartReasoning, Text: text}
	switch restored, ok := partFromBlob(enc); {
	case ok:
		p = restored
	case strings.HasPrefix(enc, reasoningBlobPrefix):
		return BadRequest(f+".encrypted_content", "%s.encrypted_content: not the reasoning baton sent (damaged)", f)
	case enc != "":
		// OpenAI's own (the caller had it from OpenAI): only a Responses candidate takes it back.
		p.ReasoningID, p.Encrypted = id, enc
	}
	m, k := d.addAssistant(p, partPaths{})
	d.rr.ReasoningItems = append(d.rr.ReasoningItems, ResponsesReasoningItem{Param: f, Message: m, Part: k, ID: id, Raw: rawCopy(raw)})
	return nil
}

// responsesTexts joins the texts of a reasoning item's summary or content (parts of one type).
func responsesTexts(field string, raw json.RawMessage, typ string) (string, *Error) {
	arr, e := asArray(raw, field)
	if e != nil {
		return "", e
	}
	var texts []string
	for k, pr := range arr {
		pf := fmt.Sprintf("%s[%d]", field, k)
		po, t, e := typedObject(pr, pf, fmt.Sprintf("want {type: %q, text}", typ))
		if e != nil {
			return "", e
		}
		if t != typ {
			return "", BadRequest(pf+".type", "%s.type: %q; want %q", pf, t, typ)
		}
		s, e := asString(po["text"], pf+".text")
		if e != nil {
			return "", e
		}
		if s != "" {
			texts = append(texts, s)
		}
	}
	return strings.Join(texts, "\n\n"), nil
}

func (d *responsesDecoder) tools() *Error {
	raw := d.top["tools"]
	tools, e := asArray(raw, "tools")
	if e != nil {
		return e
	}
	if tools != nil {
		d.rr.Tools = json.RawMessage(compactJSON(raw))
	}
	for i, tr := range tools {
		tf := fmt.Sprintf("tools[%d]", i)
		to, typ, e := typedObject(tr, tf, "want {type: \"function\", name, description, parameters, strict}")
		if e != nil {
			return e
		}
		if responsesBuiltinTools[typ] {
			d.rr.BuiltinTools = append(d.rr.BuiltinTools, BuiltinTool{Param: tf, Type: typ, Raw: rawCopy(tr)})
			continue
		}
		if typ != "function" {
			return BadRequest(tf+".type", "%s.type: %q is not a tool type baton knows (function, or a built-in tool of the Responses API)", tf, typ)
		}
		t, e := readTool(to, tf, "parameters")
		if e != nil {
			return e
		}
		d.turn.Tools = append(d.turn.Tools, t)
		d.toolIndex = append(d.toolIndex, i)
	}
	if raw := d.top["tool_choice"]; !isNull(raw) {
		d.rr.ToolChoice = json.RawMessage(compactJSON(raw))
		if e := d.toolChoice(raw); e != nil {
			return e
		}
	}
	ptc, e := asBool(d.top["parallel_tool_calls"], "parallel_tool_calls")
	if e != nil {
		return e
	}
	d.turn.ParallelToolCalls, d.rr.ParallelToolCalls = ptc, ptc
	return nil
}

func (d *responsesDecoder) toolChoice(raw json.RawMessage) *Error {
	const named = "{type: \"function\", name}"
	var e *Error
	if isString(raw) {
		d.turn.ToolChoice, e = toolChoiceMode(raw, named)
		return e
	}
	o, typ, e := typedObject(raw, "tool_choice", "want auto, none, required or "+named)
	if e != nil {
		return e
	}
	switch {
	case typ == "function":
		if d.turn.ToolChoice, e = namedToolChoice(o, "tool_choice"); e != nil {
			return e
		}
	case responsesBuiltinChoices[typ]:
		d.rr.BuiltinTools = append(d.rr.BuiltinTools, BuiltinTool{Param: "tool_choice", Type: typ, Raw: rawCopy(raw)})
	default:
		return BadRequest("tool_choice.type", "tool_choice.type: %q is not a tool choice baton knows (function, or a built-in tool's)", typ)
	}
	return nil
}

// params reads the sampling and output controls; keep names text and reasoning when they hold
// more than baton models (text.verbosity, reasoning.summary, …), which then also go to Extra for
// a Responses candidate.
func (d *responsesDecoder) params() (keep map[string]bool, _ *Error) {
	p := &d.turn.Params
	e := readSampling(d.top, p)
	if e != nil {
		return nil, e
	}
	if p.MaxTokens, e = asInteger(d.top["max_output_tokens"], "max_output_tokens"); e != nil {
		return nil, e
	}
	d.rr.Temperature, d.rr.TopP, d.rr.MaxOutputTokens = p.Temperature, p.TopP, p.MaxTokens
	if md, e := asObject(d.top["metadata"], "metadata"); e != nil {
		return nil, e
	} else if md != nil {
		d.rr.Metadata = json.RawMessage(compactJSON(d.top["metadata"]))
	}
	keep = map[string]bool{}
	ro, e := asObject(d.top["reasoning"], "reasoning")
	if e != nil {
		return nil, e
	}
	if ro != nil {
		d.rr.Reasoning = json.RawMessage(compactJSON(d.top["reasoning"]))
		if p.ReasoningEffort, e = asString(ro["effort"], "reasoning.effort"); e != nil {
			return nil, e
		}
		keep["reasoning"] = hasOther(ro, "effort")
	}
	to, e := asObject(d.top["text"], "text")
	if e != nil || to == nil {
		return keep, e
	}
	d.rr.Text = json.RawMessage(compactJSON(d.top["text"]))
	keep["text"] = hasOther(to, "format")
	fo, e := asObject(to["format"], "text.format")
	if e != nil || fo == nil {
		return keep, e
	}
	typ, e := asString(fo["type"], "text.format.type")
	if e != nil {
		return nil, e
	}
	switch typ {
	case provider.FormatText, provider.FormatJSONObject:
		p.ResponseFormat = &provider.ResponseFormat{Type: typ}
	case provider.FormatJSONSchema:
		if p.ResponseFormat, e = jsonSchemaFormat(fo, "text.format"); e != nil {
			return nil, e
		}
	default:
		return nil, BadRequest("text.format.type", "text.format.type: %q is not text, json_object or json_schema", typ)
	}
	return keep, nil
}

// hasOther reports whether o has a non-null key other than known.
func hasOther(o object, known string) bool {
	for k, v := range o {
		if k != known && !isNull(v) {
			return true
		}
	}
	return false
}

// --- baton's reasoning, sent back and forth ---

// reasoningBlobPrefix marks an encrypted_content that baton wrote: a reasoning part (an Anthropic
// thinking block's signature, a redacted block, a Responses candidate's item id and encrypted
// content) travels to a Responses caller and back whole in it, whichever candidate made it. Not
// encrypted: the text is the summary the caller sees anyway.
const reasoningBlobPrefix = "baton.reasoning.v1."

type reasoningBlobData struct {
	Text        string `json:"text,omitempty"`
	Signature   string `json:"signature,omitempty"`
	Redacted    string `json:"redacted,omitempty"`
	ReasoningID string `json:"reasoningId,omitempty"`
	Encrypted   string `json:"encrypted,omitempty"`
	// CallID ties a Gemini thought signature to the call it came on (provider.Part).
	CallID string `json:"callId,omitempty"`
}

// reasoningBlob is a reasoning part as encrypted_content ("" when the part has nothing opaque,
// whose text the summary then carries alone).
func reasoningBlob(p provider.Part) string {
	if !opaque(p) {
		return ""
	}
	b, _ := json.Marshal(reasoningBlobData{Text: p.Text, Signature: p.Signature, Redacted: p.Redacted, ReasoningID: p.ReasoningID,
		Encrypted: p.Encrypted, CallID: p.CallID})
	return reasoningBlobPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func partFromBlob(s string) (provider.Part, bool) {
	rest, ok := strings.CutPrefix(s, reasoningBlobPrefix)
	if !ok {
		return provider.Part{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	var data reasoningBlobData
	if err != nil || json.Unmarshal(b, &data) != nil {
		return provider.Part{}, false
	}
	return provider.Part{Type: provider.PartReasoning, Text: data.Text, Signature: data.Signature, Redacted: data.Redacted,
		ReasoningID: data.ReasoningID, Encrypted: data.Encrypted, CallID: data.CallID}, true
}

// opaque reports whether a reasoning part holds what only its provider reads.
func opaque(p provider.Part) bool {
	return p.Signature != "" || p.Redacted != "" || p.ReasoningID != "" || p.Encrypted != ""
}

// --- the response object ---

type responsesOutputText struct {
	Type        string            `json:"type"`
	Annotations []json.RawMessage `json:"annotations"`
	Logprobs    []json.RawMessage `json:"logprobs"`
	Text        string            `json:"text"`
}

func outputText(text string) responsesOutputText {
	return responsesOutputText{Type: "output_text", Annotations: []json.RawMessage{}, Logprobs: []json.RawMessage{}, Text: text}
}

type responsesMessage struct {
	ID      string                `json:"id"`
	Type    string                `json:"type"`
	Status  string                `json:"status"`
	Role    string                `json:"role"`
	Content []responsesOutputText `json:"content"`
}

type responsesCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

type responsesSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type responsesReasoning struct {
	ID               string             `json:"id"`
	Type             string             `json:"type"`
	Summary          []responsesSummary `json:"summary"`
	EncryptedContent *string            `json:"encrypted_content,omitempty"`
}

type responsesError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responsesIncomplete struct {
	Reason string `json:"reason"`
}

type responsesInputDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type responsesOutputDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

type responsesUsage struct {
	InputTokens         int64                  `json:"input_tokens"`
	InputTokensDetails  responsesInputDetails  `json:"input_tokens_details"`
	OutputTokens        int64                  `json:"output_tokens"`
	OutputTokensDetails responsesOutputDetails `json:"output_tokens_details"`
	TotalTokens         int64                  `json:"total_tokens"`
}

func responsesUsageOf(u provider.Usage) *responsesUsage {
	return &responsesUsage{InputTokens: u.Input, InputTokensDetails: responsesInputDetails{CachedTokens: u.CachedInput},
		OutputTokens: u.Output, OutputTokensDetails: responsesOutputDetails{ReasoningTokens: u.Reasoning}, TotalTokens: u.Input + u.Output}
}

type responsesObject struct {
	ID                 string               `json:"id"`
	Object             string               `json:"object"`
	CreatedAt          int64                `json:"created_at"`
	Status             string               `json:"status"`
	Background         bool                 `json:"background"`
	Error              *responsesError      `json:"error"`
	IncompleteDetails  *responsesIncomplete `json:"incomplete_details"`
	Instructions       *string              `json:"instructions"`
	MaxOutputTokens    *int64               `json:"max_output_tokens"`
	Model              string               `json:"model"`
	Output             []any                `json:"output"`
	ParallelToolCalls  bool                 `json:"parallel_tool_calls"`
	PreviousResponseID *string              `json:"previous_response_id"`
	Reasoning          json.RawMessage      `json:"reasoning"`
	Store              bool                 `json:"store"`
	Temperature        *float64             `json:"temperature"`
	Text               json.RawMessage      `json:"text"`
	ToolChoice         json.RawMessage      `json:"tool_choice"`
	Tools              json.RawMessage      `json:"tools"`
	TopP               *float64             `json:"top_p"`
	Usage              *responsesUsage      `json:"usage"`
	User               *string              `json:"user,omitempty"`
	Metadata           json.RawMessage      `json:"metadata"`
}

// ResponsesHead is what every event of a response repeats: its id ("resp_…"), model, creation time
// and the request's echo. Plain data: with the calls made, it is all a stream is made of.
type ResponsesHead struct {
	ID        string        `json:"id"`
	Model     string        `json:"model"`
	CreatedAt int64         `json:"createdAt"`
	Echo      ResponsesEcho `json:"echo"`
}

func orRaw(raw json.RawMessage, def string) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(def)
	}
	return raw
}

// object is the response object in a status, with its output items so far.
func (h ResponsesHead) object(status string, output []any, usage *responsesUsage, e *responsesError, inc *responsesIncomplete) responsesObject {
	ec := h.Echo
	if output == nil {
		output = []any{}
	}
	o := responsesObject{ID: h.ID, Object: "response", CreatedAt: h.CreatedAt, Status: status, Background: ec.Background,
		Error: e, IncompleteDetails: inc, Instructions: ec.Instructions, MaxOutputTokens: ec.MaxOutputTokens, Model: h.Model,
		Output: output, ParallelToolCalls: ec.ParallelToolCalls == nil || *ec.ParallelToolCalls,
		PreviousResponseID: nullable(ec.PreviousResponseID), Reasoning: orRaw(ec.Reasoning, `{"effort":null,"summary":null}`),
		Store: ec.Store, Temperature: ec.Temperature, Text: orRaw(ec.Text, `{"format":{"type":"text"}}`),
		ToolChoice: orRaw(ec.ToolChoice, `"auto"`), Tools: orRaw(ec.Tools, `[]`), TopP: ec.TopP, Usage: usage,
		User: nullable(ec.User), Metadata: orRaw(ec.Metadata, `{}`)}
	return o
}

// responsesItemID is an output item's id, from the response's id and the item's index: the same
// response always names its items alike (a resumed stream, a stored response read back).
func responsesItemID(prefix, responseID string, index int) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.TrimPrefix(responseID, "resp_"), index)
}

// responsesCallID is a call's id, made up (as the item's id) when the candidate gave none.
func responsesCallID(id, responseID string, index int) string {
	if id != "" {
		return id
	}
	return responsesItemID("call", responseID, index)
}

func reasoningItem(id string, text string, p *provider.Part) responsesReasoning {
	item := responsesReasoning{ID: id, Type: "reasoning", Summary: []responsesSummary{}}
	if text != "" {
		item.Summary = append(item.Summary, responsesSummary{Type: "summary_text", Text: text})
	}
	if p != nil {
		if blob := reasoningBlob(*p); blob != "" {
			item.EncryptedContent = &blob
		}
	}
	return item
}

// hasReasoning reports whether a reasoning part is worth an item.
func hasReasoning(p provider.Part) bool { return p.Text != "" || opaque(p) }

// finishStatus is a finished answer's status: incomplete when cut short, completed otherwise.
func finishStatus(reason string) (string, *responsesIncomplete) {
	switch reason {
	case provider.FinishLength:
		return "incomplete", &responsesIncomplete{Reason: "max_output_tokens"}
	case provider.FinishContentFilter:
		return "incomplete", &responsesIncomplete{Reason: "content_filter"}
	}
	return "completed", nil
}

// responsesErrorCode is e's code in a response object and an error event.
func responsesErrorCode(e *Error) string {
	switch {
	case e.Code != "":
		return e.Code
	case e.status() == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	}
	return "server_error"
}

// answerItems are an answer's output items, in the order a stream sends them: reasoning, the
// message, the function calls; the last message or call in last's status (a stream's open item).
func answerItems(responseID string, a provider.Answer, last string) []any {
	var items []any
	for _, p := range a.Reasoning {
		if hasReasoning(p) {
			items = append(items, reasoningItem(responsesItemID("rs", responseID, len(items)), p.Text, &p))
		}
	}
	if a.Text != "" {
		items = append(items, responsesMessage{ID: responsesItemID("msg", responseID, len(items)), Type: "message",
			Status: "completed", Role: "assistant", Content: []responsesOutputText{outputText(a.Text)}})
	}
	for _, c := range a.ToolCalls {
		n := len(items)
		items = append(items, responsesCall{ID: responsesItemID("fc", responseID, n), Type: "function_call", Status: "completed",
			Arguments: c.Arguments, CallID: responsesCallID(c.ID, responseID, n), Name: c.Name})
	}
	if n := len(items) - 1; n >= 0 {
		switch it := items[n].(type) {
		case responsesMessage:
			it.Status = last
			items[n] = it
		case responsesCall:
			it.Status = last
			items[n] = it
		}
	}
	return items
}

// ResponsesResponse is the response object of a finished answer: completed, or incomplete (with
// its reason) when the answer was cut short. r.ID is the response's id ("resp_…").
func ResponsesResponse(r Reply, echo ResponsesEcho) []byte {
	return ResponsesObject(r, echo, "", nil)
}

// ResponsesObject is the response object in a given status: "" for a finished answer's own
// (completed or incomplete); queued or in_progress with what of the answer has come so far;
// failed with e; cancelled. Usage is given when the answer is finished, or when it counts anything.
func ResponsesObject(r Reply, echo ResponsesEcho, status string, e *Error) []byte {
	h := ResponsesHead{ID: r.ID, Model: r.Model, CreatedAt: r.Created, Echo: echo}
	a := r.Answer
	var inc *responsesIncomplete
	finished := status == ""
	if finished {
		status, inc = finishStatus(a.FinishReason)
	}
	var usage *responsesUsage
	if finished || a.Usage != (provider.Usage{}) {
		usage = responsesUsageOf(a.Usage)
	}
	var re *responsesError
	if status == "failed" {
		if e == nil {
			e = &Error{Status: http.StatusInternalServerError, Message: "the response failed"}
		}
		re = &responsesError{Code: responsesErrorCode(e), Message: e.Message}
	}
	return marshal(h.object(status, answerItems(r.ID, a, lastStatus(status)), usage, re, inc))
}

// lastStatus is the status of a response's last item: the one a stream had open.
func lastStatus(status string) string {
	switch status {
	case "completed":
		return "completed"
	case "queued", "in_progress":
		return "in_progress"
	}
	return "incomplete" // incomplete, failed, cancelled
}

// WriteResponsesError writes e as the Responses API does: {"error": {message, type, param, code}}
// (OpenAI's shape), with a Retry-After header when RetryAfter > 0.
func WriteResponsesError(w http.ResponseWriter, e *Error) { WriteOpenAIError(w, e) }

// ResponseNotFound is the 404 for a response id baton does not hold (GET, DELETE, cancel, a
// resumed stream), worded as OpenAI's API words it: its SDK does not document it, so a choice.
func ResponseNotFound(id string) *Error {
	return &Error{Status: http.StatusNotFound, Type: "invalid_request_error", Message: fmt.Sprintf("Response with id '%s' not found.", id)}
}

// PreviousResponseNotFound is the 404 for a previous_response_id baton does not hold, with OpenAI's
// code (its SDK's README names it; the status, param and wording are the API's as we know them).
func PreviousResponseNotFound(id string) *Error {
	return &Error{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "previous_response_id",
		Code: "previous_response_not_found", Message: fmt.Sprintf("Previous response with id '%s' not found.", id)}
}

// --- the event stream ---

// rsHead leads every event: its type and sequence number.
type rsHead struct {
	Type           string `json:"type"`
	SequenceNumber int64  `json:"sequence_number"`
}

func (h *rsHead) set(typ string, seq int64) { h.Type, h.SequenceNumber = typ, seq }

type rsEvent interface{ set(typ string, seq int64) }

type rsResponseEvent struct {
	rsHead
	Response responsesObject `json:"response"`
}

type rsItemEvent struct {
	rsHead
	OutputIndex int `json:"output_index"`
	Item        any `json:"item"`
}

type rsPartEvent struct {
	rsHead
	ItemID       string              `json:"item_id"`
	OutputIndex  int                 `json:"output_index"`
	ContentIndex int                 `json:"content_index"`
	Part         responsesOutputText `json:"part"`
}

type rsTextEvent struct {
	rsHead
	ItemID       string            `json:"item_id"`
	OutputIndex  int               `json:"output_index"`
	ContentIndex int               `json:"content_index"`
	Delta        *string           `json:"delta,omitempty"`
	Text         *string           `json:"text,omitempty"`
	Logprobs     []json.RawMessage `json:"logprobs"`
}

type rsArgsEvent struct {
	rsHead
	ItemID      string  `json:"item_id"`
	OutputIndex int     `json:"output_index"`
	Delta       *string `json:"delta,omitempty"`
	Arguments   *string `json:"arguments,omitempty"`
}

type rsSummaryPartEvent struct {
	rsHead
	ItemID       string           `json:"item_id"`
	OutputIndex  int              `json:"output_index"`
	SummaryIndex int              `json:"summary_index"`
	Part         responsesSummary `json:"part"`
}

type rsSummaryTextEvent struct {
	rsHead
	ItemID       string  `json:"item_id"`
	OutputIndex  int     `json:"output_index"`
	SummaryIndex int     `json:"summary_index"`
	Delta        *string `json:"delta,omitempty"`
	Text         *string `json:"text,omitempty"`
}

type rsErrorEvent struct {
	rsHead
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
}

// rsOpen is the output item being streamed.
type rsOpen struct {
	kind      string // message, function_call, reasoning
	index     int    // output index
	id        string
	text      strings.Builder // the message's text, the reasoning's summary, the call's arguments
	callIndex int
	callID    string
	name      string
	summary   bool // reasoning: its summary part was added
}

// ResponsesStream writes a Responses API event stream, delta by delta: response.created and
// response.in_progress first, then one output item at a time (a new item closes the open one),
// then response.completed or response.incomplete on Finish, or an error event and response.failed
// on Error. Calls after Finish or Error do nothing.
//
// Every event has a sequence_number counting from 0, and the writer is deterministic: the same
// head and the same calls give the same bytes. A resumed stream is the same calls replayed (from a
// stored log of deltas) with skipThrough set to the last sequence number the caller had: those
// events are counted, not written.
//
// Live deltas map to calls as: text → Text; reasoning text → Reasoning; a whole reasoning part
// (Anthropic's thinking block at its end) → ReasoningPart; a tool call → ToolCall then ToolArgs. A
// whole answer goes through Answer (not StreamAnswer, which would lose the reasoning's signature).
// Arguments for a call whose item a later item closed are dropped: a door sends a call whole.
type ResponsesStream struct {
	w           io.Writer
	flush       func()
	head        ResponsesHead
	skip        int64 // events with sequence_number ≤ skip are counted, not written
	seq         int64 // the next event's sequence number
	last        int64 // the last sequence number written (-1: none)
	err         error
	started     bool
	done        bool
	items       []any // closed items by output index
	open        *rsOpen
	calls       map[int]int // tool call index → output index
	outputCount int
}

var _ Stream = (*ResponsesStream)(nil)

// NewResponsesStream is a stream writer to w; flush (may be nil) is called after each event
// written. skipThrough is the last sequence number the caller already has (-1: none).
func NewResponsesStream(w io.Writer, flush func(), head ResponsesHead, skipThrough int64) *ResponsesStream {
	return &ResponsesStream{w: w, flush: flush, head: head, skip: skipThrough, last: -1, calls: map[int]int{}}
}

// Err is the first error writing to w.
func (s *ResponsesStream) Err() error { return s.err }

// LastWritten is the sequence number of the last event written to w (-1: none).
func (s *ResponsesStream) LastWritten() int64 { return s.last }

// SetModel names the candidate whose output the next events carry (the response objects of
// response.completed and the like name the one that finished it).
func (s *ResponsesStream) SetModel(model string) {
	if model != "" {
		s.head.Model = model
	}
}

func (s *ResponsesStream) emit(typ string, ev rsEvent) {
	seq := s.seq
	s.seq++
	if seq <= s.skip || s.err != nil {
		return
	}
	ev.set(typ, seq)
	if _, s.err = s.w.Write(sseEvent(typ, marshal(ev))); s.err == nil {
		s.last = seq
		if s.flush != nil {
			s.flush()
		}
	}
}

func (s *ResponsesStream) response(typ, status string, usage *responsesUsage, e *responsesError, inc *responsesIncomplete) {
	s.emit(typ, &rsResponseEvent{Response: s.head.object(status, s.items, usage, e, inc)})
}

// begin sends response.created and response.in_progress once; false once the stream is over.
func (s *ResponsesStream) begin() bool {
	if s.done {
		return false
	}
	if !s.started {
		s.started = true
		created := "in_progress"
		if s.head.Echo.Background {
			created = "queued"
		}
		s.response("response.created", created, nil, nil, nil)
		s.response("response.in_progress", "in_progress", nil, nil, nil)
	}
	return true
}

// start closes the open item and opens one of kind.
func (s *ResponsesStream) start(kind, prefix string) *rsOpen {
	s.close("completed")
	s.open = &rsOpen{kind: kind, index: s.outputCount, id: responsesItemID(prefix, s.head.ID, s.outputCount)}
	s.outputCount++
	return s.open
}

// close ends the open item with its done events, the item in status.
func (s *ResponsesStream) close(status string) { s.closeWith(status, nil) }

func (s *ResponsesStream) closeWith(status string, part *provider.Part) {
	o := s.open
	if o == nil {
		return
	}
	s.open = nil
	text := o.text.String()
	switch o.kind {
	case "message":
		s.emit("response.output_text.done", &rsTextEvent{ItemID: o.id, OutputIndex: o.index, Text: &text, Logprobs: []json.RawMessage{}})
		s.emit("response.content_part.done", &rsPartEvent{ItemID: o.id, OutputIndex: o.index, Part: outputText(text)})
	case "function_call":
		s.emit("response.function_call_arguments.done", &rsArgsEvent{ItemID: o.id, OutputIndex: o.index, Arguments: &text})
	case "reasoning":
		if o.summary {
			s.emit("response.reasoning_summary_text.done", &rsSummaryTextEvent{ItemID: o.id, OutputIndex: o.index, Text: &text})
			s.emit("response.reasoning_summary_part.done", &rsSummaryPartEvent{ItemID: o.id, OutputIndex: o.index, Part: responsesSummary{Type: "summary_text", Text: text}})
		}
	}
	item := o.item(status, part)
	s.emit("response.output_item.done", &rsItemEvent{OutputIndex: o.index, Item: item})
	s.items = append(s.items, item)
}

// item is the open item as it stands, in status (a reasoning item has none).
func (o *rsOpen) item(status string, part *provider.Part) any {
	text := o.text.String()
	switch o.kind {
	case "message":
		return responsesMessage{ID: o.id, Type: "message", Status: status, Role: "assistant", Content: []responsesOutputText{outputText(text)}}
	case "function_call":
		return responsesCall{ID: o.id, Type: "function_call", Status: status, Arguments: text, CallID: o.callID, Name: o.name}
	}
	return reasoningItem(o.id, text, part)
}

// Text sends a piece of the answer's text (in a message item).
func (s *ResponsesStream) Text(delta string) {
	if !s.begin() || delta == "" {
		return
	}
	o := s.open
	if o == nil || o.kind != "message" {
		o = s.start("message", "msg")
		s.emit("response.output_item.added", &rsItemEvent{OutputIndex: o.index,
			Item: responsesMessage{ID: o.id, Type: "message", Status: "in_progress", Role: "assistant", Content: []responsesOutputText{}}})
		s.emit("response.content_part.added", &rsPartEvent{ItemID: o.id, OutputIndex: o.index, Part: outputText("")})
	}
	o.text.WriteString(delta)
	s.emit("response.output_text.delta", &rsTextEvent{ItemID: o.id, OutputIndex: o.index, Delta: &delta, Logprobs: []json.RawMessage{}})
}

func (s *ResponsesStream) startReasoning() *rsOpen {
	if s.open != nil && s.open.kind == "reasoning" {
		return s.open
	}
	o := s.start("reasoning", "rs")
	s.emit("response.output_item.added", &rsItemEvent{OutputIndex: o.index, Item: reasoningItem(o.id, "", nil)})
	return o
}

func (s *ResponsesStream) summaryDelta(o *rsOpen, delta string) {
	if !o.summary {
		o.summary = true
		s.emit("response.reasoning_summary_part.added", &rsSummaryPartEvent{ItemID: o.id, OutputIndex: o.index, Part: responsesSummary{Type: "summary_text"}})
	}
	o.text.WriteString(delta)
	s.emit("response.reasoning_summary_text.delta", &rsSummaryTextEvent{ItemID: o.id, OutputIndex: o.index, Delta: &delta})
}

// Reasoning sends a piece of the model's reasoning (a reasoning item's summary text).
func (s *ResponsesStream) Reasoning(delta string) {
	if !s.begin() || delta == "" {
		return
	}
	s.summaryDelta(s.startReasoning(), delta)
}

// ReasoningPart ends the open reasoning item (opening one when none is) with a whole reasoning
// part: the text not yet sent goes out first, and what only its provider reads (a signature,
// redacted data, a Responses item's id and encrypted content) goes in the item's
// encrypted_content, which brings the part back whole when the caller passes the item back.
func (s *ResponsesStream) ReasoningPart(p provider.Part) {
	if !s.begin() || !hasReasoning(p) {
		return
	}
	o := s.startReasoning()
	if rest, ok := strings.CutPrefix(p.Text, o.text.String()); ok && rest != "" {
		s.summaryDelta(o, rest)
	}
	s.closeWith("completed", &p)
}

// ToolCall starts the index'th tool call (a function_call item).
func (s *ResponsesStream) ToolCall(index int, id, name string) {
	if !s.begin() {
		return
	}
	o := s.start("function_call", "fc")
	o.callIndex, o.callID, o.name = index, responsesCallID(id, s.head.ID, o.index), name
	s.calls[index] = o.index
	s.emit("response.output_item.added", &rsItemEvent{OutputIndex: o.index,
		Item: responsesCall{ID: o.id, Type: "function_call", Status: "in_progress", CallID: o.callID, Name: name}})
}

// ToolArgs sends a piece of the index'th tool call's arguments.
func (s *ResponsesStream) ToolArgs(index int, delta string) {
	if !s.begin() || delta == "" {
		return
	}
	if o := s.open; o == nil || o.kind != "function_call" || o.callIndex != index {
		if _, started := s.calls[index]; started {
			return // its item is closed (see the type's comment)
		}
		s.ToolCall(index, "", "")
	}
	o := s.open
	o.text.WriteString(delta)
	s.emit("response.function_call_arguments.delta", &rsArgsEvent{ItemID: o.id, OutputIndex: o.index, Delta: &delta})
}

// Finish closes the open item and ends the stream: response.completed, or response.incomplete
// when the answer was cut short (length, content filter), with the usage.
func (s *ResponsesStream) Finish(reason string, usage provider.Usage) {
	if !s.begin() {
		return
	}
	status, inc := finishStatus(reason)
	s.close(status) // the item the answer was cut short in is incomplete
	s.done = true
	typ := "response.completed"
	if inc != nil {
		typ = "response.incomplete"
	}
	s.response(typ, status, responsesUsageOf(usage), nil, inc)
}

// Error ends the stream with an error event and response.failed (whose output holds the items so
// far, the open one incomplete).
func (s *ResponsesStream) Error(e *Error) {
	if !s.begin() {
		return
	}
	s.done = true
	e = inStream(e)
	code := responsesErrorCode(e)
	s.emit("error", &rsErrorEvent{Code: code, Message: e.Message, Param: nullable(e.Param)})
	if o := s.open; o != nil {
		s.open = nil
		s.items = append(s.items, o.item("incomplete", nil))
	}
	s.response("response.failed", "failed", nil, &responsesError{Code: code, Message: e.Message}, nil)
}

// Answer sends a whole answer: each reasoning part (its text in pieces, then the part), the text
// in pieces, each tool call and its arguments in pieces, then Finish. The response object of
// response.completed is then ResponsesResponse's for the same answer.
func (s *ResponsesStream) Answer(a provider.Answer) {
	for _, p := range a.Reasoning {
		if !hasReasoning(p) {
			continue
		}
		for _, piece := range splitText(p.Text, pieceSize) {
			s.Reasoning(piece)
		}
		s.ReasoningPart(p)
	}
	streamOutput(s, a)
}

// Start sends response.created and response.in_progress now (a door opens the stream before
// anything of the answer is known).
func (s *ResponsesStream) Start() { s.begin() }

// ResponsesAnswerMessage is an answer as the assistant message a later turn sends back (the
// conversation previous_response_id continues), its tool calls under the ids its response showed.
func ResponsesAnswerMessage(responseID string, a provider.Answer) provider.Message {
	m := provider.Message{Role: provider.RoleAssistant}
	items := 0
	for _, p := range a.Reasoning {
		if hasReasoning(p) {
			m.Content = append(m.Content, p)
			items++
		}
	}
	if a.Text != "" {
		m.Content = append(m.Content, provider.TextPart(a.Text))
		items++
	}
	for _, c := range a.ToolCalls {
		m.Content = append(m.Content, provider.Part{Type: provider.PartToolCall, CallID: responsesCallID(c.ID, responseID, items),
			Name: c.Name, Arguments: c.Arguments})
		items++
	}
	return m
}
