package testsuite_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton/lab"
)

const module = "github.com/batonhq/baton/"

// imports maps each package of pkgs and everything they depend on (non-test code) to its imports.
func imports(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	root, err := lab.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}"}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imps, _ := strings.Cut(line, "|")
		m[pkg] = strings.Fields(imps)
	}
	return m
}

// ours is the part of an import path below the module ("" for another module's package).
func ours(path string) string {
	if rest, ok := strings.CutPrefix(path, module); ok {
		return rest
	}
	return ""
}

// Arrows point down, as README's Folders section says: the floor (policy, provider) imports
// nothing of ours, the workflow code and the config decoder nothing but policy, internal/ holds leaves, the front door (serve)
// reads requests into replies and holds no worker, the worker assembly (node) no front door, nothing imports the test harness,
// and the binaries link no test code of ours.
func TestLayering(t *testing.T) {
	all := imports(t, "./...")
	allowed := func(pkg string) func(string) bool {
		switch {
		case pkg == "policy" || pkg == "provider":
			return func(string) bool { return false }
		case pkg == "workflows" || pkg == "config":
			return func(dep string) bool { return dep == "policy" }
		case pkg == "serve":
			// The front door reads requests into replies and answers back (the Responses door reads
			// stored responses and event logs): no workers, assembly or UI.
			return func(dep string) bool {
				return slices.Contains([]string{"policy", "provider", "workflows", "activities", "store"}, dep) || strings.HasPrefix(dep, "internal/")
			}
		case pkg == "node":
			return func(dep string) bool {
				return !slices.Contains([]string{"testsuite", "starter", "worker", "serve", "ui"}, dep)
			}
		case strings.HasPrefix(pkg, "internal/"):
			return func(dep string) bool {
				return dep == "policy" || dep == "provider" || strings.HasPrefix(dep, "internal/")
			}
		}
		return func(dep string) bool { return dep != "testsuite" && dep != "starter" && dep != "worker" }
	}
	checked := 0
	for path, imps := range all {
		pkg := ours(path)
		if pkg == "" || strings.HasPrefix(pkg, "testsuite") {
			continue
		}
		checked++
		ok := allowed(pkg)
		for _, imp := range imps {
			if dep := ours(imp); dep != "" && !ok(dep) && !strings.HasPrefix(dep, pkg+"/") {
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
	if checked < 15 {
		t.Fatalf("only %d of our packages listed", checked)
	}

	// The SDK's own go.temporal.io/sdk/internal imports testing (its test environment lives
	// there), so every program using the SDK links it, as Google's genai SDK does (its replay
	// client lives in its main package); none of our code may add to that.
	for path, imps := range imports(t, "./starter", "./worker") {
		if slices.Contains(imps, "testing") && !strings.HasPrefix(path, "go.temporal.io/sdk/") && !strings.HasPrefix(path, "github.com/stretchr/testify/") &&
			path != "google.golang.org/genai" {
			t.Errorf("bin/baton or bin/baton-worker links testing through %s", path)
		}
		if ours(path) != "" && strings.HasPrefix(ours(path), "testsuite") {
			t.Errorf("bin/baton or bin/baton-worker links %s", path)
		}
	}
}
