package pglocal

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPostmaster(t *testing.T) {
	dir := t.TempDir()
	if pid, port := Postmaster(dir); pid != 0 || port != 0 {
		t.Errorf("no file: %d, %d", pid, port)
	}
	cases := []struct {
		content   string
		pid, port int
	}{
		{"4242\n/data/pg\n1700000000\n54329\n/data/pg\n127.0.0.1\n  1234  5678\nready   \n", 4242, 54329},
		{"4242\n/data/pg\n1700000000\n", 4242, 0},
		{"", 0, 0},
	}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if pid, port := Postmaster(dir); pid != c.pid || port != c.port {
			t.Errorf("%q: got %d, %d; want %d, %d", c.content, pid, port, c.pid, c.port)
		}
	}
}
