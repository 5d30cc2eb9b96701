package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// A stream cut mid-answer never becomes a garbled success (issue 26): every mid-stream fault,
// against fallbacks that behave as real ones do (honour a true prefill, ignore it and answer anew,
// reject it with a 400, answer something else), on both caller wires and both provider wires. The
// caller's bytes are the whole answer once, or its partial text and an explicit error: never more
// or less text under a success.

// The answer every candidate means to give: text (16 counted chunks, a word each), or text and two
// tool calls (7 words, then 3 chunks per call: its opening and two argument pieces).
const contWhole = "Baton keeps the answer whole when a stream is cut in the middle of a sentence."

var (
	contToolText  = "Let me look that up for you. "
	contToolCalls = []fakeprovider.ToolCall{{Name: "lookup", Arguments: `{"q":"baton"}`}, {Name: "lookup", Arguments: `{"q":"temporal"}`}}
)

// contFault is a mid-stream fault after n counted chunks.
type contFault struct {
	name string
	at   func(r *fakeprovider.Response, n int)
}

var contFaults = []contFault{
	{"cut", func(r *fakeprovider.Response, n int) { r.CutAfterChunks = &n }},
	{"stall", func(r *fakeprovider.Response, n int) { r.StallAfterChunks, r.StallMs = &n, 20000 }},
	{"malformed chunk", func(r *fakeprovider.Response, n int) { m := n + 1; r.MalformedChunk = &m }},
	{"in-band error", func(r *fakeprovider.Response, n int) {
		r.StreamErrorAfterChunks, r.StreamError = &n, json.RawMessage(`{"type":"api_error","message":"Internal server error"}`)
	}},
}

// contBehaviours are the fallbacks real providers are.
var contBehaviours = []struct {
	name     string
	prefill  string
	text     string // "" is the answer meant
	mismatch bool
}{
	{"honours a true prefill", "honour", "", false},
	{"ignores prefill and instructions, answers anew", "", "", false},
	{"rejects a prefill with 400, answers anew", "reject", "", false},
	{"answers a different text", "", "Something else entirely, said from the start.", true},
}

// callerStream is what a caller's stream carried, read from its bytes.
type callerStream struct {
	text      string
	toolCalls []string // name(arguments)
	finished  bool     // the wire's normal end ([DONE] after a finish reason; message_stop)
	errEvent  string   // an explicit error event's data
	models    []string // the model each OpenAI chunk named
}

