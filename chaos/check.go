package chaos

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
)

// The promises a chaos run checks, by the names the report and the exit status use.
const (
	promiseLost     = "lost"           // every request ended with a whole answer or a named error
	promiseHung     = "hung"           // no request outlived its deadline
	promiseWhole    = "whole"          // every answer is its request's, whole, and once
	promisePaidOnce = "paid_twice"     // no provider call after the answer was bought and kept
	promiseBlame    = "wrongly_blamed" // no profile blamed for what its provider did not do
	promiseLadder   = "ladder"         // one ladder step per failure burst
	promiseSessions = "sessions"       // every session's model where the rules put it
	promiseDrained  = "running"        // no reply workflow left running
)

// promiseText says each promise in words, for the table.
var promiseText = map[string]string{
	promiseLost:     "every request ended with a whole answer or a named error",
	promiseHung:     "no request hung",
	promiseWhole:    "every answer is its own request's, whole and once",
	promisePaidOnce: "no answer bought twice",
	promiseBlame:    "no profile blamed for an infrastructure fault",
	promiseLadder:   "each failure burst one ladder step",
	promiseSessions: "every session's model where the rules put it",
	promiseDrained:  "no reply workflow left running",
}

// promiseOrder is the table's order.
var promiseOrder = []string{promiseLost, promiseHung, promiseWhole, promisePaidOnce, promiseBlame, promiseLadder, promiseSessions, promiseDrained}

// markPattern finds a load request's mark (r-<request>.<try>) in a body or an answer.
var markPattern = regexp.MustCompile(`r-[0-9]+\.[0-9]+`)

// broken is one finding against a promise.
type broken struct {
	Promise string `json:"promise"`
	Detail  string `json:"detail"`
}

// window is when a profile may fail for a reason: from From on (zero: always).
type window struct {
	Reason policy.Reason
	From   time.Time
}

// covers reports a failure for r of an attempt that ended at or after the window began. Its end
// only bounds it: under load an end is recorded well after the call, and an attempt run again
// after a lost worker returns what its first run kept, the window's failure, though scheduled
// after the window closed.
func (w window) covers(r policy.Reason, end time.Time) bool {
	return w.Reason == r && (w.From.IsZero() || !end.Before(w.From))
}

// expectations are what the world's script makes right.
type expectations struct {
	// Answer is the whole answer a request of agent with mark gets.
	Answer func(agent, mark string) (text string, calls []toolCall)
	// MayFail lists, per profile, the reasons (and when) its provider deals failures.
	MayFail map[string][]window
	// Ladder are the profiles that never succeed, whose error count is the ladder's count of
	// failure bursts.
	Ladder []string
	// Primary is each agent's primary (provider/model): a session without an override is on it.
	Primary map[string]string
}

// replyRun is one reply workflow run, as its history tells it.
type replyRun struct {
	WorkflowID, RunID string
	Session, Agent    string
	Closed            time.Time
	// Status is completed, failed, canceled, terminated, timed_out or running.
	Status string
	// Final is the provider/model that answered ("" when none did).
	Final string
	Steps []history.Step
}

// sessionState is a session's model as the store keeps it at the end.
type sessionState struct {
	Key, Agent string
	// Model is the session's effective model: its override, else "" (the agent's primary).
	Model string
}

// evidence is everything a run leaves to check.
type evidence struct {
	Requests []*request
	Calls    []fakeprovider.Call
	Kept     []store.KeptOutcome
	Stats    map[string]policy.ProfileStats
	Runs     []replyRun
	Sessions []sessionState
	Expect   expectations
}

// check holds the evidence against every promise; nothing found is a run that kept them all.
func check(ev evidence) []broken {
	var out []broken
	out = append(out, checkRequests(ev)...)
	out = append(out, checkPaidOnce(ev)...)
	out = append(out, checkBlame(ev)...)
	out = append(out, checkLadder(ev)...)
	out = append(out, checkSessions(ev)...)
	for _, r := range ev.Runs {
		if r.Status == "running" {
			out = append(out, broken{promiseDrained, fmt.Sprintf("reply %s (run %s) is still running after the load drained", r.WorkflowID, r.RunID)})
		}
	}
	return out
}

