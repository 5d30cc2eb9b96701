package provider

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"
	"github.com/aws/smithy-go/auth/bearer"
	smithydocument "github.com/aws/smithy-go/document"
	"github.com/aws/smithy-go/eventstream"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Amazon Bedrock's Converse API, streamed (ConverseStream), through aws-sdk-go-v2's
// bedrockruntime client: retries off, SigV4 with an access key pair (aws_keys) or the AWS default
// chain (ambient), or a Bedrock API key as a bearer token (api_key). The model is Request.Model: a
// model id, an inference profile id or an ARN.
//
// The turn is built as the Messages wire builds it (anthropicBody: Converse's content blocks are
// Anthropic's, and so are its rules on alternating roles, tool results and thinking), then written
// in Converse's shapes: text, image bytes, toolUse, toolResult, reasoningContent, and a cachePoint
// after each block that carries Anthropic's cache mark. A JSON response format is emulated by a
// forced tool, as on the Messages wire: Converse's own outputConfig only some models take, and a
// forced tool every Claude, Nova and Mistral Large model does. Thinking (a budget or an effort)
// goes in additionalModelRequestFields, for Claude models only: the field is the model's own.
//
// The answer is final only at messageStop and the metadata event that follows it (the usage);
// an exception frame in the stream is an in-band error. Every failure is classified once, here:
// Bedrock names its exception (x-amzn-ErrorType, or __type in the body), and bedrockCodes turns
// the name into the code the classifier reads.

// bedrockClaude: the model is Claude (a model id, an inference profile id, or an ARN naming it),
// which alone takes thinking and reasoning blocks back. An ARN that does not name its model (an
// application inference profile) is not known to be Claude: nothing Claude-only goes to it.
func bedrockClaude(model string) bool {
	m := strings.ToLower(model)
	return strings.Contains(m, "anthropic.") || strings.Contains(m, "claude")
}

// bedrockDropsModel is the model Dropped assumes (it is not told one): a Claude model, Bedrock's
// main family and the one its Converse wire carries the most of.
const bedrockDropsModel = "anthropic.claude"

// bedrockDrops notes what the Converse wire drops from a turn, for a Claude model.
func bedrockDrops(t Turn, d *drops) {
	bedrockBody(bedrockDropsModel, t, d, "", "")
}

// conversationStart is the user message put before a conversation that starts with the assistant:
// Converse refuses any other start.
const conversationStart = "(start of the conversation)"

// bedrockAbsentTool describes a tool the conversation used that the turn no longer offers: Converse
// refuses toolUse and toolResult blocks without a toolConfig.
const bedrockAbsentTool = "Not available in this turn: do not call it."

