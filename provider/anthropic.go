package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// The Messages request body, built from a turn: lean structs of our own, so the JSON is exactly
// what the wire wants (raw schemas and cache_control marks); the SDK sends it.
type anthropicRequest struct {
	Model         string               `json:"model"`
	MaxTokens     int64                `json:"max_tokens"`
	System        []anthropicText      `json:"system,omitempty"`
	Messages      []anthropicMessage   `json:"messages"`
	Stream        bool                 `json:"stream"`
	Tools         []anthropicTool      `json:"tools,omitempty"`
	ToolChoice    *anthropicToolChoice `json:"tool_choice,omitempty"`
	Temperature   *float64             `json:"temperature,omitempty"`
	TopP          *float64             `json:"top_p,omitempty"`
	StopSequences []string             `json:"stop_sequences,omitempty"`
	Thinking      *anthropicThinking   `json:"thinking,omitempty"`
}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"` // the block types below
}

type anthropicText struct {
	Type         string          `json:"type"` // text
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type anthropicImage struct {
	Type         string               `json:"type"` // image
	Source       anthropicImageSource `json:"source"`
	CacheControl json.RawMessage      `json:"cache_control,omitempty"`
}

type anthropicImageSource struct {
	Type      string `json:"type"` // base64 | url
	MediaType string `json:"media_type,omitempty"`
	Data      []byte `json:"data,omitempty"` // encoding/json writes standard base64
	URL       string `json:"url,omitempty"`
}

type anthropicToolUse struct {
	Type         string          `json:"type"` // tool_use
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type anthropicToolResult struct {
	Type         string          `json:"type"` // tool_result
	ToolUseID    string          `json:"tool_use_id"`
	Content      []any           `json:"content,omitempty"` // text and image blocks
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type anthropicThinkingBlock struct {
	Type      string `json:"type"` // thinking
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type anthropicRedactedThinking struct {
	Type string `json:"type"` // redacted_thinking
	Data string `json:"data"`
}

type anthropicTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type anthropicToolChoice struct {
	Type                   string `json:"type"` // auto | any | tool | none
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type anthropicThinking struct {
	Type         string `json:"type"` // enabled
	BudgetTokens int64  `json:"budget_tokens"`
}

// defaultMaxTokens is Anthropic's required max_tokens when the request names none.
const defaultMaxTokens = 4096

// minThinkingBudget is the smallest thinking budget Anthropic accepts.
const minThinkingBudget = 1024

// anthropicOwnKeys are the body fields the adapter always sets: Extra never overrides them.
var anthropicOwnKeys = map[string]bool{"model": true, "messages": true, "system": true, "stream": true}

// anthropicOverridable: the body fields an extra field may replace, because the adapter chose
// them without the turn asking (max_tokens, when the turn names none).
func anthropicOverridable(t Turn) map[string]bool {
	if p := t.Params.MaxTokens; p == nil || *p <= 0 {
		return map[string]bool{"max_tokens": true}
	}
	return nil
}

var objectSchema = json.RawMessage(`{"type":"object"}`)

// anthropicBody translates a turn to a Messages body (streaming), noting what it drops. jsonTool
// names the tool that emulates a JSON response format ("" when none): its input is the answer.
// prefill (as PrefillSent gives it) is the answer so far, sent as the final assistant message for
// the model to continue.
func anthropicBody(model string, t Turn, d *drops, prefill string) (body anthropicRequest, jsonTool string) {
	body = anthropicRequest{Model: model, Stream: true}
	body.System, body.Messages = anthropicMessages(t.Messages, d)
	if prefill != "" {
		body.Messages = appendPrefill(body.Messages, prefill)
	}
	if body.Messages == nil {
		body.Messages = []anthropicMessage{}
	}
	p := t.Params

	for _, tool := range t.Tools {
		schema := rawJSON(tool.Schema)
		if len(schema) == 0 {
			schema = objectSchema
		}
		if tool.Strict != nil {
			d.add("tools.strict")
		}
		body.Tools = append(body.Tools, anthropicTool{Name: tool.Name, Description: tool.Description, InputSchema: schema, CacheControl: rawJSON(tool.CacheControl)})
	}

	// A JSON response format: a forced tool whose input is the answer, or, beside the turn's own
	// tools, an instruction in the system prompt.
	if f := p.ResponseFormat; f != nil && (f.Type == FormatJSONObject || f.Type == FormatJSONSchema) {
		schema := rawJSON(f.Schema)
		if f.Type == FormatJSONObject || len(schema) == 0 {
			schema = objectSchema
		}
		if f.Strict != nil {
			d.add("params.responseFormat.strict")
		}
		if len(t.Tools) == 0 && prefill == "" {
			jsonTool = f.Name
			if jsonTool == "" {
				jsonTool = jsonOutputName
			}
			desc := f.Description
			if desc == "" {
				desc = "Give your answer as this tool's input: JSON matching its schema."
			}
			body.Tools = []anthropicTool{{Name: jsonTool, Description: desc, InputSchema: schema}}
			if t.ToolChoice != nil {
				d.add("toolChoice")
			}
		} else {
			// Beside tools of the turn's own, or to continue a prefill (JSON cut mid-way goes on
			// as text; a forced tool would start a new document).
			instruction := "Answer with only a JSON object, and no other text."
			if f.Type == FormatJSONSchema {
				instruction = "Answer with only JSON matching this JSON Schema, and no other text:\n" + compactJSON(schema)
			}
			body.System = append(body.System, anthropicText{Type: "text", Text: instruction})
		}
	}

	if len(body.Tools) > 0 {
		if jsonTool != "" {
			body.ToolChoice = &anthropicToolChoice{Type: "tool", Name: jsonTool}
		} else if c := t.ToolChoice; c != nil {
			switch c.Type {
			case ToolChoiceRequired:
				body.ToolChoice = &anthropicToolChoice{Type: "any"}
			case ToolChoiceNamed:
				body.ToolChoice = &anthropicToolChoice{Type: "tool", Name: c.Name}
			case ToolChoiceNone:
				body.ToolChoice = &anthropicToolChoice{Type: "none"}
			default:
				body.ToolChoice = &anthropicToolChoice{Type: "auto"}
			}
		}
		if pt := t.ParallelToolCalls; pt != nil && !*pt {
			if body.ToolChoice == nil {
				body.ToolChoice = &anthropicToolChoice{Type: "auto"}
			}
			if body.ToolChoice.Type != "none" {
				body.ToolChoice.DisableParallelToolUse = true
			}
		}
	} else {
		dropToolControls(t, d)
	}

	// Thinking: the budget, or the reasoning effort as a budget.
	var budget int64
	budgetField := "params.thinkingBudget"
	switch {
	case p.ThinkingBudget != nil && *p.ThinkingBudget > 0:
		budget = max(*p.ThinkingBudget, minThinkingBudget)
	case p.ReasoningEffort != "":
		budget, budgetField = ReasoningBudget(p.ReasoningEffort), "params.reasoningEffort"
	}
	if budget > 0 {
		// Anthropic refuses thinking with a forced tool, with a prefilled final assistant
		// message, and while a tool call of the last assistant message does not follow a
		// thinking block (it came from another model).
		forced := body.ToolChoice != nil && (body.ToolChoice.Type == "any" || body.ToolChoice.Type == "tool")
		n := len(body.Messages)
		prefilled := n > 0 && body.Messages[n-1].Role == RoleAssistant
		if forced || prefilled || toolUseWithoutThinking(body.Messages) {
			d.add(budgetField)
			budget = 0
		}
	}

	body.MaxTokens = defaultMaxTokens
	if p.MaxTokens != nil && *p.MaxTokens > 0 {
		body.MaxTokens = *p.MaxTokens
	}
	if budget > 0 {
		body.Thinking = &anthropicThinking{Type: "enabled", BudgetTokens: budget}
		if body.MaxTokens <= budget {
			body.MaxTokens += budget // the asked (or default) room for the answer, on top of the thinking
		}
		// Anthropic refuses sampling controls with thinking.
		if p.Temperature != nil {
			d.add("params.temperature")
		}
		if p.TopP != nil {
			d.add("params.topP")
		}
	} else {
		if p.Temperature != nil {
			temp := math.Min(math.Max(*p.Temperature, 0), 1) // Anthropic's range is 0..1
			body.Temperature = &temp
		}
		body.TopP = p.TopP
	}
	for _, s := range p.Stop {
		if strings.TrimSpace(s) == "" {
			d.add("params.stop") // Anthropic refuses a stop sequence of whitespace only
			continue
		}
		body.StopSequences = append(body.StopSequences, s)
	}
	dropSeedAndPenalties(p, d)
	return body, jsonTool
}

// anthropicMessages translates the conversation: system and developer text to system blocks,
// the rest to alternating user and assistant messages. A tool result goes into the user message
// right after the assistant message that made the call, before anything else in it.
func anthropicMessages(msgs []Message, d *drops) (system []anthropicText, out []anthropicMessage) {
	owner := map[string]int{} // tool_use id → index in out of its assistant message
	add := func(role string, block any) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			insertBlock(&out[n-1], block)
			return
		}
		out = append(out, anthropicMessage{Role: role, Content: []any{block}})
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleSystem, RoleDeveloper:
			for _, p := range m.Content {
				if p.Type != PartText {
					d.add("messages.content." + p.Type + inRole(m.Role))
					continue
				}
				if strings.TrimSpace(p.Text) != "" {
					system = append(system, anthropicText{Type: "text", Text: p.Text, CacheControl: rawJSON(p.CacheControl)})
				}
			}
		case RoleAssistant:
			for _, p := range m.Content {
				switch p.Type {
				case PartText:
					if strings.TrimSpace(p.Text) != "" {
						add(RoleAssistant, anthropicText{Type: "text", Text: p.Text, CacheControl: rawJSON(p.CacheControl)})
					}
				case PartToolCall:
					id := anthropicToolID(p.CallID)
					add(RoleAssistant, anthropicToolUse{Type: "tool_use", ID: id, Name: p.Name, Input: toolInput(p.Arguments), CacheControl: rawJSON(p.CacheControl)})
					owner[id] = len(out) - 1
				case PartReasoning:
					if len(p.CacheControl) > 0 {
						d.add("messages.content.cacheControl") // thinking blocks take no cache mark
					}
					switch {
					case p.Signature != "":
						add(RoleAssistant, anthropicThinkingBlock{Type: "thinking", Thinking: p.Text, Signature: p.Signature})
					case p.Redacted != "":
						add(RoleAssistant, anthropicRedactedThinking{Type: "redacted_thinking", Data: p.Redacted})
					default:
						d.add("messages.content.reasoning (without a signature)")
					}
				default:
					d.add("messages.content." + p.Type + inRole(RoleAssistant))
				}
			}
		default: // user, tool
			for _, p := range m.Content {
				switch p.Type {
				case PartToolResult:
					id := anthropicToolID(p.CallID)
					block := anthropicToolResult{Type: "tool_result", ToolUseID: id, IsError: p.IsError, CacheControl: rawJSON(p.CacheControl)}
					for _, r := range p.Result {
						switch r.Type {
						case PartText:
							if strings.TrimSpace(r.Text) != "" {
								block.Content = append(block.Content, anthropicText{Type: "text", Text: r.Text, CacheControl: rawJSON(r.CacheControl)})
							}
						case PartImage:
							block.Content = append(block.Content, anthropicImageBlock(r, d))
						default:
							d.add("messages.content.result." + r.Type)
						}
					}
					a, ok := owner[id]
					switch {
					case ok && a+1 < len(out):
						insertBlock(&out[a+1], block) // out alternates roles: out[a+1] is a user message
					case ok:
						out = append(out, anthropicMessage{Role: RoleUser, Content: []any{block}})
					default:
						add(RoleUser, block)
					}
				case PartText, PartImage:
					switch {
					case m.Role == RoleTool:
						d.add("messages.content." + p.Type + inRole(RoleTool))
					case p.Type == PartImage:
						add(RoleUser, anthropicImageBlock(p, d))
					case strings.TrimSpace(p.Text) != "":
						add(RoleUser, anthropicText{Type: "text", Text: p.Text, CacheControl: rawJSON(p.CacheControl)})
					}
				default:
					d.add("messages.content." + p.Type + inRole(m.Role))
				}
			}
		}
	}
	// A final assistant message (a prefill) may not end with whitespace.
	if n := len(out); n > 0 && out[n-1].Role == RoleAssistant {
		last := &out[n-1]
		if t, ok := last.Content[len(last.Content)-1].(anthropicText); ok {
			t.Text = PrefillSent(t.Text)
			last.Content[len(last.Content)-1] = t
		}
	}
	return system, out
}

// appendPrefill adds the answer so far as the final assistant message: onto the text that ends a
// final assistant message of the turn (its own prefill, which the answer continues), else as a
// new block or message.
func appendPrefill(msgs []anthropicMessage, prefill string) []anthropicMessage {
	n := len(msgs)
	if n == 0 || msgs[n-1].Role != RoleAssistant {
		return append(msgs, anthropicMessage{Role: RoleAssistant, Content: []any{anthropicText{Type: "text", Text: prefill}}})
	}
	last := &msgs[n-1]
	if t, ok := last.Content[len(last.Content)-1].(anthropicText); ok {
		t.Text += prefill
		last.Content[len(last.Content)-1] = t
		return msgs
	}
	last.Content = append(last.Content, anthropicText{Type: "text", Text: prefill})
	return msgs
}

// insertBlock adds a block to a message, keeping the blocks Anthropic wants first in front: tool
// results in a user message, thinking in an assistant message.
func insertBlock(m *anthropicMessage, block any) {
	if !leads(block) {
		m.Content = append(m.Content, block)
		return
	}
	i := 0
	for i < len(m.Content) && leads(m.Content[i]) {
		i++
	}
	m.Content = append(m.Content, nil)
	copy(m.Content[i+1:], m.Content[i:])
	m.Content[i] = block
}

func leads(block any) bool {
	switch block.(type) {
	case anthropicToolResult, anthropicThinkingBlock, anthropicRedactedThinking:
		return true
	}
	return false
}

// toolUseWithoutThinking reports a last assistant message that calls a tool without starting
// with a thinking block: Anthropic refuses thinking for such a conversation.
func toolUseWithoutThinking(msgs []anthropicMessage) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != RoleAssistant {
			continue
		}
		calls := false
		for _, b := range msgs[i].Content {
			_, isCall := b.(anthropicToolUse)
			calls = calls || isCall
		}
		return calls && !leads(msgs[i].Content[0])
	}
	return false
}

