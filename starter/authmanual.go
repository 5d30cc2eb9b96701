package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/store"
)

// runAuthManual is `baton auth disable|enable|remove PROFILE`: an operator's controls, apart from
// the cooldown ladder.
func runAuthManual(ctx context.Context, sub string, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("auth "+sub, flag.ContinueOnError)
	agent := fs.String("agent", "main", "agent id")
	var note *string
	if sub == "disable" {
		note = fs.String("note", "", "why (shown by auth list)")
	}
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(errOut, "baton auth %s: want one PROFILE (see `baton auth list`)\n", sub)
		return exitUsage
	}
	id := fs.Arg(0)
	s, err := openStore(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth %s: %v\n", sub, err)
		return exitFailure
	}
	defer s.Close()
	profiles, err := s.ListAllProfiles(ctx, *agent)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth %s: %v\n", sub, err)
		return exitFailure
	}
	var found *store.Profile
	for i := range profiles {
		if profiles[i].ID == id {
			found = &profiles[i]
		}
	}
	// enable takes a profile that is gone too: lifting a disable is never harmful.
	if found == nil && sub != "enable" {
		fmt.Fprintf(errOut, "baton auth %s: agent %s has no profile %q (see `baton auth list`)\n", sub, *agent, id)
		return exitFailure
	}
	switch sub {
	case "disable":
		if err := s.DisableProfile(ctx, *agent, id, *note, time.Now().UTC()); err != nil {
			fmt.Fprintf(errOut, "baton auth disable: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(out, "Disabled %s for agent %s: it is in no chain until `baton auth enable %s`.\n", id, *agent, id)
	case "enable":
		lifted, err := s.EnableProfile(ctx, *agent, id)
		if err != nil {
			fmt.Fprintf(errOut, "baton auth enable: %v\n", err)
			return exitFailure
		}
		if !lifted {
			fmt.Fprintf(out, "%s was not disabled (cooldowns are cleared with `baton auth clear-cooldown`).\n", id)
			return 0
		}
		fmt.Fprintf(out, "Enabled %s for agent %s.\n", id, *agent)
	case "remove":
		if found.Source == "env" {
			fmt.Fprintf(errOut, "baton auth remove: %s comes from the environment: unset its variable, or `baton auth disable %s`\n", id, id)
			return exitUsage
		}
		if err := s.RemoveProfile(ctx, *agent, id); err != nil {
			fmt.Fprintf(errOut, "baton auth remove: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(out, "Removed %s (its secret, usage stats and place in the order) from agent %s.\n", id, *agent)
	}
	return 0
}

// runAuthRekey is `baton auth rekey`: every stored secret re-sealed under BATON_SECRET_KEY_NEW in
// one transaction. The current key is BATON_SECRET_KEY (unset for a store kept plain so far).
// Keys come from the environment only, never from flags (shell history, the process list).
func runAuthRekey(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("auth rekey", flag.ContinueOnError)
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton auth rekey: unexpected argument %q (the keys come from %s and %s)\n", fs.Arg(0), store.SecretKeyEnv, store.SecretKeyNewEnv)
		return exitUsage
	}
	raw := os.Getenv(store.SecretKeyNewEnv)
	if raw == "" {
		fmt.Fprintf(errOut, "baton auth rekey: %s is not set: the new key, 32 bytes (e.g. `openssl rand -hex 32`)\n", store.SecretKeyNewEnv)
		return exitUsage
	}
	newKey, err := codec.ParseKey(raw)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth rekey: %s: %v\n", store.SecretKeyNewEnv, err)
		return exitUsage
	}
	s, err := openStore(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth rekey: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	n, err := s.Rekey(ctx, newKey)
	if err != nil {
		hint := ""
		if errors.Is(err, store.ErrSecretKey) {
			hint = fmt.Sprintf(" (%s must be the key the secrets are sealed under now)", store.SecretKeyEnv)
		}
		fmt.Fprintf(errOut, "baton auth rekey: nothing written: %v%s\n", err, hint)
		return exitFailure
	}
	fmt.Fprintf(out, "Re-sealed %d secret(s) under key %s. Set %s to the new key for every worker, serve and CLI that opens this store.\n",
		n, s.SecretKeyID(), store.SecretKeyEnv)
	return 0
}
