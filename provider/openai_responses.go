package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// OpenAI's Responses API (POST /responses), for models that speak only it. As for Chat
// Completions, the body is built from lean structs of our own (raw schemas; the SDK's parameter
// unions would re-encode them) and each event is decoded into the few fields an answer needs (the
// SDK's event union costs several times the 5 µs per-chunk budget of bench_test.go); the SDK
// sends the request to the path its Responses service uses and parses the SSE framing.
//
// The request is stateless (store: false, never previous_response_id): baton sends the whole
// conversation each time, and the next turn may go to another profile's organisation, where a
// stored item would not be found. A reasoning item comes back with its encrypted content (asked
// for whenever the turn asks reasoning or carries reasoning items) and returns whole to a later
// Responses call; the other wires drop it.
type responsesRequest struct {
	Model             string               `json:"model"`
	Input             []any                `json:"input"` // the item types below
	Stream            bool                 `json:"stream"`
	Store             bool                 `json:"store"`
	Include           []string             `json:"include,omitempty"`
	Tools             []responsesTool      `json:"tools,omitempty"`
	ToolChoice        any                  `json:"tool_choice,omitempty"` // a string or a named choice
	ParallelToolCalls *bool                `json:"parallel_tool_calls,omitempty"`
	Temperature       *float64             `json:"temperature,omitempty"`
	TopP              *float64             `json:"top_p,omitempty"`
	MaxOutputTokens   *int64               `json:"max_output_tokens,omitempty"`
	Text              *responsesTextConfig `json:"text,omitempty"`
	Reasoning         *responsesReasoning  `json:"reasoning,omitempty"`
}

type responsesMessage struct {
	Type    string `json:"type"` // message
	Role    string `json:"role"`
	Content []any  `json:"content"` // responsesText, responsesImage
}

type responsesText struct {
	Type string `json:"type"` // input_text | output_text
	Text string `json:"text"`
}

type responsesImage struct {
	Type     string `json:"type"`      // input_image
	ImageURL string `json:"image_url"` // a URL or a data: URL
	Detail   string `json:"detail"`    // required by the API: auto unless the part says
}