// bedrockBody translates a turn to a ConverseStream input, noting what it drops. prefill (as
// PrefillSent gives it) is the answer so far; continuation is how it is asked to go on. jsonTool
// names the tool that emulates a JSON response format ("" when none).
func bedrockBody(model string, t Turn, d *drops, prefill, continuation string) (in *bedrockruntime.ConverseStreamInput, jsonTool string) {
	claude := bedrockClaude(model)
	if !claude {
		// The thinking fields are Claude's: another model's are its own and not modelled.
		if p := t.Params; p.ThinkingBudget != nil && *p.ThinkingBudget > 0 {
			d.add("params.thinkingBudget")
		} else if p.ReasoningEffort != "" {
			d.add("params.reasoningEffort")
		}
		t.Params.ThinkingBudget, t.Params.ReasoningEffort = nil, ""
	}
	body, jsonTool := anthropicBody(model, t, d, prefill)
	if continuation == ContinueInstruction && prefill != "" && len(body.Messages) > 0 {
		body.Messages = append(body.Messages, anthropicMessage{Role: RoleUser, Content: []any{anthropicText{Type: "text", Text: continueInstruction}}})
	}
	in = &bedrockruntime.ConverseStreamInput{ModelId: aws.String(model)}

	for _, s := range body.System {
		in.System = append(in.System, &types.SystemContentBlockMemberText{Value: s.Text})
		if cp := bedrockCachePoint(s.CacheControl); cp != nil {
			in.System = append(in.System, &types.SystemContentBlockMemberCachePoint{Value: *cp})
		}
	}
	var called []string // the tools the conversation's toolUse blocks name
	for _, m := range body.Messages {
		msg := types.Message{Role: types.ConversationRoleUser}
		if m.Role == RoleAssistant {
			msg.Role = types.ConversationRoleAssistant
		}
		for _, block := range m.Content {
			msg.Content = append(msg.Content, bedrockBlocks(block, claude, d)...)
			if u, ok := block.(anthropicToolUse); ok && !slices.Contains(called, u.Name) {
				called = append(called, u.Name)
			}
		}
		if len(msg.Content) > 0 {
			in.Messages = append(in.Messages, msg)
		}
	}
	in.Messages = bedrockAlternate(in.Messages)
	carriesTools := len(called) > 0

	// Tools and the tool choice. Converse has no "none": the tools stay out, unless the
	// conversation holds tool blocks, which need a toolConfig (the choice is then the model's).
	choice := body.ToolChoice
	tools := body.Tools
	if choice != nil && choice.Type == "none" {
		d.add("toolChoice")
		choice = nil
		if !carriesTools {
			tools = nil
		}
	}
	if pt := t.ParallelToolCalls; pt != nil && !*pt {
		d.add("parallelToolCalls") // Converse cannot ask for one call at a time
	}
	if len(tools) == 0 && carriesTools {
		for _, name := range called {
			tools = append(tools, anthropicTool{Name: name, Description: bedrockAbsentTool, InputSchema: objectSchema})
		}
	}
	if len(tools) > 0 {
		cfg := &types.ToolConfiguration{}
		for _, tool := range tools {
			spec := types.ToolSpecification{Name: aws.String(tool.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: bedrockDocument(tool.InputSchema)}}
			if tool.Description != "" {
				spec.Description = aws.String(tool.Description)
			}
			cfg.Tools = append(cfg.Tools, &types.ToolMemberToolSpec{Value: spec})
			if cp := bedrockCachePoint(tool.CacheControl); cp != nil {
				cfg.Tools = append(cfg.Tools, &types.ToolMemberCachePoint{Value: *cp})
			}
		}
		// auto is Converse's default: it goes unsaid, as some models refuse any toolChoice.
		switch {
		case choice == nil:
		case choice.Type == "any":
			cfg.ToolChoice = &types.ToolChoiceMemberAny{}
		case choice.Type == "tool":
			cfg.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(choice.Name)}}
		}
		in.ToolConfig = cfg
	}

	// Sampling: anthropicBody clamped and dropped as Claude needs; the maximum goes only when the
	// turn names one or thinking needs room beyond its budget (Converse needs none).
	inf := &types.InferenceConfiguration{StopSequences: body.StopSequences}
	if body.Temperature != nil {
		inf.Temperature = aws.Float32(float32(*body.Temperature))
	}
	if body.TopP != nil {
		inf.TopP = aws.Float32(float32(*body.TopP))
	}
	if p := t.Params.MaxTokens; (p != nil && *p > 0) || body.Thinking != nil {
		inf.MaxTokens = aws.Int32(int32(min(body.MaxTokens, math.MaxInt32)))
	}
	if inf.Temperature != nil || inf.TopP != nil || inf.MaxTokens != nil || len(inf.StopSequences) > 0 {
		in.InferenceConfig = inf
	}
	if body.Thinking != nil {
		in.AdditionalModelRequestFields = document.NewLazyDocument(map[string]any{
			"thinking": map[string]any{"type": "enabled", "budget_tokens": body.Thinking.BudgetTokens}})
	}
	return in, jsonTool
}

// bedrockAlternate makes the conversation one Converse takes: roles that alternate (a message
// whose every block was dropped may leave two of a role in a row: they become one), from a user
// message (conversationStart goes before one that starts with the assistant).
func bedrockAlternate(msgs []types.Message) []types.Message {
	var out []types.Message
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content = append(out[n-1].Content, m.Content...)
			continue
		}
		out = append(out, m)
	}
	if len(out) > 0 && out[0].Role == types.ConversationRoleAssistant {
		start := types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: conversationStart}}}
		out = append([]types.Message{start}, out...)
	}
	return out
}

