package httpapi

import (
	"io"
	"net"
	"sync"
	"time"
)

// Bounds of a lingering close: how much of a refused body is read and
// thrown away, and for how long, before the socket closes anyway (nginx's
// lingering_time and lingering_timeout play the same part).
const (
	DescarteMaximo = 64 << 20
	DescarteTempo  = 5 * time.Second
)

// Escuta wraps ln so that every connection the server closes is closed
// lingering: the write side first (the client reads the answer and an end
// of stream), then what the client is still sending is read and dropped,
// then the socket. A plain close with unread bytes in the kernel's buffer
// makes TCP send a reset, and the reset can destroy the 413 the server has
// just written before the client reads it: the client then sees
// "connection reset" and cannot tell "too large" from "server down".
// fasthttp answers a body over its limit and closes at once, so without
// this a client still sending its body sometimes got the reset.
func Escuta(ln net.Listener) net.Listener { return escutaDemorada{ln} }

type escutaDemorada struct{ net.Listener }

func (l escutaDemorada) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &conexaoDemorada{TCPConn: tc}, nil
	}
	return c, nil
}

type conexaoDemorada struct {
	*net.TCPConn
	once sync.Once
}

// Close returns at once: the draining runs on its own goroutine, so a slow
// client never holds one of the server's workers. Its bounds are
// DescarteMaximo and DescarteTempo.
func (c *conexaoDemorada) Close() error {
	c.once.Do(func() {
		if err := c.TCPConn.CloseWrite(); err != nil {
			_ = c.TCPConn.Close()
			return
		}
		go func() {
			_ = c.TCPConn.SetReadDeadline(time.Now().Add(DescarteTempo))
			_, _ = io.CopyN(io.Discard, c.TCPConn, DescarteMaximo)
			_ = c.TCPConn.Close()
		}()
	})
	return nil
}

// Servir serves app on ln until app shuts down, closing every connection
// lingering (Escuta). It is how d6a serves HTTP; tests serve the same way.
func Servir(app interface{ Listener(net.Listener) error }, ln net.Listener) error {
	return app.Listener(Escuta(ln))
}
