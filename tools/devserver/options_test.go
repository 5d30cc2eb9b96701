package main

import (
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
)

// The exact argument list that the Go SDK's testsuite.StartDevServer builds must parse.
func TestParseArgsAcceptsWhatTheSDKPasses(t *testing.T) {
	o, err := parseArgs([]string{
		"server", "start-dev", "--ip", "127.0.0.1", "--port", "40123", "--namespace", "default",
		"--dynamic-config-value", "frontend.enableServerVersionCheck=false",
		"--log-level", "warn", "--log-format", "pretty", "--headless", "--db-filename", "/tmp/x.db",
		"--ui-port", "40999", "--search-attribute", "CustomerId=Keyword",
		"--search-attribute", "Score=INDEXED_VALUE_TYPE_DOUBLE",
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.frontendAddress() != "127.0.0.1:40123" || o.uiPort != 40999 || !o.headless || o.dbFilename != "/tmp/x.db" ||
		o.logFormat != "console" || o.logLevel != "warn" {
		t.Errorf("got %+v", o)
	}
	if v, ok := o.dynamicConfig["frontend.enableServerVersionCheck"]; !ok || v != false {
		t.Errorf("dynamic config value parsed as %#v", v)
	}
	if o.searchAttributes["CustomerId"] != enumspb.INDEXED_VALUE_TYPE_KEYWORD ||
		o.searchAttributes["Score"] != enumspb.INDEXED_VALUE_TYPE_DOUBLE {
		t.Errorf("search attributes %v", o.searchAttributes)
	}
	if o.searchAttributes["BatonAttempts"] != enumspb.INDEXED_VALUE_TYPE_INT {
		t.Error("the project's search attributes are not always registered")
	}
}

func TestParseArgsDefaults(t *testing.T) {
	o, err := parseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.frontendAddress() != "127.0.0.1:7233" || o.uiPort != 8233 || o.headless || o.dbFilename != "" ||
		len(o.namespaces) != 1 || o.namespaces[0] != "default" || o.historyShards != 1 || o.visibilityIndexes != "lean" {
		t.Errorf("got %+v", o)
	}
}

func TestParseArgsTuning(t *testing.T) {
	o, err := parseArgs([]string{"--num-history-shards", "4", "--visibility-indexes", "all"})
	if err != nil {
		t.Fatal(err)
	}
	if o.historyShards != 4 || o.visibilityIndexes != "all" {
		t.Errorf("got %+v", o)
	}
}

// GOGC in the environment wins over the server's own target.
func TestGCTarget(t *testing.T) {
	if got := gcTarget(func(string) string { return "" }); got != gcPercent {
		t.Errorf("no GOGC: %d, want %d", got, gcPercent)
	}
	if got := gcTarget(func(k string) string { return map[string]string{"GOGC": "100"}[k] }); got != 0 {
		t.Errorf("GOGC=100: %d, want 0 (left to the runtime)", got)
	}
}

func TestParseArgsNamesWhatIsWrong(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "bogus"},
		{[]string{"--port", "70000"}, "--port: 70000"},
		{[]string{"--port", "x"}, "-port"},
		{[]string{"--ip", "not-an-ip"}, "--ip"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--log-format", "xml"}, "--log-format"},
		{[]string{"--dynamic-config-value", "novalue"}, "--dynamic-config-value"},
		{[]string{"--search-attribute", "X=Blob"}, `"X" has an unknown type "Blob"`},
		{[]string{"--search-attribute", "X"}, "--search-attribute"},
		{[]string{"serve"}, `unknown command "serve"`},
		{[]string{"--port", "1", "extra"}, `unexpected argument "extra"`},
		{[]string{"--num-history-shards", "0"}, "--num-history-shards: 0"},
		{[]string{"--num-history-shards", "many"}, "-num-history-shards"},
		{[]string{"--visibility-indexes", "some"}, `--visibility-indexes: "some"`},
	}
	for _, c := range cases {
		_, err := parseArgs(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseArgs(%v) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

func TestDynamicConfigIntegersStayIntegers(t *testing.T) {
	o, err := parseArgs([]string{"--dynamic-config-value", "limit.maxIDLength=255", "--dynamic-config-value", `x="a"`})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := o.dynamicConfig["limit.maxIDLength"].(int); !ok || v != 255 {
		t.Errorf("integer parsed as %#v", o.dynamicConfig["limit.maxIDLength"])
	}
	if o.dynamicConfig["x"] != "a" {
		t.Errorf("string parsed as %#v", o.dynamicConfig["x"])
	}
}