// bedrockNotClaude notes a reasoning part held back from a model that is not Claude.
const bedrockNotClaude = "messages.content.reasoning (for a model other than Claude)"

// bedrockBlocks writes a Messages block as Converse content blocks: the block, and a cachePoint
// after it when it carries Anthropic's cache mark. Reasoning goes back to Claude only: its
// signature is Anthropic's, and another model refuses the block.
func bedrockBlocks(block any, claude bool, d *drops) []types.ContentBlock {
	var out []types.ContentBlock
	var mark json.RawMessage
	switch b := block.(type) {
	case anthropicText:
		out, mark = append(out, &types.ContentBlockMemberText{Value: b.Text}), b.CacheControl
	case anthropicImage:
		img, ok := bedrockImage(b, d)
		if !ok {
			return nil
		}
		out, mark = append(out, &types.ContentBlockMemberImage{Value: img}), b.CacheControl
	case anthropicToolUse:
		out = append(out, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String(b.ID), Name: aws.String(b.Name), Input: bedrockDocument(b.Input)}})
		mark = b.CacheControl
	case anthropicToolResult:
		res := types.ToolResultBlock{ToolUseId: aws.String(b.ToolUseID)}
		if b.IsError {
			res.Status = types.ToolResultStatusError
		}
		// A cache mark inside a tool result has no place in Converse (one on the result has).
		for _, c := range b.Content {
			switch c := c.(type) {
			case anthropicText:
				res.Content = append(res.Content, &types.ToolResultContentBlockMemberText{Value: c.Text})
				if len(c.CacheControl) > 0 {
					d.add("messages.content.result.cacheControl")
				}
			case anthropicImage:
				if img, ok := bedrockImage(c, d); ok {
					res.Content = append(res.Content, &types.ToolResultContentBlockMemberImage{Value: img})
				}
				if len(c.CacheControl) > 0 {
					d.add("messages.content.result.cacheControl")
				}
			}
		}
		if len(res.Content) == 0 {
			// Converse refuses a tool result without content.
			res.Content = []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "(no output)"}}
		}
		out, mark = append(out, &types.ContentBlockMemberToolResult{Value: res}), b.CacheControl
	case anthropicThinkingBlock:
		if !claude {
			d.add(bedrockNotClaude)
			return nil
		}
		out = append(out, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
			Value: types.ReasoningTextBlock{Text: aws.String(b.Thinking), Signature: aws.String(b.Signature)}}})
	case anthropicRedactedThinking:
		if !claude {
			d.add(bedrockNotClaude)
			return nil
		}
		out = append(out, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{
			Value: bedrockRedacted(b.Data)}})
	}
	if cp := bedrockCachePoint(mark); cp != nil {
		out = append(out, &types.ContentBlockMemberCachePoint{Value: *cp})
	}
	return out
}

// bedrockImage is an image as bytes with its format: Converse takes no URL (nor fetches one).
func bedrockImage(b anthropicImage, d *drops) (types.ImageBlock, bool) {
	if b.Source.Type != "base64" || len(b.Source.Data) == 0 {
		d.add("messages.content.image (a URL)")
		return types.ImageBlock{}, false
	}
	format := types.ImageFormat(strings.TrimPrefix(b.Source.MediaType, "image/"))
	return types.ImageBlock{Format: format, Source: &types.ImageSourceMemberBytes{Value: b.Source.Data}}, true
}

// bedrockRedacted is a redacted reasoning block's data as bytes: the answer keeps it in base64
// (Part.Redacted is text); data that is not base64 goes as it is.
func bedrockRedacted(data string) []byte {
	if b, err := base64.StdEncoding.DecodeString(data); err == nil {
		return b
	}
	return []byte(data)
}

