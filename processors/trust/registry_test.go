package trust

import (
	"testing"
	"time"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

func TestNameFamily(t *testing.T) {
	cases := map[string]string{
		"io.github.user1/weather-mcp-2": "io.github.user/weather",
		"io.github.user2/weather-mcp":   "io.github.user/weather",
		"io.github.user3/mcp-weather":   "io.github.user/weather",
		"com.acme/Weather":              "com.acme/weather",
		"com.acme/forecast":             "com.acme/forecast",
	}
	for in, want := range cases {
		if got := NameFamily(in); got != want {
			t.Errorf("NameFamily(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNamespaceOwnerMismatch(t *testing.T) {
	cases := []struct {
		name, url, owner string
		want             bool
	}{
		{"io.github.alice/x", "https://github.com/alice/x", "", false},
		{"io.github.Alice/x", "https://github.com/ALICE/x.git", "", false},
		{"io.github.alice/x", "https://github.com/bob/x", "", true},
		{"io.github.alice/x", "https://github.com/alice/x", "bob", true}, // resolved owner wins (transfer)
		{"com.stripe/mcp", "https://github.com/stripe/agent-toolkit", "", false},
		{"io.github.alice/x", "https://gitlab.com/bob/x", "", false},
		{"io.github.alice/x", "", "", false},
	}
	for _, c := range cases {
		if got := NamespaceOwnerMismatch(c.name, c.url, c.owner); got != c.want {
			t.Errorf("%s %s %s: %v, want %v", c.name, c.url, c.owner, got, c.want)
		}
	}
}

func TestRegistryFacts(t *testing.T) {
	w := method.Embedded().Weights
	day := time.Date(2026, 10, 20, 3, 0, 0, 0, time.UTC)
	ls := []Listing{
		// owner cluster: three same-day listings on repos of one owner
		{Name: "io.github.q/a", RepoURL: "https://github.com/quartz/a", PublishedAt: day},
		{Name: "io.github.q/b", RepoURL: "https://github.com/quartz/b", PublishedAt: day.Add(5 * time.Hour)},
		{Name: "io.github.q/c", RepoURL: "https://github.com/quartz/c", PublishedAt: day.Add(20 * time.Hour)},
		// family cluster across numbered namespaces, no repos
		{Name: "io.github.u1/fx-mcp", PublishedAt: day},
		{Name: "io.github.u2/fx-mcp", PublishedAt: day},
		{Name: "io.github.u3/mcp-fx", PublishedAt: day},
		// same owner, but the third listing is the next UTC day: no cluster
		{Name: "com.v/a", RepoURL: "https://github.com/vendor/a", PublishedAt: day},
		{Name: "com.v/b", RepoURL: "https://github.com/vendor/b", PublishedAt: day},
		{Name: "com.v/c", RepoURL: "https://github.com/vendor/c", PublishedAt: day.Add(24 * time.Hour)},
		// one repo, two servers (subfolder spelling ignored)
		{Name: "com.mono/one", RepoURL: "https://github.com/mono/repo", PublishedAt: day.Add(-48 * time.Hour)},
		{Name: "com.mono/two", RepoURL: "https://github.com/Mono/repo/tree/main/two", PublishedAt: day.Add(-72 * time.Hour)},
	}
	f := RegistryFacts(w, ls)
	for _, n := range []string{"io.github.q/a", "io.github.q/b", "io.github.q/c", "io.github.u1/fx-mcp", "io.github.u2/fx-mcp", "io.github.u3/mcp-fx"} {
		if !f[n].CoRegistrationCluster || f[n].ClusterSize != 3 {
			t.Errorf("%s: %+v, want in a cluster of 3", n, f[n])
		}
	}
	for _, n := range []string{"com.v/a", "com.v/b", "com.v/c", "com.mono/one"} {
		if f[n].CoRegistrationCluster {
			t.Errorf("%s: unexpected cluster %+v", n, f[n])
		}
	}
	if f["com.mono/one"].RepoServers != 2 || f["com.mono/two"].RepoServers != 2 || f["com.v/a"].RepoServers != 1 {
		t.Errorf("repo servers: %+v %+v", f["com.mono/one"], f["com.v/a"])
	}
	if !f["io.github.q/a"].NamespaceOwnerMismatch {
		t.Error("io.github.q on quartz's repo is a namespace/owner mismatch")
	}
}

func TestOwnerBurst(t *testing.T) {
	w := method.Embedded().Weights
	times := func(n int, ageH float64) []time.Time {
		var out []time.Time
		for i := 0; i < n; i++ {
			out = append(out, now.Add(-time.Duration(ageH*float64(time.Hour))))
		}
		return out
	}
	cat := func(ts ...[]time.Time) []time.Time {
		var out []time.Time
		for _, t := range ts {
			out = append(out, t...)
		}
		return out
	}
	cases := []struct {
		name      string
		ts        []time.Time
		recurring bool
		over      int
		first     bool
		per       []int
	}{
		{"quiet", times(3, 1), false, 0, false, []int{0, 0, 0, 0, 0, 0, 3}},
		{"one window of 10", times(10, 30), false, 1, false, []int{0, 0, 0, 0, 0, 10, 0}},
		{"two windows of 10", cat(times(10, 30), times(10, 100)), true, 2, false, []int{0, 0, 10, 0, 0, 10, 0}},
		{"9 and 10 is not recurring", cat(times(9, 30), times(10, 100)), false, 1, false, []int{0, 0, 10, 0, 0, 9, 0}},
		{"20 in the current window", times(20, 2), false, 1, true, []int{0, 0, 0, 0, 0, 0, 20}},
		{"19 in the current window", times(19, 2), false, 1, false, []int{0, 0, 0, 0, 0, 0, 19}},
		{"older than 7 windows ignored", cat(times(10, 24*7+1), times(10, 24*8)), false, 0, false, []int{0, 0, 0, 0, 0, 0, 0}},
		{"future ignored", times(25, -1), false, 0, false, []int{0, 0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		got := OwnerBurstOf(w, c.ts, now)
		if got.RecurringBurst != c.recurring || got.WindowsOverThreshold != c.over || got.FirstWindowBurst != c.first || !equalInts(got.PerWindowNew, c.per) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	// Both ends of every window: (now−24h·(i+1), now−24h·i]. An event at
	// now is in the current window, one exactly 24 h old in the one before,
	// one exactly 7·24 h old in none; a nanosecond inside an end counts.
	day := 24 * time.Hour
	for _, c := range []struct {
		name string
		at   time.Time
		per  []int
	}{
		{"at now: current window", now, []int{0, 0, 0, 0, 0, 0, 1}},
		{"just after now: not yet happened", now.Add(time.Nanosecond), []int{0, 0, 0, 0, 0, 0, 0}},
		{"just inside now−24h: current window", now.Add(-day + time.Nanosecond), []int{0, 0, 0, 0, 0, 0, 1}},
		{"exactly now−24h: the older window", now.Add(-day), []int{0, 0, 0, 0, 0, 1, 0}},
		{"exactly now−48h: two windows back", now.Add(-2 * day), []int{0, 0, 0, 0, 1, 0, 0}},
		{"just inside now−7·24h: the oldest window", now.Add(-7*day + time.Nanosecond), []int{1, 0, 0, 0, 0, 0, 0}},
		{"exactly now−7·24h: in no window", now.Add(-7 * day), []int{0, 0, 0, 0, 0, 0, 0}},
	} {
		if got := OwnerBurstOf(w, []time.Time{c.at}, now); !equalInts(got.PerWindowNew, c.per) {
			t.Errorf("window ends, %s: per-window %v, want %v", c.name, got.PerWindowNew, c.per)
		}
	}
	// 20 registrations exactly 24 h ago are a burst of the previous window,
	// not of the current one.
	if got := OwnerBurstOf(w, times(20, 24), now); got.FirstWindowBurst {
		t.Errorf("20 events exactly 24 h old flagged a first-window burst: %+v", got)
	}

	var evs []schema.DriftEvent
	for _, ts := range times(20, 1) {
		evs = append(evs, schema.DriftEvent{Server: "com.burst/x", Kind: schema.KindNewServer, ObservedAt: ts})
	}
	evs = append(evs, schema.DriftEvent{Server: "com.calm/x", Kind: schema.KindNewServer, ObservedAt: now})
	m := OwnerBursts(w, evs, now)
	if len(m) != 1 || !m["com.burst"].FirstWindowBurst {
		t.Fatalf("OwnerBursts = %+v, want only com.burst", m)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
