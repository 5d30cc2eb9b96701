package testsuite_test

import (
	"bufio"
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
	"gopkg.in/yaml.v3"
)

type composeService struct {
	Image       string         `yaml:"image"`
	Build       map[string]any `yaml:"build"`
	DependsOn   yaml.Node      `yaml:"depends_on"`
	Environment map[string]string
	Ports       []string
	Healthcheck struct {
		Test []string `yaml:"test"`
	}
	Restart    string
	Networks   []string
	Volumes    []string
	Entrypoint []string
	Command    []string
	Profiles   []string
}

type composeFile struct {
	Services map[string]composeService
	Networks map[string]any
	Volumes  map[string]any
}

func readCompose(t *testing.T) (root string, raw []byte, compose composeFile) {
	t.Helper()
	root, err := lab.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return root, raw, compose
}

// There is no Docker engine here, so docker-compose.yml is checked as data: it parses, has the
// services of Temporal's samples-server layout wired in the right order, and every version it
// names is pinned in .env.
func TestDockerComposeIsValid(t *testing.T) {
	root, raw, compose := readCompose(t)
	svc := compose.Services
	for _, name := range []string{"postgresql", "temporal-admin-tools", "temporal", "temporal-ui", "baton-worker", "baton-serve", "baton-cli"} {
		if _, ok := svc[name]; !ok {
			t.Errorf("service %s missing", name)
		}
	}
	if got := svc["postgresql"].Image; got != "postgres:${POSTGRESQL_VERSION}" {
		t.Errorf("postgresql image %q", got)
	}
	if len(svc["postgresql"].Healthcheck.Test) == 0 {
		t.Error("postgresql has no healthcheck")
	}
	if svc["temporal-admin-tools"].Restart != "no" {
		t.Error("the schema job must be one-shot (restart: \"no\")")
	}
	wantDeps := map[string]map[string]string{
		"temporal-admin-tools": {"postgresql": "service_healthy"},
		"temporal":             {"temporal-admin-tools": "service_completed_successfully"},
		"baton-worker":         {"temporal-create-namespace": "service_completed_successfully"},
		"baton-serve":          {"baton-worker": "service_healthy"},
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
	if svc["baton-worker"].Build == nil {
		t.Error("baton-worker is not built from the repo")
	}

	pinned := readDotEnv(t, filepath.Join(root, ".env"))
	for _, m := range regexp.MustCompile(`\$\{([A-Z0-9_]+)(:[-?][^}]*)?\}`).FindAllStringSubmatch(string(raw), -1) {
		switch {
		case strings.HasPrefix(m[2], ":?"):
			// Required from the operator: .env names it (empty) so that it is easy to find.
			if _, listed := pinned[m[1]]; !listed {
				t.Errorf("${%s} is required but .env does not name it", m[1])
			}
		case m[2] == "" && pinned[m[1]] == "":
			t.Errorf("${%s} is used but not pinned in .env", m[1])
		}
	}
}

// batonServices are the services running baton's image.
func batonServices(c composeFile) map[string]composeService {
	out := map[string]composeService{}
	for name, s := range c.Services {
		if s.Image == "baton:local" && name != "fake-provider" {
			out[name] = s
		}
	}
	return out
}

// portOf is the port of a host:port, a URL, or a "HOST:CONTAINER" mapping's container side.
func portOf(t *testing.T, s string) string {
	t.Helper()
	if u, err := url.Parse(s); err == nil && u.Port() != "" {
		return u.Port()
	}
	i := strings.LastIndex(s, ":")
	if i < 0 {
		t.Fatalf("%q has no port", s)
	}
	return s[i+1:]
}

// argAfter is the value of a flag in a command line.
func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// The baton services share one Temporal, task queue, store and config; the config is mounted
// where BATON_CONFIG points and parses; each long-running service publishes the port it listens
// on and probes it in its healthcheck.
func TestComposeBatonServicesAreConsistent(t *testing.T) {
	root, _, compose := readCompose(t)
	pinned := readDotEnv(t, filepath.Join(root, ".env"))
	baton := batonServices(compose)
	if len(baton) != 3 {
		t.Fatalf("baton services: %d (want worker, serve, cli)", len(baton))
	}
	first := baton["baton-worker"].Environment
	for name, s := range baton {
		for _, key := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "BATON_TASK_QUEUE", "BATON_STORE", "BATON_CONFIG", "BATON_PAYLOAD_KEY", "BATON_SECRET_KEY"} {
			if s.Environment[key] == "" && key != "BATON_PAYLOAD_KEY" && key != "BATON_SECRET_KEY" || s.Environment[key] != first[key] {
				t.Errorf("%s: %s = %q, the worker has %q", name, key, s.Environment[key], first[key])
			}
		}
		if !strings.HasPrefix(s.Environment["BATON_STORE"], "postgres://") || !strings.Contains(s.Environment["BATON_STORE"], "@postgresql:5432/baton") {
			t.Errorf("%s: BATON_STORE %q is not the compose PostgreSQL's baton database", name, s.Environment["BATON_STORE"])
		}
		// The config is mounted where BATON_CONFIG points, from a file of the repo that parses.
		mounted := false
		variable := regexp.MustCompile(`\$\{BATON_EXAMPLE_CONFIG:-([^}]*)\}`)
		for _, v := range s.Volumes {
			// The source names a file of examples/: the default, or what .env picks.
			parts := strings.Split(variable.ReplaceAllString(v, "$1"), ":")
			if len(parts) < 2 || parts[1] != s.Environment["BATON_CONFIG"] {
				continue
			}
			mounted = true
			for _, file := range []string{parts[0], variable.ReplaceAllString(strings.Split(v, ":/")[0], pinned["BATON_EXAMPLE_CONFIG"])} {
				data, err := os.ReadFile(filepath.Join(root, file))
				if err != nil {
					t.Errorf("%s mounts %s: %v", name, file, err)
					continue
				}
				if _, err := config.ParseConfig(data); err != nil {
					t.Errorf("%s: %s: %v", file, name, err)
				}
			}
		}
		if !mounted {
			t.Errorf("%s: nothing mounted at BATON_CONFIG %s", name, s.Environment["BATON_CONFIG"])
		}
	}

	// Ports: what a service listens on is what it publishes and what its healthcheck probes.
	check := func(name, listen string) {
		t.Helper()
		s := compose.Services[name]
		port := portOf(t, listen)
		if !slices.Contains(s.Ports, port+":"+port) {
			t.Errorf("%s listens on %s but publishes %v", name, listen, s.Ports)
		}
		hc := s.Healthcheck.Test
		if len(hc) < 4 || hc[0] != "CMD" || hc[1] != "/usr/local/bin/baton" || hc[2] != "health" || portOf(t, hc[3]) != port {
			t.Errorf("%s: healthcheck %v does not probe port %s with baton health", name, hc, port)
		}
	}
	check("baton-worker", compose.Services["baton-worker"].Environment["BATON_METRICS_LISTEN"])
	serve := compose.Services["baton-serve"]
	if serve.Command[0] != "serve" || !strings.HasPrefix(serve.Environment["BATON_SERVE_TOKEN"], "${BATON_SERVE_TOKEN:?") {
		t.Errorf("baton-serve: command %v, BATON_SERVE_TOKEN %q", serve.Command, serve.Environment["BATON_SERVE_TOKEN"])
	}
	check("baton-serve", argAfter(serve.Command, "--listen"))
	if !strings.Contains(compose.Services["baton-worker"].Healthcheck.Test[3], "/readyz") || !strings.Contains(serve.Healthcheck.Test[3], "/readyz") {
		t.Error("the healthchecks should ask /readyz (Temporal reachable, store open)")
	}
	fake := compose.Services["fake-provider"]
	check("fake-provider", argAfter(fake.Command, "--listen"))
	// The no-key example points its providers at that service and port.
	data, err := os.ReadFile(filepath.Join(root, "examples", "baton.fake.json5"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	for id, p := range cfg.Providers {
		if u, err := url.Parse(p.BaseURL); err != nil || u.Host != "fake-provider:"+portOf(t, argAfter(fake.Command, "--listen")) {
			t.Errorf("baton.fake.json5: %s's baseUrl %q is not the fake-provider service", id, p.BaseURL)
		}
	}
	// The real example has an OpenAI and an Anthropic provider and a fallback chain across them.
	data, _ = os.ReadFile(filepath.Join(root, "examples", "baton.json5"))
	real, err := config.ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if real.Providers["openai"].API != "openai-completions" || real.Providers["anthropic"].API != "anthropic-messages" ||
		real.Model.Primary.Provider != "openai" || len(real.Model.Fallbacks) == 0 || real.Model.Fallbacks[0].Provider != "anthropic" {
		t.Errorf("examples/baton.json5: providers %v, chain %v then %v", real.Providers, real.Model.Primary, real.Model.Fallbacks)
	}
	if !bytes.Contains(data, []byte("//")) {
		t.Error("examples/baton.json5 should explain itself in comments")
	}
}

// The Dockerfile builds the binaries `make build` builds, from the same packages, with the Go
// version of go.mod.
func TestDockerfileBuildsWhatMakeBuilds(t *testing.T) {
	root, err := lab.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	makefile, dockerfile, gomod := read("Makefile"), read("Dockerfile"), read("go.mod")
	make := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^bin/([a-z-]+):.*\n\t\$\(GO\) build -o \$@ (\./\S+)`).FindAllStringSubmatch(makefile, -1) {
		make[m[1]] = m[2]
	}
	docker := map[string]string{}
	for _, m := range regexp.MustCompile(`go build [^&\n]*-o /out/([a-z-]+) (\./\S+)`).FindAllStringSubmatch(dockerfile, -1) {
		docker[m[1]] = m[2]
	}
	if len(make) < 2 || len(docker) != len(make) {
		t.Fatalf("make build %v, Dockerfile %v", make, docker)
	}
	for bin, pkg := range make {
		if docker[bin] != pkg {
			t.Errorf("bin/%s: make builds %s, the Dockerfile %q", bin, pkg, docker[bin])
		}
		if !regexp.MustCompile(`COPY --from=build [^\n]*/out/` + bin + `\b`).MatchString(dockerfile) {
			t.Errorf("the image does not get %s", bin)
		}
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(gomod)
	pinned := readDotEnv(t, filepath.Join(root, ".env"))
	if goVersion == nil || pinned["GO_VERSION"] != goVersion[1] || !strings.Contains(dockerfile, "ARG GO_VERSION="+goVersion[1]) {
		t.Errorf("go.mod's go %v, .env GO_VERSION %q, Dockerfile: %q", goVersion, pinned["GO_VERSION"], regexp.MustCompile(`ARG GO_VERSION=\S+`).FindString(dockerfile))
	}
}

// The README's no-key path: examples/fake-provider.json scripts OpenAI as rate-limited and
// Anthropic as answering; with examples/baton.fake.json5 a reply fails over at once (no wait in
// place), as the compose profile "fake" shows it.
func TestTheFakeExampleFailsOver(t *testing.T) {
	root, err := lab.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.Open(filepath.Join(root, "examples", "fake-provider.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer script.Close()
	rules, err := fakeprovider.ParseScript(script)
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(filepath.Join(root, "examples", "baton.fake.json5"))
	if err != nil {
		t.Fatal(err)
	}
	// NewWorld points the providers at its own fake, as compose's service name does.
	w := testsuite.NewWorld(t, string(config), []store.Credential{{ID: "openai:env", Provider: "openai", Type: "api_key", Key: "x-fake-openai"},
		{ID: "anthropic:env", Provider: "anthropic", Type: "api_key", Key: "x-fake-anthropic"}}, rules)
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName,
		workflows.ReplyRequest{Agent: "main", Session: "compose-example", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	var res policy.ReplyResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Served.Provider != "anthropic" || !strings.Contains(res.Text, "failed over") {
		t.Errorf("served by %+v: %q", res.Served, res.Text)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the failover took %s: the example should not wait in place", d)
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
