package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// loadConfig reads an OpenClaw-shaped config file; an empty path is the default config.
func loadConfig(path string) (*policy.Config, error) {
	cfg, _, err := activities.LoadConfigFile(path)
	return cfg, err
}

// runAuthTest makes one attempt with one profile and one model, outside any workflow: is this
// key working, and if not, what would failover make of its failure?
func runAuthTest(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("auth test", flag.ContinueOnError)
	agent := fs.String("agent", "main", "agent id")
	model := fs.String("model", "", "provider/model to call (required)")
	configPath := fs.String("config", os.Getenv("BATON_CONFIG"), "OpenClaw-shaped config, for models.providers base URLs (env BATON_CONFIG)")
	message := fs.String("message", "Say OK.", "what to send")
	timeout := fs.Duration("timeout", 60*time.Second, "first-token and idle timeout")
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(errOut, "baton auth test: want one PROFILE (see `baton auth list`)")
		return exitUsage
	}
	ref, err := policy.ParseModelRef(*model)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth test: --model: %v\n", err)
		return exitUsage
	}
	id := fs.Arg(0)
	if policy.ProviderOfProfile(id) != ref.Provider {
		fmt.Fprintf(errOut, "baton auth test: profile %q is not a %s profile\n", id, ref.Provider)
		return exitUsage
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth test: --config / BATON_CONFIG: %v\n", err)
		return exitUsage
	}
	s, err := openStore(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth test: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	cred, err := s.Secret(ctx, *agent, id)
	if err != nil {
		fmt.Fprintf(errOut, "baton auth test: %v\n", err)
		return exitFailure
	}
	call := activities.CallTo(cfg, ref, cred)
	call.Turn, call.FirstTokenTimeout, call.IdleTimeout = provider.TextTurn(*message), *timeout, *timeout
	resp, err := provider.Complete(ctx, call)
	var pe *provider.Error
	switch {
	case errors.As(err, &pe):
		reason := activities.ReasonOf(ref.Provider, pe)
		fmt.Fprintf(out, "%s via %s: failed: %s (%v)", ref, id, reason, pe)
		if h := activities.HintOf(pe, time.Now()); h.HasAfter {
			fmt.Fprintf(out, "; retry after %v", h.After)
		}
		fmt.Fprintln(out)
		return exitFailure
	case err != nil:
		fmt.Fprintf(errOut, "baton auth test: %v\n", err)
		return exitFailure
	}
	if resp.Refreshed != nil {
		cred.Access, cred.Refresh, cred.Expires = resp.Refreshed.Access, resp.Refreshed.Refresh, resp.Refreshed.Expires
		if err := s.PutCredential(ctx, *agent, cred); err != nil {
			fmt.Fprintf(errOut, "baton auth test: storing the refreshed token: %v\n", err)
			return exitFailure
		}
	}
	fmt.Fprintf(out, "%s via %s: %q (%d input, %d output tokens)\n", ref, id, resp.Answer.Text, resp.Answer.Usage.Input, resp.Answer.Usage.Output)
	return 0
}
