package history

import (
	"errors"
	"fmt"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// Step is one line of a failover timeline.
type Step struct {
	At       time.Time     `json:"at"`
	Kind     string        `json:"kind"` // attempt | skip | wait | session | switch
	Model    string        `json:"model,omitempty"`
	Profile  string        `json:"profile,omitempty"`
	Outcome  string        `json:"outcome,omitempty"` // succeeded | failed | skipped | switched
	Reason   policy.Reason `json:"reason,omitempty"`
	Status   int           `json:"status,omitempty"`
	Error    string        `json:"error,omitempty"`
	Wait     time.Duration `json:"wait,omitempty"`
	Decision string        `json:"decision"` // answer, retry, rotate, advance, skip, probe, wait, write fallback, roll back, switch, stop
}

// Timeline is a reply's failover story.
type Timeline struct {
	WorkflowID string              `json:"workflowId"`
	Request    policy.ReplyRequest `json:"request"`
	Steps      []Step              `json:"steps"`
	Result     string              `json:"result"`
	Served     *policy.Served      `json:"served,omitempty"`
	Error      string              `json:"error,omitempty"`
	ErrorType  string              `json:"errorType,omitempty"`
}

var dc = converter.GetDefaultDataConverter()

func decode(p *commonpb.Payloads, v any) error {
	if p == nil || len(p.GetPayloads()) == 0 {
		return errors.New("no payload")
	}
	return dc.FromPayload(p.GetPayloads()[0], v)
}

// Explain reads a Reply history into its timeline: every attempt with its outcome and reason, the
// waits, the session writes, and the decision each step led to.
func Explain(h *historypb.History) (*Timeline, error) {
	events := h.GetEvents()
	if len(events) == 0 {
		return nil, errors.New("empty history")
	}
	start := events[0].GetWorkflowExecutionStartedEventAttributes()
	if start == nil || start.GetWorkflowType().GetName() != workflows.ReplyWorkflowName {
		return nil, fmt.Errorf("not a %s workflow history (its first event is %s)", workflows.ReplyWorkflowName, events[0].GetEventType())
	}
	tl := &Timeline{WorkflowID: start.GetWorkflowId()}
	_ = decode(start.GetInput(), &tl.Request)

	type scheduled struct {
		kind  string
		input *commonpb.Payloads
	}
	pending := map[int64]scheduled{}
	var attempts []policy.AttemptRequest
	var outcomes []policy.AttemptOutcome
	var steps []Step
	for _, e := range events {
		at := e.GetEventTime().AsTime()
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := e.GetActivityTaskScheduledEventAttributes()
			pending[e.GetEventId()] = scheduled{kind: a.GetActivityType().GetName(), input: a.GetInput()}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			var schedID int64
			var result *commonpb.Payloads
			switch {
			case e.GetActivityTaskCompletedEventAttributes() != nil:
				schedID, result = e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId(), e.GetActivityTaskCompletedEventAttributes().GetResult()
			case e.GetActivityTaskTimedOutEventAttributes() != nil:
				schedID = e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
			default:
				schedID = e.GetActivityTaskFailedEventAttributes().GetScheduledEventId()
			}
			s := pending[schedID]
			switch s.kind {
			case workflows.AttemptActivity:
				var req policy.AttemptRequest
				_ = decode(s.input, &req)
				var out policy.AttemptOutcome
				if result != nil {
					_ = decode(result, &out)
				} else {
					out = policy.AttemptOutcome{Reason: policy.ReasonTimeout, Error: "the attempt stopped heartbeating"}
				}
				attempts, outcomes = append(attempts, req), append(outcomes, out)
				st := Step{At: at, Kind: "attempt", Model: req.Provider + "/" + req.Model, Profile: req.Profile, Outcome: "failed",
					Reason: out.Reason, Status: out.Status, Error: out.Error}
				if out.OK {
					st.Outcome = "succeeded"
				}
				steps = append(steps, st)
			case workflows.WriteFallbackActivity:
				var w policy.SessionWrite
				_ = decode(s.input, &w)
				steps = append(steps, Step{At: at, Kind: "session", Model: w.Next.ProviderOverride + "/" + w.Next.ModelOverride, Decision: "write fallback"})
			case workflows.RollbackFallbackActivity:
				steps = append(steps, Step{At: at, Kind: "session", Decision: "roll back"})
			case workflows.ClaimProbeActivity:
				steps = append(steps, Step{At: at, Kind: "probe", Decision: "probe"})
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			// A lean reply's store steps are local activities: a marker each, without its input.
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
			if err := decode(e.GetWorkflowExecutionCompletedEventAttributes().GetResult(), &res); err == nil {
				tl.Result, tl.Served = "answered", &res.Served
				steps = mergeSkips(steps, res.Attempts)
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
			f := e.GetWorkflowExecutionFailedEventAttributes().GetFailure()
			tl.Result, tl.Error = "failed", f.GetMessage()
			if app := f.GetApplicationFailureInfo(); app != nil {
				tl.ErrorType = app.GetType()
				var ex policy.Exhaustion
				if app.GetType() == policy.ErrFallbackSummary && decode(app.GetDetails(), &ex) == nil {
					steps = mergeSkips(steps, ex.Attempts)
				}
			}
		}
	}
	fillWrittenModels(steps)
	decideAttempts(steps)
	tl.Steps = steps
	if tl.Result == "" {
		tl.Result = "running"
	}
	return tl, nil
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
	takeAttempt := func() {
		for k < len(steps) {
			s := steps[k]
			k++
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
				takeAttempt()
			}
		}
	}
	return append(out, steps[k:]...)
}

// decideAttempts names what each attempt led to, from what came next.
func decideAttempts(steps []Step) {
	for i := range steps {
		s := &steps[i]
		if s.Kind != "attempt" {
			continue
		}
		if s.Outcome == "succeeded" {
			s.Decision = "answer"
			continue
		}
		s.Decision = "stop"
		for j := i + 1; j < len(steps); j++ {
			n := steps[j]
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
		if s.Decision == "stop" && (s.Reason != policy.ReasonContextOverflow && s.Reason != policy.ReasonFormat) {
			s.Decision = "exhausted"
		}
	}
}
