package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
)

// options are the command line of `temporal-dev [server start-dev] --flags`.
type options struct {
	ip          string
	port        int
	uiPort      int
	httpPort    int
	metricsPort int
	pprofPort   int
	headless    bool
	dbFilename  string
	// db is --db as given; pg is it taken apart (nil: SQLite).
	db string
	pg *pgDatabase
	// dbMaxConns bounds each service's pool to the main database (--db-max-conns).
	dbMaxConns       int
	namespaces       []string
	logLevel         string
	logFormat        string
	dynamicConfig    map[string]any
	searchAttributes map[string]enumspb.IndexedValueType
	uiCodecEndpoint  string
	// historyShards is the number of history shards of a new database (a kept file has its own).
	historyShards int
	// historyShardsSet: --num-history-shards was given, so a database made with another number
	// is an error rather than a number to adopt.
	historyShardsSet bool
	// visibilityIndexes is "lean" (leanVisibilityIndexes) or "all" (the schema's 58).
	visibilityIndexes string
}

// projectSearchAttributes are registered on every namespace so that baton's workflows can upsert
// them without an operator step.
var projectSearchAttributes = map[string]enumspb.IndexedValueType{
	"BatonAgent":          enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"BatonSession":        enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"BatonFinalModel":     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"BatonFailoverReason": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"BatonAttempts":       enumspb.INDEXED_VALUE_TYPE_INT,
	"BatonUsedFallback":   enumspb.INDEXED_VALUE_TYPE_BOOL,
}

func (o *options) frontendAddress() string {
	return net.JoinHostPort(o.ip, strconv.Itoa(o.port))
}

func (o *options) uiAddress() string {
	return net.JoinHostPort(o.ip, strconv.Itoa(o.uiPort))
}

