package toolfinder

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/forum-mcp/forum/schema"
)

func TestNormalizeRepoURL(t *testing.T) {
	cases := map[string]string{
		"https://github.com/Acme/Weather":                   "github.com/acme/weather",
		"https://github.com/acme/weather.git":               "github.com/acme/weather",
		"https://github.com/acme/weather/":                  "github.com/acme/weather",
		"http://www.github.com/acme/weather.git/":           "github.com/acme/weather",
		"git+https://github.com/acme/weather.git":           "github.com/acme/weather",
		"git@github.com:acme/weather.git":                   "github.com/acme/weather",
		"https://github.com/acme/weather/tree/main/servers": "github.com/acme/weather",
		"https://github.com/acme/weather#readme":            "github.com/acme/weather",
		"https://gitlab.com/group/sub/proj/-/tree/main/x":   "gitlab.com/group/sub/proj",
		"":     "",
		"   ":  "",
		"none": "",
	}
	for in, want := range cases {
		if got := schema.NormalizeRepoURL(in); got != want {
			t.Errorf("schema.NormalizeRepoURL(%q) = %q, want %q", in, got, want)
		}
	}
	if o, n := schema.RepoOwnerName("https://github.com/Acme/Weather.git"); o != "acme" || n != "weather" {
		t.Errorf("RepoOwnerName = %q %q", o, n)
	}
}

func TestNormalizeRemoteURL(t *testing.T) {
	same := []string{"https://MCP.acme.com/mcp", "https://mcp.acme.com:443/mcp/", "https://mcp.acme.com/mcp#x"}
	for _, u := range same {
		if got := NormalizeRemoteURL(u); got != "https://mcp.acme.com/mcp" {
			t.Errorf("%q → %q", u, got)
		}
	}
	if NormalizeRemoteURL("https://mcp.acme.com/MCP") == NormalizeRemoteURL("https://mcp.acme.com/mcp") {
		t.Error("paths are case-sensitive")
	}
}

