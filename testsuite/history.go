package testsuite

import (
	"context"

	"github.com/batonhq/baton/internal/history"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// FetchHistory reads a workflow's whole history (every page) from the server.
func FetchHistory(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.History, error) {
	return history.Fetch(ctx, c, workflowID, runID)
}
