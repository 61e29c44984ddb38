package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/sql/store"
)

// hc is a health check with every column set (derived from its arguments).
func hc(id, server, url string, observed time.Time, outcome string) store.HealthCheck {
	c := store.HealthCheck{
		ID: id, Server: server, RemoteURL: url, ObservedAt: observed,
		Transport: "streamable-http", Outcome: outcome, HTTPStatus: 200, LatencyMS: 12.5,
		AuthKind: "none", ProtocolVersion: "2025-06-18", ToolCount: 3, ToolsListed: true,
		Check: `{"id":"` + id + `","server":"` + server + `","outcome":"` + outcome + `"}`,
	}
	switch outcome {
	case "auth_required":
		c.HTTPStatus, c.LatencyMS, c.AuthKind, c.ToolCount, c.ToolsListed, c.ProtocolVersion = 401, 0, "oauth", 0, false, ""
	case "unreachable":
		c.HTTPStatus, c.LatencyMS, c.AuthKind, c.ToolCount, c.ToolsListed, c.ProtocolVersion = 0, 0, "unknown", 0, false, ""
		c.ErrorClass = "dial"
	}
	return c
}

func normHealth(cs ...store.HealthCheck) []store.HealthCheck {
	out := make([]store.HealthCheck, len(cs))
	for i, c := range cs {
		c.ObservedAt = store.Millis(c.ObservedAt)
		out[i] = c
	}
	return out
}

func insertHealth(t *testing.T, s store.Store, cs ...store.HealthCheck) {
	t.Helper()
	must(t, "InsertHealthChecks", s.InsertHealthChecks(ctx(t), cs))
}

func healthChecks(t *testing.T, s store.Store, q store.HealthQuery) []store.HealthCheck {
	t.Helper()
	got, err := s.HealthChecks(ctx(t), q)
	must(t, fmt.Sprintf("HealthChecks(%+v)", q), err)
	return got
}

func latestHealth(t *testing.T, s store.Store, server string) []store.HealthCheck {
	t.Helper()
	got, err := s.LatestHealth(ctx(t), server)
	must(t, "LatestHealth("+server+")", err)
	return got
}

// healthReads is every health read of the given servers.
type healthReads struct {
	History map[string][]store.HealthCheck
	Latest  map[string][]store.HealthCheck
	Count   int64
}

func readHealth(t *testing.T, s store.Store, servers ...string) healthReads {
	t.Helper()
	r := healthReads{History: map[string][]store.HealthCheck{}, Latest: map[string][]store.HealthCheck{}}
	for _, sv := range servers {
		r.History[sv] = healthChecks(t, s, store.HealthQuery{Server: sv, Limit: store.MaxEventLimit})
		r.Latest[sv] = latestHealth(t, s, sv)
	}
	r.Count = counts(t, s)["health_checks"]
	return r
}

// optimizeHealth forces merges when the store can and checks health reads
// are unchanged by them.
func optimizeHealth(t *testing.T, s store.Store, servers ...string) {
	t.Helper()
	o, ok := s.(Optimizer)
	if !ok {
		return
	}
	before := readHealth(t, s, servers...)
	must(t, "Optimize", o.Optimize(ctx(t)))
	equal(t, "health reads after Optimize", readHealth(t, s, servers...), before)
}

func testHealthRoundTrip(t *testing.T, s store.Store) {
	big := `{"instructions":"` + strings.Repeat("ünïcödé 🚀 日本語 \\\" ", 64*1024/32+1) + `"}`
	for len(big) < 64*1024 {
		big += " "
	}
	cases := []store.HealthCheck{
		hc("c-plain", "io.github.x/plain", "https://x.example/mcp", at(0), "ok"),
		func() store.HealthCheck {
			c := hc("c-ünï", "io.github.ünï/cödé-日本語", "https://ünï.example/日本語?q='\"`", at(time.Second), "handshake_failed")
			c.ErrorClass, c.HTTPStatus, c.LatencyMS, c.AuthKind = "protocol_error", 500, 1234.5678, "unknown"
			c.Transport, c.ProtocolVersion, c.ToolCount = "sse", "2024-11-05", 1<<20
			c.Check = `{"error_message":"emoji 🚀, quotes ' \" ` + "`" + `, backslash \\, newline\n tab\t"}`
			return c
		}(),
		func() store.HealthCheck {
			c := hc("c-big", "big/check", "https://big.example/mcp", at(2*time.Second), "ok")
			c.Check = big
			return c
		}(),
		// Zero values everywhere but the key.
		{ID: "c-zero", Server: "zero/values", ObservedAt: at(3 * time.Second)},
		hc("c-auth", "auth/server", "https://auth.example/mcp", at(4*time.Second), "auth_required"),
	}
	if len(big) < 64*1024 {
		t.Fatalf("test bug: big check is %d bytes", len(big))
	}
	insertHealth(t, s, cases...)
	check := func(phase string) {
		for _, want := range cases {
			got := healthChecks(t, s, store.HealthQuery{Server: want.Server})
			equal(t, phase+": HealthChecks("+want.Server+")", got, normHealth(want))
			if len(got) == 1 && got[0].Check != want.Check {
				t.Errorf("%s: check JSON of %s: %d bytes back, want %d", phase, want.ID, len(got[0].Check), len(want.Check))
			}
			equal(t, phase+": LatestHealth("+want.Server+")", latestHealth(t, s, want.Server), normHealth(want))
		}
	}
	check("first read")
	optimizeHealth(t, s, "big/check")
	check("after optimize")
}

