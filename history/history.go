// Package history fetches, exports and explains workflow histories: what `baton history export`,
// `baton replay` and `baton explain` stand on.
package history

import (
	"context"
	"fmt"
	"os"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
)

// Fetch reads a workflow's whole history (every page).
func Fetch(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.History, error) {
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		hist.Events = append(hist.Events, ev)
	}
	if len(hist.Events) == 0 {
		return nil, fmt.Errorf("workflow %s has no history", workflowID)
	}
	return hist, nil
}

// Marshal writes a history as `temporal workflow show --output json` does (payloads kept encoded).
func Marshal(h *historypb.History) ([]byte, error) {
	return temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
}

// Load reads such a JSON file.
func Load(path string) (*historypb.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: not a workflow history as `temporal workflow show --output json` writes it: %w", path, err)
	}
	if len(h.GetEvents()) == 0 {
		return nil, fmt.Errorf("%s: no events", path)
	}
	return h, nil
}
