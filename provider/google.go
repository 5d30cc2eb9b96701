package provider

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"
)

// The Gemini API (google-gemini) through Google's official SDK, google.golang.org/genai: a turn
// goes out as the SDK's contents and generation config (Models.GenerateContentStream, which posts
// streamGenerateContent?alt=sse), and the answer is assembled from the streamed chunks. Vertex AI's
// Gemini models (vertex.go) go through the same translation and stream on the SDK's Vertex
// backend.
//
// The SDK sends the request (its types, its converters, its URL and key); the stream is read here,
// as the other adapters read theirs, into lean structs: the SDK's iterator decodes each chunk three
// times over (into a map, through its converter, into its struct: 15 µs a chunk against the 5 µs
// budget of bench_test.go), takes an SSE comment line for a chunk that is not JSON, and a
// connection cut in the middle of a chunk for a malformed chunk. Its transport (googleCall) keeps
// the stream of a 2xx answer and hands the SDK an empty one.
//
// What the SDK does on its own is turned off: its retries (one attempt: the workflow owns every
// retry), its automatic stream continuation (a stream resumed from a continuation token is a
// retry too), and what it reads in the environment (GOOGLE_API_KEY, GOOGLE_CLOUD_PROJECT,
// GOOGLE_GEMINI_BASE_URL, GOOGLE_GENAI_API_VERSION, …: the key or project and location, the
// endpoint and the version are always given here).
//
// Thought signatures. Gemini signs its reasoning: a signature comes on the first function call of
// a step (Gemini 3 refuses that call back without it) or on the last part of a text answer. Each
// one is kept as a reasoning part whose Encrypted holds the signature (standard base64, as the
// wire has it), with no ReasoningID, and whose CallID names the call it came on ("" for a text
// answer's): the shape no other wire takes back (Anthropic's reads Signature, the Responses API's
// needs a ReasoningID), so a signature goes back to Gemini only. A call baton got from another
// model has no signature: the first call of each such step goes with the value Google documents
// for it (geminiSkipSignature).

// The Gemini API's endpoint and the API version sent unless the provider names one (v1beta: the
// version with thinking, thought signatures and JSON schemas for tools and answers).
const (
	geminiBaseURL    = "https://generativelanguage.googleapis.com"
	geminiAPIVersion = "v1beta"
)

// geminiOpening opens a conversation that does not start with a user turn (Gemini refuses one
// that starts with the model's, and one with no turn at all).
const geminiOpening = "(The conversation begins.)"

// geminiMaxStops is how many stop sequences Gemini takes.
const geminiMaxStops = 5

// geminiSkipSignature is the thought signature Google documents for a function call that Gemini
// did not make ("skip_thought_signature_validator"). The field is bytes: the string is their
// base64 (URL-safe alphabet), which the SDK writes back in the standard one
// ("skip/thought/signature/validator"): the same bytes, as the API decodes either.
var geminiSkipSignature, _ = base64.RawURLEncoding.DecodeString("skip_thought_signature_validator")

// completeGemini streams an answer from the Gemini API, the API key in x-goog-api-key.
func completeGemini(ctx context.Context, req Request, hc *http.Client, secret string, clk *clock, em *emitter) (Response, error) {
	if secret == "" {
		// The SDK would take GOOGLE_API_KEY or GEMINI_API_KEY from the environment: not a key of
		// the profile's.
		return Response{}, &Error{Code: googleAuthPermanent, Type: "configuration", Message: "google-gemini: the credential holds no API key"}
	}
	call := &googleCall{base: hc.Transport}
	cc := &genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: secret, HTTPClient: &http.Client{Transport: call},
		HTTPOptions: googleHTTPOptions(cmp.Or(req.BaseURL, geminiBaseURL), cmp.Or(req.APIVersion, geminiAPIVersion))}
	return streamGemini(ctx, req, cc, call, clk, em)
}

// googleHTTPOptions are the SDK's HTTP options: the endpoint and version, one attempt.
func googleHTTPOptions(baseURL, version string) genai.HTTPOptions {
	return genai.HTTPOptions{BaseURL: baseURL, APIVersion: version,
		RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)}} // the workflow owns every retry
}

