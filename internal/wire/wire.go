package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton/provider"
)

// Request is a caller's request in baton's terms.
type Request struct {
	Turn         provider.Turn
	Model        string    // "provider/model" or "agent:<id>", as given (validated non-empty)
	Fallbacks    *[]string // baton's extension field `fallbacks` (nil: not given)
	Stream       bool
	IncludeUsage bool   // OpenAI stream_options.include_usage
	Session      string // OpenAI `user`; Anthropic `metadata.user_id`
	// WaitForCooldown is baton's extension field `wait_for_cooldown` (a duration such as "10m",
	// or seconds): the durable wait of `baton reply --wait`.
	WaitForCooldown time.Duration
	// Responses is what a Responses API request carries beyond the turn (nil for the other wires).
	Responses *ResponsesRequest
}

// Reply is a finished answer to encode.
type Reply struct {
	ID, Model string
	Created   int64
	Answer    provider.Answer
}

// Stream is what both stream writers do; StreamAnswer feeds one.
type Stream interface {
	Text(delta string)
	ToolCall(index int, id, name string)
	ToolArgs(index int, delta string)
	Finish(reason string, usage provider.Usage)
	Error(e *Error)
}

// pieceSize is the size of the pieces StreamAnswer cuts text and arguments into.
const pieceSize = 64

// StreamAnswer feeds a whole answer through a stream writer in small pieces: reasoning (as
// Anthropic thinking blocks, or OpenAI reasoning_content), the text in ~64-byte rune-safe pieces,
// each tool call and its arguments in pieces, then Finish.
func StreamAnswer(s Stream, a provider.Answer) {
	switch r := s.(type) {
	case interface {
		Thinking(string)
		Signature(string)
		RedactedThinking(string)
	}:
		for _, p := range a.Reasoning {
			if p.Redacted != "" {
				r.RedactedThinking(p.Redacted)
				continue
			}
			for _, piece := range splitText(p.Text, pieceSize) {
				r.Thinking(piece)
			}
			if p.Signature != "" || p.Text != "" {
				r.Signature(p.Signature)
			}
		}
	case interface{ Reasoning(string) }:
		for _, piece := range splitText(reasoningText(a.Reasoning), pieceSize) {
			r.Reasoning(piece)
		}
	}
	streamOutput(s, a)
}

// streamOutput feeds what follows the reasoning, which every wire streams alike: the text in
// pieces, each tool call and its arguments in pieces, then Finish.
func streamOutput(s Stream, a provider.Answer) {
	for _, piece := range splitText(a.Text, pieceSize) {
		s.Text(piece)
	}
	for i, c := range a.ToolCalls {
		s.ToolCall(i, c.ID, c.Name)
		for _, piece := range splitText(c.Arguments, pieceSize) {
			s.ToolArgs(i, piece)
		}
	}
	s.Finish(a.FinishReason, a.Usage)
}

// sseEvent is a named server-sent event (Anthropic's and the Responses API's streams name theirs).
func sseEvent(name string, data []byte) []byte {
	buf := make([]byte, 0, len(name)+len(data)+16)
	return append(append(append(append(append(buf, "event: "...), name...), "\ndata: "...), data...), "\n\n"...)
}

