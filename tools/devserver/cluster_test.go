package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/api/adminservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Two processes on one PostgreSQL database are one cluster: both serve, and when one is killed
// (kill -9) the other takes over its shards and task queues, finishes the workflow that was in
// flight on them and runs new ones. Then a third node joins the survivor, and the one of the two
// that owns a new in-flight workflow is stopped (SIGTERM), with the same checks.
func TestPostgresClusterSurvivesAKilledNode(t *testing.T) {
	begin := time.Now()
	dbURL := freshDatabase(t, testPostgres(t))
	bin := buildServer(t)
	t.Logf("built %s in %s", bin, time.Since(begin).Round(time.Second))
	worker.SetStickyWorkflowCacheSize(0) // a dead worker's sticky queue would add a 5 s timeout

	// Both at once: the second waits for the first's start lock instead of racing it.
	c := &testCluster{t: t, bin: bin, dbURL: dbURL}
	c.add("A")
	c.add("B")
	c.ready()
	t.Logf("nodes A and B serving, one ring, %s after the start", time.Since(begin).Round(time.Second))
	survivor := c.failover("in-flight-1", syscall.SIGKILL)

	c.nodes = []*node{survivor}
	c.add("C")
	c.ready()
	c.failover("in-flight-2", syscall.SIGTERM)
	t.Logf("test took %s", time.Since(begin).Round(time.Second))
}

// testCluster is the nodes of the test, each with a worker behind it (so whichever survives has one).
type testCluster struct {
	t       *testing.T
	bin     string
	dbURL   string
	nodes   []*node
	clients map[*node]client.Client
}

func (c *testCluster) add(name string) {
	c.nodes = append(c.nodes, startNode(c.t, c.bin, c.dbURL, name))
}

// ready waits until every node serves and sees all the others, and starts the missing workers.
func (c *testCluster) ready() {
	t := c.t
	for _, n := range c.nodes {
		n.waitServing(t, 2*time.Minute)
	}
	for _, n := range c.nodes {
		n.waitRings(t, len(c.nodes), time.Minute)
	}
	if c.clients == nil {
		c.clients = map[*node]client.Client{}
	}
	for _, n := range c.nodes {
		if c.clients[n] != nil {
			continue
		}
		cl, err := client.Dial(client.Options{HostPort: n.address(), Logger: quietLogger()})
		if err != nil {
			t.Fatalf("node %s: %v", n.name, err)
		}
		w := worker.New(cl, "failover", worker.Options{})
		w.RegisterWorkflowWithOptions(sleepWorkflow, workflow.RegisterOptions{Name: "sleep"})
		if err := w.Start(); err != nil {
			t.Fatalf("node %s: worker: %v", n.name, err)
		}
		c.clients[n] = cl
		t.Cleanup(func() { w.Stop(); cl.Close() })
	}
}

// failover starts a workflow with a timer through the first node, stops the node that owns its
// shard with sig while the timer runs, and checks that the other node takes the shard over,
// completes the workflow and runs a new one. It returns the survivor.
func (c *testCluster) failover(id string, sig syscall.Signal) *node {
	t := c.t
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first := c.nodes[0]
	run, err := c.clients[first].ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "failover"}, "sleep", 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	owner := first.historyOwner(t, run.GetID(), run.GetRunID())
	victim, survivor := nodeListening(t, c.nodes, owner)
	waitTimerStarted(t, c.clients[first], run.GetID(), run.GetRunID())

	stopped := time.Now()
	victim.kill(t, sig)
	how := map[syscall.Signal]string{syscall.SIGKILL: "kill -9", syscall.SIGTERM: "SIGTERM"}[sig]
	t.Logf("workflow %s in flight on history host %s, in node %s: %s took %s",
		id, owner, victim.name, how, time.Since(stopped).Round(100*time.Millisecond))
	// Follow the workflow through the survivor (the victim may be the node it was started on).
	run = c.clients[survivor].GetWorkflow(ctx, run.GetID(), run.GetRunID())
	survivor.eventually(t, "taking over the shard of "+id, time.Minute, func(ctx context.Context) error {
		addr, err := survivor.describeHistoryHost(ctx, run.GetID(), run.GetRunID())
		if err != nil {
			return err
		}
		if o, _ := nodeListening(t, []*node{survivor}, addr); o != survivor {
			return fmt.Errorf("the shard is still on %s", addr)
		}
		return nil
	})
	takeover := time.Since(stopped)
	var result string
	if err := run.Get(ctx, &result); err != nil {
		t.Fatalf("in-flight workflow: %v", err)
	}
	completed := time.Since(stopped)
	// Frontend and worker do not leave the ring when they stop, as history and matching do:
	// they go, like a killed node's, when ringpop finds them dead (after its 5 s suspicion).
	survivor.waitRings(t, 1, time.Minute)
	membership := time.Since(stopped)
	t.Logf("%s of node %s: its shard owned by node %s after %s, the in-flight workflow (timer due 6 s after its start) completed after %s, every ring without it after %s",
		how, victim.name, survivor.name, takeover.Round(100*time.Millisecond), completed.Round(100*time.Millisecond), membership.Round(100*time.Millisecond))

	started := time.Now()
	next, err := c.clients[survivor].ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id + "-after", TaskQueue: "failover"}, "sleep", time.Second)
	if err != nil {
		t.Fatalf("new workflow through node %s: %v", survivor.name, err)
	}
	if err := next.Get(ctx, &result); err != nil {
		t.Fatalf("new workflow through node %s: %v", survivor.name, err)
	}
	t.Logf("new workflow (1 s timer) through node %s completed in %s", survivor.name, time.Since(started).Round(100*time.Millisecond))
	return survivor
}

