package main

import (
	"path/filepath"
	"testing"

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