// streamGemini sends the turn through a client configured as cc (whose HTTP client's transport is
// call) and assembles the stream. The answer is final only once a chunk carried a finishReason.
func streamGemini(ctx context.Context, req Request, cc *genai.ClientConfig, call *googleCall, clk *clock, em *emitter) (Response, error) {
	client, err := genai.NewClient(ctx, cc)
	if err != nil {
		return Response{}, &Error{Code: googleAuthPermanent, Type: "configuration", Message: req.API + ": the Gemini client refused its configuration: " + err.Error()}
	}
	contents, config := geminiRequest(req.Turn, nil)
	if prefill := PrefillSent(req.Prefill); prefill != "" {
		contents = geminiPrefill(contents, prefill, req.Continuation == ContinueInstruction)
		// A JSON answer would be a whole document of its own, not the continuation of one.
		config.ResponseMIMEType, config.ResponseJsonSchema = "", nil
	}
	config.AutomaticContinuation = genai.Ptr(false) // a resumed stream is a retry: the workflow's

	call.keep = true
	var sent error
	for _, err := range client.Models.GenerateContentStream(ctx, req.Model, contents, config) {
		if err != nil { // no chunk comes here: the transport kept the stream
			sent = err
			break
		}
	}
	body := call.kept()
	if sent != nil || body == nil {
		if body != nil {
			body.Close()
		}
		if e := call.failure(); e != nil {
			return Response{}, e // an error status: Google's error object (or whatever came instead)
		}
		if !call.sent() && ctx.Err() == nil {
			// The SDK refused to build the request (a model id it will not put in a path): the
			// request's fault, not the network's.
			return Response{}, &Error{Type: "request", Code: googleFormat, Message: req.API + ": the Gemini SDK sent nothing: " + errorText(sent)}
		}
		if sent == nil {
			sent = &Error{Stream: FaultEmpty, Message: "the Gemini API answered with no stream"}
		}
		return Response{}, sent // no answer: toError reads the transport's failure or the clocks'
	}
	defer body.Close()

	var resp Response
	a := &geminiAssembly{em: em, answer: &resp.Answer}
	events := newGoogleSSE(body)
	var inBand, streamErr error
	for inBand == nil {
		data, err := events.next()
		if err != nil {
			if err != io.EOF {
				streamErr = err
			}
			break
		}
		var c geminiChunk
		if err := json.Unmarshal(data, &c); err != nil {
			streamErr = err // a malformed chunk
			break
		}
		resp.Chunks++
		clk.chunk()
		if len(c.Error) > 0 && string(c.Error) != "null" {
			inBand = googleFailure(&Error{Stream: FaultInBandError}, data)
			break
		}
		inBand = a.chunk(&c)
	}
	a.end()
	resp.Answer.Text = em.text.String()
	return resp, streamEnd(ctx, inBand, streamErr, resp.Chunks, a.finish != "", "no finishReason")
}

// errorText is an error's text, or says there was none.
func errorText(err error) string {
	if err == nil {
		return "no error said why"
	}
	return err.Error()
}

// googleSSE reads the data of a stream's events (Google's: data lines, CRLF or LF).
type googleSSE struct{ sc *bufio.Scanner }

func newGoogleSSE(r io.Reader) *googleSSE {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20) // a chunk may carry an image
	return &googleSSE{sc: sc}
}

// next is the next event's data: io.EOF at the stream's end, the read's error when it broke. An
// event the stream ended in the middle of is not one (the stream was cut), unless its data is
// whole JSON (only the blank line after it is missing).
func (r *googleSSE) next() ([]byte, error) {
	var data []byte
	have := false
	for r.sc.Scan() {
		line := r.sc.Bytes()
		switch {
		case len(line) == 0:
			if have {
				return data, nil
			}
		case line[0] == ':':
			// A comment: a keep-alive, which the transport has seen (doneSpotter).
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			if string(field) == "data" {
				if have {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(value, []byte(" "))...)
				have = true
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		return nil, err
	}
	if have && json.Valid(data) {
		return data, nil
	}
	return nil, io.EOF
}

// geminiChunk is the part of a streamed GenerateContentResponse (or of an error object sent in its
// place) an answer needs.
type geminiChunk struct {
	Candidates []struct {
		Content *struct {
			Parts []*geminiPart `json:"parts"`
		} `json:"content"`
		FinishReason  genai.FinishReason `json:"finishReason"`
		FinishMessage string             `json:"finishMessage"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason        genai.BlockedReason `json:"blockReason"`
		BlockReasonMessage string              `json:"blockReasonMessage"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
		ToolUsePromptTokenCount int64 `json:"toolUsePromptTokenCount"`
	} `json:"usageMetadata"`
	Error json.RawMessage `json:"error"`
}

// geminiPart is a part of an answer: text, a thought, or a function call, and a thought signature
// (base64, kept as it came).
type geminiPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

// geminiPrefill adds the answer so far as the final model turn (onto a final model turn's text, its
// own prefill, which the answer continues), followed, when instruct, by a user turn asking to go
// on. Gemini may continue it or start over: the caller's continuation check tells.
func geminiPrefill(contents []*genai.Content, prefill string, instruct bool) []*genai.Content {
	if n := len(contents); n > 0 && contents[n-1].Role == genai.RoleModel {
		last := contents[n-1]
		if p := last.Parts[len(last.Parts)-1]; p.Text != "" && !p.Thought && p.FunctionCall == nil {
			p.Text += prefill
		} else {
			last.Parts = append(last.Parts, &genai.Part{Text: prefill})
		}
	} else {
		contents = append(contents, &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: prefill}}})
	}
	if instruct {
		contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: continueInstruction}}})
	}
	return contents
}

