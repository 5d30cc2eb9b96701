package testsuite

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton/history"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// FetchHistory reads a workflow's whole history (every page) from the server.
func FetchHistory(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.History, error) {
	return history.Fetch(ctx, c, workflowID, runID)
}

// HistorySize is the size in bytes of a workflow's whole history as the server keeps it.
func HistorySize(t testing.TB, c client.Client, workflowID, runID string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := FetchHistory(ctx, c, workflowID, runID)
	if err != nil {
		t.Fatalf("history of %s: %v", workflowID, err)
	}
	return proto.Size(h)
}
