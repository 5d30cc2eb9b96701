package history

import (
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