// geminiDrops notes what the Gemini wire leaves out of a turn (Dropped).
func geminiDrops(t Turn, d *drops) { geminiRequest(t, d) }

// geminiRequest translates a turn to the SDK's contents and generation config, noting what it
// drops.
func geminiRequest(t Turn, d *drops) ([]*genai.Content, *genai.GenerateContentConfig) {
	config := &genai.GenerateContentConfig{}
	var contents []*genai.Content
	config.SystemInstruction, contents = geminiContents(t.Messages, d)

	var decls []*genai.FunctionDeclaration
	for _, tool := range t.Tools {
		if tool.Strict != nil {
			d.add("tools.strict")
		}
		if len(tool.CacheControl) > 0 {
			d.add("tools.cacheControl")
		}
		decl := &genai.FunctionDeclaration{Name: tool.Name, Description: tool.Description}
		if schema := rawJSON(tool.Schema); len(schema) > 0 {
			decl.ParametersJsonSchema = schema
		}
		decls = append(decls, decl)
	}
	if len(decls) > 0 {
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		if c := t.ToolChoice; c != nil {
			fc := &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}
			switch c.Type {
			case ToolChoiceNone:
				fc.Mode = genai.FunctionCallingConfigModeNone
			case ToolChoiceRequired:
				fc.Mode = genai.FunctionCallingConfigModeAny
			case ToolChoiceNamed:
				fc.Mode, fc.AllowedFunctionNames = genai.FunctionCallingConfigModeAny, []string{c.Name}
			}
			config.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: fc}
		}
		if pt := t.ParallelToolCalls; pt != nil && !*pt {
			d.add("parallelToolCalls") // Gemini may always call several at once
		}
	} else {
		dropToolControls(t, d)
	}

	p := t.Params
	config.Temperature, config.TopP = geminiFloat(p.Temperature), geminiFloat(p.TopP)
	config.PresencePenalty, config.FrequencyPenalty = geminiFloat(p.PresencePenalty), geminiFloat(p.FrequencyPenalty)
	if p.MaxTokens != nil && *p.MaxTokens > 0 {
		config.MaxOutputTokens = int32(min(*p.MaxTokens, math.MaxInt32))
	}
	if p.Seed != nil {
		if *p.Seed >= math.MinInt32 && *p.Seed <= math.MaxInt32 {
			config.Seed = genai.Ptr(int32(*p.Seed))
		} else {
			d.add("params.seed") // Gemini's seed is 32 bits
		}
	}
	for _, s := range p.Stop {
		if len(config.StopSequences) == geminiMaxStops {
			d.add("params.stop")
			break
		}
		config.StopSequences = append(config.StopSequences, s)
	}
	if f := p.ResponseFormat; f != nil && (f.Type == FormatJSONObject || f.Type == FormatJSONSchema) {
		config.ResponseMIMEType = "application/json"
		if schema := rawJSON(f.Schema); f.Type == FormatJSONSchema && len(schema) > 0 {
			config.ResponseJsonSchema = schema
		}
		if f.Name != "" {
			d.add("params.responseFormat.name")
		}
		if f.Description != "" {
			d.add("params.responseFormat.description")
		}
		if f.Strict != nil {
			d.add("params.responseFormat.strict")
		}
	}
	var budget int64
	switch effort := strings.ToLower(strings.TrimSpace(p.ReasoningEffort)); {
	case p.ThinkingBudget != nil && *p.ThinkingBudget > 0:
		budget = *p.ThinkingBudget
	case effort == "none":
		// No setting turns thinking off on every Gemini model (a budget of 0 is refused by those
		// that always think): the model's default stands.
		d.add("params.reasoningEffort")
	case effort != "":
		budget = ReasoningBudget(effort)
	}
	if budget > 0 {
		config.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr(int32(min(budget, math.MaxInt32)))}
	}
	return contents, config
}

func geminiFloat(f *float64) *float32 {
	if f == nil {
		return nil
	}
	return genai.Ptr(float32(*f))
}