func anthropicImageBlock(p Part, d *drops) anthropicImage {
	if p.Detail != "" {
		d.add("messages.content.detail")
	}
	block := anthropicImage{Type: "image", CacheControl: rawJSON(p.CacheControl)}
	switch {
	case len(p.Data) > 0:
		mt := p.MediaType
		if mt == "" {
			mt = SniffImage(p.Data)
		}
		block.Source = anthropicImageSource{Type: "base64", MediaType: mt, Data: p.Data}
	case strings.HasPrefix(p.URL, "data:"):
		if mt, data, err := ParseDataURL(p.URL); err == nil {
			block.Source = anthropicImageSource{Type: "base64", MediaType: mt, Data: data}
			break
		}
		block.Source = anthropicImageSource{Type: "url", URL: p.URL} // Anthropic names what is wrong
	default:
		block.Source = anthropicImageSource{Type: "url", URL: p.URL}
	}
	return block
}

// anthropicToolID makes a tool-call id Anthropic accepts (^[a-zA-Z0-9_-]+$): every other
// character becomes '_'. The same function serves tool_use and tool_result, so they still match.
func anthropicToolID(id string) string {
	if id == "" {
		return "_"
	}
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// toolInput is a tool call's arguments as a tool_use input: a JSON object ({} when there are
// none, or when they are not an object: Anthropic takes nothing else).
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// anthropicEvent is the part of a Messages stream event an answer needs.
type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		Input     json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage anthropicUsage `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
}

// anthropicCounts are the counts so far; message_delta's are cumulative and replace them.
type anthropicCounts struct{ input, output, cacheRead, cacheCreation int64 }

func (c *anthropicCounts) take(u anthropicUsage) {
	set := func(dst *int64, src *int64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&c.input, u.InputTokens)
	set(&c.output, u.OutputTokens)
	set(&c.cacheRead, u.CacheReadInputTokens)
	set(&c.cacheCreation, u.CacheCreationInputTokens)
}

// anthropicBlock assembles one streamed content block.
type anthropicBlock struct {
	kind      string // text | tool_use | thinking | redacted_thinking (others are ignored)
	id, name  string
	text      strings.Builder // text, thinking, or a tool_use's input JSON
	signature string
	data      string
	input     json.RawMessage // a tool_use's input given whole at the block's start
	done      bool            // a tool_use handed out (its content_block_stop, or message_stop)
}

// args are a tool_use's arguments: the streamed input JSON, else the input given at the start,
// else {}.
func (b *anthropicBlock) args() string {
	args := b.text.String()
	if strings.TrimSpace(args) == "" && len(b.input) > 0 {
		args = compactJSON(b.input)
	}
	return orEmptyObject(args)
}

// pingDecoder passes Anthropic's ping events to onPing (the SDK's stream skips them).
type pingDecoder struct {
	ssestream.Decoder
	onPing func()
}

func (p pingDecoder) Next() bool {
	ok := p.Decoder.Next()
	if ok && p.Event().Type == "ping" {
		p.onPing()
	}
	return ok
}

// anthropicEmitter hands out a Messages answer as it streams. Text and thinking go out as they
// come; a tool_use goes out whole at its content_block_stop. With a JSON response format emulated
// by a tool, the first call of that tool is the answer's text (out at its stop) and any other
// text waits for the message's end, to go out only if that tool was never called: what goes out
// is always what anthropicAnswer makes of the blocks.
type anthropicEmitter struct {
	em       *emitter
	jsonTool string
	jsonSent bool
}

func (e *anthropicEmitter) text(s string) {
	if e.jsonTool == "" {
		e.em.emitText(s)
	}
}

func (e *anthropicEmitter) stop(b *anthropicBlock) {
	if b == nil || b.kind != "tool_use" || b.done {
		return
	}
	b.done = true
	if e.jsonTool != "" && b.name == e.jsonTool && !e.jsonSent {
		e.jsonSent = true
		e.em.emitText(b.args())
		return
	}
	e.em.emitCall(ToolCall{ID: b.id, Name: b.name, Arguments: b.args()})
}

// end hands out what is left at message_stop: the tool calls never stopped, and the text held
// back for an emulated JSON format that did not come.
func (e *anthropicEmitter) end(blocks []*anthropicBlock) {
	for _, b := range blocks {
		e.stop(b)
	}
	if e.jsonTool != "" && !e.jsonSent {
		var text strings.Builder
		for _, b := range blocks {
			if b.kind == "text" {
				text.WriteString(b.text.String())
			}
		}
		e.em.emitText(text.String())
	}
}

// completeAnthropic streams a Messages response. The answer is final only at message_stop.
func completeAnthropic(ctx context.Context, req Request, hc *http.Client, secret string, clk *clock, em *emitter) (Response, error) {
	opts := []option.RequestOption{
		option.WithBaseURL(req.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // the workflow owns every retry
	}
	if req.Credential.Type == "oauth" || req.Credential.Type == "token" {
		opts = append(opts, option.WithAuthToken(secret))
	} else {
		opts = append(opts, option.WithAPIKey(secret))
	}
	return streamAnthropic(ctx, req, anthropic.NewClient(opts...), "v1/messages", nil, clk, em)
}

// streamAnthropic posts the turn as a Messages request to path through client and assembles the
// stream: completeAnthropic's on Anthropic's API, and Claude on Vertex AI's (vertex.go), whose path
// names the model and whose wire (bodyOpts: the fields its body lacks or adds) differs.
func streamAnthropic(ctx context.Context, req Request, client anthropic.Client, path string, bodyOpts []option.RequestOption, clk *clock, em *emitter) (Response, error) {
	body, jsonTool := anthropicBody(req.Model, req.Turn, nil, PrefillSent(req.Prefill))
	if req.Continuation == ContinueInstruction && len(body.Messages) > 0 && PrefillSent(req.Prefill) != "" {
		// The answer so far stays the last assistant message; a user message asks to go on.
		body.Messages = append(body.Messages, anthropicMessage{Role: RoleUser, Content: []any{anthropicText{Type: "text", Text: continueInstruction}}})
	}
	var callOpts []option.RequestOption
	if req.Turn.Wire == WireAnthropic {
		for _, kv := range extraFields(req.Turn.Extra, anthropicOwnKeys, body, anthropicOverridable(req.Turn)) {
			callOpts = append(callOpts, option.WithJSONSet(kv.path, kv.value))
		}
	}
	callOpts = append(callOpts, bodyOpts...)

	// As for OpenAI: the SDK sends the request and parses SSE; events decode into a lean struct.
	var raw *http.Response
	err := client.Post(ctx, path, body, &raw, callOpts...)
	var resp Response
	dec := ssestream.NewDecoder(raw)
	if dec != nil {
		// A ping is a keep-alive: it re-arms the idle timer (once the stream has started) but is
		// not a chunk.
		dec = pingDecoder{Decoder: dec, onPing: clk.keepAlive}
	}
	stream := ssestream.NewStream[anthropicEvent](dec, err)
	defer stream.Close()
	out := &anthropicEmitter{em: em, jsonTool: jsonTool}
	var blocks []*anthropicBlock
	byIndex := map[int]*anthropicBlock{}
	block := func(index int, kind string) *anthropicBlock {
		b := byIndex[index]
		if b == nil { // a delta without its block's start
			b = &anthropicBlock{kind: kind}
			blocks = append(blocks, b)
			byIndex[index] = b
		}
		return b
	}
	var counts anthropicCounts
	var stopReason string
	var late error
	stopped := false
	for late == nil && stream.Next() {
		resp.Chunks++
		clk.chunk()
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			counts.take(ev.Message.Usage)
		case "content_block_start":
			cb := ev.ContentBlock
			b := &anthropicBlock{kind: cb.Type, id: cb.ID, name: cb.Name, signature: cb.Signature, data: cb.Data, input: cb.Input}
			b.text.WriteString(cb.Text)
			b.text.WriteString(cb.Thinking)
			blocks = append(blocks, b)
			byIndex[ev.Index] = b
			switch b.kind {
			case "text":
				out.text(cb.Text)
			case "thinking":
				em.emitReasoning(cb.Thinking)
			}
		case "content_block_delta":
			var b *anthropicBlock
			var piece string
			switch ev.Delta.Type {
			case "text_delta":
				b, piece = block(ev.Index, "text"), ev.Delta.Text
			case "input_json_delta":
				b, piece = block(ev.Index, "tool_use"), ev.Delta.PartialJSON
			case "thinking_delta":
				b, piece = block(ev.Index, "thinking"), ev.Delta.Thinking
			case "signature_delta":
				b := block(ev.Index, "thinking")
				b.signature += ev.Delta.Signature
				continue
			default:
				continue
			}
			if b.done {
				if strings.TrimSpace(piece) != "" {
					late = lateArguments()
				}
				continue
			}
			b.text.WriteString(piece)
			switch b.kind {
			case "text":
				out.text(piece)
			case "thinking":
				em.emitReasoning(piece)
			case "tool_use":
				em.progress(piece)
			}
		case "content_block_stop":
			if b := byIndex[ev.Index]; b != nil && (b.kind == "thinking" || b.kind == "redacted_thinking") {
				// Whole, with its signature: a caller of the Anthropic wire can send it back.
				em.emitReasoningPart(Part{Type: PartReasoning, Text: b.text.String(), Signature: b.signature, Redacted: b.data})
			}
			out.stop(byIndex[ev.Index])
		case "message_delta":
			if ev.Delta.StopReason != "" {
				stopReason = ev.Delta.StopReason
			}
			counts.take(ev.Usage)
		case "message_stop":
			stopped = true
			out.end(blocks)
		}
	}
	resp.Answer = anthropicAnswer(blocks, stopReason, counts, jsonTool)
	return resp, streamEnd(ctx, late, stream.Err(), resp.Chunks, stopped, "no message_stop")
}

// anthropicAnswer assembles the streamed blocks into an answer.
func anthropicAnswer(blocks []*anthropicBlock, stopReason string, c anthropicCounts, jsonTool string) Answer {
	a := Answer{
		FinishReason: anthropicFinish(stopReason),
		// OpenAI's meaning: input counts the cached input too.
		Usage: Usage{Input: c.input + c.cacheRead + c.cacheCreation, Output: c.output, CachedInput: c.cacheRead, CacheWrite: c.cacheCreation},
	}
	var text strings.Builder
	jsonAnswer, haveJSON := "", false
	for _, b := range blocks {
		switch b.kind {
		case "text":
			text.WriteString(b.text.String())
		case "tool_use":
			args := b.args()
			if jsonTool != "" && b.name == jsonTool && !haveJSON {
				jsonAnswer, haveJSON = args, true
				continue
			}
			a.ToolCalls = append(a.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: args})
		case "thinking":
			a.Reasoning = append(a.Reasoning, Part{Type: PartReasoning, Text: b.text.String(), Signature: b.signature})
		case "redacted_thinking":
			a.Reasoning = append(a.Reasoning, Part{Type: PartReasoning, Redacted: b.data})
		}
	}
	a.Text = text.String()
	if haveJSON {
		// The emulated JSON response format: the forced tool's input is the answer.
		a.Text = jsonAnswer
		if a.FinishReason == FinishToolCalls && len(a.ToolCalls) == 0 {
			a.FinishReason = FinishStop
		}
	}
	return a
}

// anthropicFinish is a stop reason in OpenAI's words.
func anthropicFinish(reason string) string {
	switch reason {
	case "end_turn", "stop_sequence", "pause_turn", "":
		return FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return FinishLength
	case "tool_use":
		return FinishToolCalls
	case "refusal":
		return FinishContentFilter
	}
	return reason
}
