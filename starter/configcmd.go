package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
)

// runConfig is `baton config check FILE`: every problem of a config, each with its key and line,
// before a worker meets it as an outage.
func runConfig(ctx context.Context, args []string, out, errOut io.Writer) int {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(errOut, "baton config: want `baton config check FILE [--store URL]`")
		return exitUsage
	}
	fs := flag.NewFlagSet("config check", flag.ContinueOnError)
	storeURL := storeFlag(fs)
	set, code, ok := parseFlags(fs, args[1:], errOut)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(errOut, "baton config check: want one FILE")
		return exitUsage
	}
	path := fs.Arg(0)
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(errOut, "baton config check: %v\n", err)
		return exitUsage
	}
	// The providers the store holds profiles for (with OPENAI_API_KEY and the like as profiles):
	// a model ref whose provider has neither a models.providers entry nor a profile is refused.
	var hasProfile func(string) bool
	var misfits func(*policy.Config) ([]string, error)
	// A --store that is not there is refused, as the other read-only commands refuse it (a
	// check against an empty store would refuse every profile-only provider); the default one
	// missing only means there are no profiles to check against.
	if !storeMissing(*storeURL) || set["store"] {
		st, err := openStoreToRead(ctx, *storeURL)
		if err != nil {
			fmt.Fprintf(errOut, "baton config check: %v\n", err)
			return exitFailure
		}
		defer st.Close()
		var agents []string
		if cfg, err := config.ParseConfig(src); err == nil {
			for _, a := range cfg.Agents {
				agents = append(agents, a.ID)
			}
		}
		providers, err := st.ProfileProviders(ctx, agents...)
		if err != nil {
			fmt.Fprintf(errOut, "baton config check: %v\n", err)
			return exitFailure
		}
		hasProfile = func(p string) bool { return providers[p] }
		misfits = func(cfg *policy.Config) ([]string, error) { return profileMisfits(ctx, st, cfg, agents) }
	}
	cfg, problems := config.CheckConfig(src, hasProfile)
	for _, p := range problems {
		fmt.Fprintf(out, "%s: %v\n", path, p)
	}
	if misfits != nil && cfg != nil {
		list, err := misfits(cfg)
		if err != nil {
			fmt.Fprintf(errOut, "baton config check: %v\n", err)
			return exitFailure
		}
		for _, m := range list {
			fmt.Fprintf(out, "%s: %s\n", path, m)
		}
		problems = append(problems, make([]error, len(list))...)
	}
	if len(problems) > 0 {
		fmt.Fprintf(errOut, "baton config check: %d problem(s) in %s\n", len(problems), path)
		return exitFailure
	}
	fmt.Fprintf(out, "%s: ok\n", path)
	return 0
}

// profileMisfits names the stored profiles that cannot authenticate to their provider's API (an
// API key for Vertex AI, a service account for Bedrock), each with the types that can.
func profileMisfits(ctx context.Context, st *store.Store, cfg *policy.Config, agents []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, agent := range append([]string{"main"}, agents...) {
		if seen[agent] {
			continue
		}
		seen[agent] = true
		profiles, err := st.ListAllProfiles(ctx, agent)
		if err != nil {
			return nil, err
		}
		for _, p := range profiles {
			pc, ok := cfg.Providers[p.Provider]
			if !ok || pc.API == "" {
				continue
			}
			if fits, want := policy.CredentialFits(pc.API, p.Type); !fits {
				out = append(out, fmt.Sprintf("models.providers.%s.api: profile %s (agent %s) is %s, which %s cannot take: store one of %s",
					p.Provider, p.ID, agent, p.Type, pc.API, strings.Join(want, ", ")))
			}
		}
	}
	return out, nil
}