// geminiContents translates the conversation: system and developer text to the system
// instruction, user and tool messages to user turns, assistant messages to model turns, same-role
// turns merged. A tool result becomes a functionResponse at the head of the user turn right after
// the model turn that made the call, named as the call was (Gemini matches them by name); its
// images follow in that turn.
func geminiContents(msgs []Message, d *drops) (system *genai.Content, out []*genai.Content) {
	calls := map[string]string{} // call id → name
	for _, m := range msgs {
		if m.Role != RoleAssistant {
			continue
		}
		for _, p := range m.Content {
			if p.Type == PartToolCall {
				calls[p.CallID] = p.Name
			}
		}
	}
	owner := map[string]int{} // call id → index in out of its model turn
	add := func(role string, parts ...*genai.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &genai.Content{Role: role, Parts: parts})
	}
	for _, m := range msgs {
		for _, p := range m.Content {
			if len(p.CacheControl) > 0 {
				d.add("messages.content.cacheControl") // Gemini caches prompts by itself
			}
		}
		switch m.Role {
		case RoleSystem, RoleDeveloper:
			for _, p := range m.Content {
				switch {
				case p.Type != PartText:
					d.add("messages.content." + p.Type + inRole(m.Role))
				case strings.TrimSpace(p.Text) != "":
					if system == nil {
						system = &genai.Content{Role: genai.RoleUser}
					}
					system.Parts = append(system.Parts, &genai.Part{Text: p.Text})
				}
			}
		case RoleAssistant:
			parts := geminiModelParts(m.Content, d)
			add(genai.RoleModel, parts...)
			for _, p := range parts {
				if p.FunctionCall != nil {
					owner[p.FunctionCall.ID] = len(out) - 1
				}
			}
		default: // user, tool
			var lead, rest []*genai.Part // function responses lead their turn
			for _, p := range m.Content {
				switch {
				case p.Type == PartToolResult:
					name, known := calls[p.CallID]
					if !known {
						d.add("messages.content.tool_result (answering no call of the turn)")
						continue
					}
					response, images := geminiToolResult(p, d)
					part := &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: p.CallID, Name: name, Response: response}}
					if a, ok := owner[p.CallID]; ok && a+1 < len(out) {
						geminiLead(out[a+1], part) // turns alternate: out[a+1] is a user turn
						out[a+1].Parts = append(out[a+1].Parts, images...)
						continue
					}
					lead = append(lead, part)
					rest = append(rest, images...)
				case m.Role == RoleTool:
					d.add("messages.content." + p.Type + inRole(RoleTool))
				case p.Type == PartText:
					if strings.TrimSpace(p.Text) != "" {
						rest = append(rest, &genai.Part{Text: p.Text})
					}
				case p.Type == PartImage:
					if part := geminiImage(p, d); part != nil {
						rest = append(rest, part)
					}
				default:
					d.add("messages.content." + p.Type + inRole(m.Role))
				}
			}
			if len(lead) > 0 && len(out) > 0 && out[len(out)-1].Role == genai.RoleUser {
				for _, part := range lead {
					geminiLead(out[len(out)-1], part)
				}
				lead = nil
			}
			add(genai.RoleUser, append(lead, rest...)...)
		}
	}
	if len(out) == 0 || out[0].Role != genai.RoleUser {
		out = append([]*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: geminiOpening}}}}, out...)
	}
	return system, out
}

// geminiLead puts a function response in a user turn after the function responses already at its
// head.
func geminiLead(c *genai.Content, part *genai.Part) {
	i := 0
	for i < len(c.Parts) && c.Parts[i].FunctionResponse != nil {
		i++
	}
	c.Parts = append(c.Parts, nil)
	copy(c.Parts[i+1:], c.Parts[i:])
	c.Parts[i] = part
}

// geminiModelParts is an assistant message as a model turn's parts: text, images, function calls
// with the thought signatures Gemini gave them, a text answer's signature on its last text part.
func geminiModelParts(content []Part, d *drops) []*genai.Part {
	callSigs := map[string][]byte{}
	var textSig []byte
	for _, p := range content {
		if p.Type != PartReasoning {
			continue
		}
		sig, ok := geminiSignature(p)
		switch {
		case ok && p.CallID != "":
			callSigs[p.CallID] = sig
		case ok:
			textSig = sig
		case p.Signature != "" || p.Redacted != "" || p.ReasoningID != "" || p.Encrypted != "":
			d.add("messages.content.reasoning (not a Gemini thought signature)")
		default:
			d.add("messages.content.reasoning (without a signature)")
		}
	}
	var parts []*genai.Part
	lastText := -1
	for _, p := range content {
		switch p.Type {
		case PartText:
			if strings.TrimSpace(p.Text) != "" {
				lastText = len(parts)
				parts = append(parts, &genai.Part{Text: p.Text})
			}
		case PartImage:
			if part := geminiImage(p, d); part != nil {
				parts = append(parts, part)
			}
		case PartToolCall:
			part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: p.CallID, Name: p.Name, Args: geminiArgs(p.Arguments)}}
			if sig, ok := callSigs[p.CallID]; ok {
				part.ThoughtSignature = sig
				delete(callSigs, p.CallID)
			} else if n := len(parts); n == 0 || parts[n-1].FunctionCall == nil {
				// The first call of a step that Gemini did not make (or whose signature is lost).
				part.ThoughtSignature = geminiSkipSignature
			}
			parts = append(parts, part)
		case PartReasoning:
			// Read above: Gemini takes its signatures back, not its thoughts.
		default:
			d.add("messages.content." + p.Type + inRole(RoleAssistant))
		}
	}
	if len(callSigs) > 0 {
		d.add("messages.content.reasoning (a signature for a call not in its message)")
	}
	if textSig != nil {
		if lastText >= 0 {
			parts[lastText].ThoughtSignature = textSig
		} else {
			d.add("messages.content.reasoning (a text answer's signature without its text)")
		}
	}
	return parts
}

