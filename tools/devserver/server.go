package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	mathrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	persistencesql "go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/resolver"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", for forgetMembers
)

const clusterName = "active"

// devServer is the Temporal server and, unless headless, the Web UI in front of it.
type devServer struct {
	opts     *options
	logLevel zap.AtomicLevel
	server   temporal.Server
	ui       *uiserver.Server
	uiErr    chan error
	// startLock (PostgreSQL) keeps other nodes on the same database from starting until this one
	// has started and registered its namespaces and search attributes.
	startLock *pgLock
}

func newDevServer(opts *options) (*devServer, error) {
	// Say plainly which port is taken, instead of the server's fx start-up trace.
	if err := portFree(opts.frontendAddress()); err != nil {
		return nil, fmt.Errorf("--port %d: %w", opts.port, err)
	}
	if !opts.headless {
		if err := portFree(opts.uiAddress()); err != nil {
			return nil, fmt.Errorf("--ui-port %d: %w (pass --ui-port or --headless)", opts.uiPort, err)
		}
	}

	zl, level := zapLogger(opts)
	logger := log.NewZapLogger(zl)
	var conf *config.Config
	var lock *pgLock
	var err error
	if opts.pg != nil {
		conf, lock, err = preparePostgresServer(opts, logger)
	} else {
		conf, err = prepareSQLite(opts)
	}
	if err != nil {
		return nil, err
	}
	// The start lock is held until start has registered the namespaces, or stop.
	srv, err := newTemporalServer(opts, conf, logger)
	if err != nil {
		lock.release()
		return nil, err
	}
	return &devServer{opts: opts, logLevel: level, server: srv, uiErr: make(chan error, 1), startLock: lock}, nil
}

// prepareSQLite makes the SQLite databases, their namespaces and indexes, before the server starts.
func prepareSQLite(opts *options) (*config.Config, error) {
	sqlConf, err := sqlConfig(opts)
	if err != nil {
		return nil, err
	}
	conf, err := serverConfig(opts, sqlConf)
	if err != nil {
		return nil, err
	}

	var namespaces []*sqliteschema.NamespaceConfig
	for _, ns := range opts.namespaces {
		nsConf, err := sqliteschema.NewNamespaceConfig(clusterName, ns, false, opts.searchAttributes)
		if err != nil {
			return nil, fmt.Errorf("namespace %s: %w", ns, err)
		}
		namespaces = append(namespaces, nsConf)
	}
	if err := sqliteschema.CreateNamespaces(sqlConf, namespaces...); err != nil {
		return nil, fmt.Errorf("creating namespaces: %w", err)
	}
	visConf := conf.Persistence.DataStores[conf.Persistence.VisibilityStore].SQL
	if visConf != sqlConf {
		// The plugin makes an in-memory database's schema on its first connection, and keeps it.
		if _, err := persistencesql.NewSQLDB(sqlplugin.DbKindVisibility, visConf, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler); err != nil {
			return nil, fmt.Errorf("creating the visibility database: %w", err)
		}
	}
	if opts.visibilityIndexes == "lean" {
		if err := leanVisibilityIndexes(sideDSN(sqlConf), sideDSN(visConf)); err != nil {
			return nil, fmt.Errorf("visibility indexes: %w", err)
		}
	}
	return conf, nil
}

// preparePostgresServer makes the PostgreSQL databases ready and configures the server on them.
// It returns holding the start lock.
func preparePostgresServer(opts *options, logger log.Logger) (*config.Config, *pgLock, error) {
	lock, stored, err := preparePostgres(opts.pg, logger)
	if err != nil {
		return nil, nil, err
	}
	if err := checkShards(opts, stored); err != nil {
		lock.release()
		return nil, nil, err
	}
	conf, err := serverConfig(opts, opts.pg.serverSQL(opts.pg.name, opts.dbMaxConns, opts.dbMaxConns))
	if err != nil {
		lock.release()
		return nil, nil, err
	}
	return conf, lock, nil
}

func newTemporalServer(opts *options, conf *config.Config, logger log.Logger) (temporal.Server, error) {
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, fmt.Errorf("claim mapper: %w", err)
	}

	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dynamicConfig(opts)),
	)
	if err != nil {
		return nil, fmt.Errorf("creating server: %w", err)
	}
	return srv, nil
}

