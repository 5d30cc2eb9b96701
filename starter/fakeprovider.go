package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/batonhq/baton/lab/fakeprovider"
)

// runFakeProvider serves the scriptable fake provider for the demo and for trying configs.
func runFakeProvider(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("fake-provider", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8090", "address to listen on")
	script := fs.String("script", "", `rules file: a JSON array of rules, or {"rules": [...], "credentials": {"<key>": "<profile id>"}}`)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton fake-provider: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	var rules []fakeprovider.Rule
	creds := map[string]string{}
	if *script != "" {
		data, err := os.ReadFile(*script)
		if err != nil {
			fmt.Fprintf(errOut, "baton fake-provider: --script: %v\n", err)
			return exitUsage
		}
		if rules, err = fakeprovider.ParseScript(bytes.NewReader(data)); err != nil {
			fmt.Fprintf(errOut, "baton fake-provider: %s: %v\n", *script, err)
			return exitUsage
		}
		var doc struct {
			Credentials map[string]string `json:"credentials"`
		}
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) && json.Unmarshal(data, &doc) == nil && doc.Credentials != nil {
			creds = doc.Credentials
		}
	}
	fp := fakeprovider.New(rules, creds)
	if err := fp.Start(*listen); err != nil {
		fmt.Fprintf(errOut, "baton fake-provider: --listen %s: %v\n", *listen, err)
		return exitFailure
	}
	defer fp.Close()
	fmt.Fprintf(out, "fake provider on %s (%d rules): OpenAI format at %s, Anthropic at %s\n",
		fp.URL(), len(rules), fp.BaseURL("<provider>", false), fp.BaseURL("anthropic", true))
	fmt.Fprintf(out, "re-script: curl -X PUT --data @rules.json %s/_fake/script; calls: %s/_fake/calls\n", fp.URL(), fp.URL())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return 0
}
