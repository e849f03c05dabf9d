package procstat

import (
	"os"
	"os/exec"
	"testing"
)

func TestReadSelfAndChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	eu, ok := Read(os.Getpid())
	if !ok || eu.PID != os.Getpid() || eu.PPID != os.Getppid() {
		t.Fatalf("Read(self) = %+v, %v", eu, ok)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var found bool
	for _, c := range Children(os.Getpid()) {
		found = found || c.PID == cmd.Process.Pid
	}
	if !found {
		t.Errorf("child %d not among Children(self)", cmd.Process.Pid)
	}
	if kb, ok := PeakRSS(os.Getpid()); !ok || kb <= 0 {
		t.Errorf("PeakRSS(self) = %d, %v", kb, ok)
	}
	if _, ok := PeakRSS(-1); ok {
		t.Error("PeakRSS(-1) ok")
	}
	if _, ok := Read(-1); ok {
		t.Error("Read(-1) ok")
	}
	m, ok := ReadMachine()
	if !ok || m.Total() == 0 || m.Busy() > m.Total() {
		t.Errorf("ReadMachine() = %+v, %v", m, ok)
	}
}
