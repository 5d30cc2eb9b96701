// Package dial connects baton's long-running processes (the worker, serve) to Temporal, waiting
// for a server that is not up yet: compose, or a script, starts everything at once.
package dial

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// EnvTimeout names the variable bounding the wait; DefaultTimeout applies when it is unset.
const (
	EnvTimeout     = "BATON_CONNECT_TIMEOUT"
	DefaultTimeout = 60 * time.Second
)

// Timeout reads BATON_CONNECT_TIMEOUT: a Go duration ("90s", "2m") or whole seconds; 0 tries
// once.
func Timeout(lookup func(string) (string, bool)) (time.Duration, error) {
	v, ok := lookup(EnvTimeout)
	v = strings.TrimSpace(v)
	if !ok || v == "" {
		return DefaultTimeout, nil
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: %q is not a duration (60s, 2m) or a number of seconds", EnvTimeout, v)
	}
	return d, nil
}

// Dial connects with opts and checks that the namespace exists, retrying with backoff for up to
// timeout. say, when given, is told once what is awaited and then every 10 s that it still is.
func Dial(ctx context.Context, opts client.Options, timeout time.Duration, say func(string)) (client.Client, error) {
	if say == nil {
		say = func(string) {}
	}
	start := time.Now()
	deadline := start.Add(timeout)
	backoff := 250 * time.Millisecond
	var lastSaid time.Time
	for attempt := 1; ; attempt++ {
		c, err := try(ctx, opts)
		if err == nil {
			if attempt > 1 {
				say(fmt.Sprintf("connected to Temporal at %s after %s", opts.HostPort, time.Since(start).Round(time.Second)))
			}
			return c, nil
		}
		if time.Now().Add(backoff).After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("cannot connect to Temporal at %s (TEMPORAL_ADDRESS), namespace %s, waited %s (%s): %w",
				opts.HostPort, opts.Namespace, time.Since(start).Round(time.Second), EnvTimeout, err)
		}
		switch {
		case lastSaid.IsZero():
			say(fmt.Sprintf("waiting up to %s (%s) for Temporal at %s, namespace %s: %v", timeout, EnvTimeout, opts.HostPort, opts.Namespace, err))
			lastSaid = time.Now()
		case time.Since(lastSaid) >= 10*time.Second:
			say(fmt.Sprintf("still waiting for Temporal at %s, namespace %s (%s of %s): %v", opts.HostPort, opts.Namespace,
				time.Since(start).Round(time.Second), timeout, err))
			lastSaid = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// try is one connection and a look at the namespace: a server that is up before its namespace
// is made (compose's namespace job) is not ready yet.
func try(ctx context.Context, opts client.Options) (client.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := client.DialContext(dctx, opts)
	if err != nil {
		return nil, err
	}
	ns := opts.Namespace
	if ns == "" {
		ns = client.DefaultNamespace
	}
	_, err = c.WorkflowService().DescribeNamespace(dctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
	var nsNotFound *serviceerror.NamespaceNotFound
	var notFound *serviceerror.NotFound
	if errors.As(err, &nsNotFound) || errors.As(err, &notFound) {
		err = fmt.Errorf("namespace %s does not exist (yet)", ns)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
