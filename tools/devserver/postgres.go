package main

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence"
	"go.temporal.io/server/common/persistence/serialization"
	persistencesql "go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // registers the postgres12 plugin
	"go.temporal.io/server/common/resolver"
	pgschema "go.temporal.io/server/schema/postgresql/v12"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	pgUsage = "postgres://user:password@host:port/dbname?sslmode=disable"
	// pgDefaultHistoryShards is --num-history-shards with --db (see parseArgs).
	pgDefaultHistoryShards = 4
	// Temporal's embedded schemas (go.temporal.io/server/schema), as temporal-sql-tool names them.
	pgSchemaMain       = "postgresql/v12/temporal"
	pgSchemaVisibility = "postgresql/v12/visibility"
	// pgDefaultMaxConns is --db-max-conns: the main database's pool of each service of a node
	// (visibility gets half, at least 2). Each of the 4 services opens its own, so a node holds
	// at most 4×(8+4) = 48 connections; the history service uses most of them (each shard's
	// writes), and too small a pool shows as persistence calls timing out under load. A pool
	// keeps what it opened (idle = max): closing a connection past a smaller idle bound and
	// opening another at the next burst forks a PostgreSQL backend each time, which at 10
	// replies a second took more CPU than the writes themselves.
	pgDefaultMaxConns = 8
	// namespaceRetention is how long a registered namespace keeps closed workflows.
	namespaceRetention = 24 * time.Hour
)

// pgLockKey names the advisory lock that one node holds from its schema check until its
// namespaces are registered, in the persistence database: a second node starting meanwhile waits.
// Unserialized, two nodes would both set up a missing schema, and both write the cluster
// metadata record at start (the loser of that optimistic update fails to start).
var pgLockKey = int64(binary.BigEndian.Uint64([]byte("temporal")))