// bedrockCachePoint is Anthropic's cache mark as a Converse cache point (nil: no mark). A one-hour
// mark keeps its TTL.
func bedrockCachePoint(mark json.RawMessage) *types.CachePointBlock {
	if len(mark) == 0 {
		return nil
	}
	var m struct {
		TTL string `json:"ttl"`
	}
	_ = json.Unmarshal(mark, &m)
	cp := &types.CachePointBlock{Type: types.CachePointTypeDefault}
	if m.TTL == string(types.CacheTTLOneHour) {
		cp.Ttl = types.CacheTTLOneHour
	}
	return cp
}

// bedrockDocument is JSON text as a document the SDK writes back as it came: numbers keep their
// digits (json.Number becomes a document number, which the SDK writes raw). Text that is not JSON
// is an empty object (anthropicBody already made every schema and input an object).
func bedrockDocument(raw json.RawMessage) document.Interface {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		v = map[string]any{}
	}
	return document.NewLazyDocument(documentNumbers(v))
}

func documentNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return smithydocument.Number(v.String())
	case map[string]any:
		for k, x := range v {
			v[k] = documentNumbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = documentNumbers(x)
		}
	}
	return v
}

// bedrockTransport keeps the last response's status, headers and (for a failure) body, which the
// SDK reads and does not give back whole.
type bedrockTransport struct {
	base   http.RoundTripper
	mu     sync.Mutex
	status int
	header http.Header
	body   []byte
}

func (t *bedrockTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r = r.Clone(r.Context())
		r.Body = requestBody{r.Body}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status, t.header, t.body = resp.StatusCode, resp.Header.Clone(), nil
	if resp.StatusCode >= 300 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
		resp.Body.Close()
		t.body = data
		resp.Body = io.NopCloser(bytes.NewReader(data))
	}
	return resp, nil
}

func (t *bedrockTransport) last() (int, http.Header, []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.header, t.body
}

// requestBody hides the SDK's request body's WriteTo. The SDK closes the body once the response
// headers are in, and its WriteTo then fails with io.EOF; on a plain connection net/http may still
// be making its last read of the body (to check it holds no more than its length) after the server
// answered, and a failing read there closes the connection under the stream. A Read after the close
// reports a plain end instead.
type requestBody struct{ io.ReadCloser }

// bedrockBearer signs with a Bedrock API key. The SDK's own bearer signer refuses plain HTTP; a
// gateway or a test on http:// gets the key as every other wire's base URL does.
type bedrockBearer struct{}

func (bedrockBearer) SignWithBearerToken(_ context.Context, token bearer.Token, m bearer.Message) (bearer.Message, error) {
	req, ok := m.(*smithyhttp.Request)
	if !ok {
		return nil, fmt.Errorf("bedrock: cannot sign a %T with an API key", m)
	}
	req = req.Clone()
	req.Header.Set("Authorization", "Bearer "+token.Value)
	return req, nil
}

// bedrockExtras adds the provider's headers and query (Request.Headers, Query) in the build step,
// before SigV4 signs the request: a header or a query added after would not match the signature.
func bedrockExtras(headers, query map[string]string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		if len(headers) == 0 && len(query) == 0 {
			return nil
		}
		return stack.Build.Add(middleware.BuildMiddlewareFunc("BatonProviderHeaders",
			func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				if r, ok := in.Request.(*smithyhttp.Request); ok {
					for k, v := range headers {
						r.Header.Set(k, v)
					}
					if len(query) > 0 {
						q := r.URL.Query()
						for k, v := range query {
							q.Set(k, v)
						}
						r.URL.RawQuery = q.Encode()
					}
				}
				return next.HandleBuild(ctx, in)
			}), middleware.After)
	}
}

// ambientAWS caches the AWS default chain's configuration per region for a while: loading it reads
// files, and its credentials cache saves a fetch (instance role, SSO, assumed role) per attempt.
// Reloaded after ambientTTL, so that rotated files and environment are read again.
var ambientAWS = struct {
	sync.Mutex
	byRegion map[string]ambientConfig
}{byRegion: map[string]ambientConfig{}}

type ambientConfig struct {
	cfg    aws.Config
	loaded time.Time
}

