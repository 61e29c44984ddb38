package differ

import (
	"fmt"
	"sort"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// SelfTestCase is one check of the drift engine's validation (SPEC §2, §7):
// a mutation of a real snapshot and the events it must produce.
type SelfTestCase struct {
	Name   string   `json:"name"`
	Want   []string `json:"want"` // "kind server" pairs, sorted
	Got    []string `json:"got"`
	Passed bool     `json:"passed"`
}

// SelfTestReport is the outcome of SelfTest.
type SelfTestReport struct {
	Entries     int            `json:"entries"`
	Cases       []SelfTestCase `json:"cases"`
	FalseEvents int            `json:"false_events"` // events no mutation asked for
	Missed      int            `json:"missed"`       // asked-for events not found
	Passed      bool           `json:"passed"`
}

// SelfTest checks the differ against a real snapshot: the identical pair
// gives no events, and each injected mutation of a known kind is found with
// no false events. It needs a snapshot with at least three servers, one of
// them with a remote.
func SelfTest(entries []schema.Entry, at time.Time) (SelfTestReport, error) {
	base := Diff(NewState(), Snapshot{ID: "base", Mode: schema.ModeFull, ObservedAt: at, Entries: entries}, Options{}).Next
	names := make([]string, 0, len(base.Latest))
	for n := range base.Latest {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 3 {
		return SelfTestReport{}, fmt.Errorf("self-test needs a snapshot with at least 3 servers, got %d", len(names))
	}
	// latestIdx finds the entry that is the latest view of name.
	latestIdx := func(es []schema.Entry, name string) int {
		for i := range es {
			if es[i].Server.Name == name && es[i].Server.Version == base.Latest[name].Version {
				return i
			}
		}
		return -1
	}
	withRemote := ""
	for _, n := range names {
		if base.Latest[n].Endpoints != "" {
			withRemote = n
			break
		}
	}
	if withRemote == "" {
		return SelfTestReport{}, fmt.Errorf("self-test needs a server with a remote")
	}
	target := names[len(names)/2]
	clone := func() []schema.Entry {
		out := make([]schema.Entry, len(entries))
		copy(out, entries)
		return out
	}
	type mutation struct {
		name string
		want []string
		mut  func([]schema.Entry) []schema.Entry
	}
	muts := []mutation{
		{"identical", nil, func(es []schema.Entry) []schema.Entry { return es }},
		{"new_server", []string{"new_server zz.selftest/new-server"}, func(es []schema.Entry) []schema.Entry {
			e := es[latestIdx(es, target)]
			e.Server.Name = "zz.selftest/new-server"
			return append(es, e)
		}},
		{"version_added", []string{"version_added " + target}, func(es []schema.Entry) []schema.Entry {
			e := es[latestIdx(es, target)]
			e.Server.Version = e.Server.Version + "-selftest"
			e.Meta.IsLatest = false
			return append(es, e)
		}},
		{"description_changed", []string{"description_changed " + target}, func(es []schema.Entry) []schema.Entry {
			es[latestIdx(es, target)].Server.Description += " (changed)"
			return es
		}},
		{"title_changed", []string{"title_changed " + target}, func(es []schema.Entry) []schema.Entry {
			es[latestIdx(es, target)].Server.Title += " (changed)"
			return es
		}},
		{"endpoints_changed", []string{"endpoints_changed " + withRemote}, func(es []schema.Entry) []schema.Entry {
			i := latestIdx(es, withRemote)
			rs := append([]schema.Remote(nil), es[i].Server.Remotes...)
			rs[0].URL = "https://moved.example.trycloudflare.com/mcp"
			es[i].Server.Remotes = rs
			return es
		}},
		{"status_changed", []string{"status_changed " + target}, func(es []schema.Entry) []schema.Entry {
			es[latestIdx(es, target)].Meta.Status = "deprecated"
			return es
		}},
		{"removed", []string{"removed " + target}, func(es []schema.Entry) []schema.Entry {
			out := es[:0]
			for _, e := range es {
				if e.Server.Name != target {
					out = append(out, e)
				}
			}
			return out
		}},
	}
	rep := SelfTestReport{Entries: len(entries), Passed: true}
	for i, m := range muts {
		res := Diff(base, Snapshot{ID: m.name, Mode: schema.ModeFull, ObservedAt: at.Add(time.Duration(i+1) * time.Hour), Entries: m.mut(clone())}, Options{})
		c := SelfTestCase{Name: m.name, Want: m.want}
		if c.Want == nil {
			c.Want = []string{}
		}
		c.Got = []string{}
		got := map[string]bool{}
		for _, e := range res.Events {
			k := e.Kind + " " + e.Server
			c.Got = append(c.Got, k)
			got[k] = true
		}
		sort.Strings(c.Got)
		want := map[string]bool{}
		for _, w := range c.Want {
			want[w] = true
			if !got[w] {
				rep.Missed++
			}
		}
		for _, g := range c.Got {
			if !want[g] {
				rep.FalseEvents++
			}
		}
		c.Passed = len(c.Got) == len(c.Want) && rep.Missed == 0
		for _, g := range c.Got {
			if !want[g] {
				c.Passed = false
			}
		}
		if !c.Passed {
			rep.Passed = false
		}
		rep.Cases = append(rep.Cases, c)
	}
	return rep, nil
}