// reasoningText is the readable text of reasoning parts, a blank line between parts (redacted
// parts have none).
func reasoningText(parts []provider.Part) string {
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// splitText cuts text into pieces of about n bytes on rune boundaries.
func splitText(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut < len(s) && (s[cut]&0xC0) == 0x80 {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// finishReason is the answer's finish reason, defaulting to stop (tool_calls when it made calls).
func finishReason(reason string, toolCalls bool) string {
	if reason != "" {
		return reason
	}
	if toolCalls {
		return provider.FinishToolCalls
	}
	return provider.FinishStop
}

// --- reading JSON with paths ---

type object = map[string]json.RawMessage

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// decodeBody reads the top-level object of a request body.
func decodeBody(body []byte) (object, *Error) {
	var top object
	if err := json.Unmarshal(body, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, BadRequest("", "the body is not a JSON object")
		}
		return nil, BadRequest("", "the body is not valid JSON: %v", err)
	}
	if top == nil {
		return nil, BadRequest("", "the body is not a JSON object")
	}
	return top, nil
}

func asObject(raw json.RawMessage, path string) (object, *Error) {
	var o object
	if isNull(raw) {
		return nil, nil
	}
	if json.Unmarshal(raw, &o) != nil {
		return nil, BadRequest(path, "%s: want an object", path)
	}
	return o, nil
}

func asArray(raw json.RawMessage, path string) ([]json.RawMessage, *Error) {
	var a []json.RawMessage
	if isNull(raw) {
		return nil, nil
	}
	if json.Unmarshal(raw, &a) != nil {
		return nil, BadRequest(path, "%s: want an array", path)
	}
	return a, nil
}

func asString(raw json.RawMessage, path string) (string, *Error) {
	var s string
	if isNull(raw) {
		return "", nil
	}
	if json.Unmarshal(raw, &s) != nil {
		return "", BadRequest(path, "%s: want a string", path)
	}
	return s, nil
}

// isString reports whether raw is a JSON string.
func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

func asBool(raw json.RawMessage, path string) (*bool, *Error) {
	var b bool
	if isNull(raw) {
		return nil, nil
	}
	if json.Unmarshal(raw, &b) != nil {
		return nil, BadRequest(path, "%s: want true or false", path)
	}
	return &b, nil
}

// asFlag is a boolean that is false unless given true.
func asFlag(raw json.RawMessage, path string) (bool, *Error) {
	b, e := asBool(raw, path)
	return b != nil && *b, e
}

func asNumber(raw json.RawMessage, path string) (*float64, *Error) {
	var f float64
	if isNull(raw) {
		return nil, nil
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil, BadRequest(path, "%s: want a number", path)
	}
	return &f, nil
}

func asInteger(raw json.RawMessage, path string) (*int64, *Error) {
	var n json.Number
	if isNull(raw) {
		return nil, nil
	}
	if isString(raw) || json.Unmarshal(raw, &n) != nil {
		return nil, BadRequest(path, "%s: want an integer", path)
	}
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return &i, nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, BadRequest(path, "%s: want an integer", path)
	}
	i := int64(f)
	return &i, nil
}

func asStrings(raw json.RawMessage, path string) ([]string, *Error) {
	var a []string
	if isNull(raw) {
		return nil, nil
	}
	if json.Unmarshal(raw, &a) != nil {
		return nil, BadRequest(path, "%s: want an array of strings", path)
	}
	return a, nil
}

// typedObject reads an object with a type field (a content part, an item, a tool); want is what
// the refusal says it should be when it is not an object.
func typedObject(raw json.RawMessage, path, want string) (object, string, *Error) {
	o, e := asObject(raw, path)
	if e != nil || o == nil {
		return nil, "", BadRequest(path, "%s: %s", path, want)
	}
	typ, e := asString(o["type"], path+".type")
	if e != nil {
		return nil, "", e
	}
	return o, typ, nil
}

// requiredString reads o[key], a string that must not be empty (an id, a name); want is what the
// refusal says it should be.
func requiredString(o object, path, key, want string) (string, *Error) {
	s, e := asString(o[key], path+"."+key)
	if e != nil {
		return "", e
	}
	if s == "" {
		return "", BadRequest(path+"."+key, "%s.%s: %s", path, key, want)
	}
	return s, nil
}

// compactJSON is raw without insignificant whitespace ("{}" when raw is absent or null).
func compactJSON(raw json.RawMessage) string {
	if isNull(raw) {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// rawCopy is a copy of raw (nil when absent or null).
func rawCopy(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	return append(json.RawMessage(nil), bytes.TrimSpace(raw)...)
}

// consumedExcept is consumed less the fields keep names: read, but passed on in Extra as well
// (when they hold more than baton models).
func consumedExcept(consumed, keep map[string]bool) map[string]bool {
	out := make(map[string]bool, len(consumed))
	for k := range consumed {
		out[k] = !keep[k]
	}
	return out
}

// extra is what is left of the top-level object once baton's fields are taken out.
func extra(top object, consumed map[string]bool) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range top {
		if consumed[k] {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[k] = rawCopy(v)
		if out[k] == nil {
			out[k] = json.RawMessage("null")
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// --- naming what CheckTurn found ---

// partPaths names the fields of one part of the turn in the caller's wire.
type partPaths struct {
	callID    string      // a tool result's call id
	image     string      // an image's data (or URL)
	mediaType string      // an image's media type
	inner     []partPaths // a tool result's parts
}

// locator maps a provider.TurnError back to the caller's fields.
type locator struct {
	parts          [][]partPaths // by message and part of the turn
	toolName       func(i int) string
	toolSchema     func(i int) string
	toolChoice     string
	responseFormat string
}

// check runs provider.CheckTurn and names the caller's field that is wrong.
func (l *locator) check(t provider.Turn) *Error {
	te := provider.CheckTurn(t)
	if te == nil {
		return nil
	}
	path := ""
	switch {
	case te.Field == "toolChoice":
		path = l.toolChoice
	case te.Field == "responseFormat":
		path = l.responseFormat
	case te.Message < 0 && te.Tool >= 0 && te.Field == "name":
		path = l.toolName(te.Tool)
	case te.Message < 0 && te.Tool >= 0:
		path = l.toolSchema(te.Tool)
	case te.Message >= 0 && te.Message < len(l.parts) && te.Part >= 0 && te.Part < len(l.parts[te.Message]):
		pp := l.parts[te.Message][te.Part]
		switch te.Field {
		case "callId":
			path = pp.callID
		case "data", "mediaType":
			path = pp.imagePath(te.Field)
			if te.Message < len(t.Messages) && te.Part < len(t.Messages[te.Message].Content) {
				if p := t.Messages[te.Message].Content[te.Part]; p.Type == provider.PartToolResult {
					path = innerImagePath(p.Result, pp.inner, te.Field)
				}
			}
		}
	}
	if path == "" {
		return BadRequest("", "%s", te.Reason)
	}
	return BadRequest(path, "%s: %s", path, te.Reason)
}

func (pp partPaths) imagePath(field string) string {
	if field == "mediaType" && pp.mediaType != "" {
		return pp.mediaType
	}
	return pp.image
}

// innerImagePath names the first image of a tool result that CheckTurn refuses.
func innerImagePath(result []provider.Part, paths []partPaths, field string) string {
	for k, r := range result {
		if r.Type != provider.PartImage || k >= len(paths) {
			continue
		}
		one := provider.Turn{Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{r}}}}
		if te := provider.CheckTurn(one); te != nil {
			return paths[k].imagePath(te.Field)
		}
	}
	return ""
}

// turnBuilder is what every door's decoder builds: the turn, and where its parts came from.
type turnBuilder struct {
	top  object
	loc  *locator
	turn provider.Turn
}

// add appends a message and the caller's paths of its parts.
func (b *turnBuilder) add(m provider.Message, paths []partPaths) {
	b.turn.Messages = append(b.turn.Messages, m)
	b.loc.parts = append(b.loc.parts, paths)
}

// readEnvelope reads what every door reads first: model, then baton's fallbacks and
// wait_for_cooldown (the order decides which of several wrong fields a refusal names).
func readEnvelope(top object) (Request, *Error) {
	var req Request
	var e *Error
	if req.Model, e = checkModel(top); e != nil {
		return req, e
	}
	if req.Fallbacks, e = readFallbacks(top); e != nil {
		return req, e
	}
	req.WaitForCooldown, e = readWait(top)
	return req, e
}

// readSampling reads temperature and top_p, which every door takes alike.
func readSampling(top object, p *provider.Params) *Error {
	var e *Error
	if p.Temperature, e = asNumber(top["temperature"], "temperature"); e != nil {
		return e
	}
	p.TopP, e = asNumber(top["top_p"], "top_p")
	return e
}

// readTool reads a function tool's name, description and strict from o (at path), and its schema
// from o[schemaKey].
func readTool(o object, path, schemaKey string) (provider.Tool, *Error) {
	var t provider.Tool
	var e *Error
	if t.Name, e = asString(o["name"], path+".name"); e != nil {
		return t, e
	}
	if t.Description, e = asString(o["description"], path+".description"); e != nil {
		return t, e
	}
	if t.Strict, e = asBool(o["strict"], path+".strict"); e != nil {
		return t, e
	}
	t.Schema = rawCopy(o[schemaKey])
	return t, nil
}

// namedToolChoice is a tool choice naming one tool, whose name o holds (at path).
func namedToolChoice(o object, path string) (*provider.ToolChoice, *Error) {
	name, e := requiredString(o, path, "name", "want the name of one of the tools")
	if e != nil {
		return nil, e
	}
	return &provider.ToolChoice{Type: provider.ToolChoiceNamed, Name: name}, nil
}

// checkModel reads the model field.
func checkModel(top object) (string, *Error) {
	var model string
	if raw, ok := top["model"]; !ok || json.Unmarshal(raw, &model) != nil || strings.TrimSpace(model) == "" {
		return "", BadRequest("model", "model: want \"provider/model\" or \"agent:<id>\"")
	}
	return model, nil
}

// MaxWaitForCooldown bounds the durable wait a caller may ask for.
const MaxWaitForCooldown = 24 * time.Hour

// ParseWait reads a durable wait as a caller gives it, in the body or the
// x-baton-wait-for-cooldown header: a Go duration ("10m", "90s") or a number of seconds.
func ParseWait(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return 0, fmt.Errorf("%q is not a duration (\"10m\") or a number of seconds", s)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 || d > MaxWaitForCooldown {
		return 0, fmt.Errorf("%s is not between 0 and %s", d, MaxWaitForCooldown)
	}
	return d, nil
}

// readWait reads baton's wait_for_cooldown field.
func readWait(top object) (time.Duration, *Error) {
	raw, ok := top["wait_for_cooldown"]
	if !ok || isNull(raw) {
		return 0, nil
	}
	s := strings.TrimSpace(string(raw))
	if isString(raw) {
		_ = json.Unmarshal(raw, &s)
	}
	d, err := ParseWait(s)
	if err != nil {
		return 0, BadRequest("wait_for_cooldown", "wait_for_cooldown: %v", err)
	}
	return d, nil
}

// fallbacks reads baton's fallbacks field.
func readFallbacks(top object) (*[]string, *Error) {
	raw, ok := top["fallbacks"]
	if !ok || isNull(raw) {
		return nil, nil
	}
	fb, err := asStrings(raw, "fallbacks")
	if err != nil {
		return nil, err
	}
	if fb == nil {
		fb = []string{}
	}
	return &fb, nil
}
