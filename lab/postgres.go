package lab

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to create and drop a run's databases
)

// A run on PostgreSQL (baton chaos, baton bench --postgres) makes its own databases beside the
// one its URL names, and drops them after: each run starts from nothing, and none is left behind.

// DatabaseURL is base (a postgres:// URL) with its database replaced by name.
func DatabaseURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("%q is not a postgres:// URL", Redact(base))
	}
	u.Path = "/" + name
	return u.String(), nil
}

// DatabaseName is the database a postgres:// URL names ("" when it names none).
func DatabaseName(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(p.Path, "/")
}

// Redact hides a URL's password.
func Redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return s
}

var dbName = regexp.MustCompile(`^[a-z0-9_]+$`)

// CreateDatabase makes database name, connected as base's role.
func CreateDatabase(ctx context.Context, base, name string) error {
	return adminExec(ctx, base, name, "CREATE DATABASE "+name)
}

// DropDatabase drops database name (and the connections still on it), if it exists.
func DropDatabase(ctx context.Context, base, name string) error {
	return adminExec(ctx, base, name, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

// adminExec runs a database statement on base's database (names are checked: they cannot be
// bound as parameters).
func adminExec(ctx context.Context, base, name, stmt string) error {
	if !dbName.MatchString(name) {
		return fmt.Errorf("database name %q", name)
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("%s on %s: %w", strings.Fields(stmt)[0]+" DATABASE "+name, Redact(base), err)
	}
	return nil
}