// checkRequests: each request ended (not hung), with a whole answer or a named error, and every
// answer a try received is exactly its request's.
func checkRequests(ev evidence) []broken {
	var out []broken
	for _, r := range ev.Requests {
		if r.Hung {
			out = append(out, broken{promiseHung, fmt.Sprintf("request %d (%s, %s) had no end after %s", r.ID, r.Wire, r.Agent, r.deadline)})
			continue
		}
		last := r.last()
		switch {
		case last == nil:
			out = append(out, broken{promiseLost, fmt.Sprintf("request %d (%s, %s) made no try", r.ID, r.Wire, r.Agent)})
		case !last.Res.Answered && (last.Res.Fail == "connection" || last.Res.Fail == ""):
			out = append(out, broken{promiseLost, fmt.Sprintf("request %d (%s, %s) ended with neither an answer nor a named error after %d tries: %s",
				r.ID, r.Wire, r.Agent, len(r.Tries), last.Res.ErrMessage)})
		}
		for _, t := range r.Tries {
			if !t.Res.Answered || ev.Expect.Answer == nil {
				continue
			}
			text, calls := ev.Expect.Answer(r.Agent, t.Marker)
			if t.Res.Text != text {
				out = append(out, broken{promiseWhole, fmt.Sprintf("request %d try %s (%s): answered %q, its answer is %q", r.ID, t.Marker, r.Wire, clip(t.Res.Text), clip(text))})
			} else if !sameCalls(t.Res.ToolCalls, calls) {
				out = append(out, broken{promiseWhole, fmt.Sprintf("request %d try %s (%s): tool calls %v, its calls are %v", r.ID, t.Marker, r.Wire, t.Res.ToolCalls, calls)})
			}
		}
	}
	return out
}

// sameCalls compares tool calls by name and arguments (ids are the provider's or baton's).
func sameCalls(got, want []toolCall) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Name != want[i].Name || compactJSON(got[i].Arguments) != compactJSON(want[i].Arguments) {
			return false
		}
	}
	return true
}

func compactJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkPaidOnce: once an attempt kept a whole answer for a request's try, no provider call for
// that try may follow (a rerun must return what was kept; DESIGN.md, the attempt's identity).
func checkPaidOnce(ev evidence) []broken {
	keptAt := map[string]time.Time{} // mark → when its answer was first kept
	for _, k := range ev.Kept {
		if !k.Final {
			continue
		}
		var out policy.AttemptOutcome
		if json.Unmarshal(k.Data, &out) != nil || !out.OK {
			continue
		}
		mark := markPattern.FindString(out.Text)
		if mark == "" {
			continue
		}
		if at, ok := keptAt[mark]; !ok || k.At.Before(at) {
			keptAt[mark] = k.At
		}
	}
	var out []broken
	for _, c := range ev.Calls {
		at, ok := keptAt[c.Mark]
		// The kept time is in milliseconds: a call within the same millisecond is not after it.
		if ok && c.At.After(at.Add(time.Millisecond)) {
			out = append(out, broken{promisePaidOnce, fmt.Sprintf("call %d to %s (%s) for %s came %s after its answer was bought and kept",
				c.N, c.Profile, c.Outcome, c.Mark, c.At.Sub(at).Round(time.Millisecond))})
		}
	}
	return out
}

// checkBlame: every failure recorded against a profile, in a reply's history or in the store's
// counts, is one its provider dealt (a lost worker, a restarted server or database is nobody's).
func checkBlame(ev evidence) []broken {
	var out []broken
	for _, r := range ev.Runs {
		for _, s := range r.Steps {
			if s.Kind != "attempt" || s.Outcome != "failed" || s.Reason == "" {
				continue
			}
			if !mayFail(ev.Expect.MayFail[s.Profile], s.Reason, s.At) {
				out = append(out, broken{promiseBlame, fmt.Sprintf("reply %s blamed %s (%s) with %s at %s: %s",
					r.WorkflowID, s.Profile, s.Model, s.Reason, s.At.Format("15:04:05.000"), clip(s.Error))})
			}
		}
	}
	for _, id := range sortedKeys(ev.Stats) {
		for reason, n := range ev.Stats[id].FailureCounts {
			if !mayFailEver(ev.Expect.MayFail[id], reason) {
				out = append(out, broken{promiseBlame, fmt.Sprintf("profile %s holds %d %s failure(s) its provider never dealt", id, n, reason)})
			}
		}
	}
	return out
}

