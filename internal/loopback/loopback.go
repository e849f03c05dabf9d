// Package loopback picks addresses on 127.0.0.1 for the processes that
// tests and tools start (PostgreSQL, NATS, d6a serve).
package loopback

import "net"

// FreePort returns a TCP port of 127.0.0.1 that nothing listens on at the
// time of the call; the caller's process binds it later, so another one may
// take it first.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