func testHealthTimes(t *testing.T, s store.Store) {
	cases := []struct {
		in, want time.Time
	}{
		{time.Date(2024, 12, 31, 23, 59, 59, 999_999_999, time.FixedZone("Z", -3*3600)), time.Date(2025, 1, 1, 2, 59, 59, 999_000_000, time.UTC)},
		{time.Date(2025, 6, 1, 0, 0, 0, 1_000_000, time.UTC), time.Date(2025, 6, 1, 0, 0, 0, 1_000_000, time.UTC)},
		{time.Date(1969, 7, 20, 20, 17, 40, 500_700_000, time.UTC), time.Date(1969, 7, 20, 20, 17, 40, 500_000_000, time.UTC)},
		{time.Date(2200, 1, 1, 0, 0, 0, 42_000_000, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 42_000_000, time.UTC)},
		{time.Time{}, time.Time{}},
	}
	now := time.Now()
	cases = append(cases, struct{ in, want time.Time }{now, time.UnixMilli(now.UnixMilli()).UTC()})
	for i, c := range cases {
		server := fmt.Sprintf("t/%d", i)
		insertHealth(t, s, hc("id-"+server, server, "https://t.example/", c.in, "ok"))
		for what, got := range map[string][]store.HealthCheck{
			"HealthChecks": healthChecks(t, s, store.HealthQuery{Server: server}),
			"LatestHealth": latestHealth(t, s, server),
		} {
			if len(got) != 1 || !got[0].ObservedAt.Equal(c.want) || got[0].ObservedAt.Location() != time.UTC {
				t.Errorf("%s of time %v: got %s, want one check at %v UTC", what, c.in, show(got), c.want)
			}
		}
		// Since is compared at millisecond precision, in UTC, inclusive.
		if !c.in.IsZero() {
			equal(t, fmt.Sprintf("since = the check's own time %v", c.in),
				len(healthChecks(t, s, store.HealthQuery{Server: server, Since: c.in})), 1)
			equal(t, fmt.Sprintf("since 1ms after %v", c.in),
				len(healthChecks(t, s, store.HealthQuery{Server: server, Since: store.Millis(c.in).Add(time.Millisecond)})), 0)
		}
	}
}

func testHealthIdempotent(t *testing.T, s store.Store) {
	checks := []store.HealthCheck{
		hc("h1", "a/one", "https://a.example/1", at(0), "ok"),
		hc("h2", "a/one", "https://a.example/1", at(time.Minute), "unreachable"),
		hc("h3", "a/one", "https://a.example/2", at(0), "auth_required"),
		hc("h4", "b/two", "https://b.example/", at(time.Second), "ok"),
	}
	servers := []string{"a/one", "b/two"}
	insertHealth(t, s, checks...)
	once := readHealth(t, s, servers...)
	equal(t, "health_checks count after one write", once.Count, int64(4))
	equal(t, "a/one history after one write", once.History["a/one"], normHealth(checks[1], checks[2], checks[0]))
	insertHealth(t, s, checks...)
	equal(t, "reads after a second identical write", readHealth(t, s, servers...), once)
	insertHealth(t, s, append(append([]store.HealthCheck{}, checks...), checks...)...)
	equal(t, "reads after a duplicated batch", readHealth(t, s, servers...), once)
	for _, c := range checks { // one check a batch
		insertHealth(t, s, c)
	}
	equal(t, "reads after single-row batches", readHealth(t, s, servers...), once)
	optimizeHealth(t, s, servers...)
	insertHealth(t, s, checks...) // after the merge, once more
	equal(t, "reads after a write following optimize", readHealth(t, s, servers...), once)
	must(t, "InsertHealthChecks(nil)", s.InsertHealthChecks(ctx(t), nil))
	must(t, "InsertHealthChecks(empty)", s.InsertHealthChecks(ctx(t), []store.HealthCheck{}))
	equal(t, "reads after empty batches", readHealth(t, s, servers...), once)
}