const ambientTTL = 5 * time.Minute

func ambientConfigFor(ctx context.Context, region string) (aws.Config, error) {
	ambientAWS.Lock()
	defer ambientAWS.Unlock()
	if c, ok := ambientAWS.byRegion[region]; ok && time.Since(c.loaded) < ambientTTL {
		return c.cfg, nil
	}
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, err
	}
	ambientAWS.byRegion[region] = ambientConfig{cfg: cfg, loaded: time.Now()}
	return cfg, nil
}

// bedrockSetup is a failure before any call: a credential that cannot sign (auth: the profile is
// at fault, as the provider's 403 would say) or a provider without the settings Bedrock needs
// (no code: not a failover signal the classifier reads, the chain goes on).
func bedrockSetup(auth bool, format string, args ...any) *Error {
	e := &Error{Type: "ConfigurationError", Message: "bedrock: " + fmt.Sprintf(format, args...)}
	if auth {
		e.Type, e.Code = "CredentialsError", "INVALID_API_KEY"
	}
	return e
}

// bedrockClient makes the client for a request: its credential, region, endpoint and extras.
func bedrockClient(ctx context.Context, req Request, hc *http.Client) (*bedrockruntime.Client, error) {
	opts := bedrockruntime.Options{
		Region:           req.Region,
		HTTPClient:       hc,
		Retryer:          aws.NopRetryer{}, // the workflow owns every retry
		BearerAuthSigner: bedrockBearer{},
		APIOptions:       []func(*middleware.Stack) error{bedrockExtras(req.Headers, req.Query)},
	}
	if req.BaseURL != "" {
		opts.BaseEndpoint = aws.String(req.BaseURL)
	}
	c := req.Credential
	var scheme func(*bedrockruntime.Options) // applied after the client reads AWS_BEARER_TOKEN_BEDROCK
	signs := true                            // SigV4, which needs a region for its scope
	switch c.Type {
	case CredentialAWSKeys:
		if c.AccessKeyID == "" || c.SecretAccessKey == "" {
			return nil, bedrockSetup(true, "the aws_keys credential lacks its access key id or its secret access key")
		}
		opts.Credentials = credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)
		scheme = func(o *bedrockruntime.Options) {
			o.AuthSchemePreference, o.BearerAuthTokenProvider = []string{"sigv4"}, nil
		}
	case CredentialAmbient:
		// The chain decides, as any AWS program's does: AWS_BEARER_TOKEN_BEDROCK when set, else
		// the credentials of the environment, the shared files, SSO or the instance's role.
		cfg, err := ambientConfigFor(ctx, req.Region)
		if err != nil {
			return nil, bedrockSetup(true, "the AWS credential chain: %v", err)
		}
		opts.Credentials = cfg.Credentials
		if opts.Region == "" {
			opts.Region = cfg.Region
		}
	case "api_key", "token", "":
		key := c.bearer()
		if key == "" {
			return nil, bedrockSetup(true, "the %s credential has no key", cmp.Or(c.Type, "api_key"))
		}
		token := bearer.StaticTokenProvider{Token: bearer.Token{Value: key}}
		scheme = func(o *bedrockruntime.Options) {
			o.AuthSchemePreference, o.BearerAuthTokenProvider = []string{"httpBearerAuth"}, token
		}
		signs = false
	default:
		return nil, bedrockSetup(false, "a %s credential cannot call Bedrock (aws_keys, api_key or ambient)", c.Type)
	}
	if opts.Region == "" && (signs || req.BaseURL == "") {
		return nil, bedrockSetup(false, "no region: set the provider's region (models.providers.%s.region)", req.Provider)
	}
	if scheme == nil {
		return bedrockruntime.New(opts), nil
	}
	return bedrockruntime.New(opts, scheme), nil
}