// geminiSignature is the thought signature a reasoning part holds, when it is one of Gemini's
// (Encrypted without a ReasoningID, in base64).
func geminiSignature(p Part) ([]byte, bool) {
	if p.Encrypted == "" || p.ReasoningID != "" || p.Signature != "" || p.Redacted != "" {
		return nil, false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if sig, err := enc.DecodeString(p.Encrypted); err == nil && len(sig) > 0 {
			return sig, true
		}
	}
	return nil, false
}

// geminiArgs is a tool call's arguments as a functionCall's args: a JSON object (empty when they
// are none, or not an object: Gemini takes nothing else).
func geminiArgs(args string) map[string]any {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return map[string]any{}
	}
	return obj
}

// geminiToolResult is a tool result as a functionResponse's response, by the keys Google
// documents ("output", or "error" for a failed call), and its images, which go as parts of the
// user turn beside it (a function response takes images on Gemini 3 only).
func geminiToolResult(p Part, d *drops) (map[string]any, []*genai.Part) {
	var images []*genai.Part
	for _, r := range p.Result {
		switch r.Type {
		case PartText:
		case PartImage:
			if part := geminiImage(r, d); part != nil {
				images = append(images, part)
			}
		default:
			d.add("messages.content.result." + r.Type)
		}
	}
	key := "output"
	if p.IsError {
		key = "error"
	}
	return map[string]any{key: PartsText(p.Result)}, images
}

// geminiImage is an image part: inline bytes (data, or a data: URL), or a gs:// or https URL as
// file data, which needs its media type (given, or read from the URL's extension). Anything else
// is dropped.
func geminiImage(p Part, d *drops) *genai.Part {
	if p.Detail != "" {
		d.add("messages.content.detail")
	}
	switch {
	case len(p.Data) > 0:
		return &genai.Part{InlineData: &genai.Blob{MIMEType: cmp.Or(p.MediaType, SniffImage(p.Data)), Data: p.Data}}
	case strings.HasPrefix(p.URL, "data:"):
		if mt, data, err := ParseDataURL(p.URL); err == nil {
			return &genai.Part{InlineData: &genai.Blob{MIMEType: mt, Data: data}}
		}
	case strings.HasPrefix(p.URL, "gs://") || strings.HasPrefix(p.URL, "https://"):
		if mt := cmp.Or(p.MediaType, geminiImageType(p.URL)); mt != "" {
			return &genai.Part{FileData: &genai.FileData{FileURI: p.URL, MIMEType: mt}}
		}
	}
	d.add("messages.content.image (a URL Gemini cannot take)")
	return nil
}

// geminiImageType is an image URL's media type by its path's extension ("" when none is known).
func geminiImageType(u string) string {
	u, _, _ = strings.Cut(u, "?")
	switch strings.ToLower(path.Ext(u)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	}
	return ""
}

// geminiAssembly builds the answer from the chunks, handing it out as it goes: text and thoughts
// as they come, each function call (whole in its part) at once, each thought signature as a
// reasoning part before the call it came on.
type geminiAssembly struct {
	em       *emitter
	answer   *Answer
	thoughts strings.Builder // thought text since the last reasoning part
	finish   genai.FinishReason
	usage    Usage
}

// chunk takes one chunk; a chunk that ends the answer as a failure returns it.
func (a *geminiAssembly) chunk(c *geminiChunk) error {
	if u := c.UsageMetadata; u != nil {
		// Running totals: the last one counts. In OpenAI's meaning: input counts the cached prompt
		// (Gemini's prompt count does) and the tool-use prompt; output counts the thoughts (Gemini's
		// candidates count does not).
		a.usage = Usage{Input: u.PromptTokenCount + u.ToolUsePromptTokenCount, Output: u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CachedInput: u.CachedContentTokenCount, Reasoning: u.ThoughtsTokenCount}
	}
	if pf := c.PromptFeedback; pf != nil && pf.BlockReason != "" && pf.BlockReason != genai.BlockedReasonUnspecified && len(c.Candidates) == 0 {
		// The prompt was refused before any answer: the same request is refused again (format).
		msg := "the prompt was blocked (" + string(pf.BlockReason) + ")"
		if pf.BlockReasonMessage != "" {
			msg += ": " + pf.BlockReasonMessage
		}
		return &Error{Stream: FaultInBandError, Type: "PROMPT_BLOCKED", Code: googleFormat, Message: msg}
	}
	if len(c.Candidates) == 0 {
		return nil
	}
	cand := c.Candidates[0]
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if p != nil {
				a.part(p)
			}
		}
	}
	if cand.FinishReason == "" || cand.FinishReason == genai.FinishReasonUnspecified {
		return nil
	}
	a.finish = cand.FinishReason
	return geminiFinishFailure(cand.FinishReason, cand.FinishMessage)
}

