package probe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
)

// fakeResolver maps names to addresses; unknown names are NXDOMAIN.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(ips))
	for i, s := range ips {
		out[i] = netip.MustParseAddr(s)
	}
	return out, nil
}

type countingResolver struct {
	fakeResolver
	n atomic.Int32
}

func (c *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	c.n.Add(1)
	return c.fakeResolver.LookupNetIP(ctx, network, host)
}

func TestGuardBlockReason(t *testing.T) {
	for _, tc := range []struct {
		ip     string
		reason string // "" = allowed
	}{
		// IPv4
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "private"},
		{"169.254.169.254", "link-local"},
		{"169.254.0.1", "link-local"},
		{"100.64.0.1", "cgnat"},
		{"100.127.255.254", "cgnat"},
		{"100.128.0.1", ""},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this-network"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"255.255.255.255", "reserved"},
		{"192.0.0.170", "ietf-protocol"},
		{"198.18.0.1", "benchmarking"},
		{"203.0.113.7", "documentation"},
		// IPv6
		{"2606:4700:4700::1111", ""},
		{"::1", "loopback"},
		{"::", "unspecified"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"ff02::1", "multicast"},
		{"ff05::2", "multicast"},
		{"2001:db8::1", "documentation"},
		{"fec0::1", "site-local"},
		// IPv4-mapped and IPv4-embedding IPv6
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::a9fe:a9fe", "embedded-link-local"}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", ""},                      // NAT64 of 8.8.8.8
		{"2002:7f00:1::1", "embedded-loopback"},       // 6to4 of 127.0.0.1
		{"2002:0808:0808::1", ""},
	} {
		t.Run(tc.ip, func(t *testing.T) {
			if got := (guard{}).blockReason(netip.MustParseAddr(tc.ip)); got != tc.reason {
				t.Fatalf("blockReason(%s) = %q, want %q", tc.ip, got, tc.reason)
			}
		})
	}
}

func TestGuardAllowList(t *testing.T) {
	g := guard{allow: loopback}
	for _, ip := range []string{"127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"} {
		if r := g.blockReason(netip.MustParseAddr(ip)); r != "" {
			t.Errorf("%s blocked (%s) although allow-listed", ip, r)
		}
	}
	for _, ip := range []string{"169.254.169.254", "10.0.0.1", "fe80::1", "::ffff:169.254.169.254"} {
		if g.blockReason(netip.MustParseAddr(ip)) == "" {
			t.Errorf("%s allowed by a loopback allow-list", ip)
		}
	}
}

func TestDialerResolvesAndBlocks(t *testing.T) {
	res := fakeResolver{
		"public.example":      {"93.184.216.34"},
		"private.example":     {"10.0.0.5"},
		"metadata.example":    {"169.254.169.254"},
		"mapped.example":      {"::ffff:169.254.169.254"},
		"v6-loop.example":     {"::1"},
		"ula.example":         {"fd00::1"},
		"mixed.example":       {"93.184.216.34", "192.168.0.10"}, // one bad answer spoils the name
		"mixed-order.example": {"10.0.0.1", "93.184.216.34"},
		"empty.example":       {},
	}
	d := newDialer(guard{}, res, 0)
	for _, tc := range []struct {
		host    string
		blocked bool
		dnsErr  bool
	}{
		{"public.example", false, false},
		{"private.example", true, false},
		{"metadata.example", true, false},
		{"mapped.example", true, false},
		{"v6-loop.example", true, false},
		{"ula.example", true, false},
		{"mixed.example", true, false},
		{"mixed-order.example", true, false},
		{"empty.example", false, true},
		{"nxdomain.example", false, true},
		{"127.0.0.1", true, false},
		{"169.254.169.254", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"fe80::1%lo", true, false},
		{"8.8.4.4", false, false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			addrs, err := d.resolve(context.Background(), tc.host)
			var dns *net.DNSError
			switch {
			case tc.blocked:
				var be *BlockedError
				if !errors.Is(err, ErrBlockedAddress) || !errors.As(err, &be) || be.Reason == "" {
					t.Fatalf("want blocked, got %v %v", addrs, err)
				}
			case tc.dnsErr:
				if !errors.As(err, &dns) {
					t.Fatalf("want DNS error, got %v %v", addrs, err)
				}
			default:
				if err != nil || len(addrs) == 0 {
					t.Fatalf("want addresses, got %v %v", addrs, err)
				}
			}
		})
	}
}

// The real resolver: localhost resolves to loopback and is refused; the
// dial never happens.
func TestDialerLocalhostReal(t *testing.T) {
	d := newDialer(guard{}, net.DefaultResolver, 0)
	for _, addr := range []string{"localhost:80", "127.0.0.1:80", "[::1]:80", "[::ffff:7f00:1]:80", "169.254.169.254:80", "0.0.0.0:80"} {
		c, err := d.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			c.Close()
			t.Fatalf("%s: dial succeeded", addr)
		}
		if !errors.Is(err, ErrBlockedAddress) {
			t.Fatalf("%s: want blocked, got %v", addr, err)
		}
	}
}

// The Control hook refuses a blocked socket address even if resolution was
// bypassed.
func TestDialerControlHook(t *testing.T) {
	d := newDialer(guard{}, net.DefaultResolver, 0)
	_, err := d.net.DialContext(context.Background(), "tcp", "127.0.0.1:9")
	if !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("control hook: %v", err)
	}
}
