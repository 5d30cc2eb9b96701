package workflows

import (
	"time"

	"github.com/batonhq/baton/policy"
	"go.temporal.io/sdk/workflow"
)

// The reply's handlers: the status query and a user's /model while it runs.

// SwitchModel is the switchModel update's argument.
type SwitchModel struct {
	Model   string `json:"model"` // provider/model
	Profile string `json:"profile,omitempty"`
}

// Status is what the status query answers.
type Status struct {
	Candidate string           `json:"candidate,omitempty"`
	Profile   string           `json:"profile,omitempty"`
	Attempts  []policy.Attempt `json:"attempts"`
	WaitUntil time.Time        `json:"waitUntil,omitzero"`
}

func validateSwitch(_ workflow.Context, s SwitchModel) error {
	ref, err := policy.ParseModelRef(s.Model)
	if err != nil {
		return err
	}
	return policy.CheckUserChoice(ref, s.Profile)
}

// onSwitch takes a user's /model: the in-flight attempt finishes first (see applySwitch).
func (r *reply) onSwitch(_ workflow.Context, s SwitchModel) error {
	r.pending = &s
	return nil
}

// applySwitch acts on a pending switch after the candidate at current failed: a later candidate
// is jumped to (the switch recorded as an attempt); anything else starts the reply over with the
// new selection.
func (r *reply) applySwitch(ctx workflow.Context, current int) (int, error) {
	s := *r.pending
	r.pending = nil
	ref, _ := policy.ParseModelRef(s.Model) // validated
	r.attempts = append(r.attempts, policy.Attempt{Provider: ref.Provider, Model: ref.Model, Profile: s.Profile,
		Result: policy.ResultSwitched, At: workflow.Now(ctx)})
	// The user's choice is now the session's: no fallback may write over it.
	r.session = policy.UserChoice(r.session, ref, s.Profile, workflow.Now(ctx))
	jump, restart := policy.LiveSwitch(r.chain, current, ref)
	if restart {
		// Every front door alike: the reply starts over with the user's selection, and every
		// caller's wait follows the new run.
		next := r.req
		next.Model, next.Restarts = ref.String(), r.req.Restarts+1
		next.Earlier = r.joined()
		return 0, workflow.NewContinueAsNewError(ctx, ReplyWorkflowName, next)
	}
	return jump, nil
}

// handle registers the status query and the /model update.
func (r *reply) handle(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func() (Status, error) {
		st := r.status
		st.Attempts = append([]policy.Attempt{}, r.attempts...)
		return st, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, SwitchModelUpdate, r.onSwitch,
		workflow.UpdateHandlerOptions{Validator: validateSwitch})
}