func (a *geminiAssembly) part(p *geminiPart) {
	switch {
	case p.Thought:
		a.thoughts.WriteString(p.Text)
		a.em.emitReasoning(p.Text)
		if p.ThoughtSignature != "" {
			a.signed(p.ThoughtSignature, "")
		}
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		call := ToolCall{ID: orNewCallID(fc.ID), Name: fc.Name, Arguments: "{}"}
		if args := bytes.TrimSpace(fc.Args); len(args) > 0 && string(args) != "null" {
			call.Arguments = compactJSON(args)
		}
		if p.ThoughtSignature != "" {
			a.signed(p.ThoughtSignature, call.ID)
		}
		a.em.progress(call.Arguments)
		a.answer.ToolCalls = append(a.answer.ToolCalls, call)
		a.em.emitCall(call)
	default:
		a.em.emitText(p.Text) // text, or nothing (an empty part that carries a signature)
		if p.ThoughtSignature != "" {
			a.signed(p.ThoughtSignature, "")
		}
	}
}

// signed closes a reasoning part: the thoughts so far and a signature, for the call callID ("":
// the text answer's).
func (a *geminiAssembly) signed(sig, callID string) {
	p := Part{Type: PartReasoning, Text: a.thoughts.String(), Encrypted: sig, CallID: callID}
	a.thoughts.Reset()
	a.answer.Reasoning = append(a.answer.Reasoning, p)
	a.em.emitReasoningPart(p)
}

// end closes the answer: the thoughts no signature followed, the finish reason and the usage.
func (a *geminiAssembly) end() {
	if a.thoughts.Len() > 0 {
		p := Part{Type: PartReasoning, Text: a.thoughts.String()}
		a.thoughts.Reset()
		a.answer.Reasoning = append(a.answer.Reasoning, p)
		a.em.emitReasoningPart(p)
	}
	a.answer.FinishReason = geminiFinish(a.finish, len(a.answer.ToolCalls) > 0)
	a.answer.Usage = a.usage
}

// geminiFinish is a finish reason in OpenAI's words.
func geminiFinish(reason genai.FinishReason, calls bool) string {
	switch reason {
	case genai.FinishReasonStop, "":
		if calls {
			return FinishToolCalls
		}
		return FinishStop
	case genai.FinishReasonNoImage:
		return FinishStop
	case genai.FinishReasonMaxTokens, genai.FinishReasonContinuation:
		return FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonLanguage, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent,
		genai.FinishReasonImageRecitation, genai.FinishReasonImageOther, genai.FinishReasonModelArmor, genai.FinishReasonEscalation,
		genai.FinishReasonOther:
		return FinishContentFilter // stopped by a filter, or for no reason of the model's own
	}
	return strings.ToLower(string(reason))
}

// geminiFinishFailure is the failure a finish reason is, if it is one. A malformed or unexpected
// function call (or a response Gemini itself calls malformed) is the model's stumble, not the
// request's: another try may well succeed, so it is a malformed stream (a timeout to the policy),
// not a format error that would stop the reply. A missing thought signature is the request's
// fault (format); an account limited for its use is the profile's (auth_permanent).
func geminiFinishFailure(reason genai.FinishReason, message string) error {
	msg := "the answer ended with finishReason " + string(reason)
	if message != "" {
		msg += ": " + message
	}
	switch reason {
	case genai.FinishReasonMalformedFunctionCall, genai.FinishReasonUnexpectedToolCall, genai.FinishReasonTooManyToolCalls,
		genai.FinishReasonMalformedResponse:
		return &Error{Stream: FaultMalformed, Type: string(reason), Message: msg}
	case genai.FinishReasonMissingThoughtSignature:
		return &Error{Stream: FaultInBandError, Type: string(reason), Code: googleFormat, Message: msg}
	case genai.FinishReasonPupLimitedDisabled:
		return &Error{Stream: FaultInBandError, Type: string(reason), Code: googleAuthPermanent, Message: msg}
	}
	return nil
}

// googleCall is the transport under the SDK: it keeps what the model call answered (status, the
// hint headers, an error's body), which the SDK's APIError does not carry whole (an array around
// the error object, the headers), for googleFailure.
type googleCall struct {
	base http.RoundTripper
	// bearer, when set, is the access token the call goes with (Vertex AI's).
	bearer string
	// keep: a 2xx answer's body is kept (stream) for the adapter to read, the SDK given an empty one.
	keep   bool
	stream io.ReadCloser
	mu     sync.Mutex
	tried  bool // a request went out
	// status, header and body are the last answer's (the body only for an error status).
	status int
	header http.Header
	body   []byte
}

