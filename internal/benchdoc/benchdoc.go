// Package benchdoc writes what the bench tools (cmd/d6a-bench,
// cmd/d6a-httpbench) say in docs/bench.md besides their measurements: the
// machine and the code measured, and numbers with thousands separators.
package benchdoc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Thousands writes n with thousands separators: 1,000,000.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// CPUModel is the CPU's model name from /proc/cpuinfo, in backquotes; "?"
// when unknown.
func CPUModel() string {
	if v, ok := procField("/proc/cpuinfo", "model name"); ok {
		return "`" + v + "`"
	}
	return "?"
}

// Memory is the machine's memory (MemTotal of /proc/meminfo) in GiB; "?"
// when unknown.
func Memory() string {
	v, ok := procField("/proc/meminfo", "MemTotal")
	if !ok {
		return "?"
	}
	kb, err := strconv.Atoi(strings.TrimSuffix(v, " kB"))
	if err != nil {
		return v
	}
	return fmt.Sprintf("%.1f GiB (MemTotal)", float64(kb)/(1<<20))
}

// procField is the value of the first "key: value" line of a /proc file.
func procField(path, key string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	for s := bufio.NewScanner(f); s.Scan(); {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// Kernel is the running kernel's release (what `uname -r` prints); "?"
// when unknown.
func Kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// Revision names the commit checked out in dir ("" for the working
// directory) and the files with uncommitted changes among those that
// status selects: the flags and pathspecs that follow
// `git status --porcelain`. Each tool picks the files whose changes its
// measurement would include.
func Revision(dir string, status ...string) string {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		return cmd.Output()
	}
	rev, err := git("rev-parse", "--short", "HEAD")
	if err != nil {
		return "? (not a git checkout)"
	}
	s := "commit `" + strings.TrimSpace(string(rev)) + "`"
	out, err := git(append([]string{"status", "--porcelain"}, status...)...)
	if err != nil {
		return s
	}
	var changed []string
	for _, l := range strings.Split(string(out), "\n") {
		if len(l) > 3 {
			changed = append(changed, "`"+strings.TrimSpace(l[3:])+"`")
		}
	}
	if len(changed) > 0 {
		s += " plus uncommitted changes to " + strings.Join(changed, ", ")
	}
	return s
}
