package config

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// config sits just above the floor: the standard library (no I/O) and policy, nothing else of ours.
func TestConfigImportsOnlyPolicy(t *testing.T) {
	allowed := map[string]bool{
		"fmt": true, "math": true, "net/url": true, "strconv": true, "strings": true, "time": true, "unicode": true, "unicode/utf8": true,
	}
	allowed["github.com/batonhq/baton/policy"] = true
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
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
