package history

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// Step is one line of a failover timeline.
type Step struct {
	At time.Time `json:"at"`
	// Started is when an attempt was scheduled (At is when it ended).
	Started time.Time     `json:"started,omitzero"`
	Kind    string        `json:"kind"` // attempt | skip | wait | session | switch
	Model   string        `json:"model,omitempty"`
	Profile string        `json:"profile,omitempty"`
	Outcome string        `json:"outcome,omitempty"` // succeeded | failed | lost | skipped | switched
	Reason  policy.Reason `json:"reason,omitempty"`
	Status  int           `json:"status,omitempty"`
	Error   string        `json:"error,omitempty"`
	Wait    time.Duration `json:"wait,omitempty"`
	// WaitFor says what a wait was for: "retry" (a same-candidate retry waiting out a Retry-After
	// or a backoff), "rotate" (the backoff before rotating past an overload), "cooldown" (a reply
	// with a wait budget sleeping until a candidate is back).
	WaitFor  string `json:"waitFor,omitempty"`
	Decision string `json:"decision"` // answer, retry, rotate, advance, run again, skip, probe, wait, write fallback, roll back, switch, stop
}

// Timeline is a reply's failover story.
type Timeline struct {
	WorkflowID string                 `json:"workflowId"`
	Request    workflows.ReplyRequest `json:"request"`
	Steps      []Step                 `json:"steps"`
	Result     string                 `json:"result"`
	Served     *policy.Served         `json:"served,omitempty"`
	Error      string                 `json:"error,omitempty"`
	ErrorType  string                 `json:"errorType,omitempty"`
	// Notices are the failover notices the reply returned.
	Notices []string `json:"notices,omitempty"`
	// Start and End are the times of the history's first and last events.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// NextRunID is the run this one continued as (a user's /model restarting the reply).
	NextRunID string `json:"nextRunId,omitempty"`
	// Unreadable says why the payloads could not be read (encrypted, and no key given).
	Unreadable string `json:"unreadable,omitempty"`
}

// Explain reads a Reply history into its timeline: every attempt with its outcome and reason, the
// waits, the session writes, and the decision each step led to. Payloads are read with the
// default data converter; see ExplainWith for encrypted histories.
func Explain(h *historypb.History) (*Timeline, error) { return ExplainWith(h, Options{}) }

// Options tune ExplainWith.
type Options struct {
	// DataConverter reads the payloads (nil: the default converter), such as
	// codec.DataConverter for a history written with BATON_PAYLOAD_KEY.
	DataConverter converter.DataConverter
	// Attempts are a running reply's attempts so far (its status query): they place the skips,
	// which run no activity, that its history cannot show until it ends.
	Attempts []policy.Attempt
}