// repeated collects a flag given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// parseArgs accepts the SDK's `server start-dev --ip … --port …` as well as bare flags.
func parseArgs(args []string) (*options, error) {
	if len(args) >= 2 && args[0] == "server" && args[1] == "start-dev" {
		args = args[2:]
	} else if len(args) >= 1 && !strings.HasPrefix(args[0], "-") {
		return nil, fmt.Errorf("unknown command %q (usage: temporal-dev [server start-dev] [flags])", strings.Join(args, " "))
	}

	o := &options{}
	var namespaces, dynamic, attributes repeated
	fs := flag.NewFlagSet("temporal-dev", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.ip, "ip", "127.0.0.1", "IP address the frontend and the Web UI listen on")
	fs.IntVar(&o.port, "port", 7233, "frontend gRPC port")
	fs.IntVar(&o.uiPort, "ui-port", 0, "Web UI port (default: --port + 1000)")
	fs.IntVar(&o.httpPort, "http-port", 0, "frontend HTTP API port (default: a free port)")
	fs.IntVar(&o.metricsPort, "metrics-port", 0, "Prometheus metrics port (default: off)")
	fs.IntVar(&o.pprofPort, "pprof-port", 0, "Go pprof port, for profiling the server (default: off)")
	fs.BoolVar(&o.headless, "headless", false, "do not start the Web UI")
	fs.StringVar(&o.dbFilename, "db-filename", "", "SQLite file to keep state in (default: in memory)")
	fs.IntVar(&o.dbMaxConns, "db-max-conns", pgDefaultMaxConns, "with --db: connections each service of this node may open to the main database (visibility: half, at least 2); a node has 4 services")
	fs.StringVar(&o.db, "db", "", "PostgreSQL URL "+pgUsage+" to keep state in (visibility in dbname_visibility; both made when missing); nodes started with the same --db form one cluster")
	fs.Var(&namespaces, "namespace", "namespace to create before start (repeatable; `default` is always created)")
	fs.StringVar(&o.logLevel, "log-level", "warn", "debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "console", "json, console or pretty")
	fs.Var(&dynamic, "dynamic-config-value", "dynamic config KEY=VALUE, VALUE in JSON (repeatable)")
	fs.Var(&attributes, "search-attribute", "search attribute NAME=TYPE (repeatable)")
	fs.StringVar(&o.uiCodecEndpoint, "ui-codec-endpoint", "", "codec server URL the Web UI uses to decode payloads")
	fs.IntVar(&o.historyShards, "num-history-shards", 1, "history shards of a new database: 1, or 4 with --db (a database that exists keeps the number it was made with)")
	fs.StringVar(&o.visibilityIndexes, "visibility-indexes", "lean", "SQLite only. lean: index only what a list of workflows orders or filters by and the custom search attributes in use; all: every index of Temporal's schema")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fs.SetOutput(nil)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}

	if net.ParseIP(o.ip) == nil && o.ip != "localhost" {
		return nil, fmt.Errorf("--ip: %q is not an IP address", o.ip)
	}
	if err := checkPort("--port", o.port); err != nil {
		return nil, err
	}
	if o.uiPort == 0 {
		o.uiPort = o.port + 1000
	}
	if err := checkPort("--ui-port", o.uiPort); err != nil {
		return nil, err
	}
	for name, port := range map[string]int{"--http-port": o.httpPort, "--metrics-port": o.metricsPort, "--pprof-port": o.pprofPort} {
		if port != 0 {
			if err := checkPort(name, port); err != nil {
				return nil, err
			}
		}
	}
	fs.Visit(func(f *flag.Flag) { o.historyShardsSet = o.historyShardsSet || f.Name == "num-history-shards" })
	if o.db != "" {
		if o.dbFilename != "" {
			return nil, fmt.Errorf("--db and --db-filename: give one (--db is PostgreSQL, --db-filename SQLite)")
		}
		pg, err := parsePostgresURL(o.db)
		if err != nil {
			return nil, err
		}
		o.pg = pg
		if !o.historyShardsSet {
			// One shard would live on one node; with 4, two nodes of a cluster each own some
			// (usually: the ring may still give one node all 4, 1 time in 8).
			o.historyShards = pgDefaultHistoryShards
		}
	}
	if o.dbMaxConns < 1 || o.dbMaxConns > 1000 {
		return nil, fmt.Errorf("--db-max-conns: %d is not between 1 and 1000", o.dbMaxConns)
	}
	if o.historyShards < 1 || o.historyShards > 1024 {
		return nil, fmt.Errorf("--num-history-shards: %d is not between 1 and 1024", o.historyShards)
	}
	switch o.visibilityIndexes {
	case "lean", "all":
	default:
		return nil, fmt.Errorf("--visibility-indexes: %q is not one of lean, all", o.visibilityIndexes)
	}
	switch o.logLevel {
	case "debug", "info", "warn", "error":
	default:
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", o.logLevel)
	}
	switch o.logFormat {
	case "json", "console":
	case "pretty":
		o.logFormat = "console"
	default:
		return nil, fmt.Errorf("--log-format: %q is not one of json, console, pretty", o.logFormat)
	}

	o.namespaces = []string{"default"}
	for _, ns := range namespaces {
		if ns == "" {
			return nil, fmt.Errorf("--namespace: empty name")
		}
		if !slices.Contains(o.namespaces, ns) {
			o.namespaces = append(o.namespaces, ns)
		}
	}

	o.dynamicConfig = map[string]any{}
	for _, kv := range dynamic {
		key, raw, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("--dynamic-config-value: %q is not KEY=VALUE", kv)
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			v = raw // a bare word is a string, as the Temporal CLI accepts it
		}
		if f, ok := v.(float64); ok && f == float64(int(f)) {
			v = int(f) // integer settings must arrive as ints
		}
		o.dynamicConfig[key] = v
	}

	o.searchAttributes = map[string]enumspb.IndexedValueType{}
	for name, t := range projectSearchAttributes {
		o.searchAttributes[name] = t
	}
	for _, kv := range attributes {
		name, typ, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--search-attribute: %q is not NAME=TYPE", kv)
		}
		t, err := enumspb.IndexedValueTypeFromString(typ)
		if err != nil || t == enumspb.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return nil, fmt.Errorf("--search-attribute: %q has an unknown type %q (Text, Keyword, Int, Double, Bool, Datetime, KeywordList)", name, typ)
		}
		o.searchAttributes[name] = t
	}
	return o, nil
}

func checkPort(flagName string, port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("%s: %d is not a port (1-65535)", flagName, port)
	}
	return nil
}
