// Package scenario runs the scenario files of docs/SCENARIOS.md: every turn through the real
// ReplyWorkflow, the real activities, a fresh SQLite store and the real provider adapters talking
// to the fake provider, in the SDK's test environment with its clock at the scenario's clock.
package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
)

// Scenario is one file.
type Scenario struct {
	Name     string              `json:"name"`
	Start    time.Time           `json:"start"`
	Config   json.RawMessage     `json:"config"`
	Timeouts *Timeouts           `json:"timeouts"`
	Profiles []Profile           `json:"profiles"`
	State    *State              `json:"state"`
	Sessions []SessionSeed       `json:"sessions"`
	Env      map[string]string   `json:"env"`
	Provider []fakeprovider.Rule `json:"provider"`
	Turns    []Turn              `json:"turns"`
	Expect   json.RawMessage     `json:"expect"`
}

// Timeouts bound streams and attempts, in milliseconds (0: the worker's default), as the
// worker's environment does: firstTokenMs from the response headers to the first chunk (a
// reasoning request's too), idleMs between chunks, attemptMs a whole attempt from the request to
// its last chunk. A model's catalog entry may give its own (firstTokenTimeoutMs,
// attemptTimeoutMs).
type Timeouts struct {
	FirstTokenMs int `json:"firstTokenMs"`
	IdleMs       int `json:"idleMs"`
	AttemptMs    int `json:"attemptMs"`
}

// Profile is a stored credential.
type Profile struct {
	ID       string    `json:"id"`
	Provider string    `json:"provider"`
	Type     string    `json:"type"`
	Key      string    `json:"key"`
	Access   string    `json:"access"`
	Refresh  string    `json:"refresh"`
	Token    string    `json:"token"`
	Expires  time.Time `json:"expires"`
	Email    string    `json:"email"`
}

// State is the starting auth state.
type State struct {
	UsageStats map[string]UsageSeed `json:"usageStats"`
	Order      map[string][]string  `json:"order"`
}

// UsageSeed is a profile's starting usage stats.
type UsageSeed struct {
	LastUsed       *time.Time     `json:"lastUsed"`
	CooldownUntil  *time.Time     `json:"cooldownUntil"`
	CooldownModel  string         `json:"cooldownModel"`
	CooldownReason string         `json:"cooldownReason"`
	ErrorCount     int            `json:"errorCount"`
	LastFailureAt  *time.Time     `json:"lastFailureAt"`
	DisabledUntil  *time.Time     `json:"disabledUntil"`
	DisabledReason string         `json:"disabledReason"`
	FailureCounts  map[string]int `json:"failureCounts"`
}

// SessionSeed is a starting session.
type SessionSeed struct {
	Key                                 string     `json:"key"`
	Agent                               string     `json:"agent"`
	ModelOverride                       string     `json:"modelOverride"`
	ProviderOverride                    string     `json:"providerOverride"`
	ModelOverrideSource                 string     `json:"modelOverrideSource"`
	AuthProfileOverride                 string     `json:"authProfileOverride"`
	AuthProfileOverrideSource           string     `json:"authProfileOverrideSource"`
	AuthProfileOverrideCompactionCount  *int       `json:"authProfileOverrideCompactionCount"`
	ModelOverrideFallbackOriginProvider string     `json:"modelOverrideFallbackOriginProvider"`
	ModelOverrideFallbackOriginModel    string     `json:"modelOverrideFallbackOriginModel"`
	ModelOverrideUpdatedAt              *time.Time `json:"modelOverrideUpdatedAt"`
	CompactionCount                     int        `json:"compactionCount"`
}

// Turn is a reply or a session operation, after a pause.
type Turn struct {
	After   Duration   `json:"after"`
	Reply   *ReplyTurn `json:"reply"`
	Session *SessionOp `json:"session"`
}

// ReplyTurn is a reply.
type ReplyTurn struct {
	Session         string               `json:"session"`
	Agent           string               `json:"agent"`
	Message         string               `json:"message"`
	Model           string               `json:"model"`
	Cron            *CronTurn            `json:"cron"`
	Heartbeat       *policy.HeartbeatRun `json:"heartbeat"`
	Image           bool                 `json:"image"`
	SwitchTo        *SwitchTo            `json:"switchTo"`
	AbortAfterCalls int                  `json:"abortAfterCalls"`
	// WaitForCooldown (a baton extension) lets the reply wait for the soonest cooldown.
	WaitForCooldown Duration `json:"waitForCooldown"`
}

// CronTurn is a cron job's payload.
type CronTurn struct {
	Model     string    `json:"model"`
	Fallbacks *[]string `json:"fallbacks"`
}

// SwitchTo is a user's /model during a reply.
type SwitchTo struct {
	AfterCalls int    `json:"afterCalls"`
	Model      string `json:"model"`
	Profile    string `json:"profile"`
}

