package provider

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// provider imports nothing of ours: it holds the turn model and parses a provider's failures
// itself, and the policy reads them through activities (FailureOf), never the other way round.
func TestProviderImportsNothingOfOurs(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/batonhq/baton" || strings.HasPrefix(path, "github.com/batonhq/baton/") {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
