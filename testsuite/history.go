package testsuite

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// FetchHistory reads a workflow's whole history (every page) from the server.
func FetchHistory(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.History, error) {
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		hist.Events = append(hist.Events, ev)
	}
	return hist, nil
}
