package history

import (
	"github.com/batonhq/baton/policy"
	"path/filepath"
	"strings"
	"testing"
)

// The recorded history of a rate-limited primary that rotates and falls back explains as it
// happened, though its store steps are local activities, whose markers do not carry the model
// written.
func TestExplainARecordedFailover(t *testing.T) {
	h, err := Load(filepath.Join("..", "workflows", "testdata", "reply-rate-limit-fallback.json"))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Explain(h)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range tl.Steps {
		got = append(got, strings.Join(strings.Fields(strings.Join([]string{s.Kind, s.Model, s.Profile, s.Outcome, string(s.Reason), s.Decision}, " ")), " "))
	}
	want := []string{
		"attempt openai/gpt-5 openai:a failed rate_limit retry",
		"attempt openai/gpt-5 openai:a failed rate_limit retry",
		"attempt openai/gpt-5 openai:a failed rate_limit rotate",
		"attempt openai/gpt-5 openai:b failed rate_limit retry",
		"attempt openai/gpt-5 openai:b failed rate_limit retry",
		"attempt openai/gpt-5 openai:b failed rate_limit advance",
		"session anthropic/claude-sonnet-4-5 write fallback",
		"attempt anthropic/claude-sonnet-4-5 anthropic:default succeeded answer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tl.Result != "answered" || tl.Served == nil || tl.Served.Provider != "anthropic" || tl.Request.Session != "s1" {
		t.Errorf("result %q served %+v request %+v", tl.Result, tl.Served, tl.Request)
	}
}

func TestExplainRefusesOtherWorkflows(t *testing.T) {
	h, err := Load(filepath.Join("..", "workflows", "testdata", "ping.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Explain(h); err == nil || !strings.Contains(err.Error(), "not a Reply workflow history") {
		t.Errorf("got %v", err)
	}
}

// A run that a /model restart began lists the attempts of the runs before it first: its timeline
// tells them ("earlier run") before its own steps, and its own steps are placed by its own part of
// the joined attempt list.
func TestARestartedRunTellsTheEarlierRunsFirst(t *testing.T) {
	earlier := []policy.Attempt{
		{Provider: "openai", Model: "gpt-5", Profile: "openai:a", Result: policy.ResultFailed, Reason: policy.ReasonTimeout, Status: 500},
		{Provider: "anthropic", Model: "claude-opus-4", Result: policy.ResultSwitched},
	}
	own := policy.Attempt{Provider: "anthropic", Model: "claude-opus-4", Profile: "anthropic:default", Result: policy.ResultSucceeded}
	if got := ownAttempts(append(append([]policy.Attempt{}, earlier...), own), earlier); len(got) != 1 || got[0].Model != "claude-opus-4" || got[0].Result != policy.ResultSucceeded {
		t.Errorf("own attempts %+v", got)
	}
	steps := earlierSteps(earlier)
	if len(steps) != 2 || steps[0].Kind != "attempt" || steps[0].Outcome != policy.ResultFailed || steps[0].Reason != policy.ReasonTimeout ||
		steps[1].Kind != "switch" || steps[0].Decision != "earlier run" {
		t.Errorf("earlier steps %+v", steps)
	}
	if got := ownAttempts([]policy.Attempt{own}, nil); len(got) != 1 {
		t.Errorf("a run with no earlier one keeps its list: %+v", got)
	}
}

// A lost worker is baton's fault: the story shows the attempt lost and run again, with no
// reason blamed on the profile (the workflow blames none either).
func TestALostWorkersAttemptIsNotBlamedOnTheProvider(t *testing.T) {
	h, err := Load(filepath.Join("..", "workflows", "testdata", "reply-worker-lost.json"))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Explain(h)
	if err != nil {
		t.Fatal(err)
	}
	var lost, answered int
	for _, s := range tl.Steps {
		if s.Kind != "attempt" {
			continue
		}
		switch s.Outcome {
		case "lost":
			lost++
			if s.Reason != "" || s.Decision != "run again" || !strings.Contains(s.Error, "stopped heartbeating") || Tone(s) != "skip" {
				t.Errorf("lost attempt: %+v (tone %s)", s, Tone(s))
			}
		case "succeeded":
			answered++
		default:
			t.Errorf("attempt %+v", s)
		}
	}
	if lost != 1 || answered != 1 || tl.Result != "answered" {
		t.Errorf("lost %d, answered %d, result %s: %+v", lost, answered, tl.Result, tl.Steps)
	}
}