func (d *devServer) start() error {
	if err := d.server.Start(); err != nil {
		return fmt.Errorf("starting server: %w", err)
	}
	// One connection to the frontend for what start asks of it.
	conn, err := grpc.NewClient(d.opts.frontendAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connecting to frontend: %w", err)
	}
	defer conn.Close()
	if d.opts.pg != nil {
		if err := d.registerNamespaces(conn); err != nil {
			return err
		}
	}
	// A namespace kept in a --db-filename from an earlier run lacks attributes added since.
	if err := d.ensureSearchAttributes(conn); err != nil {
		return err
	}
	d.startLock.release()
	if d.opts.headless {
		return nil
	}
	d.ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		TemporalGRPCAddress: d.opts.frontendAddress(),
		Host:                d.opts.ip,
		Port:                d.opts.uiPort,
		EnableUI:            true,
		DefaultNamespace:    d.opts.namespaces[0],
		HideLogs:            true,
		DisableNewsFetch:    true, // no internet here, and none wanted
		CORS:                uiconfig.CORS{CookieInsecure: true},
		Codec:               uiconfig.Codec{Endpoint: d.opts.uiCodecEndpoint},
	}))
	go func() {
		if err := d.ui.Start(); err != nil {
			d.uiErr <- err
		}
	}()
	return nil
}

func (d *devServer) stop() {
	// Services lose each other while stopping and say so at error level: expected, not news.
	d.logLevel.SetLevel(zap.DPanicLevel)
	d.startLock.release()
	if d.ui != nil {
		d.ui.Stop()
	}
	if err := d.server.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "temporal-dev: stopping: %s\n", d.opts.pg.redact(err.Error()))
	}
}

func (d *devServer) ensureSearchAttributes(conn *grpc.ClientConn) error {
	op := operatorservice.NewOperatorServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ns := range d.opts.namespaces {
		list, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
		if err != nil {
			return fmt.Errorf("listing search attributes of %s: %w", ns, err)
		}
		missing := map[string]enumspb.IndexedValueType{}
		for name, t := range d.opts.searchAttributes {
			if _, ok := list.GetCustomAttributes()[name]; !ok {
				missing[name] = t
			}
		}
		if len(missing) == 0 {
			continue
		}
		if _, err := op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			Namespace: ns, SearchAttributes: missing,
		}); err != nil {
			return fmt.Errorf("adding search attributes %v to %s: %w", slices.Sorted(maps.Keys(missing)), ns, err)
		}
		if d.opts.pg != nil {
			if err := awaitSearchAttributes(ctx, workflowservice.NewWorkflowServiceClient(conn), ns, missing); err != nil {
				return fmt.Errorf("search attributes %v of %s, added: %w", slices.Sorted(maps.Keys(missing)), ns, err)
			}
		}
	}
	return nil
}

func sqlConfig(opts *options) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}}
	if opts.dbFilename == "" {
		// A shared in-memory database, named uniquely so two servers in one process never meet.
		conf.ConnectAttributes["mode"] = "memory"
		conf.ConnectAttributes["cache"] = "shared"
		// The plugin creates the schema of an in-memory database itself.
		conf.DatabaseName = "temporal-dev-" + randomSuffix()
		return conf, nil
	}
	conf.DatabaseName = opts.dbFilename
	conf.ConnectAttributes["mode"] = "rwc"
	// Pragmas by their SQLite names (the plugin passes unknown keys as _pragma=KEY=VALUE): WAL
	// with NORMAL sync survives a killed process without an fsync per transaction.
	conf.ConnectAttributes["journal_mode"] = "wal"
	conf.ConnectAttributes["synchronous"] = "NORMAL"
	_, statErr := os.Stat(opts.dbFilename)
	switch {
	case errors.Is(statErr, os.ErrNotExist):
		if _, err := os.Stat(filepath.Dir(opts.dbFilename)); err != nil {
			return nil, fmt.Errorf("--db-filename %s: folder missing: %w", opts.dbFilename, err)
		}
		if err := sqliteschema.SetupSchema(conf); err != nil {
			_ = os.Remove(opts.dbFilename) // no half-made database left behind
			return nil, fmt.Errorf("--db-filename %s: setting up schema: %w", opts.dbFilename, err)
		}
	case statErr != nil:
		return nil, fmt.Errorf("--db-filename %s: %w", opts.dbFilename, statErr)
	default:
		if err := forgetMembers(opts.dbFilename); err != nil {
			return nil, fmt.Errorf("--db-filename %s: %w", opts.dbFilename, err)
		}
	}
	return conf, nil
}

