package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batonhq/baton/internal/env"
	"github.com/batonhq/baton/node"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
)

// stdin is where `auth add` reads a key from; tests replace it.
var stdin io.Reader = os.Stdin

// storeFlag is --store, defaulting to BATON_STORE as the worker reads it.
func storeFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("BATON_STORE")
	if def == "" {
		def = env.DefaultStore
	}
	return fs.String("store", def, "sqlite://PATH or postgres://… (env BATON_STORE)")
}

func openStore(ctx context.Context, url string) (*store.Store, error) {
	if err := env.ValidateStore(url); err != nil {
		return nil, fmt.Errorf("--store / BATON_STORE: %w", err)
	}
	// Turn content and credential secrets are sealed with the keys the worker seals them with.
	keys, err := node.Keys(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, url, keys)
}

// openStoreToRead opens a store that a command only reads: one that does not exist is said, not
// created empty (an empty store would answer "no profiles" for a BATON_STORE that points astray).
func openStoreToRead(ctx context.Context, url string) (*store.Store, error) {
	if storeMissing(url) {
		return nil, fmt.Errorf("--store / BATON_STORE: %s does not exist, so there is nothing to read (is it the worker's BATON_STORE?)", url)
	}
	return openStore(ctx, url)
}

// storeMissing reports a SQLite store whose file is not there (a PostgreSQL one is assumed to be).
func storeMissing(url string) bool {
	path, ok := strings.CutPrefix(url, "sqlite://")
	if !ok {
		return false
	}
	_, err := os.Stat(path)
	return errors.Is(err, iofs.ErrNotExist)
}

// lazyStore opens the store on first use: a starter whose turns all travel inline needs none.
type lazyStore struct {
	url string
	st  *store.Store
}

func (l *lazyStore) PutContent(ctx context.Context, data []byte) (string, error) {
	if l.st == nil {
		st, err := openStore(ctx, l.url)
		if err != nil {
			return "", err
		}
		l.st = st
	}
	return l.st.PutContent(ctx, data)
}

func (l *lazyStore) Close() {
	if l.st != nil {
		l.st.Close()
	}
}

