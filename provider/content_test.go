package provider

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func toolTurn() Turn {
	return Turn{
		Tools: []Tool{{Name: "get_weather", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		Messages: []Message{
			{Role: RoleUser, Content: []Part{TextPart("weather in Paris?")}},
			{Role: RoleAssistant, Content: []Part{{Type: PartToolCall, CallID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: RoleTool, Content: []Part{{Type: PartToolResult, CallID: "call_1", Result: []Part{TextPart("18°C")}}}},
		},
	}
}

func TestCheckTurnRefusesWhatNoWireAccepts(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(*Turn)
		field  string
		reason string
	}{
		{"a tool step whose result answers an earlier call is fine", func(*Turn) {}, "", ""},
		{"a tool result for a call no assistant made is refused", func(t *Turn) { t.Messages[2].Content[0].CallID = "call_9" }, "callId", `call "call_9"`},
		{"a tool result before its call is refused", func(t *Turn) { t.Messages[1], t.Messages[2] = t.Messages[2], t.Messages[1] }, "callId", "no earlier"},
		{"a tool schema that is not an object is refused", func(t *Turn) { t.Tools[0].Schema = json.RawMessage(`["x"]`) }, "schema", "not a JSON object"},
		{"a tool without a name is refused", func(t *Turn) { t.Tools[0].Name = " " }, "name", "needs a name"},
		{"a named tool choice must name a tool", func(t *Turn) { t.ToolChoice = &ToolChoice{Type: ToolChoiceNamed, Name: "nope"} }, "toolChoice", `"nope"`},
		{"a json_schema format needs an object schema", func(t *Turn) {
			t.Params.ResponseFormat = &ResponseFormat{Type: FormatJSONSchema, Schema: json.RawMessage(`1`)}
		}, "responseFormat", "not a JSON object"},
		{"an inline PNG is fine", func(t *Turn) {
			t.Messages[0].Content = append(t.Messages[0].Content, Part{Type: PartImage, MediaType: "image/png", Data: pngBytes})
		}, "", ""},
		{"inline data that is no image is refused", func(t *Turn) {
			t.Messages[0].Content = append(t.Messages[0].Content, Part{Type: PartImage, MediaType: "image/png", Data: []byte("hello")})
		}, "data", "not a PNG"},
		{"a media type that lies about the data is refused", func(t *Turn) {
			t.Messages[0].Content = append(t.Messages[0].Content, Part{Type: PartImage, MediaType: "image/jpeg", Data: pngBytes})
		}, "mediaType", "image/png"},
		{"an image inside a tool result is checked too", func(t *Turn) {
			t.Messages[2].Content[0].Result = append(t.Messages[2].Content[0].Result, Part{Type: PartImage, Data: []byte("nope")})
		}, "data", "not a PNG"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			turn := toolTurn()
			c.edit(&turn)
			err := CheckTurn(turn)
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || err.Field != c.field || !strings.Contains(err.Reason, c.reason) {
				t.Fatalf("got %+v, want field %s and %q", err, c.field, c.reason)
			}
		})
	}
}

func TestDataURLsAndImageTypes(t *testing.T) {
	ok := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes)
	if mt, data, err := ParseDataURL(ok); err != nil || mt != "image/png" || string(data) != string(pngBytes) {
		t.Errorf("%q: %s %v", ok, mt, err)
	}
	for url, want := range map[string]string{
		"data:text/plain;base64,aGk=":   "not an image type",
		"data:image/png;base64,!!!":     "not valid base64",
		"data:image/png,rawbytes":       "must be base64",
		"https://example.com/cat.png":   "not a data: URL",
		"data:image/svg+xml;base64,PHN": "not an image type",
	} {
		if _, _, err := ParseDataURL(url); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", url, err, want)
		}
	}
	for data, want := range map[string]string{"\xFF\xD8\xFF\xE0": "image/jpeg", "GIF89a..": "image/gif", "RIFF\x00\x00\x00\x00WEBPVP8 ": "image/webp", "%PDF-1.7": ""} {
		if got := SniffImage([]byte(data)); got != want {
			t.Errorf("SniffImage(%q) = %q, want %q", data, got, want)
		}
	}
}

func TestTurnFacts(t *testing.T) {
	turn := toolTurn()
	if turn.HasImages() {
		t.Error("a text turn has no images")
	}
	turn.Messages[2].Content[0].Result = append(turn.Messages[2].Content[0].Result, Part{Type: PartImage, URL: "https://x/y.png"})
	if !turn.HasImages() {
		t.Error("an image in a tool result is an image of the turn")
	}
	if got := turn.LastUserText(); got != "weather in Paris?" {
		t.Errorf("LastUserText %q", got)
	}
	if !(Answer{Text: " "}).Empty() || (Answer{ToolCalls: []ToolCall{{ID: "c", Name: "f"}}}).Empty() {
		t.Error("an answer of tool calls alone is an answer; blank text is not")
	}
}

func TestReasoningEffortAndThinkingBudgetTranslate(t *testing.T) {
	for _, c := range []struct {
		effort string
		budget int64
	}{{"minimal", 1024}, {"low", 2048}, {"medium", 8192}, {"high", 24576}} {
		if got := ReasoningBudget(c.effort); got != c.budget {
			t.Errorf("budget of %s = %d, want %d", c.effort, got, c.budget)
		}
		if got := ReasoningEffort(c.budget); got != c.effort {
			t.Errorf("effort of %d = %s, want %s", c.budget, got, c.effort)
		}
	}
	if ReasoningEffort(5000) != "medium" || ReasoningEffort(100000) != "high" || ReasoningBudget("extreme") != 0 {
		t.Error("budgets between steps round up; unknown efforts ask nothing")
	}
}
