package probe

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// hostTargets is n remotes of many servers on one host, plus noise: hosts
// with one to five remotes each, which must not disturb it.
func hostTargets(n int) []Target {
	var ts []Target
	for i := range n {
		ts = append(ts, Target{Server: fmt.Sprintf("ai.gateway/server-%d", i%(n/3+1)), URL: fmt.Sprintf("https://mcp.gateway.example/%d/mcp", i), Transport: TransportStreamableHTTP})
	}
	for h := range 300 {
		for j := range 1 + h%5 {
			ts = append(ts, Target{Server: fmt.Sprintf("io.other/s%d", h), URL: fmt.Sprintf("https://h%d.example/mcp/%d", h, j)})
		}
	}
	return ts
}

// gaps returns the gaps between consecutive slots of offs on a circle of
// length interval (the last gap wraps into the next cycle).
func gaps(offs []time.Duration, interval time.Duration) []time.Duration {
	s := slices.Clone(offs)
	slices.Sort(s)
	var out []time.Duration
	for i := range s {
		next := interval + s[0]
		if i+1 < len(s) {
			next = s[i+1]
		}
		out = append(out, next-s[i])
	}
	return out
}

func hostOffsets(ts []Target, offs []time.Duration, host string) []time.Duration {
	var out []time.Duration
	for i, t := range ts {
		if targetHost(t.URL) == host {
			out = append(out, offs[i])
		}
	}
	return out
}

// 500 remotes on one host over 1 h: the minimum gap between consecutive
// probes of that host is interval/500 × 1 (7.2 s), less one nanosecond of
// integer division — factor 1 because the slots are placed exactly
// interval/n apart, not hashed. Hashing each remote, as before, puts the
// closest pair ~interval/n² apart (birthday spacing): the test shows that
// too, since it is the bunching this replaces.
func TestHostRemotesSpreadEvenly(t *testing.T) {
	const n, interval = 500, time.Hour
	ts := hostTargets(n)
	offs := Offsets(ts, interval)
	host := hostOffsets(ts, offs, "mcp.gateway.example")
	if len(host) != n {
		t.Fatalf("%d remotes on the host", len(host))
	}
	want := interval / n
	g := gaps(host, interval)
	if mn, mx := slices.Min(g), slices.Max(g); mn < want-time.Nanosecond || mx > want+time.Nanosecond {
		t.Fatalf("gaps between probes of one host span [%v, %v], want %v", mn, mx, want)
	}
	for _, o := range offs {
		if o < 0 || o >= interval {
			t.Fatalf("offset %v outside the interval", o)
		}
	}

	// In time, across cycle boundaries: the probes of the host over three
	// hours, consecutive ones never closer than the gap.
	t0 := time.Date(2026, 10, 1, 0, 17, 0, 0, time.UTC)
	var at []time.Time
	for _, o := range host {
		at = append(at, DueIn(o, interval, t0, t0.Add(3*interval))...)
	}
	slices.SortFunc(at, time.Time.Compare)
	if len(at) != 3*n {
		t.Fatalf("%d probes in 3 h, want %d", len(at), 3*n)
	}
	for i := 1; i < len(at); i++ {
		if d := at[i].Sub(at[i-1]); d < want-time.Nanosecond {
			t.Fatalf("probes %d and %d of the host %v apart, want ≥ %v", i-1, i, d, want)
		}
	}

	// What a hash per remote gave: the closest pair far under the gap.
	var hashed []time.Duration
	for _, tg := range ts[:n] {
		hashed = append(hashed, time.Duration(slotHash(tg.Server, tg.URL)%uint64(interval)))
	}
	hg := slices.Min(gaps(hashed, interval))
	t.Logf("one host, %d remotes, 1 h: min gap %v spread evenly, %v hashed per remote", n, slices.Min(g), hg)
}

func TestOffsetsOneRemoteHost(t *testing.T) {
	ts := []Target{{Server: "a/b", URL: "https://solo.example/mcp"}}
	off := Offsets(ts, time.Hour)[0]
	if off < 0 || off >= time.Hour {
		t.Fatalf("offset %v", off)
	}
	if again := Offsets(ts, time.Hour)[0]; again != off {
		t.Fatal("not deterministic")
	}
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	if d := DueIn(off, time.Hour, t0, t0.Add(2*time.Hour)); len(d) != 2 || d[1].Sub(d[0]) != time.Hour {
		t.Fatalf("slots %v", d)
	}
	// The host key ignores case and the default port, and keeps others.
	for _, same := range []string{"https://SOLO.example/mcp", "https://solo.example:443/other"} {
		if targetHost(same) != "solo.example" {
			t.Fatalf("%s → %s", same, targetHost(same))
		}
	}
	if targetHost("https://solo.example:8443/mcp") == "solo.example" {
		t.Fatal("a non-default port is another host")
	}
}

// The offsets do not depend on the order targets are listed in (a restart,
// a different page order), and a host gaining or losing a remote moves each
// of its other slots by at most one gap and no other host's slot at all.
func TestOffsetsStable(t *testing.T) {
	const n, interval = 500, time.Hour
	ts := hostTargets(n)
	offs := Offsets(ts, interval)
	key := func(t Target) string { return t.Server + " " + t.URL }
	byKey := map[string]time.Duration{}
	for i, tg := range ts {
		byKey[key(tg)] = offs[i]
	}

	shuffled := slices.Clone(ts)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for i, o := range Offsets(shuffled, interval) {
		if byKey[key(shuffled[i])] != o {
			t.Fatalf("%s moved when the list was reordered", key(shuffled[i]))
		}
	}

	circ := func(a, b time.Duration) time.Duration {
		d := (a - b + interval) % interval
		return min(d, interval-d)
	}
	for _, change := range []struct {
		name string
		ts   []Target
		gap  time.Duration
	}{
		{"added", append(slices.Clone(ts), Target{Server: "ai.gateway/new", URL: "https://mcp.gateway.example/new/mcp"}), interval / (n + 1)},
		{"removed", slices.Delete(slices.Clone(ts), 7, 8), interval / n},
	} {
		for i, o := range Offsets(change.ts, interval) {
			tg := change.ts[i]
			old, ok := byKey[key(tg)]
			if !ok {
				continue
			}
			moved := circ(o, old)
			if targetHost(tg.URL) != "mcp.gateway.example" && moved != 0 {
				t.Fatalf("%s: %s on another host moved by %v", change.name, key(tg), moved)
			}
			if moved > change.gap+time.Nanosecond {
				t.Fatalf("%s: %s moved by %v, more than one gap (%v)", change.name, key(tg), moved, change.gap)
			}
		}
	}
}
