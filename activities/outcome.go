package activities

import (
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// succeeded is the outcome of an attempt that answered: the answer's tool calls and reasoning
// travel as JSON the workflow does not read (provider.EncodeAnswerContent).
func succeeded(a provider.Answer) (policy.AttemptOutcome, error) {
	calls, reasoning, err := provider.EncodeAnswerContent(a)
	if err != nil {
		return policy.AttemptOutcome{}, err
	}
	return policy.AttemptOutcome{OK: true, Answer: policy.Answer{Text: a.Text, ToolCalls: calls, Reasoning: reasoning,
		FinishReason: a.FinishReason, Input: a.Usage.Input, Output: a.Usage.Output, CachedInput: a.Usage.CachedInput, ReasoningOutput: a.Usage.Reasoning,
		CacheWriteInput: a.Usage.CacheWrite}}, nil
}

// tokensOf is what a call consumed: a success's usage, or what a failed stream was billed.
func tokensOf(out policy.AttemptOutcome) policy.Spend {
	if out.OK {
		return policy.Spend{Input: out.Input, Output: out.Output, CachedInput: out.CachedInput, CacheWrite: out.CacheWriteInput}
	}
	return policy.Spend{Input: out.BilledInput, Output: out.BilledOutput}
}