func testHealthLastWriteWins(t *testing.T, s store.Store) {
	first := hc("same", "a/x", "https://a.example/", at(0), "ok")
	second := hc("same", "a/x", "https://a.example/", at(0), "unreachable")
	second.Check = `{"second":true}`
	insertHealth(t, s, first)
	insertHealth(t, s, second)
	check := func(phase string, want ...store.HealthCheck) {
		t.Helper()
		equal(t, phase+": history", healthChecks(t, s, store.HealthQuery{Server: "a/x"}), normHealth(want...))
		equal(t, phase+": health_checks count", counts(t, s)["health_checks"], int64(len(want)))
	}
	check("separate batches", second)
	optimizeHealth(t, s, "a/x")
	check("after optimize", second)
	insertHealth(t, s, first) // a late replay of the first write is a newer write: it wins
	check("first written again", first)

	// Within one batch the last row of an id wins.
	third := hc("same", "a/x", "https://a.example/", at(0), "handshake_failed")
	other := hc("other", "a/x", "https://a.example/", at(time.Hour), "ok")
	insertHealth(t, s, third, other, second)
	check("one batch", other, second)

	// A rewrite that moves the id to another time or remote of the server
	// still leaves one row: the last written.
	moved := second
	moved.ObservedAt, moved.RemoteURL, moved.Outcome = at(2*time.Hour), "https://a.example/moved", "ok"
	insertHealth(t, s, moved)
	check("moved", moved, other)
	equal(t, "moved: latest", latestHealth(t, s, "a/x"), normHealth(other, moved))
	optimizeHealth(t, s, "a/x")
	check("moved after optimize", moved, other)
	back := moved
	back.ObservedAt, back.RemoteURL = at(0), "https://a.example/"
	insertHealth(t, s, back)
	check("moved back", other, back)
	equal(t, "moved back: latest", latestHealth(t, s, "a/x"), normHealth(other))
}

