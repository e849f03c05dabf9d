// Package procstat reads the CPU time of processes and of the whole
// machine from Linux's /proc, for the bench tools' accounting of who used
// the cores during a measurement.
package procstat

import (
	"os"
	"strconv"
	"strings"
)

// HZ is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go supports.
const HZ = 100

// Process is what /proc/<pid>/stat says of a process's CPU time, in ticks.
type Process struct {
	PID, PPID int
	Own       uint64 // utime + stime
	Reaped    uint64 // cutime + cstime: children it has waited for
}

// Read reads /proc/<pid>/stat; ok is false when the process is gone.
func Read(pid int) (p Process, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Process{}, false
	}
	s := string(b)
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Process{}, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime
	// 16, cstime 17.
	if len(f) < 15 {
		return Process{}, false
	}
	p.PID = pid
	p.PPID, _ = strconv.Atoi(f[1])
	var t [4]uint64
	for k := range t {
		t[k], _ = strconv.ParseUint(f[11+k], 10, 64)
	}
	p.Own, p.Reaped = t[0]+t[1], t[2]+t[3]
	return p, true
}

// Children reads every live child of pid (a postmaster's backends and
// auxiliary processes, say).
func Children(pid int) []Process {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Process
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Read(n); ok && p.PPID == pid {
			out = append(out, p)
		}
	}
	return out
}

// Machine is the "cpu" line of /proc/stat: ticks of all CPUs by state.
// Guest time is already inside User, and interrupt time (IRQ, SoftIRQ) is
// in no process's utime or stime.
type Machine struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total is every state's ticks.
func (m Machine) Total() uint64 {
	return m.User + m.Nice + m.System + m.Idle + m.IOWait + m.IRQ + m.SoftIRQ + m.Steal
}

// Busy is the ticks not spent idle or waiting for I/O.
func (m Machine) Busy() uint64 { return m.Total() - m.Idle - m.IOWait }

// ReadMachine reads the "cpu" line of /proc/stat.
func ReadMachine() (Machine, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Machine{}, false
	}
	l, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(l)
	if len(f) < 8 || f[0] != "cpu" {
		return Machine{}, false
	}
	var v [8]uint64 // user nice system idle iowait irq softirq steal
	for i, x := range f[1:min(len(f), 9)] {
		v[i], _ = strconv.ParseUint(x, 10, 64)
	}
	return Machine{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, true
}

// PeakRSS is /proc/<pid>/status's VmHWM, the peak resident set of the
// process's current image, in KB; ok is false when the process is gone.
// getrusage's ru_maxrss is no substitute for a child a Go test starts:
// the kernel carries into it, at exec, the peak of the memory it shared
// with its parent (os/exec clones with CLONE_VM), so it reads at least
// the test binary's own RSS.
func PeakRSS(pid int) (kb int64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}