func (c *googleCall) RoundTrip(r *http.Request) (*http.Response, error) {
	base := c.base
	if base == nil {
		base = http.DefaultTransport
	}
	if c.bearer != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	c.mu.Lock()
	c.tried = true
	c.mu.Unlock()
	resp, err := base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status, c.header, c.body = resp.StatusCode, resp.Header.Clone(), nil
	switch {
	case resp.StatusCode >= 300:
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
		resp.Body.Close()
		c.body = data
		resp.Body = io.NopCloser(bytes.NewReader(data))
	case c.keep:
		c.stream, resp.Body = resp.Body, http.NoBody
	}
	return resp, nil
}

// sent reports whether a request went out.
func (c *googleCall) sent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tried
}

// kept is the stream kept from a 2xx answer (nil when none came).
func (c *googleCall) kept() io.ReadCloser {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stream
	c.stream = nil
	return s
}

// failure is the model call's error status as an *Error (nil when it answered 2xx, or nothing).
func (c *googleCall) failure() *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status < 300 {
		return nil
	}
	return googleFailure(&Error{Status: c.status, Headers: pickHeaders(c.header)}, c.body)
}

// The codes the classifier reads (policy's classifyCode), which googleCode gives Google's errors:
// Error.Type keeps Google's own status.
const (
	googleRateLimit       = "RESOURCE_EXHAUSTED"      // rate_limit
	googleOverloaded      = "OVERLOADED"              // overloaded
	googleServerError     = "SERVER_ERROR"            // timeout
	googleAuth            = "INVALID_API_KEY"         // auth
	googleAuthPermanent   = "DEACTIVATED_WORKSPACE"   // auth_permanent
	googleBilling         = "INSUFFICIENT_QUOTA"      // billing
	googleModelNotFound   = "MODEL_NOT_FOUND"         // model_not_found
	googleContextOverflow = "CONTEXT_LENGTH_EXCEEDED" // context_overflow
	googleFormat          = "UNKNOWN_PARAMETER"       // format
)

// googleStatusCodes reads Google's canonical error statuses. UNAVAILABLE is Gemini's "The model
// is overloaded"; INTERNAL, DEADLINE_EXCEEDED and their kin are the server's (timeout); NOT_FOUND
// names a model (or a publisher model the project cannot reach); a request refused as it stands
// is format (INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE, UNIMPLEMENTED).
var googleStatusCodes = map[string]string{
	"RESOURCE_EXHAUSTED":  googleRateLimit,
	"UNAVAILABLE":         googleOverloaded,
	"INTERNAL":            googleServerError,
	"UNKNOWN":             googleServerError,
	"DEADLINE_EXCEEDED":   googleServerError,
	"ABORTED":             googleServerError,
	"CANCELLED":           googleServerError,
	"DATA_LOSS":           googleServerError,
	"UNAUTHENTICATED":     googleAuth,
	"PERMISSION_DENIED":   googleAuth,
	"NOT_FOUND":           googleModelNotFound,
	"INVALID_ARGUMENT":    googleFormat,
	"FAILED_PRECONDITION": googleFormat,
	"OUT_OF_RANGE":        googleFormat,
	"UNIMPLEMENTED":       googleFormat,
	"ALREADY_EXISTS":      googleFormat,
}

// googleReasonCodes reads an ErrorInfo's reason, which says more than the status: a key that is
// not valid, blocked, or for a disabled API is auth (another profile may work; SERVICE_DISABLED
// says the project never enabled the API); a project whose billing is off is billing; a consumer
// Google suspended is auth_permanent (no retry and no wait brings it back: a person must act,
// as for a deactivated workspace).
var googleReasonCodes = map[string]string{
	"API_KEY_INVALID":                 googleAuth,
	"API_KEY_EXPIRED":                 googleAuth,
	"API_KEY_SERVICE_BLOCKED":         googleAuth,
	"API_KEY_HTTP_REFERRER_BLOCKED":   googleAuth,
	"API_KEY_IP_ADDRESS_BLOCKED":      googleAuth,
	"API_KEY_ANDROID_APP_BLOCKED":     googleAuth,
	"API_KEY_IOS_APP_BLOCKED":         googleAuth,
	"SERVICE_DISABLED":                googleAuth,
	"ACCESS_TOKEN_EXPIRED":            googleAuth,
	"ACCESS_TOKEN_SCOPE_INSUFFICIENT": googleAuth,
	"CREDENTIALS_MISSING":             googleAuth,
	"IAM_PERMISSION_DENIED":           googleAuth,
	"BILLING_DISABLED":                googleBilling,
	"CONSUMER_SUSPENDED":              googleAuthPermanent,
	"RATE_LIMIT_EXCEEDED":             googleRateLimit,
}