type responsesFunctionCall struct {
	Type      string `json:"type"` // function_call
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type responsesFunctionOutput struct {
	Type   string `json:"type"` // function_call_output
	CallID string `json:"call_id"`
	Output any    `json:"output"` // a string, or text and image parts
}

type responsesReasoningItem struct {
	Type             string             `json:"type"` // reasoning
	ID               string             `json:"id"`
	Summary          []responsesSummary `json:"summary"`
	EncryptedContent string             `json:"encrypted_content,omitempty"`
}

type responsesSummary struct {
	Type string `json:"type"` // summary_text
	Text string `json:"text"`
}

type responsesTool struct {
	Type        string          `json:"type"` // function
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict is always sent: the Responses API defaults it to true, which refuses most schemas
	// that Chat Completions takes (it defaults to false there).
	Strict bool `json:"strict"`
}

type responsesNamedChoice struct {
	Type string `json:"type"` // function
	Name string `json:"name"`
}

type responsesTextConfig struct {
	Format responsesFormat `json:"format"`
}

type responsesFormat struct {
	Type string `json:"type"` // text | json_object | json_schema
	// A JSON schema's fields, beside the type here (Chat Completions nests them under
	// json_schema); nil for text and json_object.
	*openAIJSONSchema
}

type responsesReasoning struct {
	Effort string `json:"effort"`
}

// encryptedReasoning asks for reasoning items' encrypted content, without which a stateless call
// cannot take them back. Only when the turn is about reasoning: a model that does not reason
// refuses the include.
const encryptedReasoning = "reasoning.encrypted_content"

// responsesOwnKeys are the body fields the adapter always sets: Extra never overrides them.
var responsesOwnKeys = map[string]bool{"model": true, "input": true, "stream": true, "store": true, "previous_response_id": true}

// responsesOverridable are the fields a Responses caller's Extra replaces: its tools and tool
// choice as it gave them, built-in tools included (the door puts them there only when every
// candidate speaks this API).
var responsesOverridable = map[string]bool{"tools": true, "tool_choice": true}

// responsesBody translates a turn to a Responses body (streaming), noting what it drops.
func responsesBody(model string, t Turn, d *drops) responsesRequest {
	input, carriesReasoning := responsesInput(t.Messages, d)
	body := responsesRequest{Model: model, Input: input, Stream: true}
	if body.Input == nil {
		body.Input = []any{}
	}
	if carriesReasoning || t.AsksReasoning() {
		body.Include = []string{encryptedReasoning}
	}
	for _, tool := range t.Tools {
		if len(tool.CacheControl) > 0 {
			d.add("tools.cacheControl")
		}
		schema := rawJSON(tool.Schema)
		if len(schema) == 0 {
			schema = objectSchema
		}
		body.Tools = append(body.Tools, responsesTool{Type: "function", Name: tool.Name, Description: tool.Description,
			Parameters: schema, Strict: tool.Strict != nil && *tool.Strict})
	}
	body.ToolChoice, body.ParallelToolCalls = openAIToolControls(t, len(body.Tools) > 0, d, func(name string) any {
		return responsesNamedChoice{Type: "function", Name: name}
	})

	p := t.Params
	body.Temperature, body.TopP, body.MaxOutputTokens = p.Temperature, p.TopP, p.MaxTokens
	// The Responses API has no stop sequences, seed or penalties.
	if len(p.Stop) > 0 {
		d.add("params.stop")
	}
	dropSeedAndPenalties(p, d)
	if f := p.ResponseFormat; f != nil {
		body.Text = &responsesTextConfig{Format: responsesFormat{Type: f.Type, openAIJSONSchema: openAISchema(f)}}
	}
	if effort := openAIEffort(p); effort != "" {
		body.Reasoning = &responsesReasoning{Effort: effort}
	}
	return body
}

// responsesInput translates the conversation to input items, in order: messages, function calls,
// their outputs and reasoning items. carriesReasoning: a reasoning item goes back.
func responsesInput(msgs []Message, d *drops) (items []any, carriesReasoning bool) {
	for _, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			// Text parts in a row make one message item; a reasoning item or a call ends it, so
			// that each goes back where the model put it.
			var texts []any
			flush := func() {
				if len(texts) > 0 {
					items = append(items, responsesMessage{Type: "message", Role: RoleAssistant, Content: texts})
					texts = nil
				}
			}
			for _, p := range m.Content {
				if len(p.CacheControl) > 0 {
					d.add("messages.content.cacheControl")
				}
				switch p.Type {
				case PartText:
					texts = append(texts, responsesText{Type: "output_text", Text: p.Text})
				case PartToolCall:
					flush()
					items = append(items, responsesFunctionCall{Type: "function_call", CallID: openAICallID(p.CallID), Name: p.Name,
						Arguments: orEmptyObject(p.Arguments)})
				case PartReasoning:
					switch {
					case p.ReasoningID == "":
						d.add("messages.content.reasoning (not a Responses reasoning item)")
					case p.Encrypted == "":
						// Nothing is stored (store: false): an id alone would name no item.
						d.add("messages.content.reasoning (without encrypted content)")
					default:
						flush()
						summary := []responsesSummary{}
						if p.Text != "" {
							summary = append(summary, responsesSummary{Type: "summary_text", Text: p.Text})
						}
						items = append(items, responsesReasoningItem{Type: "reasoning", ID: p.ReasoningID, Summary: summary, EncryptedContent: p.Encrypted})
						carriesReasoning = true
					}
				default:
					d.add("messages.content." + p.Type + inRole(RoleAssistant))
				}
			}
			flush()
		case RoleSystem, RoleDeveloper:
			if c := responsesContent(m.Content, m.Role, d); len(c) > 0 {
				items = append(items, responsesMessage{Type: "message", Role: m.Role, Content: c})
			}
		default: // user, tool: tool results become function call outputs, ahead of the rest
			var rest []Part
			for _, p := range m.Content {
				switch {
				case p.Type == PartToolResult:
					items = append(items, responsesToolOutput(p, d))
				case m.Role == RoleTool:
					d.add("messages.content." + p.Type + inRole(RoleTool))
				default:
					rest = append(rest, p)
				}
			}
			if c := responsesContent(rest, RoleUser, d); len(c) > 0 {
				items = append(items, responsesMessage{Type: "message", Role: RoleUser, Content: c})
			}
		}
	}
	return items, carriesReasoning
}

