package store

import (
	"testing"
	"time"
)

// TestVersionRules pins the rules of versions.go on one server's rows, as
// of several times: the version demoted by the crawl that published the
// next one, the same version latest again, the window the kept sightings
// cannot see into, and the fallback that keeps a server listed.
func TestVersionRules(t *testing.T) {
	h := func(n int) time.Time { return time.Date(2026, 1, 1, n, 0, 0, 0, time.UTC) }
	row := func(version, sha string, first, last int, latest bool) Record {
		return Record{Name: "a/b", Version: version, ContentSHA256: sha, ObservedAt: h(first), LastObservedAt: h(last), IsLatest: latest, Status: sha}
	}
	// v1 latest at 0; at 1 v2 is published and v1 demoted; at 2 v1 is latest
	// again and v2 not; at 3 a full crawl sees that unchanged.
	rows := []Record{
		row("1", "v1-latest", 0, 3, true),
		row("1", "v1-demoted", 1, 1, false),
		row("2", "v2-latest", 1, 1, true),
		row("2", "v2-demoted", 2, 3, false),
	}
	for _, c := range []struct {
		at   int
		want string
	}{
		{0, "v1-latest"}, {1, "v2-latest"}, // demoted by the crawl that published v2
		{2, "v1-latest"}, // the kept sightings do not show v1 back at 2; the fallback does
		{3, "v1-latest"}, {9, "v1-latest"},
	} {
		got, ok := LatestOfHistory(rows, h(c.at))
		if !ok || got.ContentSHA256 != c.want {
			t.Errorf("as of %d: %q (%v), want %s", c.at, got.ContentSHA256, ok, c.want)
		}
	}
	if _, ok := LatestOfHistory(rows, h(0).Add(-time.Millisecond)); ok {
		t.Error("a server is latest before its first sighting")
	}
	served := ServeVersions(rows)
	for i, r := range served {
		if r.IsLatest != (i == 0) {
			t.Errorf("served %s latest=%v", r.ContentSHA256, r.IsLatest)
		}
	}
	// Every row of a version carries the version's most recent status.
	if served[1].Status != "v1-latest" || served[2].Status != "v2-demoted" || served[3].Status != "v2-demoted" {
		t.Errorf("served statuses %q %q %q", served[1].Status, served[2].Status, served[3].Status)
	}

	// A sole version demoted with no other latest stays what the latest
	// view serves: the most recently sighted isLatest content.
	lone := []Record{row("1", "latest", 0, 0, true), row("1", "demoted", 1, 1, false)}
	if got, ok := LatestOfHistory(lone, h(5)); !ok || got.ContentSHA256 != "latest" {
		t.Errorf("lone demoted version: %q (%v)", got.ContentSHA256, ok)
	}
	if s := ServeVersions(lone); !s[0].IsLatest || s[1].IsLatest {
		t.Errorf("lone demoted version served %+v", s)
	}
}
