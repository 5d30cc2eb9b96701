// Package store keeps what baton must not lose between replies: auth profiles with their secrets,
// auth state (order overrides, usage stats, probe throttle) and sessions. SQLite by default (one
// file, like OpenClaw's openclaw-agent.sqlite), PostgreSQL when several hosts share the state.
// Activities are its only callers; every read-modify-write is one transaction.
package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// ErrNotFound is returned for a profile or session that does not exist.
var ErrNotFound = errors.New("not found")

// Credential is a stored secret. Only Secret returns it; listings never do.
type Credential struct {
	ID            string    `json:"id"`
	Provider      string    `json:"provider"`
	Type          string    `json:"type"` // api_key | oauth | token
	Key           string    `json:"key,omitempty"`
	Access        string    `json:"access,omitempty"`
	Refresh       string    `json:"refresh,omitempty"`
	Token         string    `json:"token,omitempty"`
	Expires       time.Time `json:"expires,omitzero"`
	Email         string    `json:"email,omitempty"`
	ProjectID     string    `json:"projectId,omitempty"`
	EnterpriseURL string    `json:"enterpriseUrl,omitempty"`
	// An aws_keys profile: an AWS access key pair (Bedrock signs with it).
	AccessKeyID     string `json:"accessKeyId,omitempty"`
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
	SessionToken    string `json:"sessionToken,omitempty"`
	// A service_account profile: a Google service account's JSON key (Vertex AI).
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// Validate checks a credential before it is stored.
func (c Credential) Validate() error {
	switch {
	case c.Provider == "" || policy.NormalizeProvider(c.Provider) != c.Provider:
		return fmt.Errorf("profile %q: provider %q must be a lower-case provider id", c.ID, c.Provider)
	case policy.ProviderOfProfile(c.ID) != c.Provider:
		return fmt.Errorf("profile id %q must be %s:<name>", c.ID, c.Provider)
	}
	switch c.Type {
	case policy.TypeAPIKey:
		if c.Key == "" {
			return fmt.Errorf("profile %q: api_key without a key", c.ID)
		}
	case policy.TypeOAuth:
		if c.Access == "" && c.Refresh == "" {
			return fmt.Errorf("profile %q: oauth without an access or refresh token", c.ID)
		}
	case policy.TypeToken:
		if c.Token == "" {
			return fmt.Errorf("profile %q: token without a token", c.ID)
		}
	case policy.TypeAWSKeys:
		return checkAWSKeys(c)
	case policy.TypeServiceAccount:
		return checkServiceAccount(c)
	case policy.TypeAmbient:
		if c.Key != "" || c.Token != "" || c.Access != "" || c.SecretAccessKey != "" || c.ServiceAccount != "" {
			return fmt.Errorf("profile %q: ambient stores no secret (the host's credential chain supplies one)", c.ID)
		}
	default:
		return fmt.Errorf("profile %q: type %q is not one of %s", c.ID, c.Type, strings.Join(policy.CredentialTypes, ", "))
	}
	return nil
}

// DefaultProfileID is provider:<email> for OAuth with an email, else provider:default.
func DefaultProfileID(provider, email string) string {
	if email != "" {
		return provider + ":" + email
	}
	return provider + ":default"
}

// Profile is a listing entry: never a secret.
type Profile struct {
	policy.StoredProfile
	Email string `json:"email,omitempty"`
	// Source is "store", or "env" for a key read from OPENAI_API_KEY and the like.
	Source string `json:"source"`
	// Manual is set when an operator disabled the profile (`baton auth disable`): it is in no
	// chain until enabled. Only ListAllProfiles returns such profiles.
	Manual *ManualDisable `json:"manual,omitempty"`
}

// Session is a conversation: its key and agent, its failover state (policy.SessionState, whose
// fields sit at the top level of the stored JSON), and the row's update time and version.
type Session struct {
	Key   string `json:"key"`
	Agent string `json:"agent"`
	policy.SessionState
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
	Version   int64     `json:"version"`
}

// envKeys are the environment variables that appear as provider:env profiles.
var envKeys = map[string]string{"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "openrouter": "OPENROUTER_API_KEY"}

// EnvProfileSuffix names the profile of a key taken from the environment.
const EnvProfileSuffix = ":env"

// Store is baton's persistent state.
type Store struct {
	db     *sql.DB
	d      dialect
	url    string
	lookup func(string) (string, bool)
	// content seals turn content and keys its refs; nil stores content plain.
	content *contentKey
	// secret seals credential secrets at rest (BATON_SECRET_KEY, secrets.go); nil stores them plain.
	secret *secretKey
	// now stamps content rows (time.Now; tests move it).
	now func() time.Time
	// stmts are SQLite's prepared read statements.
	stmts statements
}

// Options tune Open.
type Options struct {
	// LookupEnv reads provider keys from the environment (os.LookupEnv when nil).
	LookupEnv func(string) (string, bool)
	// ContentKey is the 32-byte BATON_PAYLOAD_KEY. Set, turn content is sealed (AES-256-GCM) and
	// its refs are keyed HMACs that reveal nothing about it; nil, content is stored plain.
	ContentKey []byte
	// SecretKey is the 32-byte BATON_SECRET_KEY. Set, credential secrets are stored sealed
	// (AES-256-GCM, the key's id on each row); a store holding secrets sealed under a key this
	// process lacks is refused at Open, before anything is written.
	SecretKey []byte
	// MaxConns bounds a PostgreSQL store's connections from this process (BATON_STORE_MAX_CONNS;
	// DefaultMaxConns when 0): every worker and front door keeps its own pool against the
	// server's max_connections.
	MaxConns int
}

// MaxConnsEnv names the environment variable of Options.MaxConns; DefaultMaxConns applies when it
// is unset.
const (
	MaxConnsEnv     = "BATON_STORE_MAX_CONNS"
	DefaultMaxConns = 16
)

// Open connects to sqlite://PATH or postgres://… and brings the schema up to date. It refuses a
// schema newer than this binary knows.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	s := &Store{url: url, lookup: opts.LookupEnv, now: time.Now}
	if s.lookup == nil {
		s.lookup = os.LookupEnv
	}
	if opts.ContentKey != nil {
		k, err := newContentKey(opts.ContentKey)
		if err != nil {
			return nil, err
		}
		s.content = k
	}
	if opts.SecretKey != nil {
		k, err := newSecretKey(opts.SecretKey)
		if err != nil {
			return nil, err
		}
		s.secret = k
	}
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok || rest == "" {
		return nil, fmt.Errorf("store %q: want sqlite://PATH or postgres://…", url)
	}
	var err error
	switch scheme {
	case "sqlite":
		s.db, err = openSQLite(rest)
		s.d = sqliteDialect
	case "postgres", "postgresql":
		s.db, err = sql.Open("pgx", url)
		s.d = postgresDialect
		if err == nil {
			// database/sql's pool is unbounded by default: many processes would exhaust the
			// server's connections under load instead of queueing briefly for one of their own.
			// It keeps what it opened (a connection closed past a smaller idle bound is a
			// PostgreSQL backend forked again at the next burst), for a while.
			conns := cmp.Or(opts.MaxConns, DefaultMaxConns)
			s.db.SetMaxOpenConns(conns)
			s.db.SetMaxIdleConns(conns)
			s.db.SetConnMaxIdleTime(5 * time.Minute)
		}
	default:
		return nil, fmt.Errorf("store %q: unknown scheme %q (want sqlite or postgres)", url, scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", redact(url), err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := s.db.PingContext(pingCtx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("store %s: %w", redact(url), err)
	}
	if err := s.checkSecretKeys(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("store %s: %w", redact(url), err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("store %s: %w", redact(url), err)
	}
	return s, nil
}

func openSQLite(path string) (*sql.DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	// Create the file 0600 first: SQLite gives its WAL and shm files the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	dsn := "file:" + path + "?_pragma=busy_timeout(15000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"
	return sql.Open("sqlite", dsn)
}

// redact hides a password in a store URL for messages.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return url
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return url
	}
	return scheme + "://" + user + ":***" + rest[at:]
}

// Close releases the database.
func (s *Store) Close() error {
	s.closeStatements()
	return s.db.Close()
}

// Backend names the database kind: "sqlite" or "postgres".
func (s *Store) Backend() string { return s.d.name }

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
