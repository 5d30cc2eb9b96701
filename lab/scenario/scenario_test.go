package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every scenario file, public (shared/conformance, copied) and the project's own, behaves exactly
// as its expect says.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testsuite", "scenarios", "*", "*.json"))
	if err != nil || len(files) < 5 {
		t.Fatalf("scenario files: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Run(context.Background(), sc)
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := Check(sc.Expect, out)
			if err != nil {
				t.Fatal(err)
			}
			if len(diffs) > 0 {
				js, _ := out.JSON()
				t.Errorf("%s:\n  %s\n\noutput:\n%s", sc.Name, strings.Join(diffs, "\n  "), js)
			}
		})
	}
}

// A scenario field simulate does not implement is refused by name, never ignored.
func TestLoadRefusesWhatSimulateDoesNotImplement(t *testing.T) {
	base := `"start": "2026-01-01T00:00:00Z", "turns": [{"after": "0s", "reply": {"session": "s", "message": "hi"%s}}]`
	for body, want := range map[string]string{
		`{` + fmt.Sprintf(base, "") + `, "timeouts": {"attemptMs": -5}}`:                                                            "timeouts.attemptMs: -5 is negative",
		`{` + fmt.Sprintf(base, "") + `, "env": {"BATON_IDLE_TIMEOUT_MS": "10"}}`:                                                   "env.BATON_IDLE_TIMEOUT_MS",
		`{` + fmt.Sprintf(base, `, "rewind": true`) + `}`:                                                                           `unknown field "rewind"`,
		`{` + fmt.Sprintf(base, `, "switchTo": {"afterCalls": 0, "model": "a/b"}`) + `}`:                                            "switchTo.afterCalls",
		`{` + fmt.Sprintf(base, `, "switchTo": {"afterCalls": 1, "model": "nope"}`) + `}`:                                           "switchTo.model",
		`{"start": "2026-01-01T00:00:00Z", "turns": [{"reply": {"message": "hi", "switchTo": {"afterCalls": 1, "model": "a/b"}}}]}`: "needs a session",
	} {
		path := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", body, err, want)
		}
	}
}
