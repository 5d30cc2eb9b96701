package scenario

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// timeouts.attemptMs through the real workflow: the scenario file's primary streams steadily
// (every chunk within firstTokenMs and idleMs) but takes 3 s in all; a 1 s attempt bound fails it
// as a timeout, not retried in place, and the fallback answers. Without the bound the primary
// answers: the bound, not another clock, made the difference.
func TestTimeoutsAttemptMsBoundsAWholeAttempt(t *testing.T) {
	sc, err := Load(filepath.Join("..", "..", "testsuite", "scenarios", "own", "15-attempt-bound.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Timeouts == nil || sc.Timeouts.AttemptMs != 1000 {
		t.Fatalf("timeouts %+v", sc.Timeouts)
	}
	out, err := Run(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	if diffs, err := Check(sc.Expect, out); err != nil || len(diffs) > 0 {
		js, _ := out.JSON()
		t.Fatalf("%v %s\n%s", err, strings.Join(diffs, "\n"), js)
	}

	sc.Timeouts.AttemptMs = 0
	out, err = Run(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	if turn := out.Turns[0]; turn.Served == nil || turn.Served.Provider != "openai" || !strings.HasSuffix(turn.Text, "twenty") {
		js, _ := out.JSON()
		t.Errorf("without the bound the primary answers:\n%s", js)
	}
}

// The catalog's own bounds, through the real workflow (config → Config.Deadlines → the attempt
// → the provider's watchdog): a model's attemptTimeoutMs, and a throughput floor.
func TestTheCatalogsBoundsFailAModelOver(t *testing.T) {
	for name, entry := range map[string]string{
		"attemptTimeoutMs":   `{"id": "gpt-5", "attemptTimeoutMs": 1000}`,
		"minTokensPerSecond": `{"id": "gpt-5", "minTokensPerSecond": 20, "throughputGraceMs": 500}`,
	} {
		t.Run(name, func(t *testing.T) {
			sc := scenarioOf(t, `{
			  "name": "a catalog bound",
			  "start": "2026-01-01T00:00:00Z",
			  "config": {"agents": {"defaults": {"model": {"primary": "openai/gpt-5", "fallbacks": ["anthropic/claude-sonnet-4-5"]}}},
			             "models": {"providers": {"openai": {"models": [`+entry+`]}}}},
			  "timeouts": {"firstTokenMs": 2000, "idleMs": 2000},
			  "profiles": [{"id": "openai:a", "provider": "openai", "type": "api_key", "key": "sk-a"},
			               {"id": "anthropic:default", "provider": "anthropic", "type": "api_key", "key": "sk-ant"}],
			  "provider": [
			    {"match": {"provider": "openai"}, "respond": [{"text": "a b c d e f g h i j k l m n o p q r s t", "chunkDelayMs": 150}]},
			    {"match": {"provider": "anthropic"}, "respond": [{"text": "steady"}]}
			  ],
			  "turns": [{"after": "0s", "reply": {"message": "hi"}}]
			}`)
			out, err := Run(context.Background(), sc)
			if err != nil {
				t.Fatal(err)
			}
			turn := out.Turns[0]
			if turn.Served == nil || turn.Served.Provider != "anthropic" || len(turn.Attempts) != 2 ||
				turn.Attempts[0]["reason"] != "timeout" || turn.Attempts[0]["retries"] != 0 {
				js, _ := out.JSON()
				t.Errorf("want a timeout on the primary, then the fallback:\n%s", js)
			}
		})
	}
}

// Issue 26: a primary whose first token would come after 20 s, with default settings and a
// fallback: the first-token default (10 s) cuts it, not retried in place, and the fallback's
// answer is complete within 15 s.
func TestTheDefaultFirstTokenTimeoutFailsAFastModelOverInSeconds(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the real 10 s default: make test runs it")
	}
	sc := scenarioOf(t, `{
	  "name": "a primary silent for 20 s after its headers",
	  "start": "2026-01-01T00:00:00Z",
	  "config": {"agents": {"defaults": {"model": {"primary": "openai/gpt-5", "fallbacks": ["anthropic/claude-sonnet-4-5"]}}}},
	  "profiles": [{"id": "openai:a", "provider": "openai", "type": "api_key", "key": "sk-a"},
	               {"id": "anthropic:default", "provider": "anthropic", "type": "api_key", "key": "sk-ant"}],
	  "provider": [
	    {"match": {"provider": "openai"}, "respond": [{"text": "too late", "stallAfterChunks": 0, "stallMs": 20000}]},
	    {"match": {"provider": "anthropic"}, "respond": [{"text": "in time"}]}
	  ],
	  "turns": [{"after": "0s", "reply": {"message": "hi"}}]
	}`)
	t0 := time.Now()
	out, err := Run(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	turn := out.Turns[0]
	if turn.Served == nil || turn.Served.Provider != "anthropic" || turn.Text != "in time" || len(turn.Attempts) != 2 ||
		turn.Attempts[0]["reason"] != "timeout" || turn.Attempts[0]["retries"] != 0 || took > 15*time.Second {
		js, _ := out.JSON()
		t.Errorf("after %v:\n%s", took, js)
	}
}
