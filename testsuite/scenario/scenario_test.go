package scenario

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Every scenario file, public (shared/conformance, copied) and the project's own, behaves exactly
// as its expect says.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "scenarios", "*", "*.json"))
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