// completeBedrock streams a Converse answer. It is final only at messageStop and the metadata
// after it.
func completeBedrock(ctx context.Context, req Request, hc *http.Client, clk *clock, em *emitter) (Response, error) {
	var resp Response
	rec := &bedrockTransport{base: hc.Transport}
	if rec.base == nil {
		rec.base = http.DefaultTransport
	}
	client, err := bedrockClient(ctx, req, &http.Client{Transport: rec})
	if err != nil {
		return resp, err
	}
	in, jsonTool := bedrockBody(req.Model, req.Turn, nil, PrefillSent(req.Prefill), req.Continuation)
	out, err := client.ConverseStream(ctx, in)
	if err != nil {
		return resp, bedrockCallError(ctx, err, rec, req.Credential)
	}
	stream := out.GetStream()
	defer stream.Close()

	emit := &anthropicEmitter{em: em, jsonTool: jsonTool}
	var blocks []*anthropicBlock
	byIndex := map[int32]*anthropicBlock{}
	redacted := map[*anthropicBlock][]byte{}
	block := func(index *int32, kind string) *anthropicBlock {
		i := aws.ToInt32(index)
		b := byIndex[i]
		if b == nil { // a delta without a start: Converse starts only tool blocks
			b = &anthropicBlock{kind: kind}
			blocks = append(blocks, b)
			byIndex[i] = b
		}
		return b
	}
	// seal finishes a reasoning block: redacted content makes it a redacted block, in base64.
	seal := func(b *anthropicBlock) {
		if data, ok := redacted[b]; ok && b.kind == "thinking" {
			b.kind, b.data = "redacted_thinking", base64.StdEncoding.EncodeToString(data)
		}
	}
	var counts anthropicCounts
	var stopReason string
	var late error
	stopped, metered := false, false
events:
	for ev := range stream.Events() {
		resp.Chunks++
		clk.chunk()
		switch ev := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			if start, ok := ev.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				b := &anthropicBlock{kind: "tool_use", id: aws.ToString(start.Value.ToolUseId), name: aws.ToString(start.Value.Name)}
				blocks = append(blocks, b)
				byIndex[aws.ToInt32(ev.Value.ContentBlockIndex)] = b
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			index := ev.Value.ContentBlockIndex
			var b *anthropicBlock
			var piece string
			switch d := ev.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				b, piece = block(index, "text"), d.Value
			case *types.ContentBlockDeltaMemberToolUse:
				b, piece = block(index, "tool_use"), aws.ToString(d.Value.Input)
			case *types.ContentBlockDeltaMemberReasoningContent:
				b = block(index, "thinking")
				switch r := d.Value.(type) {
				case *types.ReasoningContentBlockDeltaMemberText:
					piece = r.Value
				case *types.ReasoningContentBlockDeltaMemberSignature:
					b.signature += r.Value
					continue
				case *types.ReasoningContentBlockDeltaMemberRedactedContent:
					redacted[b] = append(redacted[b], r.Value...)
					continue
				default:
					continue
				}
			default:
				continue
			}
			if b.done {
				if strings.TrimSpace(piece) != "" {
					late = lateArguments()
					break events
				}
				continue
			}
			b.text.WriteString(piece)
			switch b.kind {
			case "text":
				emit.text(piece)
			case "thinking":
				em.emitReasoning(piece)
			case "tool_use":
				em.progress(piece)
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
			b := byIndex[aws.ToInt32(ev.Value.ContentBlockIndex)]
			if b != nil && b.kind == "thinking" {
				seal(b)
				// Whole, with its signature: a Claude candidate takes it back.
				em.emitReasoningPart(Part{Type: PartReasoning, Text: b.text.String(), Signature: b.signature, Redacted: b.data})
			}
			emit.stop(b)
		case *types.ConverseStreamOutputMemberMessageStop:
			stopped, stopReason = true, bedrockStop(ev.Value.StopReason)
			emit.end(blocks)
		case *types.ConverseStreamOutputMemberMetadata:
			if u := ev.Value.Usage; u != nil {
				counts = anthropicCounts{input: int64(aws.ToInt32(u.InputTokens)), output: int64(aws.ToInt32(u.OutputTokens)),
					cacheRead: int64(aws.ToInt32(u.CacheReadInputTokens)), cacheCreation: int64(aws.ToInt32(u.CacheWriteInputTokens))}
			}
			metered = stopped
		}
	}
	for _, b := range blocks {
		seal(b)
	}
	resp.Answer = anthropicAnswer(blocks, stopReason, counts, jsonTool)
	missing := "no messageStop"
	if stopped {
		missing = "no metadata after messageStop"
	}
	err = streamEnd(ctx, late, stream.Err(), resp.Chunks, stopped && metered, missing)
	if err != nil {
		err = bedrockStreamError(ctx, err, req.Credential)
	}
	return resp, err
}