// ExplainWith is Explain with options. An attempt still in flight is a step with outcome
// "running".
func ExplainWith(h *historypb.History, o Options) (*Timeline, error) {
	dc := o.DataConverter
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	decode := func(p *commonpb.Payloads, v any) error {
		if p == nil || len(p.GetPayloads()) == 0 {
			return errors.New("no payload")
		}
		return dc.FromPayload(p.GetPayloads()[0], v)
	}
	events := h.GetEvents()
	if len(events) == 0 {
		return nil, errors.New("empty history")
	}
	start := events[0].GetWorkflowExecutionStartedEventAttributes()
	if start == nil || start.GetWorkflowType().GetName() != workflows.ReplyWorkflowName {
		return nil, fmt.Errorf("not a %s workflow history (its first event is %s)", workflows.ReplyWorkflowName, events[0].GetEventType())
	}
	tl := &Timeline{WorkflowID: start.GetWorkflowId(), Start: events[0].GetEventTime().AsTime(),
		End: events[len(events)-1].GetEventTime().AsTime()}
	if err := decode(start.GetInput(), &tl.Request); err != nil {
		if p := start.GetInput().GetPayloads(); len(p) > 0 && string(p[0].GetMetadata()[converter.MetadataEncoding]) == codec.EncodingEncrypted {
			tl.Unreadable = "the payloads are encrypted and no key was given (BATON_PAYLOAD_KEY): " + err.Error()
		} else {
			tl.Unreadable = "the reply's input does not decode: " + err.Error()
		}
	}

	type scheduled struct {
		kind  string
		input *commonpb.Payloads
		at    time.Time
	}
	pending := map[int64]scheduled{}
	var attempts []workflows.AttemptRequest
	var outcomes []policy.AttemptOutcome
	var steps []Step
	grouped := false // the reply's own attempt list placed the steps (mergeSkips)
	for _, e := range events {
		at := e.GetEventTime().AsTime()
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := e.GetActivityTaskScheduledEventAttributes()
			pending[e.GetEventId()] = scheduled{kind: a.GetActivityType().GetName(), input: a.GetInput(), at: at}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			var schedID int64
			var result *commonpb.Payloads
			var lost string // why an attempt ended without an outcome: baton's fault, not the provider's
			switch {
			case e.GetActivityTaskCompletedEventAttributes() != nil:
				schedID, result = e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId(), e.GetActivityTaskCompletedEventAttributes().GetResult()
			case e.GetActivityTaskTimedOutEventAttributes() != nil:
				a := e.GetActivityTaskTimedOutEventAttributes()
				schedID, lost = a.GetScheduledEventId(), lostReason(a.GetFailure())
			default:
				a := e.GetActivityTaskFailedEventAttributes()
				schedID, lost = a.GetScheduledEventId(), "the attempt failed in baton: "+a.GetFailure().GetMessage()
			}
			s := pending[schedID]
			delete(pending, schedID)
			switch s.kind {
			case workflows.AttemptActivity:
				var req workflows.AttemptRequest
				_ = decode(s.input, &req)
				var out policy.AttemptOutcome
				if result != nil {
					_ = decode(result, &out)
				}
				attempts, outcomes = append(attempts, req), append(outcomes, out)
				st := Step{At: at, Started: s.at, Kind: "attempt", Model: modelOf(req.Provider, req.Model), Profile: req.Profile, Outcome: "failed",
					Reason: out.Reason, Status: out.Status, Error: out.Error}
				switch {
				case result == nil:
					// The workflow runs such an attempt again and blames no profile: neither does
					// the story (a lost worker, a restarted server, a door gone).
					st.Outcome, st.Error = "lost", lost
				case out.OK:
					st.Outcome = "succeeded"
				}
				steps = append(steps, st)
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			// The reply's store steps are local activities: a marker each, without its input.
			m := e.GetMarkerRecordedEventAttributes()
			if m.GetMarkerName() != localActivityMarker {
				continue
			}
			var data struct{ ActivityType string }
			if decode(m.GetDetails()["data"], &data) != nil {
				continue
			}
			switch data.ActivityType {
			case workflows.WriteFallbackActivity:
				// The model written is the candidate tried next (filled in below).
				steps = append(steps, Step{At: at, Kind: "session", Decision: "write fallback"})
			case workflows.RollbackFallbackActivity:
				steps = append(steps, Step{At: at, Kind: "session", Decision: "roll back"})
			case workflows.ClaimProbeActivity:
				steps = append(steps, Step{At: at, Kind: "probe", Decision: "probe"})
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			d := e.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration()
			steps = append(steps, Step{At: at, Kind: "wait", Wait: d, Decision: "wait"})
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			var res policy.ReplyResult
			tl.Result = "answered"
			if err := decode(e.GetWorkflowExecutionCompletedEventAttributes().GetResult(), &res); err == nil {
				tl.Served, tl.Notices = &res.Served, res.Notices
				steps, grouped = mergeSkips(steps, ownAttempts(res.Attempts, tl.Request.Earlier)), true
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
			tl.Result, tl.Error = "terminated", e.GetWorkflowExecutionTerminatedEventAttributes().GetReason()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
			tl.Result = "canceled"
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
			tl.Result = "timed out"
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			tl.Result, tl.NextRunID = "restarted", e.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
			f := e.GetWorkflowExecutionFailedEventAttributes().GetFailure()
			tl.Result, tl.Error = "failed", f.GetMessage()
			if app := f.GetApplicationFailureInfo(); app != nil {
				tl.ErrorType = app.GetType()
				var ex policy.Exhaustion
				if app.GetType() == policy.ErrFallbackSummary && decode(app.GetDetails(), &ex) == nil {
					steps, grouped = mergeSkips(steps, ownAttempts(ex.Attempts, tl.Request.Earlier)), true
				}
			}
		}
	}
	if tl.Result == "" {
		// Still running: the attempt in flight, and the skips the reply has made so far.
		var ids []int64
		for id, s := range pending {
			if s.kind == workflows.AttemptActivity {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			var req workflows.AttemptRequest
			_ = decode(pending[id].input, &req)
			steps = append(steps, Step{At: pending[id].at, Started: pending[id].at, Kind: "attempt", Model: modelOf(req.Provider, req.Model),
				Profile: req.Profile, Outcome: "running", Decision: "in flight"})
		}
		if len(o.Attempts) > 0 {
			// Not grouped: the attempt being retried is not in the list yet.
			steps = mergeSkips(steps, o.Attempts)
		}
	}
	fillWrittenModels(steps)
	classifyWaits(steps, grouped)
	decideAttempts(steps, tl.Result)
	tl.Steps = append(earlierSteps(tl.Request.Earlier), steps...)
	if tl.Result == "" {
		tl.Result = "running"
	}
	return tl, nil
}

// ownAttempts is a run's own part of a reply's attempt list, which begins with the attempts of the
// runs a /model restart ended (ReplyRequest.Earlier).
func ownAttempts(all, earlier []policy.Attempt) []policy.Attempt {
	if len(earlier) > 0 && len(all) >= len(earlier) {
		return all[len(earlier):]
	}
	return all
}

// earlierSteps tells the attempts of the runs a /model restart ended, before this run's own.
func earlierSteps(earlier []policy.Attempt) []Step {
	var out []Step
	for _, a := range earlier {
		kind := "attempt"
		switch a.Result {
		case policy.ResultSkipped:
			kind = "skip"
		case policy.ResultSwitched:
			kind = "switch"
		}
		out = append(out, Step{At: a.At, Kind: kind, Model: a.Provider + "/" + a.Model, Profile: a.Profile, Outcome: a.Result,
			Reason: a.Reason, Status: a.Status, Error: a.Error, Decision: "earlier run"})
	}
	return out
}

// modelOf is provider/model, or "" when the payload naming it could not be read.
func modelOf(provider, model string) string {
	if provider == "" {
		return ""
	}
	return provider + "/" + model
}

// localActivityMarker names the SDK's marker of a local activity.
const localActivityMarker = "LocalActivity"

// fillWrittenModels names the model of each fallback write recorded without its input: the
// candidate of the attempt that follows it.
func fillWrittenModels(steps []Step) {
	for i := range steps {
		if steps[i].Decision != "write fallback" || steps[i].Model != "" {
			continue
		}
		for _, n := range steps[i+1:] {
			if n.Kind == "attempt" {
				steps[i].Model = n.Model
				break
			}
		}
	}
}

// mergeSkips puts the skipped and switched candidates, which run no activity, in their place: the
// reply's own attempt list is the order, each tried attempt standing for 1 + retries calls.
func mergeSkips(steps []Step, attempts []policy.Attempt) []Step {
	var out []Step
	k := 0
	takeAttempt := func(retry bool) {
		for k < len(steps) {
			s := steps[k]
			k++
			if s.Kind == "wait" && retry {
				s.WaitFor = "retry" // between the calls of one attempt: a same-candidate retry
			}
			out = append(out, s)
			if s.Kind == "attempt" {
				return
			}
		}
	}
	for _, a := range attempts {
		switch a.Result {
		case policy.ResultSkipped, policy.ResultSwitched:
			kind := "skip"
			if a.Result == policy.ResultSwitched {
				kind = "switch"
			}
			out = append(out, Step{At: a.At, Kind: kind, Model: a.Provider + "/" + a.Model, Profile: a.Profile, Outcome: a.Result,
				Reason: a.Reason, Error: a.Error, Decision: kind})
		default:
			n := 1
			if a.Retries != nil {
				n += *a.Retries
			}
			for i := 0; i < n; i++ {
				takeAttempt(i > 0)
			}
		}
	}
	return append(out, steps[k:]...)
}

// classifyWaits says what each wait not yet placed was for, from the attempts around it. Placed
// by the reply's attempt list (grouped), a wait between two attempts is the backoff before an
// overload rotation when the next attempt is the same candidate's, else a sleep until a cooldown
// ends. Without it (a running reply), a wait before the same profile again, or a wait of a
// minute or less still under way, is taken for a retry.
func classifyWaits(steps []Step, grouped bool) {
	for i := range steps {
		if steps[i].Kind != "wait" || steps[i].WaitFor != "" {
			continue
		}
		steps[i].WaitFor = "cooldown"
		var prev, next *Step
		for j := i - 1; j >= 0 && prev == nil; j-- {
			if steps[j].Kind == "attempt" {
				prev = &steps[j]
			}
		}
		for j := i + 1; j < len(steps) && next == nil; j++ {
			switch steps[j].Kind {
			case "attempt", "skip", "switch":
				next = &steps[j]
			}
		}
		if !grouped && prev != nil && next == nil && steps[i].Wait <= time.Minute {
			steps[i].WaitFor = "retry" // under way; a retry waits at most BATON_RETRY_MAX_WAIT_SECONDS
			continue
		}
		if prev == nil || next == nil || next.Kind != "attempt" || next.Model != prev.Model {
			continue
		}
		switch {
		case next.Profile != prev.Profile && prev.Reason == policy.ReasonOverloaded:
			steps[i].WaitFor = "rotate" // only an overload rotation sleeps first
		case !grouped:
			steps[i].WaitFor = "retry"
		}
	}
}

// decideAttempts names what each attempt led to, from what came next; the last one of a reply
// still running (result "") has not led anywhere yet ("pending"), and that of a reply restarted
// on a user's /model led to the switch.
func decideAttempts(steps []Step, result string) {
	for i := range steps {
		s := &steps[i]
		if s.Kind != "attempt" {
			continue
		}
		if s.Outcome == "running" {
			continue
		}
		if s.Outcome == "succeeded" {
			s.Decision = "answer"
			continue
		}
		if s.Outcome == "lost" {
			s.Decision = "run again"
			continue
		}
		s.Decision = "stop"
		for j := i + 1; j < len(steps); j++ {
			n := steps[j]
			if n.Kind == "wait" && n.WaitFor == "cooldown" {
				s.Decision = "wait" // every candidate failed: the reply sleeps until one is back
				break
			}
			if n.Kind == "wait" || n.Kind == "session" || n.Kind == "probe" {
				continue
			}
			switch {
			case n.Kind == "attempt" && n.Model == s.Model && n.Profile == s.Profile:
				s.Decision = "retry"
			case n.Kind == "attempt" && n.Model == s.Model:
				s.Decision = "rotate"
			case n.Kind == "switch":
				s.Decision = "switch"
			default:
				s.Decision = "advance"
			}
			break
		}
		switch {
		case s.Decision == "stop" && result == "":
			s.Decision = "pending"
		case s.Decision == "stop" && result == "restarted":
			s.Decision = "switch"
		case s.Decision == "stop" && s.Reason != policy.ReasonContextOverflow && s.Reason != policy.ReasonFormat:
			s.Decision = "exhausted"
		}
	}
}

// lostReason says why an attempt timed out in Temporal's terms: its worker stopped heartbeating
// (killed, or cut off from the server), or no worker of the door's queue took it.
func lostReason(f *failurepb.Failure) string {
	switch f.GetTimeoutFailureInfo().GetTimeoutType() {
	case enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return "the attempt's worker stopped heartbeating (lost, or cut off from the server): the attempt runs again, no profile blamed"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return "no worker of the front door's queue took the attempt (the door is gone): it runs again on the shared queue"
	}
	return "the attempt timed out in Temporal (" + f.GetMessage() + "): it runs again, no profile blamed"
}
