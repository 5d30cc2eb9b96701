package store

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/batonhq/baton/policy"
)

const crashChildEnv = "BATON_STORE_CRASH_CHILD"

// TestMain lets the crash-safety test re-run this binary as a writer that is killed mid-write.
func TestMain(m *testing.M) {
	if url := os.Getenv(crashChildEnv); url != "" {
		crashingWriter(url)
		return
	}
	os.Exit(m.Run())
}

// crashingWriter writes inside a transaction and is killed with SIGKILL before it commits.
func crashingWriter(url string) {
	s, err := Open(ctx, url, Options{})
	if err != nil {
		os.Exit(3)
	}
	beforeCommit = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	_, _ = s.RecordOutcome(ctx, "main", "openai:a", func(st policy.ProfileStats) policy.ProfileStats {
		st.ErrorCount = 999
		return st
	})
	os.Exit(4) // not reached: the kill comes first
}

func TestAKilledWriterLeavesThePreviousStateWhole(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := open(t, b.url, nil)
			if _, err := s.RecordOutcome(ctx, "main", "openai:a", func(st policy.ProfileStats) policy.ProfileStats {
				st.ErrorCount = 1
				return st
			}); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashChildEnv+"="+b.url)
			err := cmd.Run()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the writer was not killed mid-write: %v", err)
			}
			st, err := s.Stats(ctx, "main", "openai:a")
			if err != nil {
				t.Fatal(err)
			}
			if st.ErrorCount != 1 {
				t.Errorf("errorCount %d after a killed writer, want the previous 1", st.ErrorCount)
			}
			// And the store still takes writes (no lock left behind).
			if _, err := s.RecordOutcome(ctx, "main", "openai:a", func(st policy.ProfileStats) policy.ProfileStats {
				st.ErrorCount++
				return st
			}); err != nil {
				t.Fatal(err)
			}
			if st, _ := s.Stats(ctx, "main", "openai:a"); st.ErrorCount != 2 {
				t.Errorf("errorCount %d, want 2", st.ErrorCount)
			}
		})
	}
}