// bedrockStop is a Converse stop reason in the Messages wire's words (anthropicFinish reads them):
// a guardrail or a content filter is a refusal.
func bedrockStop(r types.StopReason) string {
	switch r {
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		return "refusal"
	}
	return string(r)
}

// bedrockCodes turns Bedrock's exception names into the codes the classifier reads (policy's
// classifyCode): the reason each gives is in the comment. A name not here keeps no code: its
// status and words decide.
var bedrockCodes = map[string]string{
	"ThrottlingException":           "THROTTLINGEXCEPTION", // rate_limit
	"ServiceQuotaExceededException": "RESOURCE_EXHAUSTED",  // rate_limit
	// Bedrock says "Bedrock is unable to process your request" or "The service isn't currently
	// available": the model's capacity, not this account's quota. Words of too many requests in
	// it are read first, and make it a rate limit.
	"ServiceUnavailableException": "OVERLOADED",      // overloaded
	"ModelNotReadyException":      "OVERLOADED",      // overloaded (a 429: see the report on classify429)
	"InternalServerException":     "SERVER_ERROR",    // timeout
	"ModelTimeoutException":       "SERVER_ERROR",    // timeout
	"ModelErrorException":         "SERVER_ERROR",    // timeout
	"ModelStreamErrorException":   "SERVER_ERROR",    // timeout, unless the model's own status says more
	"AccessDeniedException":       "INVALID_API_KEY", // auth
	// An access key that AWS does not know, an expired session token, a wrong secret key.
	"UnrecognizedClientException":         "INVALID_API_KEY",   // auth
	"ExpiredTokenException":               "INVALID_API_KEY",   // auth
	"InvalidSignatureException":           "INVALID_API_KEY",   // auth
	"IncompleteSignatureException":        "INVALID_API_KEY",   // auth
	"MissingAuthenticationTokenException": "INVALID_API_KEY",   // auth
	"ResourceNotFoundException":           "MODEL_NOT_FOUND",   // model_not_found
	"ValidationException":                 "UNKNOWN_PARAMETER", // format, or as bedrockCode reads its words
}

// A ValidationException's words: the input over the model's context (context_overflow), or a
// model this account cannot call by that id (model_not_found: another candidate may serve).
var (
	bedrockOverflowRe = regexp.MustCompile(`(?i)input is too long|too many input tokens|prompt is too long|` +
		`exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context|context (?:limit|window|length)`)
	bedrockNoModelRe = regexp.MustCompile(`(?i)model identifier is invalid|on-demand throughput isn.?t supported|` +
		`could not resolve the foundation model`)
)

// bedrockCode is the code for an exception and its message (and, for a model stream error, the
// status the model itself answered).
func bedrockCode(name, message string, modelStatus int) string {
	switch name {
	case "ValidationException":
		switch {
		case bedrockOverflowRe.MatchString(message):
			return "CONTEXT_LENGTH_EXCEEDED"
		case bedrockNoModelRe.MatchString(message):
			return "MODEL_NOT_FOUND"
		}
	case "ModelStreamErrorException":
		switch modelStatus {
		case 429:
			return "THROTTLINGEXCEPTION"
		case 503, 529:
			return "OVERLOADED"
		}
	}
	return bedrockCodes[name]
}