func testHealthChecksQuery(t *testing.T, s store.Store) {
	var all []store.HealthCheck // a/srv, newest first
	var batch []store.HealthCheck
	for i := 0; i < 120; i++ {
		c := hc(fmt.Sprintf("c%03d", i), "a/srv", fmt.Sprintf("https://a.example/%d", i%3), at(time.Duration(i)*time.Minute), "ok")
		batch = append(batch, c)
		all = append([]store.HealthCheck{c}, all...)
	}
	// Same millisecond as c119 (sub-ms apart): newest first, then id descending.
	tieLo := hc("c119-a", "a/srv", "https://a.example/tie", at(119*time.Minute).Add(200*time.Microsecond), "ok")
	tieHi := hc("c119-z", "a/srv", "https://a.example/tie", at(119*time.Minute).Add(-100*time.Microsecond), "unreachable")
	all = append([]store.HealthCheck{tieHi, tieLo}, all...) // "c119-z" > "c119-a" > "c119"
	batch = append(batch, tieLo, tieHi)
	others := []store.HealthCheck{
		hc("o1", "a/srv-other", "https://a.example/0", at(time.Hour), "ok"), // a name with a/srv as prefix
		hc("o2", "b/srv", "https://a.example/0", at(time.Hour), "ok"),
	}
	insertHealth(t, s, batch[:50]...) // two batches, out of order
	insertHealth(t, s, append(others, batch[50:]...)...)
	want := normHealth(all...)
	cases := []struct {
		name string
		q    store.HealthQuery
		want []store.HealthCheck
	}{
		{"limit 0 means the default", store.HealthQuery{Server: "a/srv"}, want[:store.DefaultLimit]},
		{"all, newest first, ties by id descending", store.HealthQuery{Server: "a/srv", Limit: 1000}, want},
		{"limit above max is capped", store.HealthQuery{Server: "a/srv", Limit: 1 << 30}, want},
		{"limit 3", store.HealthQuery{Server: "a/srv", Limit: 3}, want[:3]},
		{"limit 1", store.HealthQuery{Server: "a/srv", Limit: 1}, want[:1]},
		{"since is inclusive at ms", store.HealthQuery{Server: "a/srv", Since: store.Millis(at(117 * time.Minute)), Limit: 1000}, want[:5]},
		{"since with sub-ms digits", store.HealthQuery{Server: "a/srv", Since: at(117*time.Minute + 500*time.Microsecond), Limit: 1000}, want[:5]},
		{"since 1ms later", store.HealthQuery{Server: "a/srv", Since: store.Millis(at(117 * time.Minute)).Add(time.Millisecond), Limit: 1000}, want[:4]},
		{"since in another zone", store.HealthQuery{Server: "a/srv", Since: at(118 * time.Minute).In(time.FixedZone("Y", -7*3600)), Limit: 1000}, want[:4]},
		{"since and limit", store.HealthQuery{Server: "a/srv", Since: at(100 * time.Minute), Limit: 2}, want[:2]},
		{"since before all", store.HealthQuery{Server: "a/srv", Since: at(-time.Hour), Limit: 1000}, want},
		{"other server", store.HealthQuery{Server: "b/srv"}, normHealth(others[1])},
	}
	run := func(phase string) {
		for _, c := range cases {
			equal(t, phase+": "+c.name, healthChecks(t, s, c.q), c.want)
		}
		for _, q := range []store.HealthQuery{
			{Server: "no/such"}, {Server: "a/sr"}, {Server: "a/srv", Since: at(3 * time.Hour)},
		} {
			got := healthChecks(t, s, q)
			if got == nil || len(got) != 0 {
				t.Errorf("%s: HealthChecks(%+v) = %#v, want an empty, non-nil slice", phase, q, got)
			}
		}
	}
	run("first write")
	optimizeHealth(t, s, "a/srv", "b/srv")
	run("after optimize")
	if _, err := s.HealthChecks(ctx(t), store.HealthQuery{}); !errors.Is(err, store.ErrServerRequired) {
		t.Errorf("HealthChecks without a server: err = %v, want ErrServerRequired", err)
	}
	if _, err := s.LatestHealth(ctx(t), ""); !errors.Is(err, store.ErrServerRequired) {
		t.Errorf("LatestHealth without a server: err = %v, want ErrServerRequired", err)
	}
}

func testLatestHealth(t *testing.T, s store.Store) {
	const srv = "io.github.x/multi"
	r1 := "https://one.example/mcp"
	r2 := "https://two.example/sse"
	r3 := "https://three.example/mcp"
	old1 := hc("k-old1", srv, r1, at(0), "ok")
	new1 := hc("k-new1", srv, r1, at(time.Hour), "unreachable") // newest of r1 even though not ok
	mid1 := hc("k-mid1", srv, r1, at(30*time.Minute), "ok")     // arrives last, older: ignored
	a2 := hc("k-a2", srv, r2, at(2*time.Hour), "ok")            // tie on the ms with b2: greater id wins
	b2 := hc("k-b2", srv, r2, at(2*time.Hour).Add(400*time.Microsecond), "auth_required")
	z2 := hc("k-0", srv, r2, at(time.Hour), "ok")
	only3 := hc("k-3", srv, r3, at(-time.Hour), "auth_required")
	elsewhere := hc("k-else", "io.github.x/other", r1, at(5*time.Hour), "ok") // same URL, other server
	insertHealth(t, s, old1, b2)
	insertHealth(t, s, new1, z2, elsewhere)
	insertHealth(t, s, a2, only3)
	insertHealth(t, s, mid1)
	want := normHealth(new1, only3, b2) // ordered by remote URL: one < three < two
	check := func(phase string) {
		equal(t, phase+": LatestHealth", latestHealth(t, s, srv), want)
		equal(t, phase+": LatestHealth other server", latestHealth(t, s, "io.github.x/other"), normHealth(elsewhere))
		for _, sv := range []string{"no/such", "io.github.x/mult"} {
			got := latestHealth(t, s, sv)
			if got == nil || len(got) != 0 {
				t.Errorf("%s: LatestHealth(%q) = %#v, want an empty, non-nil slice", phase, sv, got)
			}
		}
	}
	check("first read")
	optimizeHealth(t, s, srv)
	check("after optimize")
	// A newer check of one remote replaces only that remote's row.
	newest2 := hc("k-newest2", srv, r2, at(3*time.Hour), "ok")
	insertHealth(t, s, newest2)
	want = normHealth(new1, only3, newest2)
	check("after a newer check")
}