func serverConfig(opts *options, sqlConf *config.SQL) (*config.Config, error) {
	conf := &config.Config{}
	conf.Global.Membership = config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: "127.0.0.1"}
	conf.Global.PProf.Port = opts.pprofPort
	if opts.metricsPort != 0 {
		conf.Global.Metrics = &metrics.Config{Prometheus: &metrics.PrometheusConfig{
			ListenAddress: net.JoinHostPort(opts.ip, strconv.Itoa(opts.metricsPort)),
			HandlerPath:   "/metrics",
		}}
	}
	if opts.pg != nil {
		conf.Persistence = config.Persistence{
			DefaultStore:     "default",
			VisibilityStore:  "visibility",
			NumHistoryShards: int32(opts.historyShards),
			DataStores: map[string]config.DataStore{
				"default":    {SQL: sqlConf},
				"visibility": {SQL: opts.pg.serverSQL(opts.pg.visibilityName(), max(2, opts.dbMaxConns/2), max(2, opts.dbMaxConns/2))},
			},
		}
	} else {
		conf.Persistence = config.Persistence{
			DefaultStore:     sqliteplugin.PluginName,
			VisibilityStore:  sqliteplugin.PluginName,
			NumHistoryShards: int32(opts.historyShards),
			DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sqlConf}},
		}
	}
	if opts.pg == nil && opts.dbFilename == "" {
		// Visibility in its own in-memory database: its writes (a workflow's start, upserts and
		// close, the costliest statements the server runs) go through their own connection
		// instead of queueing with the history and matching writes on the one connection the
		// plugin opens per database.
		vis := *sqlConf
		vis.ConnectAttributes = maps.Clone(sqlConf.ConnectAttributes)
		vis.DatabaseName += "-visibility"
		conf.Persistence.VisibilityStore = "visibility"
		conf.Persistence.DataStores["visibility"] = config.DataStore{SQL: &vis}
	}
	// RPCAddress is this node's own frontend, also with --db where several nodes share the
	// cluster metadata record: each start writes its own address there (one start at a time, under
	// the start lock), which only remote clusters, of which there are none, would dial; a node's
	// own clients of its cluster are made at its start, with its own address.
	conf.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: opts.frontendAddress()},
		},
	}
	conf.DCRedirectionPolicy = config.DCRedirectionPolicy{Policy: "noop"}
	conf.Services = map[string]config.Service{}
	for _, name := range temporal.DefaultServices {
		rpc := config.RPC{BindOnLocalHost: true}
		var err error
		if name == "frontend" {
			rpc.GRPCPort = opts.port
			rpc.BindOnLocalHost = false
			rpc.BindOnIP = opts.ip
			// The HTTP API (and Nexus) listen too, on --http-port or any free port.
			if rpc.HTTPPort = opts.httpPort; rpc.HTTPPort == 0 {
				if rpc.HTTPPort, err = freePort(); err != nil {
					return nil, err
				}
			}
		} else if rpc.GRPCPort, err = freePort(); err != nil {
			return nil, err
		}
		if rpc.MembershipPort, err = freePort(); err != nil {
			return nil, err
		}
		conf.Services[name] = config.Service{RPC: rpc}
	}
	conf.Archival = config.Archival{
		History:    config.HistoryArchival{State: "disabled"},
		Visibility: config.VisibilityArchival{State: "disabled"},
	}
	conf.NamespaceDefaults = config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
		History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
		Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
	}}
	conf.PublicClient = config.PublicClient{HostPort: opts.frontendAddress()}
	return conf, nil
}

