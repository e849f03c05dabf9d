// Package natslocal runs a nats-server binary with JetStream in a directory
// of its own, for the benchmark and the fault suite: apart from d6a, so it
// can be measured, crashed and restarted on the same port and store.
package natslocal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/formigueiro/d6a/internal/childproc"
	"github.com/formigueiro/d6a/internal/loopback"
)

// Options shape a server.
type Options struct {
	// Dir holds the configuration, the store and one log per start;
	// created when missing.
	Dir string
	// Port to listen on at 127.0.0.1; 0 picks a free one.
	Port int
	// Config is more configuration (server_name, a cluster block).
	Config string
}

// Server is a nats-server started by Start.
type Server struct {
	Dir  string
	Port int
	bin  string
	conf string

	mu     sync.Mutex
	p      *childproc.Process // nil while stopped
	starts int
}

// Start writes the configuration and starts the server. Its store syncs
// every write (sync_interval: always): CONTRACT §3 asks that an
// acknowledged publish be on disk.
func Start(bin string, o Options) (*Server, error) {
	s := &Server{Dir: o.Dir, Port: o.Port, bin: bin, conf: filepath.Join(o.Dir, "nats.conf")}
	var err error
	if s.Port == 0 {
		if s.Port, err = loopback.FreePort(); err != nil {
			return nil, err
		}
	}
	conf := fmt.Sprintf("listen: 127.0.0.1:%d\nmax_payload: 1MB\njetstream {\n  store_dir: %q\n  sync_interval: always\n}\n%s",
		s.Port, filepath.Join(o.Dir, "store"), o.Config)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return s, s.Restart()
}

// Restart starts the server again after Stop, on the same port and store,
// with a new log (nats-<n>.log), and waits until it is ready. It does
// nothing while the server runs.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		return nil
	}
	s.starts++
	p, err := childproc.Start("nats-server", filepath.Join(s.Dir, fmt.Sprintf("nats-%d.log", s.starts)), os.Environ(), s.bin, "-c", s.conf)
	if err != nil {
		return err
	}
	// The line comes once JetStream has recovered its store and clients
	// are accepted: an open port comes before.
	err = p.WaitReady(30*time.Second, func() bool {
		b, _ := os.ReadFile(p.Log)
		return strings.Contains(string(b), "] Server is ready")
	})
	if err == nil {
		s.p = p
	}
	return err
}

// URL is the client URL.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.Port) }

// Pid is the running server's process id, 0 while stopped.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return 0
	}
	return s.p.Pid()
}

// Stop sends sig (SIGTERM: a clean shutdown; SIGKILL: a crash), waits up to
// 20 s for the exit, then kills. It does nothing when the server is stopped.
func (s *Server) Stop(sig syscall.Signal) error {
	s.mu.Lock()
	p := s.p
	s.p = nil
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Stop(sig, 20*time.Second)
}
