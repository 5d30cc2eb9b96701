package provider

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// The turn model: everything an agent's model turn carries, in one shape that both wire formats
// translate to and from. Plain data, no secret; large turns travel by reference (TurnRef).
//
// The records a reply passes between its workflow and its activities (workflows.ReplyRequest,
// AttemptRequest, AttemptOutcome, ReplyResult) carry a turn, and an answer's tool calls and
// reasoning, opaquely as JSON: the workflow never reads inside them. EncodeAnswerContent and
// DecodeAnswerContent write and read those fields.

// Roles of a turn's messages.
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Part types.
const (
	PartText       = "text"
	PartImage      = "image"
	PartToolCall   = "tool_call"
	PartToolResult = "tool_result"
	PartReasoning  = "reasoning"
)

// Wires a caller or a candidate speaks.
const (
	WireOpenAI    = "openai"
	WireAnthropic = "anthropic"
	// WireResponses is OpenAI's Responses API: its Extra goes to a candidate of that API only.
	WireResponses = "openai-responses"
)

// Turn is one model turn: the conversation so far, the tools, and the sampling and output controls.
type Turn struct {
	Messages          []Message   `json:"messages"`
	Tools             []Tool      `json:"tools,omitempty"`
	ToolChoice        *ToolChoice `json:"toolChoice,omitempty"`
	ParallelToolCalls *bool       `json:"parallelToolCalls,omitempty"`
	Params            Params      `json:"params,omitzero"`
	// Wire is the caller's wire; Extra holds the caller's top-level fields baton does not model,
	// forwarded untouched to a candidate that speaks Wire and dropped for the other wire.
	Wire  string                     `json:"wire,omitempty"`
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// Message is one message of a turn.
type Message struct {
	Role    string `json:"role"`
	Content []Part `json:"content"`
}

// Part is one piece of a message's content; Type says which fields are set.
type Part struct {
	Type string `json:"type"`
	// Text: a text part, a reasoning part's thinking.
	Text string `json:"text,omitempty"`
	// Image: a URL, or inline Data with its MediaType. Detail is OpenAI's image detail.
	URL       string `json:"url,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
	Data      []byte `json:"data,omitempty"`
	Detail    string `json:"detail,omitempty"`
	// Tool call (CallID, Name, Arguments as JSON text) and tool result (CallID, Result, IsError).
	CallID    string `json:"callId,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Result    []Part `json:"result,omitempty"`
	IsError   bool   `json:"isError,omitempty"`
	// Reasoning: Anthropic's signature, or a redacted block's opaque data; or an OpenAI Responses
	// reasoning item, by its id and encrypted content, which only that wire takes back (the others
	// drop such a part, as one without a signature); or a Gemini thought signature: Encrypted
	// without a ReasoningID, CallID naming the call it came on ("" for a text answer's), which
	// only the Gemini wire takes back (google.go).
	Signature   string `json:"signature,omitempty"`
	Redacted    string `json:"redacted,omitempty"`
	ReasoningID string `json:"reasoningId,omitempty"`
	Encrypted   string `json:"encrypted,omitempty"`
	// CacheControl is Anthropic's prompt-caching mark on this block, kept for Anthropic candidates.
	CacheControl json.RawMessage `json:"cacheControl,omitempty"`
}

// TextPart is a text part.
func TextPart(s string) Part { return Part{Type: PartText, Text: s} }

// Tool is a tool the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"` // JSON Schema of the arguments (an object)
	Strict      *bool           `json:"strict,omitempty"`
	// CacheControl is Anthropic's prompt-caching mark on the tool, kept for Anthropic candidates.
	CacheControl json.RawMessage `json:"cacheControl,omitempty"`
}

// Tool choices.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
	ToolChoiceNamed    = "tool"
)