// bedrockName is an exception's short name: "ThrottlingException:http://internal.amazon.com/…"
// (x-amzn-ErrorType), "com.amazon.coral.service#ExpiredTokenException" (__type), or a stream's
// member name ("throttlingException").
func bedrockName(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[i+1:]
	}
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// bedrockErrorBody is what Bedrock's error bodies say: {"message": …} (or "Message"), with
// __type or code at times.
type bedrockErrorBody struct {
	Message string `json:"message"` // encoding/json matches "Message" too
	Type    string `json:"__type"`
	Code    string `json:"code"`
}

// bedrockCallError is a call that failed before its stream: an HTTP status with Bedrock's
// exception, a transport failure, or a credential the SDK could not resolve.
func bedrockCallError(ctx context.Context, err error, rec *bedrockTransport, c Credential) error {
	if ctx.Err() != nil {
		return err // a clock ran out: toError reads which
	}
	status, header, body := rec.last()
	if status >= 300 {
		var b bedrockErrorBody
		_ = json.Unmarshal(body, &b)
		name := bedrockName(header.Get("X-Amzn-ErrorType"))
		if name == "" {
			name = bedrockName(cmp.Or(b.Type, b.Code))
		}
		var ae smithy.APIError
		if name == "" && errors.As(err, &ae) && ae.ErrorCode() != "UnknownError" {
			name = bedrockName(ae.ErrorCode())
		}
		e := &Error{Status: status, Headers: pickHeaders(header), Type: name, Code: bedrockCode(name, b.Message, 0)}
		return bedrockScrub(e.Parse(body), c)
	}
	var send *smithyhttp.RequestSendError
	if status == 0 && !errors.As(err, &send) {
		// Nothing was sent: the credential chain (or the endpoint) failed first.
		auth := c.Type == CredentialAmbient && strings.Contains(err.Error(), "identity")
		return bedrockScrub(bedrockSetup(auth, "%v", err), c)
	}
	return err // the transport's failure: toError reads its kind
}

// bedrockStreamError is a stream that failed: an exception frame (an in-band error), a frame that
// would not decode (malformed), or a connection lost mid-stream (cut).
func bedrockStreamError(ctx context.Context, err error, c Credential) error {
	var pe *Error
	if ctx.Err() != nil || errors.As(err, &pe) {
		return err
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		name, message := bedrockName(ae.ErrorCode()), ae.ErrorMessage()
		raw := map[string]any{"message": message}
		modelStatus := 0
		var mse *types.ModelStreamErrorException
		if errors.As(err, &mse) {
			modelStatus = int(aws.ToInt32(mse.OriginalStatusCode))
			if mse.OriginalStatusCode != nil {
				raw["originalStatusCode"] = modelStatus
			}
			if mse.OriginalMessage != nil {
				raw["originalMessage"] = *mse.OriginalMessage
			}
		}
		body, _ := json.Marshal(raw)
		e := &Error{Stream: FaultInBandError, Type: name, Code: bedrockCode(name, message, modelStatus)}
		return bedrockScrub(e.Parse(body), c)
	}
	if malformedFrame(err) {
		return &Error{Stream: FaultMalformed, Message: "a stream frame would not decode: " + err.Error()}
	}
	return &Error{Stream: FaultCut, Net: netKind(err), Message: errCut.Error() + ": " + err.Error()}
}

// malformedFrame reports a frame that would not decode: its checksum, its lengths, its headers,
// or its JSON payload (anything else that ends a stream is the connection's).
func malformedFrame(err error) bool {
	var sum eventstream.ChecksumError
	var length eventstream.LengthError
	var unknown *eventstream.UnknownMessageError
	msg := err.Error()
	return errors.As(err, &sum) || errors.As(err, &length) || errors.As(err, &unknown) || isJSONError(err) ||
		strings.Contains(msg, "deserialize event") || strings.Contains(msg, "decode header") || strings.Contains(msg, "missing :")
}

// bedrockScrub masks the secrets SigV4 never sends but a gateway might echo: the secret access key
// and the session token (toError masks the API key).
func bedrockScrub(e *Error, c Credential) *Error {
	for _, s := range []string{c.SecretAccessKey, c.SessionToken} {
		if s != "" {
			scrub(e, s)
		}
	}
	return e
}
