package policy

import "testing"

func TestDefaultContinuation(t *testing.T) {
	for _, c := range []struct {
		name, provider, api, want string
	}{
		{"Anthropic continues a final assistant message", "anthropic", "", ContinuePrefill},
		{"any Anthropic-wire provider does too", "bedrock-claude", "anthropic-messages", ContinuePrefill},
		{"OpenAI answers a final assistant message anew: restart", "openai", "", ContinueRestart},
		{"an unknown OpenAI-compatible server restarts", "local", "openai-completions", ContinueRestart},
		{"DeepSeek continues with prefix: true", "deepseek", "openai-completions", ContinuePrefill},
		{"Mistral continues with prefix: true", "mistral", "", ContinuePrefill},
		{"OpenRouter continues a final assistant message", "openrouter", "", ContinuePrefill},
		{"the Responses API has no prefix flag: restart, whatever the flavour", "deepseek", "openai-responses", ContinueRestart},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := DefaultContinuation(c.provider, c.api); got != c.want {
				t.Errorf("DefaultContinuation(%q, %q) = %q, want %q", c.provider, c.api, got, c.want)
			}
		})
	}
}

func TestTheCatalogNamesAModelsContinuation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Providers = map[string]ProviderConfig{"local": {API: "openai-completions", Models: []ModelSpec{
		{ID: "vllm", Continuation: ContinuePrefill}, {ID: "tiny", Continuation: ContinueNone}, {ID: "plain"}}}}
	for model, want := range map[string]string{"vllm": ContinuePrefill, "tiny": ContinueNone, "plain": ContinueRestart, "unlisted": ContinueRestart} {
		if got := cfg.Continuation(ModelRef{Provider: "local", Model: model}); got != want {
			t.Errorf("local/%s: %q, want %q", model, got, want)
		}
	}
}

func TestAContinuationIsGivenAllButTheLastWord(t *testing.T) {
	for _, c := range []struct {
		name, strategy, held, want string
	}{
		{"a prefill keeps the last word back, to be written again", ContinuePrefill, "The quick brown ", "The quick"},
		{"a word cut in its middle is the one kept back", ContinuePrefill, "The quick bro", "The quick"},
		{"an instruction gives the same", ContinueInstruction, "The quick brown", "The quick"},
		{"one word: nothing to give, the model starts over", ContinuePrefill, "The ", ""},
		{"restart gives nothing", ContinueRestart, "The quick brown ", ""},
		{"trailing whitespace never ends what is given", ContinuePrefill, "One.\n\nTwo three", "One.\n\nTwo"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ContinuationGiven(c.strategy, c.held); got != c.want {
				t.Errorf("ContinuationGiven(%q, %q) = %q, want %q", c.strategy, c.held, got, c.want)
			}
		})
	}
}

func TestAContinuationIsCheckedAgainstWhatTheCallerHolds(t *testing.T) {
	const held = "The quick brown "
	for _, c := range []struct {
		name   string
		given  string
		pieces []string
		want   string
		ok     bool
	}{
		{"an honoured prefill writes the kept-back word again, then goes on", "The quick", []string{" brown ", "fox ", "jumps."}, "fox jumps.", true},
		{"a model that started over repeats the caller's text: the repeat is dropped", "The quick", []string{"The ", "quick ", "brown ", "fox ", "jumps."}, "fox jumps.", true},
		{"a restart repeating the text exactly", "", []string{"The quick brown fox jumps."}, "fox jumps.", true},
		{"a restart that diverges is a different answer", "", []string{"The ", "slow ", "green turtle."}, "", false},
		{"a different answer from scratch, after a prefill", "The quick", []string{"Lorem ", "ipsum."}, "", false},
		{"an honoured prefill that does not write the word again cannot be told from another answer", "The quick", []string{"fox jumps."}, "", false},
		{"an answer that stops inside what the caller holds does not match it", "", []string{"The quick"}, "", false},
		{"whitespace at the seam is not compared", "The quick", []string{"brown fox"}, "fox", true},
		{"a word cut mid-way is completed", "", []string{"The quick brownish fox"}, "ish fox", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := held
			if c.name == "a word cut mid-way is completed" {
				h = "The quick brown"
			}
			check := NewContinuationCheck(h, c.given)
			got := ""
			for _, p := range c.pieces {
				got += check.Feed(p)
			}
			ok := check.End() == ContinuationMatches
			if got != c.want || ok != c.ok {
				t.Errorf("passed %q (matches %v), want %q (%v)", got, ok, c.want, c.ok)
			}
			if whole, wok := ContinuationOf(h, c.given, concat(c.pieces)); whole != c.want || wok != c.ok {
				t.Errorf("ContinuationOf: %q (%v), want %q (%v)", whole, wok, c.want, c.ok)
			}
		})
	}
}

func TestNothingPassesBeforeTheCheckDecides(t *testing.T) {
	check := NewContinuationCheck("The quick brown ", "")
	for _, p := range []string{"The ", "quick "} {
		if out := check.Feed(p); out != "" || check.Verdict() != ContinuationChecking {
			t.Fatalf("after %q: passed %q, verdict %d", p, out, check.Verdict())
		}
	}
	if out := check.Feed("red "); out != "" || check.Verdict() != ContinuationDiverges {
		t.Fatalf("a diverging word passed %q, verdict %d", out, check.Verdict())
	}
	if out := check.Feed("fox"); out != "" {
		t.Errorf("after a divergence %q passed", out)
	}
}

func TestAPrefillRefusalIsACapabilityNotAFault(t *testing.T) {
	for _, c := range []struct {
		status int
		msg    string
		want   bool
	}{
		{400, "This model does not support assistant message prefill. The conversation must end with a user message.", true},
		{400, "Prefilling assistant messages is not supported for this model.", true},
		{400, "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant", true},
		{400, "the final assistant message must not be followed by ... ", true},
		{400, "max_tokens: must be at most 8192", false},
		{429, "prefill rate limit", false},
	} {
		if got := IsPrefillRejection(c.status, c.msg); got != c.want {
			t.Errorf("IsPrefillRejection(%d, %q) = %v, want %v", c.status, c.msg, got, c.want)
		}
	}
}

func concat(ps []string) string {
	s := ""
	for _, p := range ps {
		s += p
	}
	return s
}
