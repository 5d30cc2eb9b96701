package history

import (
	"encoding/xml"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
)

func wellFormed(t *testing.T, svg []byte) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		if _, err := dec.Token(); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
	}
}

// Every recorded reply draws: a bar per attempt, a mark per skip, a lane per candidate.
func TestEveryRecordedReplyDraws(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "workflows", "testdata", "reply-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			tl, err := Explain(h)
			if err != nil {
				t.Fatal(err)
			}
			svg := RenderSVG(tl, SVGOptions{List: true})
			wellFormed(t, svg)
			kinds := map[string]int{}
			for _, s := range tl.Steps {
				kinds[s.Kind]++
			}
			s := string(svg)
			if got := strings.Count(s, `class="bt-step bt-attempt`); got != kinds["attempt"] {
				t.Errorf("%d attempt bars, %d attempts", got, kinds["attempt"])
			}
			if got := strings.Count(s, `class="bt-step bt-skip"`); got != kinds["skip"] {
				t.Errorf("%d skip marks, %d skips", got, kinds["skip"])
			}
			if got := strings.Count(s, `<g class="bt-lane"`); got != max(len(Lanes(tl)), 1) {
				t.Errorf("%d lanes for %v", got, Lanes(tl))
			}
			if got := strings.Count(s, `class="bt-list`); got != len(tl.Steps) {
				t.Errorf("%d listed steps, want %d", got, len(tl.Steps))
			}
		})
	}
}

// What providers and callers wrote is text in the picture, never markup.
func TestTheSVGEscapesWhatItDraws(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evil := `<script>alert("x")</script> & '`
	tl := &Timeline{WorkflowID: "reply/" + evil, Request: workflows.ReplyRequest{Agent: evil, Session: evil}, Result: "failed",
		Error: evil, ErrorType: policy.ErrFallbackSummary, Notices: []string{evil}, Start: at, End: at.Add(time.Second),
		Steps: []Step{
			{At: at.Add(100 * time.Millisecond), Started: at.Add(10 * time.Millisecond), Kind: "attempt", Model: "p/" + evil, Profile: evil,
				Outcome: "failed", Reason: policy.ReasonRateLimit, Status: 429, Error: evil, Decision: "advance"},
			{At: at.Add(200 * time.Millisecond), Kind: "skip", Model: "q/" + evil, Profile: evil, Outcome: "skipped", Reason: policy.ReasonAuth, Decision: "skip"},
		}}
	svg := RenderSVG(tl, SVGOptions{List: true})
	wellFormed(t, svg)
	if strings.Contains(string(svg), "<script") || strings.Contains(string(svg), `"x"`) {
		t.Errorf("unescaped text in:\n%s", svg)
	}
}

// A reply in flight: its attempt runs up to now, and the present is marked.
func TestARunningReplyDrawsItsAttemptInFlight(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tl := &Timeline{WorkflowID: "r", Result: "running", Start: at, End: at.Add(time.Second), Steps: []Step{
		{At: at.Add(time.Second), Started: at.Add(time.Second), Kind: "attempt", Model: "openai/gpt-5", Profile: "openai:a", Outcome: "running", Decision: "in flight"},
	}}
	svg := string(RenderSVG(tl, SVGOptions{Now: at.Add(5 * time.Second)}))
	if !strings.Contains(svg, `class="bt-step bt-attempt bt-running"`) || !strings.Contains(svg, `class="bt-now"`) || !strings.Contains(svg, "in flight") {
		t.Errorf("no attempt in flight or no now:\n%s", svg)
	}
}

// Waits say what they waited for: in the recorded exhausted reply, the overload's same-candidate
// retries.
func TestWaitsSayWhatTheyWaitedFor(t *testing.T) {
	h, err := Load(filepath.Join("..", "workflows", "testdata", "reply-exhausted.json"))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Explain(h)
	if err != nil {
		t.Fatal(err)
	}
	var waits []string
	for _, s := range tl.Steps {
		if s.Kind == "wait" {
			waits = append(waits, s.WaitFor+" "+s.Wait.String())
		}
	}
	if strings.Join(waits, ",") != "retry 500ms,retry 1s" {
		t.Errorf("waits %v", waits)
	}
	if tl.Start.IsZero() || !tl.End.After(tl.Start) {
		t.Errorf("start %v end %v", tl.Start, tl.End)
	}
	for _, s := range tl.Steps {
		if s.Kind == "attempt" && (s.Started.IsZero() || s.Started.After(s.At)) {
			t.Errorf("attempt %+v has no start before its end", s)
		}
	}
}

func TestClassifyWaits(t *testing.T) {
	a := func(profile string, r policy.Reason) Step {
		return Step{Kind: "attempt", Model: "p/m", Profile: profile, Outcome: "failed", Reason: r}
	}
	w := Step{Kind: "wait", Wait: time.Second}
	cases := []struct {
		name    string
		steps   []Step
		grouped bool
		want    string
	}{
		{"retry while running", []Step{a("p:a", policy.ReasonRateLimit), w, a("p:a", policy.ReasonRateLimit)}, false, "retry"},
		{"overload rotation", []Step{a("p:a", policy.ReasonOverloaded), w, a("p:b", policy.ReasonOverloaded)}, true, "rotate"},
		{"asleep until a cooldown ends", []Step{a("p:a", policy.ReasonRateLimit), w, a("p:a", policy.ReasonRateLimit)}, true, "cooldown"},
		{"then another candidate", []Step{a("p:a", policy.ReasonRateLimit), w, {Kind: "attempt", Model: "q/m", Profile: "q:a"}}, false, "cooldown"},
		{"under way", []Step{a("p:a", policy.ReasonRateLimit), w, {Kind: "probe"}}, false, "retry"},
	}
	for _, c := range cases {
		classifyWaits(c.steps, c.grouped)
		if c.steps[1].WaitFor != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.steps[1].WaitFor, c.want)
		}
	}
	steps := []Step{a("p:a", policy.ReasonRateLimit), {Kind: "wait", WaitFor: "cooldown"}, a("p:a", policy.ReasonRateLimit)}
	decideAttempts(steps, "failed")
	if steps[0].Decision != "wait" {
		t.Errorf("an attempt before a cooldown sleep decides %q", steps[0].Decision)
	}
}

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 850 * time.Millisecond: "850ms", 1200 * time.Millisecond: "1.2s",
		2 * time.Second: "2s", 42 * time.Second: "42s", 250 * time.Second: "4m10s", 5 * time.Minute: "5m", 125 * time.Minute: "2h5m", 3 * time.Hour: "3h"} {
		if got := Short(d); got != want {
			t.Errorf("Short(%v) = %q, want %q", d, got, want)
		}
	}
}
