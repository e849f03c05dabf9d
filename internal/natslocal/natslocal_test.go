package natslocal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// buildServer builds nats-server from the module, as the bench and the
// fault suite do.
func buildServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds nats-server")
	}
	bin := filepath.Join(t.TempDir(), "nats-server")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput(); err != nil {
		t.Fatalf("go build nats-server: %v\n%s", err, out)
	}
	return bin
}

// An acknowledged publish survives a crash and the restart on the same
// port and store.
func TestCrashRestart(t *testing.T) {
	bin := buildServer(t)
	dir := filepath.Join(t.TempDir(), "nats")
	s, err := Start(bin, Options{Dir: dir, Config: "server_name: teste\n"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(syscall.SIGTERM) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	nc, err := nats.Connect(s.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "t.1", []byte("um")); err != nil {
		t.Fatal(err)
	}

	pid, port := s.Pid(), s.Port
	if err := s.Stop(syscall.SIGKILL); err == nil {
		t.Error("a SIGKILL'd server reported a clean exit")
	}
	if s.Pid() != 0 {
		t.Errorf("Pid after Stop: %d, want 0", s.Pid())
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("pid %d still runs after Stop", pid)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.Port != port || s.Pid() == 0 || s.Pid() == pid {
		t.Errorf("restart: port %d pid %d; was port %d pid %d", s.Port, s.Pid(), port, pid)
	}
	for _, log := range []string{"nats-1.log", "nats-2.log"} {
		if _, err := os.Stat(filepath.Join(dir, log)); err != nil {
			t.Error(err)
		}
	}
	st, err := js.Stream(ctx, "T") // the client reconnects to the same URL
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctx, 1)
	if err != nil || string(m.Data) != "um" {
		t.Fatalf("message 1 after the crash: %v, %q", err, m.Data)
	}
	if err := s.Stop(syscall.SIGTERM); err != nil {
		t.Errorf("clean stop: %v", err)
	}
	if err := s.Stop(syscall.SIGTERM); err != nil {
		t.Errorf("second stop: %v", err)
	}
}

// A server that cannot start reports it with its log.
func TestStartFails(t *testing.T) {
	bin := buildServer(t)
	_, err := Start(bin, Options{Dir: t.TempDir(), Config: "nonsense {\n"})
	if err == nil {
		t.Fatal("a broken configuration started")
	}
	t.Log(err)
}
