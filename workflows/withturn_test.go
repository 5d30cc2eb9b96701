package workflows_test

import (
	"context"
	"testing"

	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/workflows"
)

// A turn that asks for reasoning says so on the request, where the workflow can read it (the
// turn itself is opaque JSON there): its attempts get the reasoning first-token default.
func TestWithTurnMarksAReasoningRequest(t *testing.T) {
	effort := provider.TextTurn("think hard")
	effort.Params.ReasoningEffort = "high"
	budget := provider.TextTurn("think hard")
	budget.Params.ThinkingBudget = new(int64)
	*budget.Params.ThinkingBudget = 4096
	for name, c := range map[string]struct {
		turn provider.Turn
		want bool
	}{
		"a plain message": {provider.TextTurn("hi"), false},
		"an effort":       {effort, true},
		"a budget":        {budget, true},
	} {
		req, err := workflows.WithTurn(context.Background(), nil, workflows.ReplyRequest{Agent: "main"}, c.turn)
		if err != nil {
			t.Fatal(err)
		}
		if req.Reasoning != c.want {
			t.Errorf("%s: Reasoning %v, want %v", name, req.Reasoning, c.want)
		}
	}
}
