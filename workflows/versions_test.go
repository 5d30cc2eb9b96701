package workflows

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.temporal.io/sdk/client"
)

// Every change ID declared in versions.go has a recorded history in testdata/ whose replies took
// its new branch (a Version marker with that ID), so that TestRecordedHistoriesReplay keeps the
// change from breaking; and no history asks for a change that is not declared.
func TestEveryChangeHasAHistory(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("recorded histories: %v %v", files, err)
	}
	recorded := map[string][]string{} // change ID → the histories that exercise it
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, e := range h.GetEvents() {
			m := e.GetMarkerRecordedEventAttributes()
			if m.GetMarkerName() != "Version" {
				continue
			}
			var id string
			if p := m.GetDetails()["change-id"].GetPayloads(); len(p) == 0 || json.Unmarshal(p[0].GetData(), &id) != nil {
				t.Fatalf("%s: a Version marker without a readable change ID", f)
			}
			recorded[id] = append(recorded[id], filepath.Base(f))
		}
	}
	for _, id := range changeIDs {
		if len(recorded[id]) == 0 {
			t.Errorf("change %q has no recorded history that exercises it: record one (BATON_RECORD=1 in testsuite)", id)
		}
	}
	for id, where := range recorded {
		if !slices.Contains(changeIDs, id) {
			t.Errorf("%v ask for change %q, which versions.go does not declare", where, id)
		}
	}
}
