package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// scenarioOf reads a scenario given inline, as Load reads a file.
func scenarioOf(t *testing.T, src string) *Scenario {
	t.Helper()
	var sc Scenario
	if err := json.Unmarshal([]byte(src), &sc); err != nil {
		t.Fatal(err)
	}
	if err := sc.validate(); err != nil {
		t.Fatal(err)
	}
	return &sc
}

// Issue 20, item 9, through the real workflow: one key serves a primary and its fallback, the
// primary answers 503 "overloaded", and 15 stateless replies arrive 2 s apart. The primary is
// attempted once in those 30 s (its call and two in-place retries), not once per reply.
func TestOneKeyOutageTriesThePrimaryOncePerProbeInterval(t *testing.T) {
	turns := make([]string, 15)
	for i := range turns {
		after := "2s"
		if i == 0 {
			after = "0s"
		}
		turns[i] = fmt.Sprintf(`{"after": %q, "reply": {"message": "hi"}}`, after)
	}
	sc := scenarioOf(t, `{
	  "name": "one key, dead primary, stateless replies",
	  "start": "2026-01-01T00:00:00Z",
	  "config": {"agents": {"defaults": {"model": {"primary": "agg/primary", "fallbacks": ["agg/fallback"]}}}},
	  "profiles": [{"id": "agg:key", "provider": "agg", "type": "api_key", "key": "sk-agg"}],
	  "provider": [
	    {"match": {"provider": "agg", "model": "primary"},
	     "respond": [{"status": 503, "headers": {"retry-after": "0"}, "body": "{\"error\":{\"message\":\"The model is overloaded\"}}"}]},
	    {"match": {"provider": "agg", "model": "fallback"}, "respond": [{"text": "ok"}]}
	  ],
	  "turns": [`+strings.Join(turns, ",")+`]
	}`)
	out, err := Run(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	primary := 0
	for _, c := range out.Calls {
		if c.Model == "primary" {
			primary++
		}
	}
	for i, turn := range out.Turns {
		if turn.Outcome != "completed" || turn.Served == nil || turn.Served.Model != "fallback" {
			t.Fatalf("turn %d: %+v", i, turn)
		}
	}
	if primary != 3 {
		js, _ := out.JSON()
		t.Errorf("the primary got %d calls in 30 s, want 3 (one attempt, two retries in place):\n%s", primary, js)
	}
}

// Issue 20, item 8, through Run: a turn that outlasts its slot delays the next one, and the turn
// after that keeps its own schedule (start + the afters), not the delayed turn's end + its after.
func TestRunKeepsTheScheduleAfterALongTurn(t *testing.T) {
	sc := scenarioOf(t, `{
	  "name": "a long turn",
	  "start": "2026-01-01T00:00:00Z",
	  "config": {"agents": {"defaults": {"model": {"primary": "openai/gpt-5", "fallbacks": []}}}},
	  "profiles": [{"id": "openai:a", "provider": "openai", "type": "api_key", "key": "sk-a"}],
	  "provider": [{"match": {"provider": "openai"}, "respond": [
	    {"status": 429, "headers": {"retry-after": "20"}}, {"status": 429, "headers": {"retry-after": "20"}}, {"text": "ok"}]}],
	  "turns": [
	    {"after": "0s", "reply": {"message": "slow"}},
	    {"after": "30s", "reply": {"message": "delayed"}},
	    {"after": "30s", "reply": {"message": "on time"}}
	  ]
	}`)
	out, err := Run(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	start := sc.Start
	want := []time.Duration{0, 40 * time.Second, 60 * time.Second}
	for i, w := range want {
		if got := out.Turns[i].At; got != stamp(start.Add(w)) {
			js, _ := out.JSON()
			t.Fatalf("turn %d at %s, want +%v:\n%s", i, got, w, js)
		}
	}
}
