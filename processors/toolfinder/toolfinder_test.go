package toolfinder

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ago(d float64) time.Time { return now.Add(-time.Duration(d * 24 * float64(time.Hour))) }

func bp(b bool) *bool { return &b }

// remoteOK is a healthy remote server with a resolved, licensed repo, gate open.
func remoteOK() Input {
	tools := make([]Tool, 10)
	for i := range tools {
		tools[i] = Tool{Name: "t" + strconv.Itoa(i), Description: "Does a well described useful thing", HasInputSchema: true}
	}
	return Input{
		Name: "com.acme/weather", Description: "Weather forecasts for any city",
		Remotes:   []Remote{{Type: "streamable-http", URL: "https://mcp.acme.com/mcp"}},
		RepoURL:   "https://github.com/acme/weather",
		UpdatedAt: ago(5),
		Health: Health{Outcome: OutcomeOK, InitializeLatencyMS: 120, ToolsListed: true, Tools: tools,
			Check: &Evidence{Kind: "health_check", ID: "hc-1", ObservedAt: ago(0.1)}},
		GitHub: GitHub{Resolved: true, Stars: 9999, PushedAt: ago(3), LicenseSPDX: "MIT", OwnerLogin: "acme",
			Observation: &Evidence{Kind: "github_repo", ID: "gh-1", ObservedAt: ago(0.5)}},
		GateOpen: true,
		Context:  Context{NamespaceSize: 1, Siblings: Siblings{N: 1}},
	}
}

func localOnly() Input {
	in := remoteOK()
	in.Remotes = nil
	in.Packages = []Package{{RegistryType: "npm", Identifier: "@acme/weather"}}
	in.Health = Health{Outcome: OutcomeNotChecked}
	return in
}

func comp(r Result, name string) float64 {
	for _, c := range r.Components {
		if c.Name == name {
			return c.Score
		}
	}
	panic("no component " + name)
}

func TestHealthLatency(t *testing.T) {
	for _, c := range []struct{ l, want int }{
		{0, 25}, {250, 25}, {499, 25}, {500, 24}, {749, 24}, {750, 23}, {2249, 18}, {2250, 17}, {2600, 17}, {10000, 17},
	} {
		in := remoteOK()
		in.Health.InitializeLatencyMS = c.l
		if got := comp(Score(in, now), CompHealth); got != float64(c.want) {
			t.Errorf("L=%d: health %v, want %d", c.l, got, c.want)
		}
	}
}

func TestHealthOutcomes(t *testing.T) {
	for _, c := range []struct {
		outcome string
		local   bool
		want    float64
	}{
		{OutcomeAuthRequired, false, 18}, {OutcomeHandshakeFailed, false, 5}, {OutcomeUnreachable, false, 0},
		{OutcomeNotChecked, false, 0}, {"", false, 0}, {OutcomeNotChecked, true, 0},
	} {
		in := remoteOK()
		if c.local {
			in = localOnly()
		}
		in.Health.Outcome = c.outcome
		if got := comp(Score(in, now), CompHealth); got != c.want {
			t.Errorf("%q local=%v: %v, want %v", c.outcome, c.local, got, c.want)
		}
	}
}