// runDoctor imports OpenClaw's legacy files: a report without --fix, the import with it.
func runDoctor(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fix := fs.Bool("fix", false, "write the import (without it, only report what would be written)")
	stateDir := fs.String("state-dir", "", "OpenClaw's state directory (e.g. ~/.openclaw)")
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton doctor: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *stateDir == "" {
		fmt.Fprintln(errOut, "baton doctor: --state-dir is required (OpenClaw's state directory, e.g. ~/.openclaw)")
		return exitUsage
	}
	li, err := store.ReadLegacy(*stateDir)
	if err != nil {
		fmt.Fprintf(errOut, "baton doctor: %v (nothing written)\n", err)
		return exitFailure
	}
	lines := li.Describe()
	if len(lines) == 0 {
		fmt.Fprintf(out, "Nothing to import under %s.\n", *stateDir)
		return 0
	}
	verb := "Would import"
	if *fix {
		verb = "Importing"
	}
	fmt.Fprintf(out, "%s from %d file(s) under %s:\n", verb, len(li.Files), *stateDir)
	for _, l := range lines {
		fmt.Fprintln(out, "  "+l)
	}
	if !*fix {
		fmt.Fprintln(out, "Run again with --fix to write this to the store.")
		return 0
	}
	s, err := openStore(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton doctor: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	if err := s.ImportLegacy(ctx, li); err != nil {
		fmt.Fprintf(errOut, "baton doctor: import failed, nothing written: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(out, "Imported into %s.\n", s.Backend())
	return 0
}

// runAuth dispatches `baton auth list|add|order set|clear-cooldown|test|disable|enable|remove|rekey`.
func runAuth(ctx context.Context, args []string, out, errOut io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(errOut, "baton auth: want a subcommand: list, add, order set, clear-cooldown, test, disable, enable, remove, rekey (baton auth --help)")
		return exitUsage
	}
	if isHelp(args[0]) {
		fmt.Fprint(out, authHelp)
		return 0
	}
	switch args[0] {
	case "disable", "enable", "remove":
		return runAuthManual(ctx, args[0], args[1:], out, errOut)
	case "rekey":
		return runAuthRekey(ctx, args[1:], out, errOut)
	case "list":
		return runAuthList(ctx, args[1:], out, errOut)
	case "add":
		return runAuthAdd(ctx, args[1:], out, errOut)
	case "order":
		if len(args) < 2 || args[1] != "set" {
			fmt.Fprintln(errOut, "baton auth order: want `baton auth order set PROVIDER PROFILE...`")
			return exitUsage
		}
		return runAuthOrderSet(ctx, args[2:], out, errOut)
	case "clear-cooldown":
		return runAuthClearCooldown(ctx, args[1:], out, errOut)
	case "test":
		return runAuthTest(ctx, args[1:], out, errOut)
	}
	fmt.Fprintf(errOut, "baton auth: unknown subcommand %q (list, add, order set, clear-cooldown, test, disable, enable, remove, rekey)\n", args[0])
	return exitUsage
}

func runAuthList(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("auth list", flag.ContinueOnError)
	agent := fs.String("agent", "main", "agent id")
	asJSON := fs.Bool("json", false, "print JSON")
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton auth list: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	s, err := openStoreToRead(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth list: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	profiles, err := s.ListAllProfiles(ctx, *agent)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth list: %v\n", err)
		return exitFailure
	}
	now := time.Now().UTC()
	type row struct {
		ID       string              `json:"id"`
		Provider string              `json:"provider"`
		Type     string              `json:"type"`
		Email    string              `json:"email,omitempty"`
		Expires  *time.Time          `json:"expires,omitempty"`
		Source   string              `json:"source"`
		State    string              `json:"state"`
		Until    *time.Time          `json:"until,omitempty"`
		Reason   policy.Reason       `json:"reason,omitempty"`
		Note     string              `json:"note,omitempty"`
		Stats    policy.ProfileStats `json:"usageStats"`
	}
	rows := make([]row, 0, len(profiles))
	for _, p := range profiles {
		r := row{ID: p.ID, Provider: p.Provider, Type: p.Type, Email: p.Email, Source: p.Source, State: "available", Stats: p.Stats}
		if !p.Expires.IsZero() {
			e := p.Expires
			r.Expires = &e
		}
		switch st := p.Stats; {
		case p.Manual != nil:
			// An operator's disable outranks the ladder's states: the profile is in no chain.
			r.State, r.Until, r.Note = "manually disabled", nil, p.Manual.Note
		case !st.DisabledUntil.IsZero() && now.Before(st.DisabledUntil):
			r.State, r.Reason, r.Until = "disabled", st.DisabledReason, &st.DisabledUntil
		case !st.CooldownUntil.IsZero() && now.Before(st.CooldownUntil):
			r.State, r.Reason, r.Until = "cooldown", st.CooldownReason, &st.CooldownUntil
			if st.CooldownModel != "" {
				r.State = "cooldown (" + st.CooldownModel + ")"
			}
		case !st.BlockedUntil.IsZero() && now.Before(st.BlockedUntil):
			r.State, r.Until = "blocked", &st.BlockedUntil
		}
		rows = append(rows, r)
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rows)
		return 0
	}
	if len(rows) == 0 {
		fmt.Fprintf(out, "No auth profiles for agent %s. Add one with `baton auth add`, or import OpenClaw's with `baton doctor --fix`.\n", *agent)
		return 0
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tTYPE\tEMAIL\tEXPIRES\tSTATE\tUNTIL\tREASON")
	for _, r := range rows {
		expires, until := "-", "-"
		if r.Expires != nil {
			expires = r.Expires.Format(time.RFC3339)
		}
		if r.Until != nil {
			until = r.Until.Format(time.RFC3339)
		}
		reason := string(r.Reason)
		if r.Note != "" {
			reason = r.Note
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Type, dash(r.Email), expires, r.State, until, dash(reason))
	}
	_ = tw.Flush()
	return 0
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runAuthAdd(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("auth add", flag.ContinueOnError)
	agent := fs.String("agent", "main", "agent id")
	provider := fs.String("provider", "", "provider id, e.g. openai (required)")
	id := fs.String("id", "", "profile id (default provider:default, or provider:<email>)")
	typ := fs.String("type", policy.TypeAPIKey, strings.Join(policy.CredentialTypes, ", "))
	key := fs.String("key", "", "the key or token; aws_keys: the secret access key (default: read one line from stdin, which keeps it out of shell history)")
	accessKeyID := fs.String("access-key-id", "", "aws_keys: the access key id (AKIA… or ASIA…)")
	sessionToken := fs.String("session-token", "", "aws_keys: the session token of a temporary key (ASIA…)")
	keyFile := fs.String("key-file", "", "service_account: the service account's JSON key file (- reads it from stdin)")
	email := fs.String("email", "", "account email (oauth)")
	refresh := fs.String("refresh", "", "refresh token (oauth)")
	expires := fs.String("expires", "", "expiry, RFC 3339 (oauth, token)")
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton auth add: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *provider == "" {
		fmt.Fprintln(errOut, "baton auth add: --provider is required")
		return exitUsage
	}
	p := policy.NormalizeProvider(*provider)
	c := store.Credential{ID: *id, Provider: p, Type: *typ, Email: *email, Refresh: *refresh}
	if c.ID == "" {
		c.ID = store.DefaultProfileID(p, *email)
	}
	if *expires != "" {
		t, err := time.Parse(time.RFC3339, *expires)
		if err != nil {
			fmt.Fprintf(errOut, "baton auth add: --expires %q is not RFC 3339 (2026-02-01T00:00:00Z)\n", *expires)
			return exitUsage
		}
		c.Expires = t.UTC()
	}
	secret := *key
	switch c.Type {
	case policy.TypeAmbient:
		// No secret: the host's credential chain supplies one at each call.
		if secret != "" {
			fmt.Fprintf(errOut, "baton auth add: profile %q: ambient stores no secret (the host's credential chain supplies one): drop --key\n", c.ID)
			return exitUsage
		}
	case policy.TypeServiceAccount:
		if *keyFile == "" {
			fmt.Fprintln(errOut, "baton auth add: a service_account profile needs --key-file FILE (the service account's JSON key; - for stdin)")
			return exitUsage
		}
		var data []byte
		var err error
		if *keyFile == "-" {
			data, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
		} else {
			data, err = os.ReadFile(*keyFile)
		}
		if err != nil {
			fmt.Fprintf(errOut, "baton auth add: --key-file: %v\n", err)
			return exitUsage
		}
		c.ServiceAccount = string(data)
	default:
		if secret == "" {
			line, err := bufio.NewReader(stdin).ReadString('\n')
			if err != nil && line == "" {
				fmt.Fprintln(errOut, "baton auth add: no key: pass --key or write it on stdin")
				return exitUsage
			}
			secret = strings.TrimSpace(line)
		}
	}
	if (*accessKeyID != "" || *sessionToken != "") && c.Type != policy.TypeAWSKeys {
		fmt.Fprintf(errOut, "baton auth add: --access-key-id and --session-token are for --type %s\n", policy.TypeAWSKeys)
		return exitUsage
	}
	if *keyFile != "" && c.Type != policy.TypeServiceAccount {
		fmt.Fprintf(errOut, "baton auth add: --key-file is for --type %s\n", policy.TypeServiceAccount)
		return exitUsage
	}
	switch c.Type {
	case policy.TypeAWSKeys:
		c.AccessKeyID, c.SecretAccessKey, c.SessionToken = *accessKeyID, secret, *sessionToken
	case policy.TypeAPIKey:
		c.Key = secret
	case policy.TypeToken:
		c.Token = secret
	case policy.TypeOAuth:
		c.Access = secret
	}
	if err := c.Validate(); err != nil {
		fmt.Fprintf(errOut, "baton auth add: %v\n", err)
		return exitUsage
	}
	s, err := openStore(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth add: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	if err := s.PutCredential(ctx, *agent, c); err != nil {
		fmt.Fprintf(errOut, "baton auth add: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(out, "Stored %s (%s) for agent %s.\n", c.ID, c.Type, *agent)
	return 0
}

func runAuthOrderSet(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("auth order set", flag.ContinueOnError)
	agent := fs.String("agent", "main", "agent id")
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(errOut, "baton auth order set: want PROVIDER [PROFILE...] (no profiles clears the order)")
		return exitUsage
	}
	provider := policy.NormalizeProvider(fs.Arg(0))
	ids := fs.Args()[1:]
	for _, id := range ids {
		if policy.ProviderOfProfile(id) != provider {
			fmt.Fprintf(errOut, "baton auth order set: profile %q is not a %s profile (%s:<name>)\n", id, provider, provider)
			return exitUsage
		}
	}
	s, err := openStore(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth order set: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	if err := s.SetOrder(ctx, *agent, provider, ids); err != nil {
		fmt.Fprintf(errOut, "baton auth order set: %v\n", err)
		return exitFailure
	}
	if len(ids) == 0 {
		fmt.Fprintf(out, "Cleared the %s order of agent %s.\n", provider, *agent)
	} else {
		fmt.Fprintf(out, "Order for %s (agent %s): %s\n", provider, *agent, strings.Join(ids, ", "))
	}
	return 0
}

func runAuthClearCooldown(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("auth clear-cooldown", flag.ContinueOnError)
	agent := fs.String("agent", "main", "agent id")
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(errOut, "baton auth clear-cooldown: want one PROFILE")
		return exitUsage
	}
	id := fs.Arg(0)
	s, err := openStore(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth clear-cooldown: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	profiles, err := s.ListAllProfiles(ctx, *agent)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth clear-cooldown: %v\n", err)
		return exitFailure
	}
	found := false
	for _, p := range profiles {
		found = found || p.ID == id
	}
	if !found {
		fmt.Fprintf(errOut, "baton auth clear-cooldown: agent %s has no profile %q (see `baton auth list`)\n", *agent, id)
		return exitFailure
	}
	if _, err := s.RecordOutcome(ctx, *agent, id, policy.ClearCooldown); err != nil {
		fmt.Fprintf(errOut, "baton auth clear-cooldown: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(out, "Cleared cooldowns and disables of %s.\n", id)
	return 0
}
