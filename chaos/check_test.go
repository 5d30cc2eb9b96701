package chaos

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	enumspb "go.temporal.io/api/enums/v1"
)

// The checker is known to catch what it claims to: a run that kept every promise passes, and the
// evidence each broken build leaves (below, one per promise) is named by the promise it broke.

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

// cleanRun is the evidence of a run that kept every promise: a rate-limited primary fell back to
// ok/m in a session (two concurrent replies saw one burst), a cut stream was continued whole, a
// worker was lost mid-answer and its attempt ran again from what it had kept.
func cleanRun() evidence {
	answer := func(mark string) string { text, _ := expected(agentRateLimited, mark); return text }
	kept := func(mark string, at time.Time) store.KeptOutcome {
		data, _ := json.Marshal(policy.AttemptOutcome{OK: true, Answer: policy.Answer{Text: answer(mark)}})
		return store.KeptOutcome{Key: "wf/run/2", Final: true, At: at, Data: data}
	}
	req := func(id int, agent, mark string, start time.Time, session string) *request {
		return &request{ID: id, Agent: agent, Wire: wireChat, Session: session, Start: start, End: start.Add(time.Second),
			Tries: []tryRecord{{Marker: mark, Res: result{Answered: true, Text: answer(mark), Finish: "stop"}}}}
	}
	return evidence{
		Requests: []*request{
			req(1, agentRateLimited, "r-000001.1", t0, "s1"),
			req(2, agentRateLimited, "r-000002.1", t0, ""),
			req(3, agentCut, "r-000003.1", t0.Add(time.Second), ""),
		},
		Calls: []fakeprovider.Call{
			{N: 1, At: t0, EndedAt: t0.Add(20 * time.Millisecond), Profile: "rl:chaos", Outcome: "status 429", Mark: "r-000001.1"},
			{N: 2, At: t0, EndedAt: t0.Add(25 * time.Millisecond), Profile: "rl:chaos", Outcome: "status 429", Mark: "r-000002.1"},
			{N: 3, At: t0.Add(30 * time.Millisecond), Profile: "ok:chaos", Outcome: "text", Mark: "r-000001.1", Delivered: true},
			{N: 4, At: t0.Add(30 * time.Millisecond), Profile: "ok:chaos", Outcome: "text", Mark: "r-000002.1", Delivered: true},
			{N: 5, At: t0.Add(time.Second), EndedAt: t0.Add(1100 * time.Millisecond), Profile: "cut:chaos", Outcome: "cut after 3", Mark: "r-000003.1"},
			// A lost worker's attempt: the call went away with it, the rerun called once more.
			{N: 6, At: t0.Add(1200 * time.Millisecond), Profile: "ok:chaos", Outcome: "text", Mark: "r-000003.1"},
			{N: 7, At: t0.Add(5 * time.Second), Profile: "ok:chaos", Outcome: "text", Mark: "r-000003.1", Delivered: true},
		},
		Kept: []store.KeptOutcome{kept("r-000001.1", t0.Add(500*time.Millisecond)), kept("r-000002.1", t0.Add(500*time.Millisecond)),
			kept("r-000003.1", t0.Add(5500*time.Millisecond))},
		Stats: map[string]policy.ProfileStats{
			"rl:chaos":  {ErrorCount: 1, FailureCounts: map[policy.Reason]int{policy.ReasonRateLimit: 1}, CooldownUntil: t0.Add(time.Minute)},
			"cut:chaos": {ErrorCount: 1, FailureCounts: map[policy.Reason]int{policy.ReasonTimeout: 1}},
			"ok:chaos":  {},
		},
		Runs: []replyRun{
			{WorkflowID: "reply/rl/s1", RunID: "a", Session: "s1", Agent: agentRateLimited, Status: "completed", Closed: t0.Add(time.Second), Final: "ok/m",
				Steps: []history.Step{{Kind: "attempt", Profile: "rl:chaos", Model: "rl/m", Outcome: "failed", Reason: policy.ReasonRateLimit, At: t0}}},
			{WorkflowID: "reply-cut-1", RunID: "b", Agent: agentCut, Status: "completed", Closed: t0.Add(6 * time.Second), Final: "ok/m",
				Steps: []history.Step{{Kind: "attempt", Profile: "cut:chaos", Model: "cut/m", Outcome: "failed", Reason: policy.ReasonTimeout, At: t0.Add(time.Second)}}},
		},
		Sessions: []sessionState{{Key: "s1", Agent: agentRateLimited, Model: "ok/m"}},
		Expect: expectations{Answer: expected, Primary: primaries, Ladder: []string{"rl:chaos", "cut:chaos"},
			MayFail: map[string][]window{"rl:chaos": {{Reason: policy.ReasonRateLimit}}, "cut:chaos": {{Reason: policy.ReasonTimeout}}}},
	}
}

func TestARunThatKeptEveryPromisePasses(t *testing.T) {
	if found := check(cleanRun()); len(found) != 0 {
		t.Fatalf("a clean run: %+v", found)
	}
}