// dynamicConfig starts from what a development server wants and lets --dynamic-config-value win.
func dynamicConfig(opts *options) dynamicconfig.StaticClient {
	dc := dynamicconfig.StaticClient{
		// Off: it calls the internet.
		dynamicconfig.MakeKey("frontend.enableServerVersionCheck"): false,
		// New search attributes are visible at once, not after a cache refresh.
		dynamicconfig.MakeKey("system.forceSearchAttributesCacheRefreshOnRead"): true,
		dynamicconfig.MakeKey("frontend.enableUpdateWorkflowExecution"):         true,
		dynamicconfig.MakeKey("frontend.enableExecuteMultiOperation"):           true,
		dynamicconfig.MakeKey("history.hostLevelCacheMaxSize"):                  8192,
		dynamicconfig.MakeKey("frontend.namespaceRPS.visibility"):               100,
		// A worker that schedules an activity it can run gets it in the same response, without a
		// trip through matching (baton's Attempt after its first workflow task).
		dynamicconfig.MakeKey("system.enableActivityEagerExecution"): true,
		dynamicconfig.MakeKey("system.enableEagerWorkflowStart"):     true,
		// One partition per task queue (Temporal's default is 4, for spreading a queue over
		// matching hosts; this server has one). With 4, 1,000 workflows started at once often
		// stalled ~50 s with the server idle and the worker's pollers waiting, while tasks and
		// polls were forwarded between partitions; with one, never (BENCHMARKS.md).
		dynamicconfig.MakeKey("matching.numTaskqueueReadPartitions"):  1,
		dynamicconfig.MakeKey("matching.numTaskqueueWritePartitions"): 1,
	}
	// With --db, a node's failover needs no setting: a stopped node's history and matching leave
	// the ring at once, and the others take over its shards within ~2 s; a killed node's go when
	// ringpop, after failed pings, has suspected it for 5 s (ringpop-go's fixed default, which
	// Temporal does not expose), and the others own its shards ~6 s after the kill (the cluster
	// test logs both). Shards are taken over on the ring change itself, not on
	// history.acquireShardInterval's timer; history.shardUpdateMinInterval only bounds how many
	// finished tasks a new owner checks again, and 1,000 completed tasks bound it already.
	if opts.pg != nil {
		// A cluster's nodes register baton's search attributes before they serve, so each may keep
		// them cached as a production server does. Read again at every start, upsert, close and
		// list, they cost a metadata read each, and under baton chaos's load those reads hit the
		// persistence rate limit and failed the lists.
		dc[dynamicconfig.MakeKey("system.forceSearchAttributesCacheRefreshOnRead")] = false
	}
	for k, v := range opts.dynamicConfig {
		dc[dynamicconfig.MakeKey(k)] = v
	}
	return dc
}

func zapLogger(opts *options) (*zap.Logger, zap.AtomicLevel) {
	level := zap.NewAtomicLevel()
	_ = level.UnmarshalText([]byte(opts.logLevel)) // validated in parseArgs
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "ts"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	encCfg := zap.NewProductionConfig()
	encCfg.Level = level
	encCfg.Encoding = opts.logFormat
	encCfg.EncoderConfig = enc
	encCfg.OutputPaths = []string{"stderr"}
	encCfg.ErrorOutputPaths = []string{"stderr"}
	encCfg.DisableStacktrace = true
	encCfg.Sampling = nil
	var zapOpts []zap.Option
	if opts.pg != nil {
		// The same core as Build makes, writing through redactingWriter.
		zapOpts = append(zapOpts, zap.WrapCore(func(zapcore.Core) zapcore.Core {
			encoder := zapcore.NewJSONEncoder(enc)
			if opts.logFormat == "console" {
				encoder = zapcore.NewConsoleEncoder(enc)
			}
			return zapcore.NewCore(encoder, zapcore.Lock(redactingWriter{os.Stderr, opts.pg.redact}), level)
		}))
	}
	l, err := encCfg.Build(zapOpts...)
	if err != nil {
		return zap.NewNop(), level
	}
	return l, level
}

func portFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s is not free: %w", addr, err)
	}
	return l.Close()
}

// freePort finds a port that no one listens on, below the kernel's ephemeral range: the server
// binds it only later, and a port from the ephemeral range (what listening on :0 gives) may be
// taken meanwhile by any outgoing connection's local end. Ports below it are only ever taken by
// other servers.
func freePort() (int, error) {
	low, high := 10000, ephemeralLow()-1
	for range 200 {
		port := low + mathrand.IntN(high-low+1)
		if portsTaken[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		portsTaken[port] = true
		return port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portsTaken are the ports this process handed out (so no two services get the same one).
var portsTaken = map[int]bool{}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's default, 32768, when
// it cannot be read).
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low <= 11000 {
		return 32768
	}
	return low
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sideDSN opens, with the database/sql driver, the database conf names (an in-memory one only
// while the server's own connection keeps it).
func sideDSN(conf *config.SQL) string {
	if conf.ConnectAttributes["mode"] == "memory" {
		return "file:" + conf.DatabaseName + "?mode=memory&cache=shared"
	}
	return "file:" + conf.DatabaseName + "?_pragma=busy_timeout(5000)"
}

// forgetMembers clears the hosts a previous run registered in the file. They listened on other
// (random) ports and are gone; left in place, the services would wait for them to expire and
// answer "Not enough hosts to serve the request" meanwhile.
func forgetMembers(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`DELETE FROM cluster_membership`)
	return err
}