func sleepWorkflow(ctx workflow.Context, d time.Duration) (string, error) {
	if err := workflow.Sleep(ctx, d); err != nil {
		return "", err
	}
	return "slept", nil
}

func quietLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func buildServer(t *testing.T) string {
	t.Helper()
	bin := t.TempDir() + "/temporal-dev"
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// node is a temporal-dev process.
type node struct {
	name string
	port int
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

func startNode(t *testing.T, bin, dbURL, name string) *node {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	n := &node{name: name, port: port, out: &syncBuffer{}, done: make(chan struct{})}
	n.cmd = exec.Command(bin, "--db", dbURL, "--port", strconv.Itoa(port), "--headless")
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = n.cmd.Wait(); close(n.done) }()
	t.Cleanup(func() {
		n.kill(t, syscall.SIGTERM)
		if t.Failed() {
			t.Logf("node %s output (last 4 kB):\n%s", n.name, n.out.tail(4096))
		}
	})
	return n
}

func (n *node) address() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

func (n *node) exited() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// kill signals the process and waits for it to end (killing it after 30 s).
func (n *node) kill(t *testing.T, sig syscall.Signal) {
	if n.exited() {
		return
	}
	_ = n.cmd.Process.Signal(sig)
	select {
	case <-n.done:
	case <-time.After(30 * time.Second):
		t.Errorf("node %s did not stop within 30 s of %v", n.name, sig)
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

func (n *node) conn(t *testing.T) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(n.address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// eventually calls f until it returns nil, failing the test with its last error at the deadline
// or when the node's process ends.
func (n *node) eventually(t *testing.T, what string, timeout time.Duration, f func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := f(ctx)
		cancel()
		if err == nil {
			return
		}
		if n.exited() {
			t.Fatalf("node %s: exited while waiting for %s (%v):\n%s", n.name, what, err, n.out.tail(4096))
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: %s: not within %s: %v", n.name, what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitServing waits until the node's frontend describes namespace default.
func (n *node) waitServing(t *testing.T, timeout time.Duration) {
	t.Helper()
	wf := workflowservice.NewWorkflowServiceClient(n.conn(t))
	n.eventually(t, "namespace default", timeout, func(ctx context.Context) error {
		_, err := wf.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
		return err
	})
}

// waitRings waits until the node sees members hosts of each service.
func (n *node) waitRings(t *testing.T, members int, timeout time.Duration) {
	t.Helper()
	admin := adminservice.NewAdminServiceClient(n.conn(t))
	n.eventually(t, fmt.Sprintf("%d members in each ring", members), timeout, func(ctx context.Context) error {
		resp, err := admin.DescribeCluster(ctx, &adminservice.DescribeClusterRequest{})
		if err != nil {
			return err
		}
		for _, ring := range resp.GetMembershipInfo().GetRings() {
			if int(ring.GetMemberCount()) != members {
				return fmt.Errorf("ring %s has %d members", ring.GetRole(), ring.GetMemberCount())
			}
		}
		return nil
	})
}

// historyOwner is the address of the history host that owns the workflow's shard.
func (n *node) historyOwner(t *testing.T, id, runID string) string {
	t.Helper()
	var addr string
	n.eventually(t, "the history host of "+id, time.Minute, func(ctx context.Context) (err error) {
		addr, err = n.describeHistoryHost(ctx, id, runID)
		return err
	})
	return addr
}

func (n *node) describeHistoryHost(ctx context.Context, id, runID string) (string, error) {
	conn, err := grpc.NewClient(n.address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	resp, err := adminservice.NewAdminServiceClient(conn).DescribeHistoryHost(ctx, &adminservice.DescribeHistoryHostRequest{
		Namespace: "default", WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID},
	})
	return resp.GetAddress(), err
}

// nodeListening splits nodes into the one that listens on addr's port, and another.
func nodeListening(t *testing.T, nodes []*node, addr string) (owner, other *node) {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("history address %q: %v", addr, err)
	}
	port, _ := strconv.Atoi(p)
	for _, n := range nodes {
		ports, err := listeningPorts(n.cmd.Process.Pid)
		if err != nil {
			t.Fatalf("node %s: %v", n.name, err)
		}
		if ports[port] && owner == nil {
			owner = n
		} else {
			other = n
		}
	}
	if owner == nil {
		t.Fatalf("no node listens on %s", addr)
	}
	return owner, other
}

// listeningPorts are the TCP ports that process pid listens on (from Linux's /proc).
func listeningPorts(pid int) (map[int]bool, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	sockets := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			sockets[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	ports := map[int]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !sockets[f[9]] { // 0A: LISTEN
				continue
			}
			_, hex, _ := strings.Cut(f[1], ":")
			if port, err := strconv.ParseInt(hex, 16, 32); err == nil {
				ports[int(port)] = true
			}
		}
	}
	return ports, nil
}

// waitTimerStarted waits until the workflow sleeps: its timer is in flight.
func waitTimerStarted(t *testing.T, c client.Client, id, runID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		iter := c.GetWorkflowHistory(ctx, id, runID, false, 0)
		for iter.HasNext() {
			e, err := iter.Next()
			if err != nil {
				break
			}
			if e.GetTimerStartedEventAttributes() != nil {
				cancel()
				return
			}
		}
		cancel()
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("workflow %s: no timer started within 30 s", id)
}

// syncBuffer is a process's output, written by os/exec's copier and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