func TestEachBrokenBuildIsNamedByThePromiseItBroke(t *testing.T) {
	for _, tc := range []struct {
		name    string
		promise string
		detail  string
		breakIt func(*evidence)
	}{
		{"an attempt's kept outcome not consulted before a rerun", promisePaidOnce, "call 8 to ok:chaos (text) for r-000001.1", func(ev *evidence) {
			// The worker died after keeping the answer and before reporting; the rerun bought it again.
			ev.Calls = append(ev.Calls, fakeprovider.Call{N: 8, At: t0.Add(11 * time.Second), Profile: "ok:chaos", Outcome: "text", Mark: "r-000001.1", Delivered: true})
		}},
		{"a cut stream's partial answer sent again before the fallback's whole answer", promiseWhole, "request 3 try r-000003.1", func(ev *evidence) {
			ev.Requests[2].Tries[0].Res.Text = "Answer to r-000003.1: Answer to r-000003.1: all systems nominal, over and out."
		}},
		{"another request's answer delivered", promiseWhole, "request 2", func(ev *evidence) {
			ev.Requests[1].Tries[0].Res.Text = ev.Requests[0].Tries[0].Res.Text
		}},
		{"a door that dies ends its stream as if it were whole", promiseLost, "request 2", func(ev *evidence) {
			ev.Requests[1].Tries = []tryRecord{{Marker: "r-000002.1", Res: result{Fail: "connection", Partial: true, ErrMessage: "unexpected EOF"}}}
		}},
		{"a request that never ends", promiseHung, "request 1", func(ev *evidence) { ev.Requests[0].Hung = true }},
		{"a lost worker read as the provider's timeout", promiseBlame, "blamed ok:chaos (ok/m) with timeout", func(ev *evidence) {
			ev.Runs[1].Steps = append(ev.Runs[1].Steps, history.Step{Kind: "attempt", Profile: "ok:chaos", Model: "ok/m", Outcome: "failed", Reason: policy.ReasonTimeout, At: t0.Add(2 * time.Second)})
		}},
		{"a restarted server counted against a profile", promiseBlame, "profile ok:chaos holds 1 timeout", func(ev *evidence) {
			ev.Stats["ok:chaos"] = policy.ProfileStats{ErrorCount: 1, FailureCounts: map[policy.Reason]int{policy.ReasonTimeout: 1}}
		}},
		{"each concurrent failure of one burst a ladder step", promiseLadder, "profile rl:chaos climbed 2 ladder step(s) over 2 failed calls; their bursts make at most 1", func(ev *evidence) {
			s := ev.Stats["rl:chaos"]
			s.ErrorCount = 2
			ev.Stats["rl:chaos"] = s
		}},
		{"a failed fallback's session write not rolled back", promiseSessions, "session s1 (agent rl) is on cut/m; after its replies (reply/rl/s1 completed ok/m) the rules put it on ok/m", func(ev *evidence) {
			ev.Sessions[0].Model = "cut/m"
		}},
		{"a reply that never ends", promiseDrained, "reply-cut-1", func(ev *evidence) { ev.Runs[1].Status = "running" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := cleanRun()
			tc.breakIt(&ev)
			found := check(ev)
			if len(found) == 0 {
				t.Fatal("not caught")
			}
			for _, b := range found {
				if b.Promise != tc.promise || !strings.Contains(b.Detail, tc.detail) {
					t.Errorf("found %s: %s; want %s naming %q", b.Promise, b.Detail, tc.promise, tc.detail)
				}
			}
			if s := summary(found); !strings.Contains(s, promiseText[tc.promise]) {
				t.Errorf("summary %q does not name %q", s, promiseText[tc.promise])
			}
		})
	}
}

// Bursts: failures that find the profile out of cooldown each climb a step; those inside it none.
func TestBurstsFollowTheLadder(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	fails := []time.Time{at(0), at(time.Second), at(59 * time.Second), at(61 * time.Second), at(62 * time.Second), at(7 * time.Minute)}
	// 0 opens 1 min; 61 s opens 5 min (to 6:01); 7 min opens 25 min: 3 bursts.
	if n := bursts(fails, 0); n != 3 {
		t.Errorf("bursts = %d, want 3", n)
	}
	// A failure 2 s after a cooldown's end may still belong to the old burst (slack 3 s).
	if n := bursts(fails, 3*time.Second); n != 2 {
		t.Errorf("bursts with slack = %d, want 2", n)
	}
}

// An outage's failure is the provider's though its attempt's end was recorded long after, under
// load, or its attempt ran again after a lost worker and returned what it had kept.
func TestAnOutagesFailureRecordedLateIsNotWronglyBlamed(t *testing.T) {
	ev := cleanRun()
	ev.Expect.MayFail["ok:chaos"] = []window{{Reason: policy.ReasonOverloaded, From: t0.Add(time.Minute)}}
	late := history.Step{Kind: "attempt", Profile: "ok:chaos", Model: "ok/m", Outcome: "failed", Reason: policy.ReasonOverloaded,
		Started: t0.Add(5 * time.Minute), At: t0.Add(6 * time.Minute)}
	ev.Runs[1].Steps = append(ev.Runs[1].Steps, late)
	if found := check(ev); len(found) != 0 {
		t.Errorf("a late-recorded outage failure: %+v", found)
	}
	late.Started, late.At = t0.Add(10*time.Second), t0.Add(20*time.Second) // over before the outage began
	ev.Runs[1].Steps[len(ev.Runs[1].Steps)-1] = late
	if found := check(ev); len(found) != 1 || found[0].Promise != promiseBlame {
		t.Errorf("a failure before the outage: %+v", found)
	}
}

// The checker reads runs by these names.
func TestStatusNamesAreTheCheckersWords(t *testing.T) {
	if got := status(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING); got != "running" {
		t.Errorf("running: %q", got)
	}
	if got := status(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED); got != "completed" {
		t.Errorf("completed: %q", got)
	}
}
