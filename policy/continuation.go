package policy

import (
	"fmt"
	"strings"
	"unicode"
)

// Continuing a cut answer (issue 26). When a stream fails after part of the answer reached the
// caller, the next candidate is asked to continue it. Models differ in how they can be asked, and
// none can be trusted to obey: whatever was asked, the continuation's first text is checked
// against the text the caller holds before any of it is sent.

// How a model can continue an answer another stream left cut (models.providers.<id>.models[]:
// {continuation}).
const (
	// ContinuePrefill sends the answer so far as the final assistant message, for the model to
	// go on from (Anthropic as is; OpenAI-compatible servers that continue a final assistant
	// message, some only with "prefix": true on it).
	ContinuePrefill = "prefill"
	// ContinueRestart asks for the whole answer again; only its repetition of the caller's text
	// is dropped.
	ContinueRestart = "restart"
	// ContinueInstruction sends the answer so far as an assistant message and a user message
	// asking to go on from it. Never a default: a model that does not follow it answers anew.
	ContinueInstruction = "instruction"
	// ContinueNone: the model cannot continue a cut answer; it is skipped for one.
	ContinueNone = "none"
)

// IsContinuation reports whether s names a continuation strategy.
func IsContinuation(s string) bool {
	switch s {
	case ContinuePrefill, ContinueRestart, ContinueInstruction, ContinueNone:
		return true
	}
	return false
}

// prefixFlavour lists OpenAI-compatible providers that continue a final assistant message only
// when it carries "prefix": true (DeepSeek's and Mistral's chat completions).
var prefixFlavour = map[string]bool{"deepseek": true, "mistral": true}

// prefillFlavour lists OpenAI-compatible providers that continue a plain final assistant message.
var prefillFlavour = map[string]bool{"openrouter": true}

// PrefixFlavour reports whether a provider's prefill needs "prefix": true on the message.
func PrefixFlavour(provider string) bool { return prefixFlavour[NormalizeProvider(provider)] }

// DefaultContinuation is a model's strategy when its catalog entry names none: Anthropic's
// Messages API continues a final assistant message (a model that refuses one is asked again with
// restart), as do the OpenAI-compatible flavours known to; OpenAI's own Chat Completions and
// unknown compatible servers answer a final assistant message anew, so they restart, as does the
// Responses API (whatever the flavour: it has no prefix flag).
func DefaultContinuation(provider, api string) string {
	p := NormalizeProvider(provider)
	switch {
	case api == APIOpenAIResponses:
		return ContinueRestart // no prefix flag: OpenAI's models answer a final assistant message anew
	case api == APIAnthropicMessages, api == "" && p == "anthropic":
		return ContinuePrefill
	case api == APIBedrockConverse:
		return ContinuePrefill // Converse sends a final assistant message as one; a model that refuses it restarts
	case prefixFlavour[p], prefillFlavour[p]:
		return ContinuePrefill
	}
	return ContinueRestart
}

// Continuation is how the model of ref continues a cut answer: its catalog entry's, else the
// default of its provider's api and flavour.
func (c *Config) Continuation(ref ModelRef) string {
	if spec, _ := c.modelSpec(ref); spec.Continuation != "" {
		return spec.Continuation
	}
	api := ""
	if c != nil {
		api = c.Providers[NormalizeProvider(ref.Provider)].API
	}
	if api == APIVertexAI && strings.HasPrefix(ref.Model, "claude") {
		return ContinuePrefill // Anthropic's models on Vertex AI speak Messages
	}
	return DefaultContinuation(ref.Provider, api)
}

// ContinuationGiven is the part of the caller's text a continuation sends the model (the prefill
// of ContinuePrefill and ContinueInstruction): all of it but its last word, without trailing
// whitespace. The model must then write that last word again before anything new, which is what
// lets its answer be checked: a model that honours the prefill repeats the word, one that started
// over repeats everything, and anything else is a different answer. Restart sends nothing.
func ContinuationGiven(strategy, held string) string {
	if strategy != ContinuePrefill && strategy != ContinueInstruction {
		return ""
	}
	t := strings.TrimRightFunc(held, unicode.IsSpace)
	i := strings.LastIndexFunc(t, unicode.IsSpace)
	if i < 0 {
		return ""
	}
	return strings.TrimRightFunc(t[:i], unicode.IsSpace)
}

// Verdicts of a ContinuationCheck.
const (
	ContinuationChecking = iota // not yet decided: nothing may go to the caller
	ContinuationMatches         // the opening repeated the caller's text: the rest goes out
	ContinuationDiverges        // a different answer: nothing more may go out
)

