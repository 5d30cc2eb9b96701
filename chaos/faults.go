package chaos

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// fault is one thing that breaks on the schedule.
type fault struct {
	Name string `json:"name"`
	// At is when it struck; Until when what it broke was back (restarted, reloaded, restored).
	At    time.Time `json:"at"`
	Until time.Time `json:"until"`
	// Recovery is from Until to the end of the first whole answer to a request begun after it.
	Recovery time.Duration `json:"recoveryNs"`
	Error    string        `json:"error,omitempty"`
	// Skipped says why the fault was not dealt (a run without --postgres-restart).
	Skipped string `json:"skipped,omitempty"`
	do      func(context.Context) error
}

// restartAfter is how long a killed process stays down before its supervisor restarts it.
const restartAfter = 5 * time.Second

// faults are the run's faults in the order they strike.
func (w *world) faults() []*fault {
	fs := []*fault{
		{Name: "kill -9 of worker 1", do: func(ctx context.Context) error {
			w.workers[0].kill()
			sleep(ctx, restartAfter)
			return w.workers[0].start()
		}},
		{Name: "kill -9 of serve 2", do: func(ctx context.Context) error {
			w.doors[1].kill()
			sleep(ctx, restartAfter)
			if err := w.doors[1].start(); err != nil {
				return err
			}
			return w.awaitDoor(ctx, 1, time.Minute)
		}},
		{Name: "SIGTERM and restart of temporal node 2", do: func(ctx context.Context) error {
			w.nodes[1].shutdown()
			if err := w.nodes[1].start(); err != nil {
				return err
			}
			return w.awaitNode(ctx, 1, 2*time.Minute)
		}},
		{Name: "kill -9 of temporal node 1", do: func(ctx context.Context) error {
			w.nodes[0].kill()
			sleep(ctx, 4*restartAfter) // the survivor takes its shards and queues meanwhile
			if err := w.nodes[0].start(); err != nil {
				return err
			}
			return w.awaitNode(ctx, 0, 2*time.Minute)
		}},
		{Name: "PostgreSQL restart", do: func(ctx context.Context) error {
			if out, err := exec.CommandContext(ctx, "sh", "-c", w.opts.PostgresRestart).CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v: %s", w.opts.PostgresRestart, err, out)
			}
			return nil
		}},
		{Name: fmt.Sprintf("%s outage of provider ok", w.opts.Outage), do: func(ctx context.Context) error {
			w.fake.SetRules(rules(true))
			sleep(ctx, w.opts.Outage)
			w.fake.SetRules(rules(false))
			return nil
		}},
		{Name: "config reload", do: func(context.Context) error {
			w.spare = !w.spare
			return w.writeConfig()
		}},
	}
	if w.opts.PostgresRestart == "" {
		fs[4].Skipped = "no --postgres-restart command"
	}
	return fs
}

// strike deals the faults evenly over the run's first part (the last stretch is quiet: the
// recovery after the last fault is measured too), printing each as it strikes.
func (w *world) strike(ctx context.Context, fs []*fault, span time.Duration) {
	gap := span / time.Duration(len(fs)+1)
	start := time.Now()
	for i, f := range fs {
		if !sleepUntil(ctx, start.Add(gap*time.Duration(i+1))) {
			return
		}
		if f.Skipped != "" {
			w.progress("%s fault %d/%d: %s skipped (%s)", clock(time.Now()), i+1, len(fs), f.Name, f.Skipped)
			continue
		}
		f.At = time.Now()
		w.progress("%s fault %d/%d: %s", clock(f.At), i+1, len(fs), f.Name)
		if err := f.do(ctx); err != nil {
			f.Error = err.Error()
			w.progress("%s fault %d/%d: %s failed: %v", clock(time.Now()), i+1, len(fs), f.Name, err)
		}
		f.Until = time.Now()
		w.progress("%s fault %d/%d: back after %s", clock(f.Until), i+1, len(fs), f.Until.Sub(f.At).Round(100*time.Millisecond))
	}
}

func clock(t time.Time) string { return t.Format("15:04:05") }

func sleep(ctx context.Context, d time.Duration) { sleepUntil(ctx, time.Now().Add(d)) }

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}
