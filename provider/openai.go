package provider

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// The Chat Completions request body, built from a turn. Lean structs of our own, so the JSON is
// exactly what the wire wants (raw schemas, either max-tokens spelling); the SDK sends it.
type openAIRequest struct {
	Model               string                `json:"model"`
	Messages            []openAIMessage       `json:"messages"`
	Stream              bool                  `json:"stream"`
	StreamOptions       *openAIStreamOptions  `json:"stream_options,omitempty"`
	Tools               []openAITool          `json:"tools,omitempty"`
	ToolChoice          any                   `json:"tool_choice,omitempty"` // a string or a named choice
	ParallelToolCalls   *bool                 `json:"parallel_tool_calls,omitempty"`
	Temperature         *float64              `json:"temperature,omitempty"`
	TopP                *float64              `json:"top_p,omitempty"`
	MaxTokens           *int64                `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64                `json:"max_completion_tokens,omitempty"`
	Stop                []string              `json:"stop,omitempty"`
	Seed                *int64                `json:"seed,omitempty"`
	PresencePenalty     *float64              `json:"presence_penalty,omitempty"`
	FrequencyPenalty    *float64              `json:"frequency_penalty,omitempty"`
	ResponseFormat      *openAIResponseFormat `json:"response_format,omitempty"`
	ReasoningEffort     string                `json:"reasoning_effort,omitempty"`
}

type openAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type openAIMessage struct {
	Role       string           `json:"role"`
	Content    any              `json:"content,omitempty"` // a string or []openAIContentPart
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	// Prefix asks a server of the DeepSeek/Mistral flavour to continue this final assistant message.
	Prefix bool `json:"prefix,omitempty"`
}

type openAIContentPart struct {
	Type     string          `json:"type"` // text | image_url
	Text     *string         `json:"text,omitempty"`
	ImageURL *openAIImageURL `json:"image_url,omitempty"`
}

type openAIImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type openAIToolCall struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function openAIFunctionCall `json:"function"`
}

type openAIFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type openAINamedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type openAIResponseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *openAIJSONSchema `json:"json_schema,omitempty"`
}

type openAIJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// openAIOwnKeys are the body fields the adapter always sets: Extra never overrides them.
var openAIOwnKeys = map[string]bool{"model": true, "messages": true, "stream": true, "stream_options": true}

// jsonOutputName names a JSON response format that has no name of its own.
const jsonOutputName = "json_output"

// toolImagesNote introduces the images of tool results, which OpenAI's tool messages cannot hold.
const toolImagesNote = "Attached image(s) from tool result:"

// openAIBody translates a turn to a Chat Completions body (streaming), noting what it drops.
func openAIBody(model string, t Turn, d *drops) openAIRequest {
	body := openAIRequest{
		Model: model, Stream: true,
		StreamOptions: &openAIStreamOptions{IncludeUsage: true},
		Messages:      openAIMessages(t.Messages, d),
	}
	if body.Messages == nil {
		body.Messages = []openAIMessage{}
	}
	for _, tool := range t.Tools {
		if len(tool.CacheControl) > 0 {
			d.add("tools.cacheControl")
		}
		body.Tools = append(body.Tools, openAITool{Type: "function", Function: openAIFunction{
			Name: tool.Name, Description: tool.Description, Parameters: rawJSON(tool.Schema), Strict: tool.Strict}})
	}
	body.ToolChoice, body.ParallelToolCalls = openAIToolControls(t, len(body.Tools) > 0, d, func(name string) any {
		named := openAINamedChoice{Type: "function"}
		named.Function.Name = name
		return named
	})

	p := t.Params
	body.Temperature, body.TopP, body.Stop, body.Seed = p.Temperature, p.TopP, p.Stop, p.Seed
	body.PresencePenalty, body.FrequencyPenalty = p.PresencePenalty, p.FrequencyPenalty
	if p.MaxTokens != nil {
		if p.MaxTokensField == "max_tokens" {
			body.MaxTokens = p.MaxTokens
		} else {
			body.MaxCompletionTokens = p.MaxTokens
		}
	}
	if f := p.ResponseFormat; f != nil {
		body.ResponseFormat = &openAIResponseFormat{Type: f.Type, JSONSchema: openAISchema(f)}
	}
	body.ReasoningEffort = openAIEffort(p)
	return body
}

// What both OpenAI wires (Chat Completions and Responses) share: the same controls with the same
// meaning, in bodies of different shapes, sent through the same SDK.

// openAIToolControls are the tool choice (its own word, or named(the tool) in the wire's shape)
// and the parallel-calls flag, or nothing when no tool goes (tools false).
func openAIToolControls(t Turn, tools bool, d *drops, named func(name string) any) (choice any, parallel *bool) {
	if !tools {
		dropToolControls(t, d)
		return nil, nil
	}
	if c := t.ToolChoice; c != nil {
		choice = c.Type
		if c.Type == ToolChoiceNamed {
			choice = named(c.Name)
		}
	}
	return choice, t.ParallelToolCalls
}

// openAISchema is a JSON schema response format's fields (nil for the other formats). Both wires
// require a name: jsonOutputName when the caller gave none.
func openAISchema(f *ResponseFormat) *openAIJSONSchema {
	if f.Type != FormatJSONSchema {
		return nil
	}
	name := f.Name
	if name == "" {
		name = jsonOutputName
	}
	return &openAIJSONSchema{Name: name, Description: f.Description, Schema: rawJSON(f.Schema), Strict: f.Strict}
}

// openAIEffort is the reasoning effort: the one asked, else a thinking budget's ("": none).
func openAIEffort(p Params) string {
	switch {
	case p.ReasoningEffort != "":
		return p.ReasoningEffort
	case p.ThinkingBudget != nil && *p.ThinkingBudget > 0:
		return ReasoningEffort(*p.ThinkingBudget)
	}
	return ""
}

// imageURL is an image part's URL, or its inline data as a data: URL (a media type sniffed when
// it has none).
func imageURL(p Part) string {
	if len(p.Data) == 0 {
		return p.URL
	}
	mt := p.MediaType
	if mt == "" {
		mt = SniffImage(p.Data)
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

// openAIPost sends a streaming request to path on either OpenAI wire through the SDK, with the
// caller's extra fields when it speaks that wire (own and overridable as extraFields takes them).
func openAIPost(ctx context.Context, req Request, hc *http.Client, secret, path string, body any, wire string, own, overridable map[string]bool) (*http.Response, error) {
	var opts []option.RequestOption
	if req.Turn.Wire == wire {
		for _, kv := range extraFields(req.Turn.Extra, own, body, overridable) {
			opts = append(opts, option.WithJSONSet(kv.path, kv.value))
		}
	}
	if isAzure(req.API) {
		return azurePost(ctx, req, hc, secret, path, body, opts)
	}
	client := openai.NewClient(
		option.WithBaseURL(req.BaseURL),
		option.WithAPIKey(secret),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // the workflow owns every retry
	)
	opts = append(opts, option.WithHeader("Authorization", "Bearer "+secret))
	var raw *http.Response
	err := client.Post(ctx, path, body, &raw, opts...)
	return raw, err
}

// openAIMessages translates the conversation. Tool results become one tool message each; the
// images they hold follow, after the run of tool messages, in one user message.
func openAIMessages(msgs []Message, d *drops) []openAIMessage {
	var out []openAIMessage
	var toolImages []openAIContentPart // images of the current run of tool messages
	flushImages := func() {
		if len(toolImages) > 0 {
			note := toolImagesNote
			parts := append([]openAIContentPart{{Type: "text", Text: &note}}, toolImages...)
			out = append(out, openAIMessage{Role: RoleUser, Content: parts})
			toolImages = nil
		}
	}
	for _, m := range msgs {
		// Tool results (of a tool message, or of a user message) become tool messages.
		rest := m.Content[:0:0]
		for _, p := range m.Content {
			if p.Type != PartToolResult || m.Role == RoleAssistant || m.Role == RoleSystem || m.Role == RoleDeveloper {
				if m.Role != RoleTool {
					rest = append(rest, p)
				} else {
					d.add("messages.content." + p.Type + inRole(RoleTool))
				}
				continue
			}
			if p.IsError {
				d.add("messages.content.isError")
			}
			if len(p.CacheControl) > 0 {
				d.add("messages.content.cacheControl")
			}
			text := PartsText(p.Result)
			images := 0
			for _, r := range p.Result {
				switch r.Type {
				case PartImage:
					toolImages = append(toolImages, openAIImagePart(r))
					images++
				case PartText:
				default:
					d.add("messages.content.result." + r.Type)
				}
				if len(r.CacheControl) > 0 {
					d.add("messages.content.cacheControl")
				}
			}
			if text == "" && images > 0 {
				text = "(see attached image)"
			}
			out = append(out, openAIMessage{Role: "tool", ToolCallID: openAICallID(p.CallID), Content: text})
		}
		if len(rest) == 0 {
			continue
		}
		flushImages()
		switch m.Role {
		case RoleSystem, RoleDeveloper:
			if c := openAIContent(rest, m.Role, d); c != nil {
				out = append(out, openAIMessage{Role: m.Role, Content: c})
			}
		case RoleAssistant:
			msg := openAIMessage{Role: RoleAssistant}
			var texts []Part
			for _, p := range rest {
				if len(p.CacheControl) > 0 {
					d.add("messages.content.cacheControl")
				}
				switch p.Type {
				case PartToolCall:
					args := p.Arguments
					if strings.TrimSpace(args) == "" {
						args = "{}"
					}
					msg.ToolCalls = append(msg.ToolCalls, openAIToolCall{ID: openAICallID(p.CallID), Type: "function",
						Function: openAIFunctionCall{Name: p.Name, Arguments: args}})
				case PartReasoning:
					d.add("messages.content.reasoning" + inRole(RoleAssistant))
				default:
					texts = append(texts, p)
				}
			}
			msg.Content = openAIContent(texts, RoleAssistant, d)
			if msg.Content != nil || len(msg.ToolCalls) > 0 {
				out = append(out, msg)
			}
		default: // user
			if c := openAIContent(rest, RoleUser, d); c != nil {
				out = append(out, openAIMessage{Role: RoleUser, Content: c})
			}
		}
	}
	flushImages()
	return out
}

// openAIContent is a message's content: a plain string for one text part (what every compatible
// server accepts), else content parts. Images go only in user messages. nil: nothing to send.
func openAIContent(parts []Part, role string, d *drops) any {
	var out []openAIContentPart
	for _, p := range parts {
		if len(p.CacheControl) > 0 {
			d.add("messages.content.cacheControl")
		}
		switch {
		case p.Type == PartText:
			text := p.Text
			out = append(out, openAIContentPart{Type: "text", Text: &text})
		case p.Type == PartImage && role == RoleUser:
			out = append(out, openAIImagePart(p))
		default:
			d.add("messages.content." + p.Type + inRole(role))
		}
	}
	switch {
	case len(out) == 0:
		return nil
	case len(out) == 1 && out[0].Type == "text":
		return *out[0].Text
	}
	return out
}

func openAIImagePart(p Part) openAIContentPart {
	return openAIContentPart{Type: "image_url", ImageURL: &openAIImageURL{URL: imageURL(p), Detail: p.Detail}}
}

// openAIMaxIDLen is the longest tool-call id OpenAI accepts.
const openAIMaxIDLen = 40

// openAICallID keeps a tool-call id within OpenAI's 40 characters: a longer one (another
// provider's) becomes a stable digest of itself, the same in the call and in its result.
func openAICallID(id string) string {
	if len(id) <= openAIMaxIDLen {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return ("call_" + hex.EncodeToString(sum[:]))[:openAIMaxIDLen]
}

// openAIChunk is the part of a chat.completion.chunk an answer needs.
type openAIChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			Refusal          string `json:"refusal"`
			ReasoningContent string `json:"reasoning_content"` // DeepSeek, vLLM and other compatible servers
			Reasoning        string `json:"reasoning"`         // OpenRouter, newer vLLM
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// toolCallBuilder assembles one streamed tool call.
type toolCallBuilder struct {
	id, name string
	args     strings.Builder
	sent     *ToolCall // the call as handed out, once complete
}

// complete reports whether a call followed by another is complete: its arguments are whole JSON
// (a server that interleaves calls may still be sending them).
func (b *toolCallBuilder) complete() bool {
	return json.Valid([]byte(b.args.String()))
}

// send hands the finished call out, once (the caller checks sent): an id made up when the server
// sent none, {} for no arguments.
func (b *toolCallBuilder) send(em *emitter) ToolCall {
	c := ToolCall{ID: orNewCallID(b.id), Name: b.name, Arguments: orEmptyObject(b.args.String())}
	b.sent = &c
	em.emitCall(c)
	return c
}

// completeOpenAI streams a Chat Completion (OpenAI or any compatible endpoint). The answer is
// final only at a finish reason or [DONE]. A tool call is handed out when a later call has begun
// and its arguments are whole JSON, or at the finish.
func completeOpenAI(ctx context.Context, req Request, hc *http.Client, secret string, clk *clock, em *emitter, cap *capture) (Response, error) {
	body := openAIBody(req.Model, req.Turn, nil)
	if prefill := PrefillSent(req.Prefill); prefill != "" {
		// The answer so far as the final assistant message (with "prefix": true for the servers
		// that want it), or followed by a request to go on from it. A response format would make
		// the continuation a whole document of its own: it goes.
		body.Messages = append(body.Messages, openAIMessage{Role: RoleAssistant, Content: prefill,
			Prefix: req.PrefillPrefix && req.Continuation != ContinueInstruction})
		if req.Continuation == ContinueInstruction {
			body.Messages = append(body.Messages, openAIMessage{Role: RoleUser, Content: continueInstruction})
		}
		body.ResponseFormat = nil
	}

	// The SDK authenticates and sends the request and parses the SSE framing; each chunk is
	// decoded into the few fields an answer needs (the SDK's full chunk type costs several µs
	// per chunk in reflection).
	raw, err := openAIPost(ctx, req, hc, secret, "chat/completions", body, WireOpenAI, openAIOwnKeys, nil)
	stream := ssestream.NewStream[openAIChunk](ssestream.NewDecoder(raw), err)
	defer stream.Close()
	var reasoning strings.Builder
	var calls []*toolCallBuilder
	sent := 0 // calls handed out, in order
	flush := func(all bool) {
		for ; sent < len(calls); sent++ {
			b := calls[sent]
			if !all && (sent == len(calls)-1 || !b.complete()) {
				return
			}
			b.send(em)
		}
	}
	byIndex := map[int]*toolCallBuilder{}
	var resp Response
	var late error
	a := &resp.Answer
	for late == nil && stream.Next() {
		chunk := stream.Current()
		resp.Chunks++
		clk.chunk()
		if u := chunk.Usage; u != nil {
			a.Usage = Usage{Input: u.PromptTokens, Output: u.CompletionTokens}
			if u.PromptTokensDetails != nil {
				a.Usage.CachedInput = u.PromptTokensDetails.CachedTokens
			}
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue // only the first choice is an answer
			}
			r := c.Delta.ReasoningContent
			if r == "" {
				r = c.Delta.Reasoning
			}
			reasoning.WriteString(r)
			em.emitReasoning(r)
			em.emitText(c.Delta.Content)
			em.emitText(c.Delta.Refusal)
			for _, tc := range c.Delta.ToolCalls {
				var b *toolCallBuilder
				if tc.Index != nil {
					b = byIndex[*tc.Index]
				} else if len(calls) > 0 {
					b = calls[len(calls)-1]
				}
				// A new call: a new index, or a new id where a server reuses the index.
				if b == nil || tc.ID != "" && b.id != "" && tc.ID != b.id {
					b = &toolCallBuilder{}
					calls = append(calls, b)
					if tc.Index != nil {
						byIndex[*tc.Index] = b
					}
				}
				if b.sent != nil {
					if strings.TrimSpace(tc.Function.Arguments) != "" || tc.ID != "" && tc.ID != b.id {
						late = lateArguments()
					}
					continue
				}
				if b.id == "" {
					b.id = tc.ID
				}
				if b.name == "" {
					b.name = tc.Function.Name
				}
				b.args.WriteString(tc.Function.Arguments)
				em.progress(tc.Function.Arguments)
			}
			flush(false)
			if c.FinishReason != "" {
				a.FinishReason = c.FinishReason
				flush(true)
			}
		}
	}
	a.Text = em.text.String()
	if reasoning.Len() > 0 {
		a.Reasoning = []Part{{Type: PartReasoning, Text: reasoning.String()}}
	}
	cap.mu.Lock()
	sawDone := cap.sawDone
	cap.mu.Unlock()
	if err := streamEnd(ctx, late, stream.Err(), resp.Chunks, a.FinishReason != "" || sawDone, "no finish reason, no [DONE]"); err != nil {
		return resp, err
	}
	flush(true)
	for _, b := range calls {
		a.ToolCalls = append(a.ToolCalls, *b.sent)
	}
	a.FinishReason = openAIFinish(a.FinishReason, len(a.ToolCalls) > 0)
	return resp, nil
}

// openAIFinish normalises a finish reason: the legacy function_call is tool_calls, and so is a
// plain stop (or none) from a server that made tool calls.
func openAIFinish(reason string, toolCalls bool) string {
	switch {
	case reason == "function_call":
		return FinishToolCalls
	case toolCalls && (reason == "" || reason == FinishStop):
		return FinishToolCalls
	case reason == "":
		return FinishStop // [DONE] without a finish reason
	}
	return reason
}

// orNewCallID gives a tool call that came without an id (some compatible servers) a fresh one,
// so its result can name it.
func orNewCallID(id string) string {
	if id != "" {
		return id
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "call_" + hex.EncodeToString(b)
}

// orEmptyObject is a tool call's arguments, {} when the model sent none.
func orEmptyObject(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}