func TestAuthEase(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Input)
		want float64
	}{
		{"no auth needed", func(*Input) {}, 15},
		{"Bearer challenge", func(in *Input) {
			in.Health = Health{Outcome: OutcomeAuthRequired, HTTPStatus: 401, ChallengeScheme: "Bearer"}
		}, 12},
		{"resource_metadata pointer", func(in *Input) {
			in.Health = Health{Outcome: OutcomeAuthRequired, HTTPStatus: 401, ResourceMetadataURL: "https://x/.well-known/oauth-protected-resource"}
		}, 12},
		{"protected-resource metadata found", func(in *Input) {
			in.Health = Health{Outcome: OutcomeAuthRequired, HTTPStatus: 401, ProtectedResource: true}
		}, 12},
		{"401 without Bearer", func(in *Input) {
			in.Health = Health{Outcome: OutcomeAuthRequired, HTTPStatus: 401, ChallengeScheme: "Basic"}
		}, 6},
		{"403 no challenge", func(in *Input) { in.Health = Health{Outcome: OutcomeAuthRequired, HTTPStatus: 403} }, 6},
		{"required header, unprobed", func(in *Input) {
			in.Health = Health{}
			in.Remotes[0].Headers = []Header{{Name: "X-API-Key", IsRequired: bp(true)}}
		}, 6},
		{"secret header, unreachable", func(in *Input) {
			in.Health = Health{Outcome: OutcomeUnreachable}
			in.Remotes[0].Headers = []Header{{Name: "Authorization", IsSecret: bp(true)}}
		}, 6},
		{"optional header is not static auth", func(in *Input) {
			in.Health = Health{}
			in.Remotes[0].Headers = []Header{{Name: "X-Trace", IsRequired: bp(false)}}
		}, 4},
		{"unknown", func(in *Input) { in.Health = Health{Outcome: OutcomeHandshakeFailed} }, 4},
		{"local package", func(in *Input) { *in = localOnly() }, 9},
		{"local with secret env", func(in *Input) {
			*in = localOnly()
			in.Packages[0].Env = []EnvVar{{Name: "API_KEY", IsSecret: bp(true)}}
		}, 5},
		{"local with secret env required", func(in *Input) {
			*in = localOnly()
			in.Packages[0].Env = []EnvVar{{Name: "API_KEY", IsSecret: bp(true), IsRequired: bp(true)}}
		}, 5},
		{"local with optional secret env", func(in *Input) {
			*in = localOnly()
			in.Packages[0].Env = []EnvVar{{Name: "API_KEY", IsSecret: bp(true), IsRequired: bp(false)}}
		}, 9},
		{"local with non-secret required env", func(in *Input) {
			*in = localOnly()
			in.Packages[0].Env = []EnvVar{{Name: "REGION", IsRequired: bp(true)}}
		}, 9},
		{"neither remote nor package", func(in *Input) { in.Remotes, in.Packages = nil, nil }, 4},
	}
	for _, c := range cases {
		in := remoteOK()
		c.mod(&in)
		if got := comp(Score(in, now), CompAuthEase); got != c.want {
			t.Errorf("%s: auth ease %v, want %v", c.name, got, c.want)
		}
	}
}

func tools(n, described, schemas int) []Tool {
	out := make([]Tool, n)
	for i := range out {
		out[i].Name = "tool" + strconv.Itoa(i)
		if i < described {
			out[i].Description = strings.Repeat("x", 20)
		} else {
			out[i].Description = strings.Repeat("y", 19)
		}
		out[i].HasInputSchema = i < schemas
	}
	return out
}

