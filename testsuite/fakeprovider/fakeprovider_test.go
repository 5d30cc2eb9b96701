package fakeprovider

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func TestRulesMatchPerCallAndTheLastAnswerRepeats(t *testing.T) {
	fp := New([]Rule{
		{Match: Match{Provider: "openai", Model: "gpt-5", Profile: "openai:a"}, Respond: []Response{{Status: 429, Body: `{"error":{"message":"slow"}}`}, {Text: "fine now"}}},
	}, map[string]string{"sk-a": "openai:a", "sk-b": "openai:b"})
	if err := fp.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	url := fp.BaseURL("openai", false) + "/chat/completions"
	body := `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`
	a := map[string]string{"Authorization": "Bearer sk-a"}
	if resp, _ := post(t, url, body, a); resp.StatusCode != 429 {
		t.Errorf("first call %d", resp.StatusCode)
	}
	for i := 0; i < 2; i++ {
		resp, data := post(t, url, body, a)
		if resp.StatusCode != 200 || !strings.Contains(data, `"content":"fine now"`) {
			t.Errorf("call %d: %d %s", i+2, resp.StatusCode, data)
		}
	}
	// Another profile matches no rule and gets the default answer.
	if _, data := post(t, url, body, map[string]string{"Authorization": "Bearer sk-b"}); !strings.Contains(data, `"content":"ok"`) {
		t.Errorf("unmatched call: %s", data)
	}
	// Anthropic's format, not streaming.
	_, data := post(t, fp.BaseURL("anthropic", true)+"/v1/messages", `{"model":"claude","max_tokens":5,"messages":[]}`, map[string]string{"x-api-key": "sk-b"})
	if !strings.Contains(data, `"type":"message"`) || !strings.Contains(data, `"text":"ok"`) {
		t.Errorf("anthropic answer %s", data)
	}
	calls := fp.Calls()
	if len(calls) != 5 || calls[0].Outcome != "status 429" || calls[1].Outcome != "text" || calls[3].Profile != "openai:b" || calls[4].Provider != "anthropic" {
		t.Errorf("calls %+v", calls)
	}

	// Re-scripted at run time through the admin endpoint.
	rules, _ := json.Marshal([]Rule{{Respond: []Response{{Text: "rescripted"}}}})
	req, _ := http.NewRequest(http.MethodPut, fp.URL()+"/_fake/script", bytes.NewReader(rules))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("re-script: %v %v", resp, err)
	}
	if _, data := post(t, url, body, a); !strings.Contains(data, "rescripted") {
		t.Errorf("after re-script: %s", data)
	}
}

func TestParseScriptNamesWhatIsWrong(t *testing.T) {
	for src, want := range map[string]string{
		`[{"match":{},"respond":[]}]`:               "no respond list",
		`[{"respond":[{"status":999}]}]`:            "status 999",
		`{"rules": [{"respond":[{"delayMs":-1}]}]}`: "negative delay",
		`[{"respond": }]`:                           "script:",
	} {
		if _, err := ParseScript(strings.NewReader(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want …%s…", src, err, want)
		}
	}
	rules, err := ParseScript(strings.NewReader(`{"name":"a scenario","provider":[{"respond":[{"text":"x"}]}]}`))
	if err != nil || len(rules) != 1 {
		t.Errorf("a scenario's provider rules: %v %v", rules, err)
	}
}
