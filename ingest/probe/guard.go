package probe

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// Resolver looks a host name up. *net.Resolver satisfies it; tests inject a
// fake to make names resolve to blocked addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// blockedPrefixes are ranges never probed on top of what netip's predicates
// cover (loopback, private, link-local, multicast, unspecified).
var blockedPrefixes = []struct {
	p      netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "cgnat"},
	{netip.MustParsePrefix("192.0.0.0/24"), "ietf-protocol"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // includes 255.255.255.255
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// guard decides which addresses may be dialled.
type guard struct {
	allow []netip.Prefix
}

// blockReason returns why addr may not be dialled, or "" when it may. The
// allow-list is checked against the address as given and unmapped, so an
// allow-listed 127.0.0.1 also admits ::ffff:127.0.0.1.
func (g guard) blockReason(addr netip.Addr) string {
	addr = addr.WithZone("")
	plain := addr.Unmap()
	for _, p := range g.allow {
		if p.Contains(addr) || p.Contains(plain) {
			return ""
		}
	}
	if r := intrinsicReason(plain); r != "" {
		return r
	}
	// IPv6 forms that embed an IPv4 address route to it: judge the IPv4.
	if plain.Is6() && (nat64Prefix.Contains(plain) || sixToFour.Contains(plain)) {
		b := plain.As16()
		var v4 [4]byte
		if nat64Prefix.Contains(plain) {
			copy(v4[:], b[12:16])
		} else {
			copy(v4[:], b[2:6])
		}
		if r := g.blockReason(netip.AddrFrom4(v4)); r != "" {
			return "embedded-" + r
		}
	}
	return ""
}

func intrinsicReason(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.IsPrivate():
		return "private"
	}
	for _, b := range blockedPrefixes {
		if b.p.Contains(a) {
			return b.reason
		}
	}
	return ""
}

// dialer resolves once, checks every address, and dials a checked one, so
// the name cannot re-resolve to something else between check and connect.
type dialer struct {
	guard    guard
	resolver Resolver
	net      net.Dialer
}

func newDialer(g guard, r Resolver, connectTimeout time.Duration) *dialer {
	d := &dialer{guard: g, resolver: r}
	d.net.Timeout = connectTimeout
	d.net.KeepAlive = 30 * time.Second
	// Belt and braces: re-check the socket address the kernel is about to
	// connect to, whatever path led there.
	d.net.Control = func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("guard: parse %q: %w", address, err)
		}
		if r := g.blockReason(ap.Addr()); r != "" {
			return &BlockedError{Host: address, Addr: ap.Addr().String(), Reason: r}
		}
		return nil
	}
	return d
}

// DialContext is the http.Transport hook.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	addrs, err := d.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var firstErr error
	for _, a := range addrs {
		c, err := d.net.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// resolve returns the addresses to dial for host, all of them checked. A
// name with any blocked address is refused outright: an attacker who mixes
// public and internal answers gets nothing.
func (d *dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if r := d.guard.blockReason(a); r != "" {
			return nil, &BlockedError{Host: host, Addr: a.String(), Reason: r}
		}
		return []netip.Addr{a.WithZone("")}, nil
	}
	addrs, err := d.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if r := d.guard.blockReason(a); r != "" {
			return nil, &BlockedError{Host: host, Addr: a.String(), Reason: r}
		}
		out = append(out, a.Unmap().WithZone(""))
	}
	return out, nil
}
