package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/internal/dial"
	"github.com/batonhq/baton/internal/env"
	"github.com/batonhq/baton/internal/logging"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// temporalFlags are the connection flags every command that talks to Temporal takes. Their
// defaults come from the environment, as for the worker.
type temporalFlags struct {
	env.Temporal
	// interceptors go on the client (serve's tracing); none for most commands.
	interceptors []interceptor.ClientInterceptor
	// identity names the client in histories (serve's; the SDK's pid@host when empty).
	identity string
	// metrics receives the SDK's metrics (serve's replies, counted as the worker counts its own).
	metrics client.MetricsHandler
	// logger receives the SDK's log (serve runs workflows and attempts); discarded when nil.
	logger *zap.Logger
	// dialOptions go on the client's connection (serve's node watching it).
	dialOptions []grpc.DialOption
}

func (t *temporalFlags) register(fs *flag.FlagSet) {
	// A bad environment value is reported by validate, unless a flag replaces it.
	t.Temporal, _ = env.LoadTemporal(context.Background(), nil)
	fs.StringVar(&t.Address, "address", t.Address, "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	fs.StringVar(&t.Namespace, "namespace", t.Namespace, "Temporal namespace (env TEMPORAL_NAMESPACE)")
	fs.StringVar(&t.TaskQueue, "task-queue", t.TaskQueue, "task queue of baton's workers (env BATON_TASK_QUEUE)")
}

// validate reports a bad environment value only when no flag replaced it.
func (t *temporalFlags) validate(set map[string]bool) error {
	if err := env.ValidateAddress(t.Address); err != nil {
		if set["address"] {
			return fmt.Errorf("--address: %w", err)
		}
		return fmt.Errorf("TEMPORAL_ADDRESS: %w", err)
	}
	if t.Namespace == "" {
		return errors.New("--namespace / TEMPORAL_NAMESPACE: empty")
	}
	if t.TaskQueue == "" {
		return errors.New("--task-queue / BATON_TASK_QUEUE: empty")
	}
	_, err := t.GrpcCompression()
	return err
}

// clientOptions are the options of every client the CLI makes: with BATON_PAYLOAD_KEY (and
// BATON_PAYLOAD_KEYS) it reads and writes encrypted payloads and failure messages as the worker does.
func (t *temporalFlags) clientOptions() (client.Options, error) {
	conv, err := codec.ConvertersFromEnv(os.LookupEnv)
	if err != nil {
		return client.Options{}, err
	}
	compression, err := t.GrpcCompression()
	if err != nil {
		return client.Options{}, err
	}
	logger := logging.Discard
	if t.logger != nil {
		logger = logging.SDK(t.logger)
	}
	return client.Options{HostPort: dial.Target(t.Address), Namespace: t.Namespace, Logger: logger,
		DataConverter: conv.Data, FailureConverter: conv.Failure, Interceptors: t.interceptors, Identity: t.identity, MetricsHandler: t.metrics,
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression, DialOptions: t.dialOptions}}, nil
}

// dial connects, retrying until ctx ends so that a command run right after the server starts
// waits for it instead of failing.
func (t *temporalFlags) dial(ctx context.Context) (client.Client, error) {
	opts, err := t.clientOptions()
	if err != nil {
		return nil, err
	}
	for {
		c, err := client.Dial(opts)
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cannot connect to Temporal at %s (namespace %s): %w", t.Address, t.Namespace, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// dialWaiting is dial for a long-running command (serve): it waits up to BATON_CONNECT_TIMEOUT
// (default 60 s) for the server and its namespace, telling say what it waits for.
func (t *temporalFlags) dialWaiting(ctx context.Context, say func(string)) (client.Client, error) {
	timeout, err := dial.Timeout(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	opts, err := t.clientOptions()
	if err != nil {
		return nil, err
	}
	return dial.Dial(ctx, opts, timeout, say)
}

// parseFlags parses args and says what was wrong in one line; it returns the flags given.
func parseFlags(fs *flag.FlagSet, args []string, errOut io.Writer) (map[string]bool, int, bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(interspersed(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(errOut)
			fmt.Fprintf(errOut, "Usage of baton %s:\n", fs.Name())
			fs.PrintDefaults()
			printExamples(errOut, fs.Name())
			return nil, 0, false
		}
		fmt.Fprintf(errOut, "baton %s: %v\n", fs.Name(), err)
		return nil, exitUsage, false
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set, 0, true
}

// interspersed moves positional arguments after the flags, so that `baton auth test openai:a
// --model openai/gpt-5` reads like `baton auth test --model openai/gpt-5 openai:a`.
func interspersed(fs *flag.FlagSet, args []string) []string {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // an unknown flag: Parse reports it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if len(positional) == 0 {
		return flags
	}
	return append(append(flags, "--"), positional...)
}