// ContinuationCheck compares a continuation's first text with the text the caller holds: held is
// that text, given what of it the model was sent (ContinuationGiven). The model's answer must open
// with held's rest after given (an honoured prefill) or with held whole (it started over); that
// opening is dropped and the rest passes. Whitespace at the seam is not compared: models and
// servers differ on who writes the space between two words. Feed it the continuation's text in
// stream order.
type ContinuationCheck struct {
	openings []string // what the answer may open with, whitespace-trimmed at the start
	buf      strings.Builder
	verdict  int
}

// NewContinuationCheck starts a check of a continuation of held, of which given was sent.
func NewContinuationCheck(held, given string) *ContinuationCheck {
	c := &ContinuationCheck{}
	whole := strings.TrimLeftFunc(held, unicode.IsSpace)
	if given != "" && strings.HasPrefix(held, given) {
		if rest := strings.TrimLeftFunc(held[len(given):], unicode.IsSpace); rest != "" {
			c.openings = append(c.openings, rest)
		}
	}
	c.openings = append(c.openings, whole)
	if whole == "" {
		c.verdict = ContinuationMatches // the caller holds nothing to compare with
	}
	return c
}

// Verdict is the check's state.
func (c *ContinuationCheck) Verdict() int { return c.verdict }

// Feed takes the next text of the continuation and returns what may go to the caller now.
func (c *ContinuationCheck) Feed(text string) string {
	switch c.verdict {
	case ContinuationMatches:
		return text
	case ContinuationDiverges:
		return ""
	}
	c.buf.WriteString(text)
	got := strings.TrimLeftFunc(c.buf.String(), unicode.IsSpace)
	if got == "" {
		return ""
	}
	pending := false
	for _, o := range c.openings {
		switch {
		case strings.HasPrefix(got, o):
			c.verdict = ContinuationMatches
			return strings.TrimPrefix(got, o)
		case strings.HasPrefix(o, got):
			pending = true // still a prefix of this opening: wait for more
		}
	}
	if !pending {
		c.verdict = ContinuationDiverges
	}
	return ""
}

// End is called when the continuation's text is over (its stream finished, or a tool call
// began): an answer that is still only a prefix of what the caller holds does not match it.
func (c *ContinuationCheck) End() int {
	if c.verdict == ContinuationChecking {
		c.verdict = ContinuationDiverges
	}
	return c.verdict
}

// ContinuationOf is a whole continuation's text as the caller receives it (its checked opening
// dropped), and whether it matched what the caller holds.
func ContinuationOf(held, given, text string) (string, bool) {
	c := NewContinuationCheck(held, given)
	out := c.Feed(text)
	return out, c.End() == ContinuationMatches
}

// IsPrefillRejection reports a provider's refusal of a prefill (a final assistant message): a
// capability of the model, not a fault, so it blames no profile and the model is asked again to
// restart.
func IsPrefillRejection(status int, message string) bool {
	if status != 400 && status != 422 {
		return false
	}
	m := strings.ToLower(message)
	return strings.Contains(m, "prefill") ||
		(strings.Contains(m, "assistant message") && (strings.Contains(m, "must end with a user") || strings.Contains(m, "final") || strings.Contains(m, "last"))) ||
		strings.Contains(m, "conversation must end with a user message") ||
		strings.Contains(m, "assistant with prefix") // Mistral, without "prefix": true
}

// Attempt reasons of a continuation: a candidate skipped because its catalog entry says it cannot
// continue a cut answer, and a continuation that answered something else.
const (
	ReasonNoContinuation       Reason = "no_continuation"
	ReasonContinuationMismatch Reason = "continuation_mismatch"
)

// NoContinuationSkipText is the attempt record's text for a ContinueNone skip.
func NoContinuationSkipText(c ModelRef) string {
	return fmt.Sprintf("%s cannot continue a cut answer (models.providers.%s.models[].continuation: none)", c, c.Provider)
}

// CutAnswer is the answer a live caller holds from attempts cut mid-stream: the next attempt
// continues it (streaming.midStream "continue").
type CutAnswer struct {
	Text string
	// Fault names the fault that first cut it (cutText): the error a reply that cannot finish it
	// ends with.
	Fault string
	// What the cut attempts cost: the caller was billed for them too.
	BilledInput  int64
	BilledOutput int64
}

// cutText names a stream fault that left the caller holding part of an answer: the error a
// continued reply ends with names it, never what a later candidate said.
func cutText(c ModelRef, partial string, fault, message string) string {
	if fault == "" {
		fault = "error"
	}
	return fmt.Sprintf("the stream of %s failed after %d characters reached the caller (%s: %s)", c, len(partial), fault, message)
}
