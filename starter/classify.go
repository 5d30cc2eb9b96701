package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
)

// classifyInput is one line of `baton classify`'s input (DESIGN.md contract).
type classifyInput struct {
	Provider string `json:"provider"`
	Status   *int   `json:"status"`
	Message  string `json:"message"`
	Code     string `json:"code"`
	Type     string `json:"type"`
}

// runClassify reads JSON lines on stdin and writes one {"reason": R} (or {"error": …}) per line.
func runClassify(_ context.Context, args []string, out, errOut io.Writer) int {
	return classifyStream(os.Stdin, args, out, errOut)
}

func classifyStream(in io.Reader, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("classify", flag.ContinueOnError)
	if _, code, ok := parseFlags(fs, args, errOut); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton classify: unexpected argument %q (input is JSON lines on stdin)\n", fs.Arg(0))
		return exitUsage
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	w := bufio.NewWriter(out)
	defer w.Flush()
	enc := json.NewEncoder(w)
	line := 0
	for sc.Scan() {
		line++
		var row classifyInput
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			_ = enc.Encode(map[string]string{"error": fmt.Sprintf("line %d: %v", line, err)})
			continue
		}
		// The message may embed a provider's error body (`429 {"error":{…}}`) or be a gateway's
		// page: the provider layer's one parser reads it, as it reads a live failure.
		e := &provider.Error{Message: row.Message, Code: row.Code, Type: row.Type}
		if row.Status != nil {
			e.Status = *row.Status
		}
		f := activities.FailureOf(row.Provider, e.Parse(nil))
		_ = enc.Encode(map[string]string{"reason": policy.Classify(f).String()})
	}
	if err := sc.Err(); err != nil {
		_ = enc.Encode(map[string]string{"error": fmt.Sprintf("line %d: %v", line+1, err)})
	}
	return 0
}