func readCallerStream(t *testing.T, body string, anthropicWire bool) callerStream {
	t.Helper()
	var cs callerStream
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	event, finish := "", ""
	args := map[int]*strings.Builder{}
	names := map[int]string{}
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if !anthropicWire {
			if data == "[DONE]" {
				cs.finished = finish != ""
				continue
			}
			var c struct {
				Model   string          `json:"model"`
				Error   json.RawMessage `json:"error"`
				Choices []struct {
					Delta struct {
						Content   *string `json:"content"`
						ToolCalls []struct {
							Index    int `json:"index"`
							Function struct {
								Name      string `json:"name"`
								Arguments string `json:"arguments"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"delta"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("a chunk that is not JSON: %s", data)
			}
			if len(c.Error) > 0 {
				cs.errEvent = string(c.Error)
				continue
			}
			if c.Model != "" {
				cs.models = append(cs.models, c.Model)
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content != nil {
					cs.text += *ch.Delta.Content
				}
				for _, tc := range ch.Delta.ToolCalls {
					if args[tc.Index] == nil {
						args[tc.Index] = &strings.Builder{}
					}
					if tc.Function.Name != "" {
						names[tc.Index] = tc.Function.Name
					}
					args[tc.Index].WriteString(tc.Function.Arguments)
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
			continue
		}
		var e struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("an event that is not JSON: %s", data)
		}
		switch {
		case event == "error":
			cs.errEvent = data
		case e.Type == "content_block_start" && e.ContentBlock.Type == "tool_use":
			names[e.Index], args[e.Index] = e.ContentBlock.Name, &strings.Builder{}
		case e.Type == "content_block_delta" && e.Delta.Type == "text_delta":
			cs.text += e.Delta.Text
		case e.Type == "content_block_delta" && e.Delta.Type == "input_json_delta":
			args[e.Index].WriteString(e.Delta.PartialJSON)
		case e.Type == "message_stop":
			cs.finished = true
		}
	}
	for i := 0; i < 16; i++ {
		if b, ok := args[i]; ok {
			cs.toolCalls = append(cs.toolCalls, names[i]+"("+b.String()+")")
		}
	}
	return cs
}

// contCase is one case: its providers, its caller's wire, and what the caller must hold.
type contCase struct {
	name                 string
	primary, fallback    string // provider ids
	anthropicCaller      bool
	wantWhole, wantError bool
	wantText             string
	wantTools            []string
}

// newContWorld serves requests whose every case has providers of its own (p<N> for the primary,
// f<N> for the fallback), so that cases run side by side without one's cooldown touching another's.
func newContWorld(t *testing.T, n int, anthropicWire func(provider string) bool, rules []fakeprovider.Rule) *turnWorld {
	t.Helper()
	var creds []store.Credential
	for i := range n {
		for _, p := range []string{fmt.Sprintf("p%d", i), fmt.Sprintf("f%d", i)} {
			creds = append(creds, store.Credential{ID: p + ":k", Provider: p, Type: "api_key", Key: "sk-cont-" + p})
		}
	}
	w := testsuite.NewWorld(t, `{agents: {defaults: {model: {primary: "p0/m"}}}}`, creds, rules)
	cfg := w.Config.Get()
	for p, pc := range cfg.Providers {
		if anthropicWire(p) {
			pc.API, pc.BaseURL = provider.APIAnthropicMessages, w.Fake.BaseURL(p, true)
			cfg.Providers[p] = pc
		}
	}
	w.Config.Set(cfg)
	lim := activities.DefaultLimits()
	lim.IdleTimeout = 500 * time.Millisecond // a stall is noticed at once
	w.Acts.Limits = lim
	return liveServe(t, w, nil)
}

func TestACutStreamIsFinishedTruthfullyOrEndsWithAnError(t *testing.T) {
	type spec struct {
		contCase
		primary, fallback fakeprovider.Response
	}
	var specs []spec
	var rules []fakeprovider.Rule
	anthropicWire := map[string]bool{}
	wires := []string{"openai", "anthropic"}
	for _, tools := range []bool{false, true} {
		for _, f := range contFaults {
			for _, b := range contBehaviours {
				for _, caller := range wires {
					for _, pw := range wires {
						for _, fw := range wires {
							i := len(specs)
							meant := fakeprovider.Response{Text: contWhole}
							at := 6 // mid-text
							if tools {
								meant = fakeprovider.Response{Text: contToolText, ToolCalls: contToolCalls}
								at = 7 + 3 + 1 // the first tool call whole, the second begun
							}
							prim := meant
							f.at(&prim, at)
							fb := meant
							fb.Prefill = b.prefill
							if b.text != "" {
								fb = fakeprovider.Response{Text: b.text, Prefill: b.prefill}
							}
							c := contCase{
								name:    fmt.Sprintf("tools=%v/%s/fallback %s/%s caller/%s primary/%s fallback", tools, f.name, b.name, caller, pw, fw),
								primary: fmt.Sprintf("p%d", i), fallback: fmt.Sprintf("f%d", i), anthropicCaller: caller == "anthropic",
							}
							switch {
							case tools:
								// A tool call the caller holds cannot be taken back or continued.
								c.wantError, c.wantText, c.wantTools = true, contToolText, []string{`lookup({"q":"baton"})`}
							case b.mismatch:
								c.wantError, c.wantText = true, "Baton keeps the answer whole when " // the 6 words before the fault
							default:
								c.wantWhole, c.wantText = true, contWhole
							}
							specs = append(specs, spec{contCase: c, primary: prim, fallback: fb})
							anthropicWire[c.primary], anthropicWire[c.fallback] = pw == "anthropic", fw == "anthropic"
							rules = append(rules,
								fakeprovider.Rule{Match: fakeprovider.Match{Provider: c.primary}, Respond: []fakeprovider.Response{prim}},
								fakeprovider.Rule{Match: fakeprovider.Match{Provider: c.fallback}, Respond: []fakeprovider.Response{fb}})
						}
					}
				}
			}
		}
	}
	cw := newContWorld(t, len(specs), func(p string) bool { return anthropicWire[p] }, rules)
	t.Run("cases", func(t *testing.T) {
		for _, s := range specs {
			c := s.contCase
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				path, body := "/v1/chat/completions", fmt.Sprintf(`{"model":"%s/m","fallbacks":["%s/m"],"stream":true,"messages":[{"role":"user","content":"go"}]}`, c.primary, c.fallback)
				if c.anthropicCaller {
					path, body = "/v1/messages", fmt.Sprintf(`{"model":"%s/m","fallbacks":["%s/m"],"max_tokens":200,"stream":true,"messages":[{"role":"user","content":"go"}]}`, c.primary, c.fallback)
				}
				resp, raw := testsuite.Post(t, cw.h.URL+path, body, nil)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, raw)
				}
				got := readCallerStream(t, raw, c.anthropicCaller)
				if got.text != c.wantText || strings.Join(got.toolCalls, " ") != strings.Join(c.wantTools, " ") {
					t.Errorf("the caller holds %q %v, want %q %v\n%s", got.text, got.toolCalls, c.wantText, c.wantTools, raw)
				}
				switch {
				case c.wantWhole && (!got.finished || got.errEvent != ""):
					t.Errorf("the whole answer must end normally: finished %v, error %s\n%s", got.finished, got.errEvent, raw)
				case c.wantError && (got.finished || got.errEvent == ""):
					t.Errorf("want an explicit error and no normal end: finished %v, error %q\n%s", got.finished, got.errEvent, raw)
				case c.wantError && strings.Contains(got.errEvent, "does not support"):
					t.Errorf("the error names a prefill refusal, not the cut: %s", got.errEvent)
				case c.wantError && !strings.Contains(got.errEvent, "failed after"):
					t.Errorf("the error does not name the cut: %s", got.errEvent)
				}
				if c.wantWhole {
					if m := resp.Trailer.Get("x-baton-model"); m != c.fallback+"/m" {
						t.Errorf("trailer x-baton-model %q, want the fallback that finished the answer", m)
					}
					if !c.anthropicCaller && len(got.models) > 0 && got.models[len(got.models)-1] != c.fallback+"/m" {
						t.Errorf("the last chunk names %q, want the fallback", got.models[len(got.models)-1])
					}
				}
			})
		}
	})
	// A refused prefill blamed nobody: no fallback profile is cooling down.
	profiles, err := cw.Store.ListProfiles(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles {
		if strings.HasPrefix(p.ID, "f") && !p.Stats.CooldownUntil.IsZero() {
			t.Errorf("fallback profile %s was blamed: %+v", p.ID, p.Stats)
		}
	}
}

// The issue's own check, with the official clients: a primary cut after 40 of 60 words.
func TestOfficialClientsGetTheSixtyWordsOnceOrAnError(t *testing.T) {
	var words []string
	for i := range 60 {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	sixty := strings.Join(words, " ")
	forty := 40
	behaviours := []struct {
		name string
		fb   fakeprovider.Response
		ok   bool
	}{
		{"honours a true prefill", fakeprovider.Response{Text: sixty, Prefill: "honour"}, true},
		{"answers the same text from scratch", fakeprovider.Response{Text: sixty}, true},
		{"rejects the prefill, then answers from scratch", fakeprovider.Response{Text: sixty, Prefill: "reject"}, true},
		{"answers a different text", fakeprovider.Response{Text: "An entirely different answer."}, false},
	}
	var rules []fakeprovider.Rule
	wire := map[string]bool{}
	for i, b := range behaviours {
		for j, aw := range []bool{false, true} {
			n := 2*i + j
			p, f := fmt.Sprintf("p%d", n), fmt.Sprintf("f%d", n)
			wire[p], wire[f] = aw, aw
			rules = append(rules, fakeprovider.Rule{Match: fakeprovider.Match{Provider: p}, Respond: []fakeprovider.Response{{Text: sixty, CutAfterChunks: &forty}}},
				fakeprovider.Rule{Match: fakeprovider.Match{Provider: f}, Respond: []fakeprovider.Response{b.fb}})
		}
	}
	cw := newContWorld(t, 2*len(behaviours), func(p string) bool { return wire[p] }, rules)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, b := range behaviours {
		for j, providerWire := range []string{"OpenAI-compatible", "Anthropic-wire"} {
			n := 2*i + j
			p, f := fmt.Sprintf("p%d/m", n), fmt.Sprintf("f%d/m", n)
			t.Run(b.name+"/"+providerWire+" provider/openai-go", func(t *testing.T) {
				oc := cw.openai()
				s := oc.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: p,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("sixty words")}},
					optionFallbacks(f))
				var text strings.Builder
				finish := ""
				for s.Next() {
					for _, c := range s.Current().Choices {
						text.WriteString(c.Delta.Content)
						if c.FinishReason != "" {
							finish = c.FinishReason
						}
					}
				}
				if b.ok && (s.Err() != nil || text.String() != sixty || finish != "stop") {
					t.Errorf("got %d words (%q), finish %q, error %v: want the 60 words once", len(strings.Fields(text.String())), text.String(), finish, s.Err())
				}
				if !b.ok && (s.Err() == nil || !strings.Contains(s.Err().Error(), "failed after")) {
					t.Errorf("want an error naming the cut, got %v after %q", s.Err(), text.String())
				}
			})
			t.Run(b.name+"/"+providerWire+" provider/anthropic-sdk-go", func(t *testing.T) {
				ac := cw.anthropic()
				s := ac.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: anthropic.Model(p), MaxTokens: 500,
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("sixty words"))}},
					aOptionFallbacks(f))
				var m anthropic.Message
				var err error
				for s.Next() {
					if err = m.Accumulate(s.Current()); err != nil {
						break
					}
				}
				if err == nil {
					err = s.Err()
				}
				text := ""
				for _, c := range m.Content {
					text += c.Text
				}
				if b.ok && (err != nil || text != sixty || m.StopReason != "end_turn") {
					t.Errorf("got %d words, stop %q, error %v: want the 60 words once", len(strings.Fields(text)), m.StopReason, err)
				}
				if !b.ok && (err == nil || !strings.Contains(err.Error(), "failed after")) {
					t.Errorf("want an error naming the cut, got %v after %q", err, text)
				}
			})
		}
	}
	_ = policy.ErrContinuationMismatch
}

// optionFallbacks adds baton's fallbacks field to an official client's request.
func optionFallbacks(refs ...string) option.RequestOption {
	return option.WithJSONSet("fallbacks", refs)
}

func aOptionFallbacks(refs ...string) aoption.RequestOption {
	return aoption.WithJSONSet("fallbacks", refs)
}
