package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/batonhq/baton/config"
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
	}
	_, problems := config.CheckConfig(src, hasProfile)
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
