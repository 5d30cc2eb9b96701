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

func TestParseArgsPostgres(t *testing.T) {
	o, err := parseArgs([]string{"--db", "postgres://baton:p%40ss@db.local:6432/temporal?sslmode=require&connect_timeout=5"})
	if err != nil {
		t.Fatal(err)
	}
	p := o.pg
	if p == nil || p.host != "db.local:6432" || p.user != "baton" || p.password != "p@ss" || p.name != "temporal" ||
		p.visibilityName() != "temporal_visibility" || p.attrs["sslmode"] != "require" || p.attrs["connect_timeout"] != "5" {
		t.Fatalf("parsed as %+v", p)
	}
	// Two nodes each own history shards only if there are several.
	if o.historyShards != pgDefaultHistoryShards || o.historyShardsSet {
		t.Errorf("shards %d (set %v), want the default %d", o.historyShards, o.historyShardsSet, pgDefaultHistoryShards)
	}
	o, err = parseArgs([]string{"--db", "postgresql://u@localhost/t", "--num-history-shards", "2"})
	if err != nil {
		t.Fatal(err)
	}
	if o.pg.host != "localhost:5432" || o.pg.password != "" || o.historyShards != 2 || !o.historyShardsSet {
		t.Errorf("got %+v, %d shards", o.pg, o.historyShards)
	}
	// Without --db, nothing changes.
	if o, _ := parseArgs(nil); o.pg != nil || o.historyShards != 1 || o.historyShardsSet {
		t.Errorf("no --db: %+v", o)
	}
}

// Each mistake in --db is named, and the password never appears in the message.
func TestParseArgsPostgresErrors(t *testing.T) {
	const secret = "s3cr3t-pw"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--db", "postgres://u:" + secret + "@h/t", "--db-filename", "/tmp/x.db"}, "--db and --db-filename"},
		{[]string{"--db", "mysql://u:" + secret + "@h/t"}, `--db: scheme "mysql"`},
		{[]string{"--db", "postgres://u:" + secret + "@h:notaport/t"}, "--db: not a URL"},
		{[]string{"--db", "postgres://u:" + secret + "@h:70000/t"}, `--db: port "70000"`},
		{[]string{"--db", "postgres://u:" + secret + "@/t"}, "--db: no host"},
		{[]string{"--db", "postgres://h/t"}, "--db: no user"},
		{[]string{"--db", "postgres://u:" + secret + "@h"}, "--db: no database name"},
		{[]string{"--db", "postgres://u:" + secret + "@h/my-db"}, `--db: database name "my-db"`},
		{[]string{"--db", "postgres://u:" + secret + "@h/t?sslmode=disable&sslmode=require"}, `--db: parameter "sslmode"`},
		{[]string{"--db", "u:" + secret + "@h/t"}, "--db"},
		{[]string{"--db", "postgres://u:" + secret + "@h/t", "--db-max-conns", "0"}, "--db-max-conns: 0 is not between 1 and 1000"},
	}
	for _, c := range cases {
		_, err := parseArgs(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseArgs(%v) = %v, want an error containing %q", c.args, err, c.want)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("parseArgs(%v): the error shows the password: %v", c.args, err)
		}
	}
}

func TestRedact(t *testing.T) {
	p := &pgDatabase{password: "p@ss word"}
	got := p.redact(`dial postgres://u:p%40ss+word@h/t and postgres://u:p%40ss%20word@h/t: p@ss word`)
	if strings.Contains(got, "p@ss") || strings.Contains(got, "p%40ss") || strings.Count(got, "xxxxx") != 3 {
		t.Errorf("redacted: %s", got)
	}
	var none *pgDatabase
	if none.redact("p@ss word") != "p@ss word" {
		t.Error("SQLite (no --db) changes messages")
	}
}

// A database made with another number of shards wins over the default, and is an error against
// --num-history-shards.
func TestCheckShards(t *testing.T) {
	o, _ := parseArgs([]string{"--db", "postgres://u@h/t"})
	if err := checkShards(o, 0); err != nil || o.historyShards != 4 {
		t.Errorf("new cluster: %v, %d shards", err, o.historyShards)
	}
	if err := checkShards(o, 8); err != nil || o.historyShards != 8 {
		t.Errorf("cluster of 8 shards, no flag: %v, %d shards", err, o.historyShards)
	}
	o, _ = parseArgs([]string{"--db", "postgres://u@h/t", "--num-history-shards", "2"})
	err := checkShards(o, 8)
	if err == nil || !strings.Contains(err.Error(), "--num-history-shards 2: database t was created with 8 history shards") {
		t.Errorf("cluster of 8 shards, --num-history-shards 2: %v", err)
	}
}

func TestOlderVersion(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		older bool
	}{{"0.0", "1.19", true}, {"1.9", "1.19", true}, {"1.19", "1.19", false}, {"1.20", "1.19", false}, {"2.0", "1.19", false}} {
		if got := olderVersion(c.a, c.b); got != c.older {
			t.Errorf("olderVersion(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
