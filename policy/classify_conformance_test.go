package policy

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// Every row of the public conformance file (copied from shared/conformance) classifies as expected.
func TestClassifyPublicConformanceRows(t *testing.T) {
	f, err := os.Open("testdata/classify-public.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		var row struct {
			Provider, Message, Code, Type, Expect string
			Status                                int
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		got := classifyAsCame(Failure{Provider: row.Provider, Status: row.Status, Message: row.Message, Code: row.Code, Type: row.Type})
		if got.String() != row.Expect {
			t.Errorf("line %d: %q (provider %q, status %d) = %s, want %s", line, row.Message, row.Provider, row.Status, got, row.Expect)
		}
	}
	if line < 40 {
		t.Fatalf("only %d rows read", line)
	}
}