// responsesContent is a user, system or developer message's content: text, and images in a user
// message only.
func responsesContent(parts []Part, role string, d *drops) []any {
	return responsesInputParts(parts, role == RoleUser, "messages.content.", inRole(role), d)
}

// responsesInputParts are parts as input content, a message's or a tool result's alike: text, and
// images where images; any other part goes, noted as dropPrefix + its type + dropSuffix.
func responsesInputParts(parts []Part, images bool, dropPrefix, dropSuffix string, d *drops) []any {
	var out []any
	for _, p := range parts {
		if len(p.CacheControl) > 0 {
			d.add("messages.content.cacheControl")
		}
		switch {
		case p.Type == PartText:
			out = append(out, responsesText{Type: "input_text", Text: p.Text})
		case p.Type == PartImage && images:
			out = append(out, responsesImagePart(p))
		default:
			d.add(dropPrefix + p.Type + dropSuffix)
		}
	}
	return out
}

// responsesToolOutput is a tool result as a function call output: its text, or, when it holds
// images, its text and images as input parts (which Responses takes there, unlike Chat
// Completions' tool messages).
func responsesToolOutput(p Part, d *drops) responsesFunctionOutput {
	if p.IsError {
		d.add("messages.content.isError")
	}
	if len(p.CacheControl) > 0 {
		d.add("messages.content.cacheControl")
	}
	parts := responsesInputParts(p.Result, true, "messages.content.result.", "", d)
	out := responsesFunctionOutput{Type: "function_call_output", CallID: openAICallID(p.CallID), Output: PartsText(p.Result)}
	if slices.ContainsFunc(p.Result, func(r Part) bool { return r.Type == PartImage }) {
		out.Output = parts
	}
	return out
}

func responsesImagePart(p Part) responsesImage {
	detail := p.Detail
	if detail == "" {
		detail = "auto"
	}
	return responsesImage{Type: "input_image", ImageURL: imageURL(p), Detail: detail}
}

// responsesEvent is the part of a Responses stream event an answer needs.
type responsesEvent struct {
	Type         string               `json:"type"`
	ItemID       string               `json:"item_id"`
	SummaryIndex int                  `json:"summary_index"`
	ContentIndex int                  `json:"content_index"`
	Delta        string               `json:"delta"`
	Arguments    *string              `json:"arguments"` // response.function_call_arguments.done
	Item         *responsesOutputItem `json:"item"`
	Response     *responsesResponse   `json:"response"`
}