func mayFail(ws []window, r policy.Reason, end time.Time) bool {
	return slices.ContainsFunc(ws, func(w window) bool { return w.covers(r, end) })
}

func mayFailEver(ws []window, r policy.Reason) bool {
	return slices.ContainsFunc(ws, func(w window) bool { return w.Reason == r })
}

// checkLadder: a profile that only ever fails climbs the cooldown ladder once per burst, however
// many replies saw each burst: its error count is at most the number of failures that found it
// out of cooldown, by the provider's own call times (a failure a moment after a cooldown's end
// may count either way), and at least one. Fewer steps than bursts is not a broken promise: a
// reply records its failure after the call ends, later under load, when the next burst's first
// failure may already find the profile cooling down again.
func checkLadder(ev evidence) []broken {
	const edge = 3 * time.Second
	var out []broken
	for _, id := range ev.Expect.Ladder {
		var fails []time.Time
		for _, c := range ev.Calls {
			if c.Profile == id && !c.Delivered && c.Outcome != "text" && c.Outcome != "tool calls" {
				fails = append(fails, c.EndedAt)
			}
		}
		sort.Slice(fails, func(i, j int) bool { return fails[i].Before(fails[j]) })
		high := bursts(fails, -edge)
		got := ev.Stats[id].ErrorCount
		if len(fails) > 0 && (got < 1 || got > high) {
			out = append(out, broken{promiseLadder, fmt.Sprintf("profile %s climbed %d ladder step(s) over %d failed calls; their bursts make at most %d",
				id, got, len(fails), high)})
		}
	}
	return out
}

// bursts counts the failures that start a cooldown: those at or after the previous cooldown's
// end shifted by slack (positive: a failure near the end joins the old burst).
func bursts(fails []time.Time, slack time.Duration) int {
	n := 0
	var until time.Time
	for _, at := range fails {
		if n > 0 && at.Before(until.Add(slack)) {
			continue
		}
		n++
		until = at.Add(policy.CooldownStep(n))
	}
	return n
}

// checkSessions: a session ends on the model its last reply left: the one that answered it, or,
// when the last reply failed, the one the reply before left (a failed reply rolls back only what
// it wrote).
func checkSessions(ev evidence) []broken {
	lanes := map[string][]replyRun{}
	busy := map[string]bool{} // a reply still running may have written its fallback: "running" says so
	for _, r := range ev.Runs {
		if r.Session == "" {
			continue
		}
		if r.Status == "running" {
			busy[r.Agent+"/"+r.Session] = true
			continue
		}
		lanes[r.Agent+"/"+r.Session] = append(lanes[r.Agent+"/"+r.Session], r)
	}
	var out []broken
	for _, s := range ev.Sessions {
		if busy[s.Agent+"/"+s.Key] {
			continue
		}
		runs := lanes[s.Agent+"/"+s.Key]
		sort.Slice(runs, func(i, j int) bool { return runs[i].Closed.Before(runs[j].Closed) })
		want := ev.Expect.Primary[s.Agent]
		for _, r := range runs {
			if r.Status == "completed" && r.Final != "" {
				want = r.Final
			}
		}
		got := s.Model
		if got == "" {
			got = ev.Expect.Primary[s.Agent]
		}
		if got != want {
			var told []string
			for _, r := range runs {
				told = append(told, r.WorkflowID+" "+r.Status+" "+cmp.Or(r.Final, "(no answer)"))
			}
			out = append(out, broken{promiseSessions, fmt.Sprintf("session %s (agent %s) is on %s; after its replies (%s) the rules put it on %s",
				s.Key, s.Agent, got, strings.Join(told, ", "), want)})
		}
	}
	return out
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// byPromise groups findings, in the table's order.
func byPromise(found []broken) map[string][]broken {
	out := map[string][]broken{}
	for _, b := range found {
		out[b.Promise] = append(out[b.Promise], b)
	}
	return out
}

// summary names the broken promises ("" when none is).
func summary(found []broken) string {
	groups := byPromise(found)
	var names []string
	for _, p := range promiseOrder {
		if n := len(groups[p]); n > 0 {
			names = append(names, fmt.Sprintf("%s (%d: %s)", promiseText[p], n, groups[p][0].Detail))
		}
	}
	return strings.Join(names, "; ")
}
