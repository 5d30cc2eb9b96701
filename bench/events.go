package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/batonhq/baton/history"
	"go.temporal.io/sdk/converter"
)

// events lists a reply's history events by type (a local activity's marker by its activity).
// The timeline gives each event's time after the first (the server's clock), and the time the
// bench saw the answer after its start call (reply.took) when known.
func (b *bench) events(ctx context.Context, r replied) ([]string, []string, error) {
	// A caller through serve has its answer before the reply's bookkeeping ends (answer first):
	// the history is read once the reply completed, however it ended.
	_ = b.c.GetWorkflow(ctx, r.id, r.runID).Get(ctx, nil)
	h, err := history.Fetch(ctx, b.c, r.id, r.runID)
	if err != nil {
		return nil, nil, fmt.Errorf("history of %s: %w", r.id, err)
	}
	var types, timeline []string
	var first time.Time
	for _, e := range h.GetEvents() {
		t := strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
		if m := e.GetMarkerRecordedEventAttributes(); m != nil {
			t += " " + m.GetMarkerName()
			var la struct{ ActivityType string }
			if d := m.GetDetails()["data"]; d != nil && converter.GetDefaultDataConverter().FromPayloads(d, &la) == nil {
				t += " " + la.ActivityType
			}
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			t += " " + a.GetActivityType().GetName()
		}
		types = append(types, t)
		at := e.GetEventTime().AsTime()
		if first.IsZero() {
			first = at
		}
		timeline = append(timeline, fmt.Sprintf("%7.1f ms %s", ms(at.Sub(first)), t))
	}
	if r.took > 0 {
		timeline = append(timeline, fmt.Sprintf("%7.1f ms answered (bench: start call to result)", ms(r.took)))
	}
	return types, timeline, nil
}

// record puts a reply's events and timeline into res under name, and gives how many events it
// has.
func (b *bench) record(ctx context.Context, res *Results, name string, r replied) (int, error) {
	types, timeline, err := b.events(ctx, r)
	if err != nil {
		return 0, err
	}
	res.Events[name], res.Timeline[name] = types, timeline
	return len(types), nil
}