// responsesOutputItem is an output item: a message, a function call or a reasoning item.
type responsesOutputItem struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	Content []struct {
		Type    string `json:"type"` // a message's output_text | refusal; a reasoning item's reasoning_text
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

// text is a message item's text (a refusal included, as Chat Completions' refusal is).
func (it responsesOutputItem) text() string {
	var b strings.Builder
	for _, c := range it.Content {
		b.WriteString(c.Text)
		b.WriteString(c.Refusal)
	}
	return b.String()
}

// reasoning is a reasoning item's summary, else its reasoning text, its parts a paragraph apart.
func (it responsesOutputItem) reasoning() string {
	var parts []string
	for _, s := range it.Summary {
		parts = append(parts, s.Text)
	}
	if len(parts) == 0 {
		for _, c := range it.Content {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// responsesResponse is the response object of the terminal events.
type responsesResponse struct {
	Status            string                `json:"status"`
	Output            []responsesOutputItem `json:"output"`
	Error             json.RawMessage       `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *struct {
		InputTokens        int64 `json:"input_tokens"`
		OutputTokens       int64 `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// eventError is an error event (or a failed response's error object) as it came: toError reads it
// as it reads every in-band error, through Parse.
type eventError struct{ raw []byte }

func (e eventError) Error() string   { return "error event: " + string(e.raw) }
func (e eventError) RawJSON() string { return string(e.raw) }

// responsesThought assembles one reasoning item's streamed text.
type responsesThought struct {
	text  strings.Builder
	index int // of the summary (or content) part the text is in
	done  bool
}

// responsesAssembly builds the answer from the events, handing it out as it goes: text and
// reasoning as they come, each call once whole (its arguments done, or its item done), each
// reasoning item at its end.
type responsesAssembly struct {
	em       *emitter
	answer   *Answer
	calls    map[string]*toolCallBuilder  // function call items, by item id
	order    []*toolCallBuilder           // in the order they began
	thoughts map[string]*responsesThought // by item id
	texts    map[string]int               // bytes of text handed out, by message item id
	late     error
}

func (a *responsesAssembly) call(id string) *toolCallBuilder {
	c := a.calls[id]
	if c == nil {
		c = &toolCallBuilder{}
		a.calls[id] = c
		a.order = append(a.order, c)
	}
	return c
}

func (a *responsesAssembly) thought(id string) *responsesThought {
	t := a.thoughts[id]
	if t == nil {
		t = &responsesThought{}
		a.thoughts[id] = t
	}
	return t
}

func (a *responsesAssembly) text(id, s string) {
	a.texts[id] += len(s)
	a.em.emitText(s)
}

// reason adds a piece of a reasoning item's text; a new summary part starts a new paragraph.
func (a *responsesAssembly) reason(id string, index int, s string) {
	t := a.thought(id)
	if t.done || s == "" {
		return
	}
	if t.text.Len() > 0 && index != t.index {
		t.text.WriteString("\n\n")
		a.em.emitReasoning("\n\n")
	}
	t.index = index
	t.text.WriteString(s)
	a.em.emitReasoning(s)
}

func (a *responsesAssembly) arguments(id, s string) {
	c := a.call(id)
	if c.sent != nil {
		if strings.TrimSpace(s) != "" {
			a.late = lateArguments()
		}
		return
	}
	c.args.WriteString(s)
	a.em.progress(s)
}

// send hands a call out, once.
func (a *responsesAssembly) send(c *toolCallBuilder) {
	if c.sent == nil {
		a.answer.ToolCalls = append(a.answer.ToolCalls, c.send(a.em))
	}
}

// finish takes a whole item (output_item.done, or the terminal response's output): what of it
// did not stream goes out now. Idempotent.
func (a *responsesAssembly) finish(it responsesOutputItem) {
	switch it.Type {
	case "message":
		if full := it.text(); len(full) > a.texts[it.ID] {
			a.text(it.ID, full[a.texts[it.ID]:])
		}
	case "function_call":
		id := it.ID
		if id == "" {
			id = it.CallID
		}
		c := a.call(id)
		if c.sent != nil {
			return
		}
		if c.id == "" {
			c.id = it.CallID
		}
		if c.name == "" {
			c.name = it.Name
		}
		if it.Arguments != "" {
			c.args.Reset()
			c.args.WriteString(it.Arguments)
		}
		a.send(c)
	case "reasoning":
		t := a.thought(it.ID)
		if t.done {
			return
		}
		if t.text.Len() == 0 {
			a.reason(it.ID, 0, it.reasoning())
		}
		t.done = true
		if t.text.Len() == 0 && it.EncryptedContent == "" {
			return // nothing to show, nothing to send back
		}
		p := Part{Type: PartReasoning, Text: t.text.String(), ReasoningID: it.ID, Encrypted: it.EncryptedContent}
		a.answer.Reasoning = append(a.answer.Reasoning, p)
		a.em.emitReasoningPart(p)
	}
}

// end takes the terminal response: the items not yet finished, the calls still open, the usage
// and the finish reason.
func (a *responsesAssembly) end(kind string, r *responsesResponse) {
	if r == nil {
		r = &responsesResponse{}
	}
	for _, it := range r.Output {
		a.finish(it)
	}
	for _, c := range a.order {
		if c.sent == nil && (c.id != "" || c.name != "") {
			a.send(c) // cut short (an incomplete response): handed out as it stands, as Chat Completions does
		}
	}
	if u := r.Usage; u != nil {
		a.answer.Usage = Usage{Input: u.InputTokens, Output: u.OutputTokens, CachedInput: u.InputTokensDetails.CachedTokens,
			Reasoning: u.OutputTokensDetails.ReasoningTokens}
	}
	reason := ""
	if r.IncompleteDetails != nil {
		reason = r.IncompleteDetails.Reason
	}
	a.answer.FinishReason = responsesFinish(kind == "response.incomplete" || r.Status == "incomplete", reason, len(a.answer.ToolCalls) > 0)
}

// responsesFinish is a response's end in OpenAI's finish reasons: an incomplete response stopped
// at a limit (length) or a filter (content_filter).
func responsesFinish(incomplete bool, reason string, toolCalls bool) string {
	switch {
	case incomplete && reason == "content_filter":
		return FinishContentFilter
	case incomplete:
		return FinishLength
	case toolCalls:
		return FinishToolCalls
	}
	return FinishStop
}

// completeResponses streams a response. The answer is final only at response.completed or
// response.incomplete; response.failed and an error event are in-band errors.
func completeResponses(ctx context.Context, req Request, hc *http.Client, secret string, clk *clock, em *emitter) (Response, error) {
	body := responsesBody(req.Model, req.Turn, nil)
	if prefill := PrefillSent(req.Prefill); prefill != "" {
		// No prefix flag on this wire: the answer so far as the final assistant message, or
		// followed by a request to go on from it. A response format would make the continuation a
		// whole document of its own: it goes.
		body.Input = append(body.Input, responsesMessage{Type: "message", Role: RoleAssistant,
			Content: []any{responsesText{Type: "output_text", Text: prefill}}})
		if req.Continuation == ContinueInstruction {
			body.Input = append(body.Input, responsesMessage{Type: "message", Role: RoleUser,
				Content: []any{responsesText{Type: "input_text", Text: continueInstruction}}})
		}
		body.Text = nil
	}

	raw, err := openAIPost(ctx, req, hc, secret, "responses", body, WireResponses, responsesOwnKeys, responsesOverridable)
	dec := ssestream.NewDecoder(raw)
	stream := ssestream.NewStream[responsesEvent](dec, err)
	defer stream.Close()
	var resp Response
	a := &responsesAssembly{em: em, answer: &resp.Answer, calls: map[string]*toolCallBuilder{},
		thoughts: map[string]*responsesThought{}, texts: map[string]int{}}
	var failed error
	ended := false
	for a.late == nil && failed == nil && !ended && stream.Next() {
		ev := stream.Current()
		resp.Chunks++
		clk.chunk()
		switch ev.Type {
		case "response.output_item.added":
			if it := ev.Item; it != nil && it.Type == "function_call" {
				c := a.call(it.ID)
				c.id, c.name = it.CallID, it.Name
				a.arguments(it.ID, it.Arguments)
			}
		case "response.output_text.delta", "response.refusal.delta":
			a.text(ev.ItemID, ev.Delta)
		case "response.reasoning_summary_text.delta":
			a.reason(ev.ItemID, ev.SummaryIndex, ev.Delta)
		case "response.reasoning_text.delta": // raw reasoning, from the open-weight models' servers
			a.reason(ev.ItemID, ev.ContentIndex, ev.Delta)
		case "response.function_call_arguments.delta":
			a.arguments(ev.ItemID, ev.Delta)
		case "response.function_call_arguments.done":
			c := a.call(ev.ItemID)
			if c.sent == nil && c.id != "" && c.name != "" {
				if ev.Arguments != nil {
					c.args.Reset()
					c.args.WriteString(*ev.Arguments)
				}
				a.send(c)
			}
		case "response.output_item.done":
			if ev.Item != nil {
				a.finish(*ev.Item)
			}
		case "response.completed", "response.incomplete":
			a.end(ev.Type, ev.Response)
			ended = true
		case "response.failed":
			failed = failedResponse(ev.Response)
		case "error":
			failed = eventError{raw: append([]byte(nil), dec.Event().Data...)}
		}
	}
	resp.Answer.Text = em.text.String()
	return resp, streamEnd(ctx, cmp.Or(a.late, failed), stream.Err(), resp.Chunks, ended, "no response.completed")
}

// failedResponse is response.failed's error object, as an in-band error.
func failedResponse(r *responsesResponse) error {
	if r == nil || len(r.Error) == 0 || string(r.Error) == "null" {
		return &Error{Stream: FaultInBandError, Message: "the response failed without an error object", Partial: true}
	}
	return eventError{raw: r.Error}
}
