package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
)

// runSessionList is `baton session list`: the most recently updated sessions, with their active
// override and its origin.
func runSessionList(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("session list", flag.ContinueOnError)
	agent := fs.String("agent", "", "only this agent's sessions (default: all)")
	limit := fs.Int("limit", 50, "at most this many, the most recently updated first")
	onFallback := fs.Bool("fallback", false, "only sessions on an automatic fallback")
	asJSON := fs.Bool("json", false, "print the sessions as JSON")
	storeURL := storeFlag(fs)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton session list: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *limit < 1 || *limit > 10000 {
		fmt.Fprintf(errOut, "baton session list: --limit %d is not 1..10000\n", *limit)
		return exitUsage
	}
	s, err := openStoreToRead(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(errOut, "baton session list: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	// A fallback filter reads more rows than it shows; ten times the limit bounds the scan.
	read := *limit
	if *onFallback {
		read = *limit * 10
	}
	all, err := s.ListSessions(ctx, *agent, read)
	if err != nil {
		fmt.Fprintf(errOut, "baton session list: %v\n", err)
		return exitFailure
	}
	var list []store.Session
	for _, sess := range all {
		if _, over := sess.Model.Override(); *onFallback && (!over || sess.Model.EffectiveOverrideSource() != policy.SourceAuto) {
			continue
		}
		if len(list) < *limit {
			list = append(list, sess)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if list == nil {
			list = []store.Session{}
		}
		_ = enc.Encode(list)
		return 0
	}
	if len(list) == 0 {
		fmt.Fprintln(out, "No sessions.")
		return 0
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tAGENT\tUPDATED\tACTIVE OVERRIDE\tSOURCE\tORIGIN\tREASON")
	for _, sess := range list {
		active, source, origin := "-", "-", "-"
		if over, ok := sess.Model.Override(); ok {
			active, source = over.String(), dash(sess.Model.EffectiveOverrideSource())
			if o, ok := sess.Model.Origin(); ok {
				origin = o.String()
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sess.Key, sess.Agent, sess.UpdatedAt.Format(time.RFC3339), active, source, origin, dash(sess.FallbackReason))
	}
	_ = tw.Flush()
	return 0
}
