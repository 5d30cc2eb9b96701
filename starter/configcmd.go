package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/batonhq/baton/policy"
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
	if _, statErr := storeExists(*storeURL); statErr == nil || set["store"] {
		st, err := openStore(ctx, *storeURL)
		if err != nil {
			fmt.Fprintf(errOut, "baton config check: %v\n", err)
			return exitFailure
		}
		defer st.Close()
		providers := map[string]bool{}
		agents := []string{"main"}
		if cfg, err := policy.ParseConfig(src); err == nil {
			for _, a := range cfg.Agents {
				agents = append(agents, a.ID)
			}
		}
		for _, agent := range agents {
			ps, err := st.ListProfiles(ctx, agent)
			if err != nil {
				fmt.Fprintf(errOut, "baton config check: %v\n", err)
				return exitFailure
			}
			for _, p := range ps {
				providers[policy.NormalizeProvider(p.Provider)] = true
			}
		}
		hasProfile = func(p string) bool { return providers[p] }
	}
	_, problems := policy.CheckConfig(src, hasProfile)
	for _, p := range problems {
		fmt.Fprintf(out, "%s: %v\n", path, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(errOut, "baton config check: %d problem(s) in %s\n", len(problems), path)
		return exitFailure
	}
	fmt.Fprintf(out, "%s: ok\n", path)
	return 0
}

// storeExists reports whether a SQLite store's file is there (PostgreSQL: assumed).
func storeExists(url string) (string, error) {
	if rest, ok := strings.CutPrefix(url, "sqlite://"); ok {
		_, err := os.Stat(rest)
		return rest, err
	}
	return url, nil
}
