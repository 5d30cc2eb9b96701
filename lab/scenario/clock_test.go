package scenario

import (
	"testing"
	"time"
)

// Issue 20, item 8: turn i is scheduled at start + the sum of the afters up to it, and starts at
// the later of that and the previous turn's end (SCENARIOS.md).
func TestTurnClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := time.Second
	cases := []struct {
		name      string
		afters    []time.Duration
		durations []time.Duration // how long each turn runs
		starts    []time.Duration // from start
	}{
		{"turns that end at once follow their afters", []time.Duration{0, 90 * s, 0}, []time.Duration{0, 0, 0}, []time.Duration{0, 90 * s, 90 * s}},
		{"an after counts from the schedule, not from the previous end", []time.Duration{0, 60 * s}, []time.Duration{45 * s, 0}, []time.Duration{0, 60 * s}},
		{"a long turn delays the next, not the schedule of those after it", []time.Duration{0, 10 * s, 10 * s}, []time.Duration{15 * s, 0, 0}, []time.Duration{0, 15 * s, 20 * s}},
		{"a turn that outlasts several schedules pushes each to its end", []time.Duration{0, 5 * s, 5 * s}, []time.Duration{30 * s, 0, 0}, []time.Duration{0, 30 * s, 30 * s}},
		{"the first turn waits for its own after", []time.Duration{time.Minute, 0}, []time.Duration{0, 0}, []time.Duration{time.Minute, time.Minute}},
		{"delays add up turn after turn", []time.Duration{0, 10 * s, 10 * s, 10 * s}, []time.Duration{12 * s, 12 * s, 0, 0}, []time.Duration{0, 12 * s, 24 * s, 30 * s}},
	}
	for _, c := range cases {
		clock := newTurnClock(start)
		for i, after := range c.afters {
			at := clock.next(after)
			if want := start.Add(c.starts[i]); !at.Equal(want) {
				t.Errorf("%s: turn %d starts at +%v, want +%v", c.name, i, at.Sub(start), c.starts[i])
			}
			clock.ended(at.Add(c.durations[i]))
		}
	}
}
