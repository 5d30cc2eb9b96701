package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
)

// The tuned defaults are there, and --dynamic-config-value still wins over them.
func TestDynamicConfigDefaultsAndOverrides(t *testing.T) {
	o, err := parseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	dc := dynamicConfig(o)
	for _, k := range []string{"matching.numTaskqueueReadPartitions", "matching.numTaskqueueWritePartitions"} {
		if v := dc[dynamicconfig.MakeKey(k)]; v != 1 {
			t.Errorf("%s = %v, want 1", k, v)
		}
	}
	o, err = parseArgs([]string{"--dynamic-config-value", "matching.numTaskqueueReadPartitions=4"})
	if err != nil {
		t.Fatal(err)
	}
	if v := dynamicConfig(o)[dynamicconfig.MakeKey("matching.numTaskqueueReadPartitions")]; v != 4 {
		t.Errorf("override: %v, want 4", v)
	}
}

// In memory, visibility has a database of its own; a file keeps everything.
func TestVisibilityStore(t *testing.T) {
	for _, c := range []struct {
		args     []string
		separate bool
	}{
		{nil, true},
		{[]string{"--db-filename", filepath.Join(t.TempDir(), "x.db"), "--num-history-shards", "3"}, false},
	} {
		o, err := parseArgs(c.args)
		if err != nil {
			t.Fatal(err)
		}
		sqlConf, err := sqlConfig(o)
		if err != nil {
			t.Fatal(err)
		}
		conf, err := serverConfig(o, sqlConf)
		if err != nil {
			t.Fatal(err)
		}
		p := conf.Persistence
		vis := p.DataStores[p.VisibilityStore].SQL
		if vis == nil || p.DataStores[p.DefaultStore].SQL != sqlConf {
			t.Fatalf("%v: stores %+v", c.args, p.DataStores)
		}
		if separate := vis.DatabaseName != sqlConf.DatabaseName; separate != c.separate {
			t.Errorf("%v: visibility in %s, executions in %s", c.args, vis.DatabaseName, sqlConf.DatabaseName)
		}
		if p.NumHistoryShards != int32(o.historyShards) {
			t.Errorf("%v: %d shards", c.args, p.NumHistoryShards)
		}
	}
}

// With --db, persistence and visibility are PostgreSQL databases of their own, through the
// postgres12 plugin (its pgx driver), with bounded pools.
func TestPostgresStores(t *testing.T) {
	o, err := parseArgs([]string{"--db", "postgres://u:pw@127.0.0.1:5432/temporal?sslmode=disable"})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := serverConfig(o, o.pg.serverSQL(o.pg.name, pgDefaultMaxConns, pgDefaultMaxConns))
	if err != nil {
		t.Fatal(err)
	}
	p := conf.Persistence
	main, vis := p.DataStores[p.DefaultStore].SQL, p.DataStores[p.VisibilityStore].SQL
	if main == nil || vis == nil || main.DatabaseName != "temporal" || vis.DatabaseName != "temporal_visibility" {
		t.Fatalf("stores %+v", p.DataStores)
	}
	for _, s := range []*config.SQL{main, vis} {
		if s.PluginName != "postgres12_pgx" || s.ConnectAddr != "127.0.0.1:5432" || s.User != "u" || s.Password != "pw" ||
			s.ConnectAttributes["sslmode"] != "disable" || s.MaxConns == 0 {
			t.Errorf("store %+v", s)
		}
	}
	if p.NumHistoryShards != 4 {
		t.Errorf("%d shards", p.NumHistoryShards)
	}
}

// A database that cannot be reached fails the start with a message naming --db, without the
// password.
func TestPostgresUnreachable(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseArgs([]string{"--db", "postgres://baton:hunter2@127.0.0.1:1/temporal", "--port", strconv.Itoa(port), "--headless"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = newDevServer(o)
	if err == nil {
		t.Fatal("started on a database that is not there")
	}
	if msg := o.pg.redact(err.Error()); !strings.Contains(msg, "--db: connecting to database temporal on 127.0.0.1:1") ||
		strings.Contains(msg, "hunter2") {
		t.Errorf("error %q", msg)
	}
}