// SessionOp is a session operation.
type SessionOp struct {
	Key     string            `json:"key"`
	Op      string            `json:"op"` // model | reset | compact | patch
	Model   string            `json:"model"`
	Profile string            `json:"profile"`
	Fields  map[string]string `json:"fields"`
}

// Duration reads Go duration syntax ("90s").
type Duration time.Duration

// UnmarshalJSON reads "90s", "5m", "2h".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration like \"90s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a duration like 90s", s)
	}
	*d = Duration(v)
	return nil
}

// Load reads and checks a scenario file; errors name the file and what is wrong.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a field simulate does not implement is refused, never ignored
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, describeJSONError(data, err, dec.InputOffset()))
	}
	if err := sc.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &sc, nil
}

// describeJSONError adds the line: from the error when it knows its offset, else from where the
// decoder stopped (a value its own type refused, like a bad time).
func describeJSONError(data []byte, err error, stopped int64) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	offset := stopped
	switch {
	case errorsAs(err, &pe):
		return fmt.Errorf("%q is not an RFC 3339 time like 2026-01-01T00:00:00Z", pe.Value)
	case errorsAs(err, &se):
		offset = se.Offset
	case errorsAs(err, &te):
		offset = te.Offset
		if te.Field != "" {
			err = fmt.Errorf("%s: %w", te.Field, err)
		}
	}
	line := 1 + bytes.Count(data[:min(int(offset), len(data))], []byte("\n"))
	return fmt.Errorf("line %d: %w", line, err)
}

func (sc *Scenario) validate() error {
	if sc.Start.IsZero() {
		return fmt.Errorf("start: missing (RFC 3339, e.g. 2026-01-01T00:00:00Z)")
	}
	for i, t := range sc.Turns {
		switch {
		case t.Reply == nil && t.Session == nil:
			return fmt.Errorf("turns[%d]: neither reply nor session", i)
		case t.Reply != nil && t.Session != nil:
			return fmt.Errorf("turns[%d]: both reply and session", i)
		case t.Reply != nil:
			n := 0
			for _, set := range []bool{t.Reply.Model != "", t.Reply.Cron != nil, t.Reply.Heartbeat != nil, t.Reply.Image} {
				if set {
					n++
				}
			}
			if n > 1 {
				return fmt.Errorf("turns[%d].reply: at most one of model, cron, heartbeat, image", i)
			}
			if sw := t.Reply.SwitchTo; sw != nil {
				if _, err := policy.ParseModelRef(sw.Model); err != nil {
					return fmt.Errorf("turns[%d].reply.switchTo.model: %w", i, err)
				}
				if sw.AfterCalls < 1 {
					return fmt.Errorf("turns[%d].reply.switchTo.afterCalls: %d is not a call number (1, 2, …)", i, sw.AfterCalls)
				}
				if t.Reply.Session == "" {
					return fmt.Errorf("turns[%d].reply.switchTo: a switch is a session's /model: the reply needs a session", i)
				}
			}
			if t.Reply.AbortAfterCalls < 0 {
				return fmt.Errorf("turns[%d].reply.abortAfterCalls: %d is negative", i, t.Reply.AbortAfterCalls)
			}
		case t.Session != nil:
			switch t.Session.Op {
			case "model", "reset", "compact", "patch":
			default:
				return fmt.Errorf("turns[%d].session.op: %q is not model, reset, compact or patch", i, t.Session.Op)
			}
			if t.Session.Key == "" {
				return fmt.Errorf("turns[%d].session.key: missing", i)
			}
		}
	}
	for k := range sc.Env {
		if !strings.HasPrefix(k, "BATON_") && !strings.HasPrefix(k, "OPENCLAW_") {
			return fmt.Errorf("env.%s: only BATON_* and OPENCLAW_* keys", k)
		}
		switch k {
		case "BATON_RETRY_MAX_WAIT_SECONDS", "BATON_FALLBACK_SKIP_TTL_MS", "OPENCLAW_FALLBACK_SKIP_TTL_MS":
		default:
			return fmt.Errorf("env.%s: simulate does not implement it (BATON_RETRY_MAX_WAIT_SECONDS, BATON_FALLBACK_SKIP_TTL_MS, OPENCLAW_FALLBACK_SKIP_TTL_MS)", k)
		}
	}
	if t := sc.Timeouts; t != nil {
		for name, ms := range map[string]int{"firstTokenMs": t.FirstTokenMs, "idleMs": t.IdleMs, "attemptMs": t.AttemptMs} {
			if ms < 0 {
				return fmt.Errorf("timeouts.%s: %d is negative (0: the default)", name, ms)
			}
		}
	}
	return nil
}
