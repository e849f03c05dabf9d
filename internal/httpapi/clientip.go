package httpapi

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// ipCliente decides which address a request comes from, for the throttle and
// the logs (CONTRACT §6: "per client IP").
//
// Without D6A_TRUSTED_PROXIES it is the socket's peer address and
// X-Forwarded-For is ignored: anyone can write that header. With it, and only
// when the peer is one of those proxies, X-Forwarded-For is read from right
// to left, skipping the trusted proxies, and the first other address is the
// client. Right to left because a proxy appends the address it saw: the
// entries on the left are whatever the client sent, and taking the leftmost
// (what fiber's c.IP() does with ProxyHeader) would let a client pick a new
// throttle key on every request.
type ipCliente struct {
	confiaveis []netip.Prefix
}

func novoIPCliente(proxies []string) (ipCliente, error) {
	var r ipCliente
	for _, p := range proxies {
		if strings.Contains(p, "/") {
			pfx, err := netip.ParsePrefix(p)
			if err != nil {
				return r, fmt.Errorf("D6A_TRUSTED_PROXIES: %q is not an IP address or CIDR", p)
			}
			r.confiaveis = append(r.confiaveis, pfx.Masked())
			continue
		}
		a, err := netip.ParseAddr(p)
		if err != nil {
			return r, fmt.Errorf("D6A_TRUSTED_PROXIES: %q is not an IP address or CIDR", p)
		}
		a = a.Unmap()
		r.confiaveis = append(r.confiaveis, netip.PrefixFrom(a, a.BitLen()))
	}
	return r, nil
}

func (r ipCliente) confia(a netip.Addr) bool {
	for _, p := range r.confiaveis {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// de returns the client address of the request.
func (r ipCliente) de(c *fiber.Ctx) netip.Addr {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	peer = peer.Unmap()
	if len(r.confiaveis) == 0 || !r.confia(peer) {
		return peer
	}
	// Every X-Forwarded-For line, in order: a proxy may append a line of
	// its own instead of extending the client's, and reading only the
	// first (c.Get) would take the client's word (RFC 9110 §5.3: the lines
	// are one comma-separated list).
	linhas := c.Request().Header.PeekAll(fiber.HeaderXForwardedFor)
	partes := make([]string, len(linhas))
	for i, l := range linhas {
		partes[i] = string(l)
	}
	xff := strings.Join(partes, ",")
	cliente := peer
	for xff != "" {
		var parte string
		if i := strings.LastIndexByte(xff, ','); i >= 0 {
			parte, xff = xff[i+1:], xff[:i]
		} else {
			parte, xff = xff, ""
		}
		a, err := netip.ParseAddr(strings.TrimSpace(parte))
		if err != nil {
			// A trusted proxy wrote something unreadable: stop at the last
			// hop we could read rather than guess further left.
			break
		}
		cliente = a.Unmap()
		if !r.confia(cliente) {
			return cliente
		}
	}
	// Every hop was a trusted proxy (an internal caller): the farthest one.
	return cliente
}

// chaveThrottle is the throttle key of an address: the address itself for
// IPv4, its /64 for IPv6, since one subscriber usually holds a whole /64 and
// could otherwise rotate addresses to escape the limit.
func chaveThrottle(a netip.Addr) string {
	if a.Is6() {
		p, err := a.Prefix(64)
		if err == nil {
			return p.String()
		}
	}
	return a.String()
}