func TestPopulation(t *testing.T) {
	var es []PopEntry
	// 5 clones in one namespace, 4 in another
	for i := 0; i < 5; i++ {
		es = append(es, PopEntry{Name: "com.spam/s" + strconv.Itoa(i), Description: "An  MCP server for   the Thing API"})
	}
	for i := 0; i < 4; i++ {
		es = append(es, PopEntry{Name: "com.four/s" + strconv.Itoa(i), Description: "an mcp server for the thing api"})
	}
	// 3 entries on one endpoint, 2 on another
	for i := 0; i < 3; i++ {
		es = append(es, PopEntry{Name: "com.ep/e" + strconv.Itoa(i), Description: "e" + strconv.Itoa(i), RemoteURLs: []string{"https://Shared.example.com/mcp/"}})
	}
	for i := 0; i < 2; i++ {
		es = append(es, PopEntry{Name: "com.ep2/e" + strconv.Itoa(i), RemoteURLs: []string{"https://two.example.com/mcp"}})
	}
	// repo siblings: canonical "weather" + two others; and a repo with no canonical
	es = append(es,
		PopEntry{Name: "com.acme/weather", RepoURL: "https://github.com/acme/Weather"},
		PopEntry{Name: "com.acme/weather-alerts", RepoURL: "https://github.com/acme/weather.git"},
		PopEntry{Name: "io.github.acme/radar", RepoURL: "https://github.com/acme/weather/tree/main/radar"},
		PopEntry{Name: "com.mono/a", RepoURL: "https://github.com/mono/tools"},
		PopEntry{Name: "com.mono/b", RepoURL: "https://github.com/mono/tools"},
		// two names both matching the repo name: the first is canonical
		PopEntry{Name: "com.x/dup", RepoURL: "https://github.com/x/dup"},
		PopEntry{Name: "io.github.x/dup", RepoURL: "https://github.com/x/dup"},
	)
	for i := 0; i < 101; i++ {
		es = append(es, PopEntry{Name: "com.bulk/b" + strconv.Itoa(i), Description: "bulk " + strconv.Itoa(i)})
	}
	p := NewPopulation(es)
	check := func(name string, want Context) {
		t.Helper()
		if got := p.Context(name); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	check("com.spam/s0", Context{NamespaceSize: 5, ClonedDescription: true, ClonedCount: 5})
	check("com.four/s0", Context{NamespaceSize: 4, ClonedCount: 4})
	check("com.ep/e0", Context{NamespaceSize: 3, ClonedCount: 1, SharedEndpoint: true, SharedEndpointCount: 3})
	check("com.ep2/e0", Context{NamespaceSize: 2, SharedEndpointCount: 2})
	check("com.acme/weather", Context{NamespaceSize: 2, Siblings: Siblings{RepoKey: "github.com/acme/weather", N: 3, Canonical: true, HasCanonical: true}})
	check("com.acme/weather-alerts", Context{NamespaceSize: 2, Siblings: Siblings{RepoKey: "github.com/acme/weather", N: 3, HasCanonical: true}})
	check("io.github.acme/radar", Context{NamespaceSize: 1, Siblings: Siblings{RepoKey: "github.com/acme/weather", N: 3, HasCanonical: true}})
	check("com.mono/a", Context{NamespaceSize: 2, Siblings: Siblings{RepoKey: "github.com/mono/tools", N: 2}})
	check("com.x/dup", Context{NamespaceSize: 1, Siblings: Siblings{RepoKey: "github.com/x/dup", N: 2, Canonical: true, HasCanonical: true}})
	check("io.github.x/dup", Context{NamespaceSize: 1, Siblings: Siblings{RepoKey: "github.com/x/dup", N: 2, HasCanonical: true}})
	if c := p.Context("com.bulk/b0"); c.NamespaceSize != 101 {
		t.Errorf("bulk namespace size %d", c.NamespaceSize)
	}

	// Sibling star splitting end to end: 9999 stars (full 10) on acme/weather.
	for name, want := range map[string]float64{"com.acme/weather": 10, "com.acme/weather-alerts": 3, "com.mono/a": 3} {
		in := remoteOK()
		in.Name = name
		in.Context = p.Context(name)
		if got := comp(Score(in, now), CompAdoption); got != want {
			t.Errorf("%s adoption %v, want %v", name, got, want)
		}
	}
	// Stars 99 (full 5) on a two-sibling repo with no canonical → 2.5 each.
	in := remoteOK()
	in.Name, in.GitHub.Stars, in.Context = "com.mono/b", 99, p.Context("com.mono/b")
	if got := comp(Score(in, now), CompAdoption); got != 2.5 {
		t.Errorf("no canonical: %v", got)
	}
}

func TestPopulationFromEntries(t *testing.T) {
	es := []schema.Entry{
		{Server: schema.ServerDetail{Name: "com.a/x", Description: "d", Repository: &schema.Repository{URL: "https://github.com/a/x"},
			Remotes: []schema.Remote{{URL: "https://a/mcp"}}}, Meta: schema.OfficialMeta{IsLatest: true}},
		{Server: schema.ServerDetail{Name: "com.a/y"}, Meta: schema.OfficialMeta{IsLatest: false}},
		{Server: schema.ServerDetail{Name: "com.a/z"}, Meta: schema.OfficialMeta{IsLatest: true, Status: "deleted"}},
	}
	p := NewPopulationFromEntries(es)
	if c := p.Context("com.a/x"); c.NamespaceSize != 1 || c.Siblings.N != 1 || c.SharedEndpointCount != 1 {
		t.Fatalf("%+v", c)
	}
}

func TestLeaderboard(t *testing.T) {
	rows := []Ranked{
		{Name: "com.a/one", Score: 90, Categories: []string{"databases"}},
		{Name: "com.a/two", Score: 85, Categories: []string{"databases"}},
		{Name: "com.a/three", Score: 95, Categories: []string{"databases"}},
		{Name: "com.b/x", Score: 85, Categories: []string{"databases", "ai-ml"}},
		{Name: "com.b/flagged", Score: 99, Flags: []string{FlagTestOrDemo}, Categories: []string{"databases"}},
		{Name: "com.c/y", Score: 85, Categories: []string{"search-web"}},
	}
	orig := append([]Ranked(nil), rows...)
	got := Leaderboard(rows, "", 0)
	names := func(rs []Ranked) []string {
		var n []string
		for _, r := range rs {
			n = append(n, r.Name)
		}
		return n
	}
	// ≤ 2 per namespace, unflagged only, score desc, ties by name
	want := []string{"com.a/three", "com.a/one", "com.b/x", "com.c/y"}
	if !reflect.DeepEqual(names(got), want) {
		t.Errorf("leaderboard %v, want %v", names(got), want)
	}
	if got := Leaderboard(rows, "databases", 2); !reflect.DeepEqual(names(got), []string{"com.a/three", "com.a/one"}) {
		t.Errorf("databases top 2: %v", names(got))
	}
	if got := Leaderboard(rows, "ai-ml", 10); !reflect.DeepEqual(names(got), []string{"com.b/x"}) {
		t.Errorf("ai-ml: %v", names(got))
	}
	if !reflect.DeepEqual(rows, orig) {
		t.Error("Leaderboard modified its input")
	}
}

func TestSponsored(t *testing.T) {
	matches := []Ranked{{Name: "com.a/low", Score: 49}, {Name: "com.b/ok", Score: 50}, {Name: "com.c/top", Score: 80}}
	orig := append([]Ranked(nil), matches...)
	if got := Sponsored(matches, []string{"com.a/low", "com.b/ok", "com.c/top"}); len(got) != 1 || got[0].Name != "com.b/ok" {
		t.Errorf("got %+v, want only com.b/ok (first candidate scoring >= 50)", got)
	}
	if got := Sponsored(matches, []string{"com.a/low"}); len(got) != 0 {
		t.Errorf("a server under 50 was sponsored: %+v", got)
	}
	if got := Sponsored(matches, []string{"com.z/not-a-match"}); len(got) != 0 {
		t.Errorf("non-match sponsored: %+v", got)
	}
	if !reflect.DeepEqual(matches, orig) {
		t.Error("Sponsored changed the organic list")
	}
	if RankMultiplier(true, OutcomeUnreachable) != 0.425 || RankMultiplier(false, OutcomeOK) != 1 || RankMultiplier(false, OutcomeHandshakeFailed) != 0.85 {
		t.Error("rank multipliers")
	}
}
