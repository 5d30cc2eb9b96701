package wire

import (
	"strings"
	"testing"
	"time"
)

// wait_for_cooldown (baton's field, in both wires) asks for the durable wait; it is never
// forwarded to a provider.
func TestWaitForCooldownField(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, dec := range []struct {
		name   string
		decode func([]byte) (Request, *Error)
		extra  string
	}{{"openai", DecodeOpenAI, ""}, {"anthropic", DecodeAnthropic, `"max_tokens":10,`}} {
		for raw, want := range map[string]time.Duration{`"10m"`: 10 * time.Minute, `90`: 90 * time.Second, `"1.5"`: 1500 * time.Millisecond, `null`: 0} {
			r, e := dec.decode([]byte(`{"model":"a/b",` + dec.extra + msgs + `,"wait_for_cooldown":` + raw + `}`))
			if e != nil || r.WaitForCooldown != want {
				t.Errorf("%s %s: %v %v, want %v", dec.name, raw, r.WaitForCooldown, e, want)
			}
			if _, forwarded := r.Turn.Extra["wait_for_cooldown"]; forwarded {
				t.Errorf("%s: wait_for_cooldown forwarded", dec.name)
			}
		}
		for _, raw := range []string{`"soon"`, `-5`, `"48h"`, `true`} {
			_, e := dec.decode([]byte(`{"model":"a/b",` + dec.extra + msgs + `,"wait_for_cooldown":` + raw + `}`))
			if e == nil || e.Param != "wait_for_cooldown" || !strings.Contains(e.Message, "wait_for_cooldown") {
				t.Errorf("%s %s: %+v", dec.name, raw, e)
			}
		}
	}
}