// ToolChoice is auto, none, required, or a named tool.
type ToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// Params are the sampling and output controls.
type Params struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"topP,omitempty"`
	MaxTokens   *int64   `json:"maxTokens,omitempty"`
	// MaxTokensField is the OpenAI spelling the caller used (max_tokens or max_completion_tokens),
	// kept for an OpenAI-wire candidate.
	MaxTokensField   string          `json:"maxTokensField,omitempty"`
	Stop             []string        `json:"stop,omitempty"`
	Seed             *int64          `json:"seed,omitempty"`
	PresencePenalty  *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty *float64        `json:"frequencyPenalty,omitempty"`
	ResponseFormat   *ResponseFormat `json:"responseFormat,omitempty"`
	// ReasoningEffort is OpenAI's (minimal, low, medium, high); ThinkingBudget Anthropic's
	// thinking budget in tokens. Each is translated to the other wire (ReasoningBudget).
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	ThinkingBudget  *int64 `json:"thinkingBudget,omitempty"`
}

// Response formats.
const (
	FormatText       = "text"
	FormatJSONObject = "json_object"
	FormatJSONSchema = "json_schema"
)

// ResponseFormat asks for text, any JSON object, or JSON matching a schema.
type ResponseFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Finish reasons of an answer, in OpenAI's words (each wire maps its own to these).
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
)

// ToolCall is a tool call the model made.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text
}

// Usage is what the provider counted.
type Usage struct {
	Input       int64 `json:"inputTokens"`
	Output      int64 `json:"outputTokens"`
	CachedInput int64 `json:"cachedInputTokens,omitempty"`
	// Reasoning is the part of Output spent reasoning, where the wire says (OpenAI Responses).
	Reasoning int64 `json:"reasoningTokens,omitempty"`
	// CacheWrite is the part of Input written to the prompt cache, where the wire says (Anthropic's
	// cache_creation_input_tokens, Bedrock's cacheWriteInputTokens): priced apart.
	CacheWrite int64 `json:"cacheWriteTokens,omitempty"`
}

// Answer is a model's answer to a turn.
type Answer struct {
	Text         string     `json:"text,omitempty"`
	ToolCalls    []ToolCall `json:"toolCalls,omitempty"`
	Reasoning    []Part     `json:"reasoning,omitempty"` // reasoning parts, to send back on a later turn
	FinishReason string     `json:"finishReason,omitempty"`
	Usage        Usage      `json:"usage"`
}

// Empty reports whether an answer carries nothing a caller could use.
func (a Answer) Empty() bool { return strings.TrimSpace(a.Text) == "" && len(a.ToolCalls) == 0 }

// EncodeAnswerContent is an answer's tool calls and reasoning as a reply's records carry them
// (AttemptOutcome, ReplyResult): JSON, nil when there are none (the record then leaves the field
// out, as it always has).
func EncodeAnswerContent(a Answer) (toolCalls, reasoning json.RawMessage, err error) {
	if toolCalls, err = encodeList(a.ToolCalls); err != nil {
		return nil, nil, fmt.Errorf("encoding the tool calls: %w", err)
	}
	if reasoning, err = encodeList(a.Reasoning); err != nil {
		return nil, nil, fmt.Errorf("encoding the reasoning: %w", err)
	}
	return toolCalls, reasoning, nil
}

// DecodeAnswerContent reads back the tool calls and reasoning a reply's record carries.
func DecodeAnswerContent(toolCalls, reasoning json.RawMessage) ([]ToolCall, []Part, error) {
	var calls []ToolCall
	var parts []Part
	if len(toolCalls) > 0 {
		if err := json.Unmarshal(toolCalls, &calls); err != nil {
			return nil, nil, fmt.Errorf("decoding the tool calls: %w", err)
		}
	}
	if len(reasoning) > 0 {
		if err := json.Unmarshal(reasoning, &parts); err != nil {
			return nil, nil, fmt.Errorf("decoding the reasoning: %w", err)
		}
	}
	return calls, parts, nil
}

func encodeList[T any](list []T) (json.RawMessage, error) {
	if len(list) == 0 {
		return nil, nil
	}
	return json.Marshal(list)
}

// TextTurn is a turn of one user message.
func TextTurn(message string) Turn {
	return Turn{Messages: []Message{{Role: RoleUser, Content: []Part{TextPart(message)}}}}
}

// HasImages reports whether any message (or tool result) carries an image.
func (t Turn) HasImages() bool {
	var walk func([]Part) bool
	walk = func(parts []Part) bool {
		for _, p := range parts {
			if p.Type == PartImage || walk(p.Result) {
				return true
			}
		}
		return false
	}
	for _, m := range t.Messages {
		if walk(m.Content) {
			return true
		}
	}
	return false
}

// PlainMessage reports whether the turn is nothing but one user text message, and its text: such
// a turn travels as a reply's Message, as a CLI message always has.
func (t Turn) PlainMessage() (string, bool) {
	if len(t.Messages) != 1 || len(t.Tools) > 0 || t.ToolChoice != nil || t.ParallelToolCalls != nil ||
		!reflect.ValueOf(t.Params).IsZero() || len(t.Extra) > 0 {
		return "", false
	}
	m := t.Messages[0]
	if m.Role != RoleUser || len(m.Content) != 1 || m.Content[0].Type != PartText || m.Content[0].CacheControl != nil {
		return "", false
	}
	return m.Content[0].Text, true
}

// AsksReasoning reports whether the turn asks the model to reason before it answers: a reasoning
// effort (other than "none") or a positive thinking budget. Such a request is given the longer
// reasoning first-token timeout.
func (t Turn) AsksReasoning() bool {
	effort := strings.ToLower(strings.TrimSpace(t.Params.ReasoningEffort))
	return (effort != "" && effort != "none") || (t.Params.ThinkingBudget != nil && *t.Params.ThinkingBudget > 0)
}

// LastUserText is the text of the last user message (for logs and notices).
func (t Turn) LastUserText() string {
	for i := len(t.Messages) - 1; i >= 0; i-- {
		if t.Messages[i].Role == RoleUser {
			return PartsText(t.Messages[i].Content)
		}
	}
	return ""
}

// PartsText joins the text parts.
func PartsText(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Reasoning budgets: OpenAI's reasoning effort as an Anthropic thinking budget and back
// (docs/DECISIONS.md). Anthropic's smallest budget is 1024 tokens.
var reasoningBudgets = []struct {
	effort string
	budget int64
}{{"minimal", 1024}, {"low", 2048}, {"medium", 8192}, {"high", 24576}}

// ReasoningBudget is the thinking budget for an effort (0: none asked or unknown).
func ReasoningBudget(effort string) int64 {
	for _, b := range reasoningBudgets {
		if b.effort == effort {
			return b.budget
		}
	}
	return 0
}

// ReasoningEffort is the smallest effort whose budget covers a thinking budget.
func ReasoningEffort(budget int64) string {
	for _, b := range reasoningBudgets {
		if budget <= b.budget {
			return b.effort
		}
	}
	return "high"
}

// TurnError names what is wrong with a turn: the message and part (-1: not a part), and why.
type TurnError struct {
	Message, Part int
	Field         string // within the part or tool: "callId", "schema", "data", "mediaType"
	Tool          int    // index in Tools when the error is a tool's (Message is then -1)
	Reason        string
}

func (e *TurnError) Error() string { return e.Reason }

// Image media types every wire accepts.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// CheckTurn checks what no wire would accept: a tool result that answers no earlier tool call, a
// tool whose schema is not a JSON object, an inline image that is not an image of a known type.
func CheckTurn(t Turn) *TurnError {
	for i, tool := range t.Tools {
		if strings.TrimSpace(tool.Name) == "" {
			return &TurnError{Message: -1, Tool: i, Field: "name", Reason: "a tool needs a name"}
		}
		if len(tool.Schema) > 0 {
			var obj map[string]json.RawMessage
			if json.Unmarshal(tool.Schema, &obj) != nil || obj == nil {
				return &TurnError{Message: -1, Tool: i, Field: "schema", Reason: fmt.Sprintf("tool %q: the parameters schema is not a JSON object", tool.Name)}
			}
		}
	}
	if c := t.ToolChoice; c != nil && c.Type == ToolChoiceNamed {
		found := false
		for _, tool := range t.Tools {
			found = found || tool.Name == c.Name
		}
		if !found {
			return &TurnError{Message: -1, Tool: -1, Field: "toolChoice", Reason: fmt.Sprintf("tool_choice names %q, which is not among the tools", c.Name)}
		}
	}
	if f := t.Params.ResponseFormat; f != nil && f.Type == FormatJSONSchema {
		var obj map[string]json.RawMessage
		if json.Unmarshal(f.Schema, &obj) != nil || obj == nil {
			return &TurnError{Message: -1, Tool: -1, Field: "responseFormat", Reason: "response_format: the json_schema's schema is not a JSON object"}
		}
	}
	calls := map[string]bool{}
	var checkImage func(i, j int, p Part) *TurnError
	checkImage = func(i, j int, p Part) *TurnError {
		if p.URL == "" && len(p.Data) == 0 {
			return &TurnError{Message: i, Part: j, Field: "data", Reason: "an image needs a URL or data"}
		}
		if len(p.Data) == 0 {
			return nil
		}
		sniffed := SniffImage(p.Data)
		if sniffed == "" {
			return &TurnError{Message: i, Part: j, Field: "data", Reason: "the image data is not a PNG, JPEG, GIF or WebP image"}
		}
		if p.MediaType != "" && p.MediaType != sniffed {
			return &TurnError{Message: i, Part: j, Field: "mediaType", Reason: fmt.Sprintf("the media type is %s but the data is %s", p.MediaType, sniffed)}
		}
		return nil
	}
	for i, m := range t.Messages {
		for j, p := range m.Content {
			switch p.Type {
			case PartToolCall:
				calls[p.CallID] = true
			case PartToolResult:
				if !calls[p.CallID] {
					return &TurnError{Message: i, Part: j, Field: "callId", Reason: fmt.Sprintf("tool result for call %q, which no earlier assistant message made", p.CallID)}
				}
				for _, r := range p.Result {
					if r.Type == PartImage {
						if err := checkImage(i, j, r); err != nil {
							return err
						}
					}
				}
			case PartImage:
				if err := checkImage(i, j, p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// SniffImage names the media type of image data by its magic bytes ("" when it is none of the
// types every wire accepts).
func SniffImage(b []byte) string {
	switch {
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		return "image/png"
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return "image/jpeg"
	case len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// ParseDataURL reads a data: URL of base64 image data, naming what is wrong.
func ParseDataURL(u string) (mediaType string, data []byte, err error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", nil, fmt.Errorf("not a data: URL")
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return "", nil, fmt.Errorf("a data: URL must be base64 (data:image/png;base64,…)")
	}
	mediaType = strings.TrimSuffix(meta, ";base64")
	if !isImageType(mediaType) {
		return "", nil, fmt.Errorf("media type %q is not an image type (%s)", mediaType, strings.Join(imageTypes, ", "))
	}
	data, err = DecodeImageBase64(payload)
	return mediaType, data, err
}

// DecodeImageBase64 decodes base64 image data (standard alphabet, padding optional).
func DecodeImageBase64(s string) ([]byte, error) {
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=")); err != nil {
			return nil, fmt.Errorf("the image data is not valid base64")
		}
	}
	return data, nil
}

func isImageType(mt string) bool {
	for _, t := range imageTypes {
		if t == mt {
			return true
		}
	}
	return false
}

// IsImageType reports whether every wire accepts this image media type.
func IsImageType(mt string) bool { return isImageType(mt) }