// pgDatabaseName is a database name that needs no quoting anywhere, short enough to take the
// _visibility suffix within PostgreSQL's 63 bytes.
var pgDatabaseName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,51}$`)

// pgDatabase is a --db URL taken apart: persistence in name, visibility in name_visibility.
type pgDatabase struct {
	host     string // host:port
	user     string
	password string
	name     string
	attrs    map[string]string // the URL's query (sslmode, …), passed to the driver as it is
}

// parsePostgresURL checks --db. Its errors never quote the URL: it holds the password.
func parsePostgresURL(raw string) (*pgDatabase, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--db: not a URL (want %s)", pgUsage)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("--db: scheme %q is not postgres (want %s)", u.Scheme, pgUsage)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("--db: no host (want %s)", pgUsage)
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("--db: port %q is not a port (1-65535)", port)
	}
	if u.User == nil || u.User.Username() == "" {
		return nil, fmt.Errorf("--db: no user (want %s)", pgUsage)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return nil, fmt.Errorf("--db: no database name (want %s)", pgUsage)
	}
	if !pgDatabaseName.MatchString(name) {
		return nil, fmt.Errorf("--db: database name %q: want a letter or _, then letters, digits or _, at most 52 in all", name)
	}
	password, _ := u.User.Password()
	p := &pgDatabase{
		host: net.JoinHostPort(u.Hostname(), port), user: u.User.Username(), password: password,
		name: name, attrs: map[string]string{},
	}
	for k, vs := range u.Query() {
		if len(vs) != 1 {
			return nil, fmt.Errorf("--db: parameter %q given %d times", k, len(vs))
		}
		p.attrs[k] = vs[0]
	}
	return p, nil
}

func (p *pgDatabase) visibilityName() string { return p.name + "_visibility" }

// redact replaces the password, as given or escaped for a URL, in s. On a nil p (SQLite) it
// returns s as it is.
func (p *pgDatabase) redact(s string) string {
	if p == nil || p.password == "" {
		return s
	}
	forms := []string{
		p.password,
		url.QueryEscape(p.password),
		strings.TrimPrefix(url.UserPassword("u", p.password).String(), "u:"),
	}
	for _, f := range forms {
		s = strings.ReplaceAll(s, f, "xxxxx")
	}
	return s
}

// sqlConfig is the postgres12 plugin's configuration for one of the two databases.
func (p *pgDatabase) sqlConfig(database string, maxConns, idleConns int) *config.SQL {
	return &config.SQL{
		PluginName:        postgresql.PluginName,
		DatabaseName:      database,
		ConnectAddr:       p.host,
		ConnectProtocol:   "tcp",
		User:              p.user,
		Password:          p.password,
		ConnectAttributes: maps.Clone(p.attrs),
		MaxConns:          maxConns,
		MaxIdleConns:      idleConns,
		MaxConnLifetime:   time.Hour,
	}
}

// serverSQL is sqlConfig for the server's own persistence: the plugin's pgx driver, which prepares
// each statement once per connection, where lib/pq's has PostgreSQL parse and plan it at every
// call (PostgreSQL's CPU per reply fell by about a third under baton chaos). The schema tool keeps
// lib/pq: it reads a missing schema_version table by lib/pq's error.
func (p *pgDatabase) serverSQL(database string, maxConns, idleConns int) *config.SQL {
	c := p.sqlConfig(database, maxConns, idleConns)
	c.PluginName = postgresql.PluginNamePGX
	return c
}

// dsn is a lib/pq URL of database, for the statements the plugin has no call for (creating a
// database, the advisory lock).
func (p *pgDatabase) dsn(database string) string {
	q := url.Values{}
	for k, v := range p.attrs {
		q.Set(k, v)
	}
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable") // as the plugin does
	}
	u := url.URL{Scheme: "postgres", User: url.User(p.user), Host: p.host, Path: "/" + database, RawQuery: q.Encode()}
	if p.password != "" {
		u.User = url.UserPassword(p.user, p.password)
	}
	return u.String()
}

// pgLock is a held advisory lock: the connection that holds it (closing it releases the lock,
// as does the death of the process).
type pgLock struct {
	db   *sql.DB
	conn *sql.Conn
}

func (l *pgLock) release() {
	if l == nil || l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = l.conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, pgLockKey)
	_ = l.conn.Close()
	_ = l.db.Close()
	l.conn = nil
}

// preparePostgres makes both databases and their schemas ready and reads the number of history
// shards the cluster was made with (0: a new cluster). It returns holding the start lock.
func preparePostgres(p *pgDatabase, logger log.Logger) (lock *pgLock, shards int32, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, name := range []string{p.name, p.visibilityName()} {
		if err := p.ensureDatabase(ctx, name); err != nil {
			return nil, 0, err
		}
	}
	if lock, err = p.lock(ctx); err != nil {
		return nil, 0, err
	}
	defer func() {
		if err != nil {
			lock.release()
			lock = nil
		}
	}()
	if err := migrateSchema(p.sqlConfig(p.name, 1, 1), pgSchemaMain, pgschema.Version, logger); err != nil {
		return nil, 0, fmt.Errorf("database %s: schema %s: %w", p.name, pgSchemaMain, err)
	}
	if err := migrateSchema(p.sqlConfig(p.visibilityName(), 1, 1), pgSchemaVisibility, pgschema.VisibilityVersion, logger); err != nil {
		return nil, 0, fmt.Errorf("database %s: schema %s: %w", p.visibilityName(), pgSchemaVisibility, err)
	}
	if shards, err = storedShardCount(ctx, p.sqlConfig(p.name, 1, 1), logger); err != nil {
		return nil, 0, fmt.Errorf("database %s: reading the cluster metadata: %w", p.name, err)
	}
	return lock, shards, nil
}

// ensureDatabase creates database unless it exists. Two nodes may race to create it: the loser's
// "already exists" is success.
func (p *pgDatabase) ensureDatabase(ctx context.Context, database string) error {
	err := pingDatabase(ctx, p.dsn(database))
	if err == nil {
		return nil
	}
	if !pqCode(err, "3D000") { // invalid_catalog_name: no such database
		return fmt.Errorf("--db: connecting to database %s on %s: %w", database, p.host, err)
	}
	// CREATE DATABASE runs from another database: PostgreSQL's maintenance database, or Aiven's
	// (the ones Temporal's plugin tries). Never template1: a connection to it makes CREATE
	// DATABASE fail, it being the template copied.
	var last error
	for _, maintenance := range []string{"postgres", "defaultdb"} {
		db, err := sql.Open("postgres", p.dsn(maintenance))
		if err != nil {
			return err
		}
		_, err = db.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(database))
		db.Close()
		switch {
		case err == nil, pqCode(err, "42P04"), pqCode(err, "23505"):
			// 42P04 duplicate_database; 23505 unique_violation is what a CREATE DATABASE of the
			// same name running at the same moment in another session gets.
			return nil
		case pqCode(err, "3D000"):
			last = err
		default:
			return fmt.Errorf("--db: creating database %s on %s: %w", database, p.host, err)
		}
	}
	return fmt.Errorf("--db: database %s is missing, and creating it needs a connection to database postgres: %w", database, last)
}

func pingDatabase(ctx context.Context, dsn string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

func pqCode(err error, code pq.ErrorCode) bool {
	var e *pq.Error
	return errors.As(err, &e) && e.Code == code
}

// lock takes the start lock, waiting while another node holds it.
func (p *pgDatabase) lock(ctx context.Context) (*pgLock, error) {
	db, err := sql.Open("postgres", p.dsn(p.name))
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err == nil {
		_, err = conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, pgLockKey)
		if err != nil {
			conn.Close()
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("--db: waiting for the start lock of database %s (another temporal-dev starting on it?): %w", p.name, err)
	}
	return &pgLock{db: db, conn: conn}, nil
}

// migrateSchema brings a database to the schema version this binary expects, as temporal-sql-tool
// does: a database without the version table gets it at version 0.0 (setup-schema -v 0.0), then
// one older than version gets each versioned step up to it (update-schema). A database at the
// version, or newer, is left alone.
func migrateSchema(conf *config.SQL, schemaName, version string, logger log.Logger) error {
	conn, err := sqltool.NewConnection(conf, logger)
	if err != nil {
		return err
	}
	defer conn.Close()
	current, err := conn.ReadSchemaVersion()
	switch {
	case err == nil:
	case pqCode(err, "42P01"), errors.Is(err, sql.ErrNoRows): // undefined_table, or no row yet
		// Temporal's tables in a database of something else would mix with its tables (and
		// the update task takes "already exists" for done).
		tables, err := conn.ListTables()
		if err != nil {
			return fmt.Errorf("listing tables: %w", err)
		}
		if other := slices.DeleteFunc(tables, func(t string) bool { return strings.HasPrefix(t, "schema_") }); len(other) > 0 {
			return fmt.Errorf("the database has tables (%s, …) but no Temporal schema version: it is not Temporal's; give --db a database of its own", other[0])
		}
		setup := &schema.SetupConfig{InitialVersion: "0.0"}
		if err := schema.NewSetupSchemaTask(conn, setup, logger).Run(); err != nil {
			return fmt.Errorf("setting up: %w", err)
		}
		current = "0.0"
	default:
		return fmt.Errorf("reading the schema version: %w", err)
	}
	if !olderVersion(current, version) {
		return nil
	}
	update := &schema.UpdateConfig{SchemaName: schemaName, TargetVersion: version}
	if err := schema.NewUpdateSchemaTask(conn, update, logger).Run(); err != nil {
		return fmt.Errorf("updating from version %s to %s: %w", current, version, err)
	}
	return nil
}

// olderVersion compares schema versions major.minor (1.9 < 1.19).
func olderVersion(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	if pa[0] != pb[0] {
		return pa[0] < pb[0]
	}
	return pa[1] < pb[1]
}

func versionParts(v string) [2]int {
	var parts [2]int
	for i, s := range strings.SplitN(v, ".", 2) {
		parts[i], _ = strconv.Atoi(s)
	}
	return parts
}

// storedShardCount is the number of history shards of the cluster metadata record (0: none yet).
func storedShardCount(ctx context.Context, conf *config.SQL, logger log.Logger) (int32, error) {
	db, err := persistencesql.NewSQLDB(sqlplugin.DbKindMain, conf, resolver.NewNoopResolver(), logger, metrics.NoopMetricsHandler)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	row, err := db.GetClusterMetadata(ctx, &sqlplugin.ClusterMetadataFilter{ClusterName: clusterName})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	meta, err := serialization.NewSerializer().DeserializeClusterMetadata(persistence.NewDataBlob(row.Data, row.DataEncoding))
	if err != nil {
		return 0, err
	}
	return meta.GetHistoryShardCount(), nil
}

// checkShards reconciles --num-history-shards with a cluster made before: a cluster's number of
// shards never changes, so a node adopts it, or refuses one given explicitly that differs.
func checkShards(opts *options, stored int32) error {
	if stored == 0 || int(stored) == opts.historyShards {
		return nil
	}
	if opts.historyShardsSet {
		return fmt.Errorf("--num-history-shards %d: database %s was created with %d history shards, and a cluster's number of shards never changes (omit the flag, or pass %d)",
			opts.historyShards, opts.pg.name, stored, stored)
	}
	opts.historyShards = int(stored)
	return nil
}

// registerNamespaces registers the namespaces that do not exist yet, through the frontend (on
// PostgreSQL the server starts without any). A node starting at the same time may register one
// first: "already exists" is success.
func (d *devServer) registerNamespaces(conn *grpc.ClientConn) error {
	wf := workflowservice.NewWorkflowServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	op := operatorservice.NewOperatorServiceClient(conn)
	for _, ns := range d.opts.namespaces {
		err := retry(ctx, codes.Unavailable, func() error {
			_, err := wf.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
			if status.Code(err) != codes.NotFound {
				return err
			}
			_, err = wf.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
				Namespace:                        ns,
				WorkflowExecutionRetentionPeriod: durationpb.New(namespaceRetention),
			})
			if status.Code(err) == codes.AlreadyExists {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("registering namespace %s: %w", ns, err)
		}
		// The frontend's namespace cache remembers for a moment that the namespace was not
		// found (the DescribeNamespace above): wait until it knows it, for what comes next.
		err = retry(ctx, codes.NotFound, func() error {
			_, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
			return err
		})
		if err != nil {
			return fmt.Errorf("namespace %s, registered: %w", ns, err)
		}
		if err := awaitNamespace(ctx, wf, ns); err != nil {
			return fmt.Errorf("namespace %s, registered: %w", ns, err)
		}
	}
	return nil
}

// awaitNamespace waits until history and matching know namespace ns too: each service keeps its
// own namespace cache, refreshed every 2 s, and until then a worker's polls and a client's
// starts fail with "Namespace default is not found." (the first reply of a fresh cluster did).
// A workflow that does not exist and a task queue no one polls are what each says then.
func awaitNamespace(ctx context.Context, wf workflowservice.WorkflowServiceClient, ns string) error {
	for {
		_, errHistory := wf.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
			Namespace: ns, Execution: &commonpb.WorkflowExecution{WorkflowId: "temporal-dev-namespace-probe"}})
		_, errMatching := wf.DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
			Namespace: ns, TaskQueue: &taskqueuepb.TaskQueue{Name: "temporal-dev-namespace-probe"}})
		unknown := false
		for _, err := range []error{errHistory, errMatching} {
			var nf *serviceerror.NamespaceNotFound
			if errors.As(serviceerror.FromStatus(status.Convert(err)), &nf) || status.Code(err) == codes.Unavailable {
				unknown = true
			} else if err != nil && status.Code(err) != codes.NotFound {
				return err
			}
		}
		if !unknown {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("history and matching still do not know it: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// awaitSearchAttributes waits until the services know the search attributes just added: on
// PostgreSQL they are the namespace's aliases of visibility columns, which each service reads
// from its namespace cache (refreshed every 2 s); a start that names one before then is refused
// ("has no mapping defined for search attribute"). The frontend's is asked with a query that
// names them; the others refresh within the same 2 s.
func awaitSearchAttributes(ctx context.Context, wf workflowservice.WorkflowServiceClient, ns string, added map[string]enumspb.IndexedValueType) error {
	var terms []string
	for _, name := range slices.Sorted(maps.Keys(added)) {
		v := "'x'"
		switch added[name] {
		case enumspb.INDEXED_VALUE_TYPE_INT, enumspb.INDEXED_VALUE_TYPE_DOUBLE:
			v = "0"
		case enumspb.INDEXED_VALUE_TYPE_BOOL:
			v = "true"
		case enumspb.INDEXED_VALUE_TYPE_DATETIME:
			v = "'2000-01-01T00:00:00Z'"
		}
		terms = append(terms, name+" = "+v)
	}
	err := retry(ctx, codes.InvalidArgument, func() error {
		_, err := wf.CountWorkflowExecutions(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: ns, Query: strings.Join(terms, " AND ")})
		return err
	})
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(2500 * time.Millisecond): // history's and matching's caches
		return nil
	}
}

// retry retries f while it fails with code (or Unavailable: a frontend just started may not see
// the history and matching services of the ring yet).
func retry(ctx context.Context, code codes.Code, f func() error) error {
	for {
		err := f()
		if c := status.Code(err); c != code && c != codes.Unavailable {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// redactingWriter writes the log with the password of --db redacted, wherever a library may
// have put it.
type redactingWriter struct {
	w      zapcore.WriteSyncer
	redact func(string) string
}

func (r redactingWriter) Write(b []byte) (int, error) {
	if _, err := r.w.Write([]byte(r.redact(string(b)))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (r redactingWriter) Sync() error { return r.w.Sync() }
