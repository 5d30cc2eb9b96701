package testsuite_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton/testsuite"
	"gopkg.in/yaml.v3"
)

// There is no Docker engine here, so docker-compose.yml is checked as data: it parses, has the
// services of Temporal's samples-server layout wired in the right order, and every version it
// names is pinned in .env.
func TestDockerComposeIsValid(t *testing.T) {
	root, err := testsuite.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string         `yaml:"image"`
			Build       map[string]any `yaml:"build"`
			DependsOn   yaml.Node      `yaml:"depends_on"`
			Environment map[string]string
			Ports       []string
			Healthcheck map[string]any
			Restart     string
			Networks    []string
		}
		Networks map[string]any
		Volumes  map[string]any
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	svc := compose.Services
	for _, name := range []string{"postgresql", "temporal-admin-tools", "temporal", "temporal-ui", "baton-worker"} {
		if _, ok := svc[name]; !ok {
			t.Errorf("service %s missing", name)
		}
	}
	if got := svc["postgresql"].Image; got != "postgres:${POSTGRESQL_VERSION}" {
		t.Errorf("postgresql image %q", got)
	}
	if svc["postgresql"].Healthcheck["test"] == nil {
		t.Error("postgresql has no healthcheck")
	}
	if svc["temporal-admin-tools"].Restart != "no" {
		t.Error("the schema job must be one-shot (restart: \"no\")")
	}
	wantDeps := map[string]map[string]string{
		"temporal-admin-tools": {"postgresql": "service_healthy"},
		"temporal":             {"temporal-admin-tools": "service_completed_successfully"},
	}
	for name, deps := range wantDeps {
		got := dependsOn(t, svc[name].DependsOn)
		for dep, cond := range deps {
			if got[dep] != cond {
				t.Errorf("%s depends on %s with %q, want %q", name, dep, got[dep], cond)
			}
		}
	}
	for name, s := range svc {
		for dep := range dependsOn(t, s.DependsOn) {
			if _, ok := svc[dep]; !ok {
				t.Errorf("%s depends on unknown service %s", name, dep)
			}
		}
		for _, n := range s.Networks {
			if _, ok := compose.Networks[n]; !ok {
				t.Errorf("%s uses undeclared network %s", name, n)
			}
		}
	}
	if !strings.HasPrefix(svc["temporal"].Image, "temporalio/server:") {
		t.Errorf("temporal image %q", svc["temporal"].Image)
	}
	if !strings.HasPrefix(svc["temporal-ui"].Image, "temporalio/ui:") || !slices.Contains(svc["temporal-ui"].Ports, "8080:8080") {
		t.Errorf("temporal-ui: image %q ports %v", svc["temporal-ui"].Image, svc["temporal-ui"].Ports)
	}
	worker := svc["baton-worker"]
	if worker.Build == nil || worker.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" {
		t.Errorf("baton-worker: build %v, TEMPORAL_ADDRESS %q", worker.Build, worker.Environment["TEMPORAL_ADDRESS"])
	}
	if _, err := os.Stat(filepath.Join(root, "Dockerfile")); err != nil {
		t.Errorf("baton-worker builds from a Dockerfile: %v", err)
	}

	pinned := readDotEnv(t, filepath.Join(root, ".env"))
	for _, m := range regexp.MustCompile(`\$\{([A-Z0-9_]+)(:-[^}]*)?\}`).FindAllStringSubmatch(string(raw), -1) {
		if m[2] == "" && pinned[m[1]] == "" {
			t.Errorf("${%s} is used but not pinned in .env", m[1])
		}
	}
}

func dependsOn(t *testing.T, n yaml.Node) map[string]string {
	t.Helper()
	out := map[string]string{}
	switch n.Kind {
	case 0:
	case yaml.SequenceNode:
		var names []string
		if err := n.Decode(&names); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			out[name] = "service_started"
		}
	case yaml.MappingNode:
		var m map[string]struct{ Condition string }
		if err := n.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for name, v := range m {
			out[name] = v.Condition
		}
	default:
		t.Fatalf("depends_on of kind %v", n.Kind)
	}
	return out
}

func readDotEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf(".env: %q is not KEY=VALUE", line)
		}
		out[k] = v
	}
	return out
}