var (
	// googleOverflowRe: the input is over the model's window. The Gemini API's 400 ("The input
	// token count (N) exceeds the maximum number of tokens allowed (M)"), Vertex AI's 400 ("the
	// input token count is N but model only supports up to M") and 404.
	googleOverflowRe = regexp.MustCompile(`(?i)exceeds the maximum number of tokens|input token count is \d+ but (the )?model only supports|input context is too long`)
	// googleLocationRe: the Gemini API does not serve the country the call comes from. No key,
	// wait or retry helps from there (auth_permanent: the profile is unusable where baton runs);
	// the free tier's own variant asks for billing instead.
	googleLocationRe = regexp.MustCompile(`(?i)user location is not supported`)
	googleFreeTierRe = regexp.MustCompile(`(?i)free tier is not available in your country`)
	// googleMoneyRe: a RESOURCE_EXHAUSTED that is money, not a rate: prepaid credits used up, or a
	// billing account closed. (The daily free-tier quota is not: it is per model and comes back
	// the next day, as a rate limit does.)
	googleMoneyRe = regexp.MustCompile(`(?i)prepay|credits? (are|is|have been|has been) (depleted|exhausted|used up)|billing account`)
)

// googleHTTPStatus is the status an error object without one has, by its code.
var googleHTTPStatus = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL", 501: "UNIMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}

// googleErrorObject is Google's error object: {"error":{"code","message","status","details"}}.
type googleErrorObject struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Status  string         `json:"status"`
	Details []googleDetail `json:"details"`
}

// googleDetail is one of an error's details: an ErrorInfo's reason, a RetryInfo's delay.
type googleDetail struct {
	Type       string `json:"@type"`
	Reason     string `json:"reason"`
	RetryDelay string `json:"retryDelay"`
}

// reason is the ErrorInfo's reason ("" when there is none).
func (o googleErrorObject) reason() string {
	for _, d := range o.Details {
		if strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") && d.Reason != "" {
			return d.Reason
		}
	}
	return ""
}

// retryDelay is the RetryInfo's delay (a protobuf Duration: "7s", "0.5s").
func (o googleErrorObject) retryDelay() (time.Duration, bool) {
	for _, d := range o.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") && d.RetryDelay != "" {
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v >= 0 {
				return v, true
			}
		}
	}
	return 0, false
}

// googleCode is the code the classifier reads for a Google error: by its message where it is
// precise (an overflow, a country not served, money), else by its ErrorInfo reason, else by its
// status.
func googleCode(o googleErrorObject) string {
	switch {
	case o.Status != "RESOURCE_EXHAUSTED" && googleOverflowRe.MatchString(o.Message):
		return googleContextOverflow
	case googleFreeTierRe.MatchString(o.Message):
		return googleBilling
	case googleLocationRe.MatchString(o.Message):
		return googleAuthPermanent
	case o.Status == "RESOURCE_EXHAUSTED" && googleMoneyRe.MatchString(o.Message):
		return googleBilling
	}
	if code, ok := googleReasonCodes[o.reason()]; ok {
		return code
	}
	return googleStatusCodes[o.Status]
}

// parseGoogleError reads Google's error object from a body: bare, or first in the JSON array some
// Vertex AI endpoints wrap it in. ok is false for anything else (Anthropic's shape, a page).
func parseGoogleError(body []byte) (o googleErrorObject, object []byte, ok bool) {
	object = bytes.TrimSpace(body)
	if bytes.HasPrefix(object, []byte("[")) {
		var list []json.RawMessage
		if json.Unmarshal(object, &list) != nil || len(list) == 0 {
			return o, body, false
		}
		object = list[0]
	}
	var wrapper struct {
		Error *struct {
			googleErrorObject
			Type string `json:"type"` // Anthropic's errors have one; Google's never
		} `json:"error"`
	}
	if json.Unmarshal(object, &wrapper) != nil || wrapper.Error == nil || wrapper.Error.Type != "" {
		return o, body, false
	}
	o = wrapper.Error.googleErrorObject
	if o.Status == "" {
		o.Status = googleHTTPStatus[o.Code]
	}
	return o, object, o.Status != "" || o.Message != ""
}

// googleFailure reads a failed answer's body into e: Google's error object into Type (its status),
// Code (googleCode), Message and Retry (its RetryInfo, unless a header said when); any other body
// (Anthropic's errors from Claude on Vertex AI, a gateway's page) as Parse reads every body.
func googleFailure(e *Error, body []byte) *Error {
	o, object, ok := parseGoogleError(body)
	if !ok {
		return e.Parse(body)
	}
	e.Type, e.Code = o.Status, googleCode(o)
	e.Parse(object)
	e.BodyPreview = preview(body)
	if d, ok := o.retryDelay(); ok && !e.Retry.HasAfter {
		e.Retry.After, e.Retry.HasAfter = d, true
	}
	return e
}
