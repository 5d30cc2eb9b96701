package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What the processes cost, read from /proc (Linux).

// cpuTimes reads the CPU time (user + system) spent so far by the dev server, the worker and the
// bench process, where /proc has them: what each costs per workflow under load.
func (b *bench) cpuTimes() map[string]time.Duration {
	pids := map[string]int{"bench": os.Getpid()}
	if b.worker != nil && b.worker.Process != nil {
		pids["worker"] = b.worker.Process.Pid
	}
	if pid := childWithArg(os.Getpid(), "start-dev"); pid != 0 {
		pids["server"] = pid
	}
	times := map[string]time.Duration{}
	for name, pid := range pids {
		if t, err := cpuTime(pid); err == nil {
			times[name] = t
		}
	}
	return times
}

// statFields are the fields of /proc/PID/stat after the command name, which may hold spaces (in
// parentheses): the parent's PID is [1], utime and stime are [11] and [12].
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:])), nil
}

// cpuTime is a process's user + system CPU time from /proc/PID/stat (in USER_HZ ticks, 100 a
// second on Linux).
func cpuTime(pid int) (time.Duration, error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// childWithArg finds a child process of parent with arg in its command line (the dev server,
// which the SDK starts as PATH server start-dev …), or 0.
func childWithArg(parent int, arg string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fields, err := statFields(pid)
		if err != nil || len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			return pid
		}
	}
	return 0
}

// peakRSS reads the process's high-water resident set (VmHWM) in MB.
func peakRSS(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the worker's memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("VmHWM not found in /proc/PID/status")
}