func TestToolQuality(t *testing.T) {
	cases := []struct {
		name  string
		mod   func(*Input)
		want  float64
		probe map[string]float64
	}{
		// 4 + 5·1 + 3·1 + 3
		{"10 tools all good", func(*Input) {}, 15, nil},
		// 4 + 5·0.5 + 3·1 + 3 (20 chars counts, 19 does not)
		{"half described", func(in *Input) { in.Health.Tools = tools(10, 5, 10) }, 12.5, nil},
		// 4 + 5·0.25 + 3·0.75 + 3
		{"quarter described, 3/4 schemas", func(in *Input) { in.Health.Tools = tools(4, 1, 3) }, 10.5, nil},
		{"zero tools", func(in *Input) { in.Health.Tools = nil }, 7, nil},
		{"40 tools", func(in *Input) { in.Health.Tools = tools(40, 40, 40) }, 15, nil},
		{"41 tools", func(in *Input) { in.Health.Tools = tools(41, 41, 41) }, 13.5, nil},
		{"80 tools", func(in *Input) { in.Health.Tools = tools(80, 80, 80) }, 13.5, nil},
		{"81 tools", func(in *Input) { in.Health.Tools = tools(81, 81, 81) }, 12, nil},
		{"auth-gated neutral", func(in *Input) { in.Health = Health{Outcome: OutcomeAuthRequired, HTTPStatus: 401} }, 7.5, nil},
		{"tools/list failed", func(in *Input) { in.Health.ToolsListed = false }, 0, nil},
		{"unreachable", func(in *Input) { in.Health = Health{Outcome: OutcomeUnreachable} }, 0, nil},
		{"local only", func(in *Input) { *in = localOnly() }, 0, nil},
	}
	for _, c := range cases {
		in := remoteOK()
		c.mod(&in)
		if got := comp(Score(in, now), CompToolQuality); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: tool quality %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMaintenance(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Input)
		want float64
	}{
		{"pushed 3 d", func(*Input) {}, 15},
		{"pushed 29.9 d", func(in *Input) { in.GitHub.PushedAt = ago(29.9) }, 15},
		{"pushed 30 d", func(in *Input) { in.GitHub.PushedAt = ago(30) }, 12},
		{"pushed 89 d", func(in *Input) { in.GitHub.PushedAt = ago(89) }, 12},
		{"pushed 90 d", func(in *Input) { in.GitHub.PushedAt = ago(90) }, 8},
		{"pushed 180 d", func(in *Input) { in.GitHub.PushedAt = ago(180) }, 4},
		{"pushed 365 d", func(in *Input) { in.GitHub.PushedAt = ago(365) }, 1},
		{"archived", func(in *Input) { in.GitHub.Archived = true }, 0},
		{"gate closed, updated 5 d", func(in *Input) { in.GateOpen = false }, 7},
		{"gate closed, updated 60 d", func(in *Input) { in.GateOpen, in.UpdatedAt = false, ago(60) }, 5},
		{"gate closed, updated 120 d", func(in *Input) { in.GateOpen, in.UpdatedAt = false, ago(120) }, 3},
		{"gate closed, updated 200 d", func(in *Input) { in.GateOpen, in.UpdatedAt = false, ago(200) }, 1},
		{"gate closed ignores archived", func(in *Input) { in.GateOpen, in.GitHub.Archived = false, true }, 7},
		{"gate open, repo unresolved", func(in *Input) { in.GitHub = GitHub{}; in.UpdatedAt = ago(60) }, 5},
	}
	for _, c := range cases {
		in := remoteOK()
		c.mod(&in)
		if got := comp(Score(in, now), CompMaintenance); got != c.want {
			t.Errorf("%s: maintenance %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAdoption(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Input)
		want float64
	}{
		{"0 stars", func(in *Input) { in.GitHub.Stars = 0 }, 0},
		{"9 stars", func(in *Input) { in.GitHub.Stars = 9 }, 2.5},
		{"99 stars", func(in *Input) { in.GitHub.Stars = 99 }, 5},
		{"999 stars", func(in *Input) { in.GitHub.Stars = 999 }, 7.5},
		{"9999 stars", func(*Input) {}, 10},
		{"capped at 10", func(in *Input) { in.GitHub.Stars = 250000 }, 10},
		{"canonical sibling of 3 gets full", func(in *Input) {
			in.Context.Siblings = Siblings{N: 3, Canonical: true, HasCanonical: true}
		}, 10},
		{"other sibling of 3: min(3, 10/3)", func(in *Input) {
			in.Name = "com.acme/weather-alerts"
			in.Context.Siblings = Siblings{N: 3, HasCanonical: true}
		}, 3},
		{"other sibling of 3 with 99 stars: 5/3", func(in *Input) {
			in.GitHub.Stars = 99
			in.Context.Siblings = Siblings{N: 3, HasCanonical: true}
		}, 5.0 / 3},
		{"no canonical, 2 siblings, 99 stars: 5/2", func(in *Input) {
			in.GitHub.Stars = 99
			in.Context.Siblings = Siblings{N: 2}
		}, 2.5},
		{"no canonical, 2 siblings, 9999 stars: capped 3", func(in *Input) { in.Context.Siblings = Siblings{N: 2} }, 3},
		{"borrowed stars", func(in *Input) {
			in.Name = "io.github.mallory/weather"
			in.GitHub.OwnerLogin = "acme"
		}, 0},
		{"own io.github repo, case-insensitive", func(in *Input) {
			in.Name = "io.github.Acme/weather"
			in.GitHub.OwnerLogin = "acme"
		}, 10},
		{"borrowed via URL owner when login unknown", func(in *Input) {
			in.Name = "io.github.mallory/weather"
			in.GitHub.OwnerLogin = ""
		}, 0},
		{"gate closed", func(in *Input) { in.GateOpen = false }, 0},
		{"unresolved", func(in *Input) { in.GitHub.Resolved = false }, 0},
	}
	for _, c := range cases {
		in := remoteOK()
		c.mod(&in)
		if got := comp(Score(in, now), CompAdoption); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: adoption %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSecurity(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Input)
		want float64
	}{
		{"https + public repo + MIT + no-auth", func(*Input) {}, 10},
		{"http remote", func(in *Input) { in.Remotes = append(in.Remotes, Remote{URL: "http://mcp.acme.com/sse"}) }, 7},
		{"non-OSI license", func(in *Input) { in.GitHub.LicenseSPDX = "NOASSERTION" }, 8},
		{"private repo", func(in *Input) { in.GitHub.Private = true }, 7},
		{"static auth", func(in *Input) { in.Health = Health{Outcome: OutcomeAuthRequired, HTTPStatus: 401} }, 8},
		{"oauth", func(in *Input) {
			in.Health = Health{Outcome: OutcomeAuthRequired, HTTPStatus: 401, ChallengeScheme: "Bearer"}
		}, 10},
		{"no repo listed", func(in *Input) { in.RepoURL = ""; in.GitHub = GitHub{} }, 5},
		{"local package", func(in *Input) { *in = localOnly() }, 8},
		{"gate closed: listing counts, license unknown", func(in *Input) { in.GateOpen = false }, 8},
		{"gate open, repo unresolved", func(in *Input) { in.GitHub = GitHub{} }, 5},
	}
	for _, c := range cases {
		in := remoteOK()
		c.mod(&in)
		if got := comp(Score(in, now), CompSecurity); got != c.want {
			t.Errorf("%s: security %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTotalAndPenalties(t *testing.T) {
	in := remoteOK()
	r := Score(in, now)
	// 25 + 15 + 15 + 15 + 10 + 0 + 10
	if r.Score != 90 || r.Rounded != 90 || len(r.Flags) != 0 {
		t.Fatalf("clean: %+v", r)
	}
	// Round half up: 25 + 15 + 12.5 + 15 + 10 + 0 + 10 = 87.5 → 88
	in.Health.Tools = tools(10, 5, 10)
	if r := Score(in, now); r.RawSum != 87.5 || r.Rounded != 88 || r.Score != 88 {
		t.Fatalf("87.5: %+v", r)
	}
	// 25 + 15 + (4 + 5·(1/3) + 3 + 3) + 15 + 10 + 0 + 10 = 86.67 → 87
	in.Health.Tools = tools(3, 1, 3)
	if r := Score(in, now); r.Rounded != 87 {
		t.Fatalf("88.67: %+v", r.Rounded)
	}

	cases := []struct {
		name string
		mod  func(*Input)
		flag string
		pen  int
	}{
		{"placeholder empty", func(in *Input) { in.Description = "   " }, FlagPlaceholder, 20},
		{"placeholder template", func(in *Input) { in.Description = "Description of my MCP server" }, FlagPlaceholder, 20},
		{"placeholder [describe", func(in *Input) { in.Description = "[Describe what your server does]" }, FlagPlaceholder, 20},
		{"placeholder non functional", func(in *Input) { in.Description = "A non functional MCP server for testing" }, FlagPlaceholder, 20},
		{"retired", func(in *Input) { in.Description = "Retired: see the new server" }, FlagRetired, 25},
		{"deprecated", func(in *Input) { in.Description = "DEPRECATED - use v2" }, FlagRetired, 25},
		{"moved to", func(in *Input) { in.Description = "Moved to com.acme/weather2" }, FlagRetired, 25},
		{"use X instead", func(in *Input) { in.Description = "Use com.acme/weather2 instead." }, FlagRetired, 25},
		{"test segment", func(in *Input) { in.Name = "com.acme/test" }, FlagTestOrDemo, 15},
		{"demo namespace segment", func(in *Input) { in.Name = "io.demo.x/weather" }, FlagTestOrDemo, 15},
		{"hello-world", func(in *Input) { in.Name = "io.github.bob/hello-world" }, FlagTestOrDemo, 15},
		{"my-mcp", func(in *Input) { in.Name = "io.github.bob/my-mcp" }, FlagTestOrDemo, 15},
		{"cloned", func(in *Input) { in.Context.ClonedDescription, in.Context.ClonedCount = true, 5 }, FlagClonedDescription, 10},
		{"shared endpoint", func(in *Input) { in.Context.SharedEndpoint, in.Context.SharedEndpointCount = true, 3 }, FlagSharedEndpoint, 10},
		{"bulk publisher 101", func(in *Input) { in.Context.NamespaceSize = 101 }, FlagBulkPublisher, 5},
	}
	for _, c := range cases {
		in := remoteOK()
		c.mod(&in)
		r := Score(in, now)
		if !slices.Contains(r.Flags, c.flag) {
			t.Errorf("%s: flags %v, want %s", c.name, r.Flags, c.flag)
			continue
		}
		if r.Score != r.Rounded-c.pen {
			t.Errorf("%s: score %d, rounded %d, want −%d", c.name, r.Score, r.Rounded, c.pen)
		}
	}
	// Not flagged: look-alikes.
	for _, c := range []struct{ name, desc string }{
		{"com.acme/testing-tools", "Use natural language instead of SQL to query Postgres"},
		{"com.acme/contest", "Manages hackathon entries"},
		{"com.acme/latest-news", "News headlines; deprecated endpoints are filtered out"},
		{"com.acme/sampler", "Audio sampler control"},
	} {
		in := remoteOK()
		in.Name, in.Description = c.name, c.desc
		if r := Score(in, now); len(r.Flags) != 0 {
			t.Errorf("%s %q: unexpected flags %v", c.name, c.desc, r.Flags)
		}
	}
	// bulk publisher at exactly 100 is not flagged; floor 0 with everything stacked.
	in = remoteOK()
	in.Context.NamespaceSize = 100
	if r := Score(in, now); len(r.Flags) != 0 {
		t.Errorf("100 servers flagged: %v", r.Flags)
	}
	in = remoteOK()
	in.Remotes, in.Packages, in.RepoURL, in.GitHub, in.Health = nil, nil, "", GitHub{}, Health{}
	in.UpdatedAt = ago(400)
	in.Name, in.Description = "io.github.x/test", ""
	in.Context = Context{NamespaceSize: 500, ClonedDescription: true, SharedEndpoint: true}
	if r := Score(in, now); r.Score != 0 {
		t.Errorf("floor: %+v", r)
	}
}

// sponsorshipPaths walks every type reachable from ty and returns the paths
// whose field name, tag or type name smells of sponsorship.
func sponsorshipPaths(ty reflect.Type) (bad []string, types int) {
	banned := []string{"sponsor", "promot", "paid", "boost", "advert", "featured"}
	seen := map[reflect.Type]bool{}
	check := func(s, where string) {
		for _, b := range banned {
			if strings.Contains(strings.ToLower(s), b) {
				bad = append(bad, where+": "+s)
			}
		}
	}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		check(ty.Name(), path+" (type)")
		switch ty.Kind() {
		case reflect.Struct:
			for i := 0; i < ty.NumField(); i++ {
				f := ty.Field(i)
				check(f.Name, path+"."+f.Name)
				check(string(f.Tag), path+"."+f.Name+" (tag)")
				walk(f.Type, path+"."+f.Name)
			}
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Map:
			walk(ty.Key(), path+"{key}")
			walk(ty.Elem(), path+"{}")
		}
	}
	walk(ty, ty.Name())
	return bad, len(seen)
}

// The scorer's input type must not be able to carry sponsorship (SPEC §3
// Neutrality): no field, tag or type reachable from Input may name it.
func TestInputCannotReadSponsorship(t *testing.T) {
	bad, n := sponsorshipPaths(reflect.TypeOf(Input{}))
	for _, b := range bad {
		t.Errorf("sponsorship-like field reachable from Input: %s", b)
	}
	if n < 10 {
		t.Fatalf("walked only %d types: the walk is broken", n)
	}
	// The walker must catch a field planted deep inside.
	type deep struct {
		Meta map[string][]*struct{ IsPromoted bool }
	}
	type planted struct {
		Health Health
		X      deep
	}
	if bad, _ := sponsorshipPaths(reflect.TypeOf(planted{})); len(bad) != 1 {
		t.Fatalf("walker missed a planted field: %v", bad)
	}
}

func TestFindingsCarryEvidence(t *testing.T) {
	r := Score(remoteOK(), now)
	for _, c := range r.Components {
		if len(c.Findings) == 0 {
			t.Errorf("%s: no findings", c.Name)
		}
		sum := 0.0
		for _, f := range c.Findings {
			sum += f.Points
		}
		if math.Abs(sum-c.Score) > 1e-9 {
			t.Errorf("%s: findings sum %v ≠ score %v", c.Name, sum, c.Score)
		}
	}
	if ev := r.Components[0].Findings[0].Evidence; len(ev) != 1 || ev[0].ID != "hc-1" {
		t.Errorf("health evidence %+v", ev)
	}
}
