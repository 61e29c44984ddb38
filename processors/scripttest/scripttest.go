// Package scripttest runs script tests of the stateful processors' time
// logic, in the style of Prometheus' promqltest: a small text format loads
// events at times and asserts, at later times, the sub-scores, open signals
// and flags that processors/drift, processors/incidents and
// processors/ownerburst (through processors/trust) produce.
//
// In: *.test files (processors/testdata). Out: test failures naming the
// file and line of each assertion that does not hold.
//
// Format (one command a line, '#' starts a comment; TIME is an offset from
// 2025-01-01T00:00:00Z like 0, 30d, 29d23h, 90m, -1h, or an RFC 3339 instant):
//
//	event TIME SERVER KIND [bump] [before=TEXT] [after=TEXT] [id=ID]
//	snapshot TIME ID                   # an applied snapshot (the first is the owner-burst baseline)
//	incident TIME SERVER ID CLASS SEVERITY STATUS [source=URI]
//	retract TIME ID                    # TIME is when the retraction is recorded
//	incidents unchecked                # the incident feed is not loaded: sub-score unknown
//
//	eval at TIME SERVER                # then indented expectations:
//	  drift VALUE|null                 # the drift sub-score (2 decimals) or unknown
//	  incidents VALUE|null
//	  open SUB/ID ...  |  open none    # exactly these open (band-relevant) signals
//	  signal SUB/ID                    # this signal is present (open or not)
//	  nosignal SUB/ID
//	  band A|B|C|D|F
//	  observed_since TIME
//
//	eval burst at TIME NAMESPACE
//	  flagged true|false
//	  recurring true|false
//	  first_window true|false
//	  windows N
//	  per_window N,N,N,N,N,N,N
//
//	eval flagged at TIME
//	  NAMESPACE ... | none             # exactly these namespaces are flagged
//
// Events with the same TIME are delivered together; the script's commands
// are applied in order, but every state is event-time driven, so the order
// of loads does not matter unless the test is about it.
package scripttest

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/processors/drift"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/ownerburst"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// Base is the instant relative times count from.
var Base = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Cmd is one parsed command with its expectations.
type Cmd struct {
	Line   int
	Words  []string
	Expect []Expect
}

// Expect is one indented expectation line.
type Expect struct {
	Line  int
	Words []string
}

// Script is a parsed file.
type Script struct {
	Name string
	Cmds []Cmd
}

// Parse reads a script. Indented lines are expectations of the command
// above them.
func Parse(name string, r io.Reader) (*Script, error) {
	s := &Script{Name: name}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Text()
		if i := strings.Index(raw, "#"); i >= 0 {
			raw = raw[:i]
		}
		if strings.TrimSpace(raw) == "" {
			continue
		}
		words := strings.Fields(raw)
		if raw[0] == ' ' || raw[0] == '\t' {
			if len(s.Cmds) == 0 || s.Cmds[len(s.Cmds)-1].Words[0] != "eval" {
				return nil, fmt.Errorf("%s:%d: an indented expectation must follow an eval", name, n)
			}
			c := &s.Cmds[len(s.Cmds)-1]
			c.Expect = append(c.Expect, Expect{Line: n, Words: words})
			continue
		}
		switch words[0] {
		case "event", "snapshot", "incident", "retract", "incidents", "eval":
		default:
			return nil, fmt.Errorf("%s:%d: unknown command %q", name, n, words[0])
		}
		s.Cmds = append(s.Cmds, Cmd{Line: n, Words: words})
	}
	return s, sc.Err()
}

var relRe = regexp.MustCompile(`^(-?)((?:\d+(?:\.\d+)?[dhms])+|0)$`)
var partRe = regexp.MustCompile(`(\d+(?:\.\d+)?)([dhms])`)

// ParseTime reads an offset from Base (30d, 29d23h, -1h, 0) or RFC 3339.
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	m := relRe.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("time %q: want an offset like 30d, 12h, 29d23h or RFC 3339", s)
	}
	var d time.Duration
	for _, p := range partRe.FindAllStringSubmatch(m[2], -1) {
		f, _ := strconv.ParseFloat(p[1], 64)
		unit := map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second}[p[2]]
		d += time.Duration(f * float64(unit))
	}
	if m[1] == "-" {
		d = -d
	}
	return Base.Add(d), nil
}

// Runner holds the processors' states while a script runs.
type Runner struct {
	W          *method.Weights
	Drift      *drift.State
	Incidents  *incidents.State
	Bursts     *ownerburst.State
	incRecords map[string]incidents.Record
}

// NewRunner returns empty states with the embedded method's weights; the
// incident feed counts as loaded.
func NewRunner() *Runner {
	w := method.Embedded().Weights
	r := &Runner{W: w, Drift: drift.NewStateWith(w), Incidents: incidents.NewState(), Bursts: ownerburst.NewStateWith(w), incRecords: map[string]incidents.Record{}}
	r.Incidents.MarkLoaded()
	return r
}

// RunFile parses and runs one file as a subtest.
func RunFile(t *testing.T, path string) {
	t.Run(filepath.Base(path), func(t *testing.T) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := Parse(filepath.Base(path), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range NewRunner().Run(s) {
			t.Error(err)
		}
	})
}

// Run executes a script and returns every failed expectation.
func (r *Runner) Run(s *Script) []error {
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", s.Name, line, fmt.Sprintf(format, args...)))
	}
	for _, c := range s.Cmds {
		if err := r.exec(s.Name, c, fail); err != nil {
			errs = append(errs, err)
			return errs
		}
	}
	return errs
}

func kv(words []string) (flags map[string]bool, vals map[string]string) {
	flags, vals = map[string]bool{}, map[string]string{}
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok {
			vals[k] = v
		} else {
			flags[w] = true
		}
	}
	return flags, vals
}

func (r *Runner) exec(file string, c Cmd, fail func(int, string, ...any)) error {
	w := c.Words
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", file, c.Line, fmt.Sprintf(format, args...))
	}
	need := func(n int, usage string) error {
		if len(w) < n {
			return bad("usage: %s", usage)
		}
		return nil
	}
	switch w[0] {
	case "event":
		if err := need(4, "event TIME SERVER KIND [bump] [before=…] [after=…] [id=…]"); err != nil {
			return err
		}
		at, err := ParseTime(w[1])
		if err != nil {
			return bad("%v", err)
		}
		if !slices.Contains(schema.EventKinds, w[3]) {
			return bad("unknown event kind %q", w[3])
		}
		flags, vals := kv(w[4:])
		e := schema.DriftEvent{Server: w[2], Namespace: schema.Namespace(w[2]), Kind: w[3], Before: vals["before"], After: vals["after"],
			ObservedAt: at, VersionBump: flags["bump"], SnapshotID: vals["snapshot"]}
		if e.SnapshotID == "" {
			e.SnapshotID = "snap-" + at.Format("20060102T150405Z")
		}
		e.ID = vals["id"]
		if e.ID == "" {
			e.ID = differ.EventID(e.Server, e.Kind, e.Before, e.After, at)
		}
		r.Drift.Apply(e)
		r.Bursts.Apply(e)
	case "snapshot":
		if err := need(3, "snapshot TIME ID"); err != nil {
			return err
		}
		at, err := ParseTime(w[1])
		if err != nil {
			return bad("%v", err)
		}
		r.Bursts.ApplySnapshot(schema.SnapshotSummary{ID: w[2], ObservedAt: at})
	case "incident":
		if err := need(7, "incident TIME SERVER ID CLASS SEVERITY STATUS [source=URI]"); err != nil {
			return err
		}
		at, err := ParseTime(w[1])
		if err != nil {
			return bad("%v", err)
		}
		_, vals := kv(w[7:])
		src := vals["source"]
		if src == "" {
			src = "https://example.org/advisories/" + w[3]
		}
		rec := incidents.Record{ID: w[3], Server: w[2], Date: at, Class: w[4], Severity: w[5], Status: w[6], SourceURI: src, Curator: "script", UpdatedAt: at}
		r.incRecords[rec.ID] = rec
		r.Incidents.Apply(incidents.Msg{Incident: rec, Audit: incidents.Audit{ID: "aud-ins-" + rec.ID, Action: incidents.ActionInsert, Who: "script", Reason: "script", At: at}})
	case "retract":
		if err := need(3, "retract TIME ID"); err != nil {
			return err
		}
		at, err := ParseTime(w[1])
		if err != nil {
			return bad("%v", err)
		}
		rec, ok := r.incRecords[w[2]]
		if !ok {
			return bad("retract of unknown incident %q", w[2])
		}
		rec.Status, rec.UpdatedAt = trust.IncidentRetracted, at
		r.incRecords[rec.ID] = rec
		r.Incidents.Apply(incidents.Msg{Incident: rec, Audit: incidents.Audit{ID: "aud-ret-" + rec.ID, Action: incidents.ActionRetract, Who: "script", Reason: "script", At: at}})
	case "incidents":
		if len(w) != 2 || w[1] != "unchecked" {
			return bad("usage: incidents unchecked")
		}
		r.Incidents = incidents.NewState()
		r.incRecords = map[string]incidents.Record{}
	case "eval":
		return r.eval(file, c, bad, fail)
	}
	return nil
}

func (r *Runner) eval(file string, c Cmd, bad func(string, ...any) error, fail func(int, string, ...any)) error {
	w := c.Words
	switch {
	case len(w) == 4 && w[1] == "at":
		at, err := ParseTime(w[2])
		if err != nil {
			return bad("%v", err)
		}
		res := trust.ComputeWith(r.W, trust.Input{Server: w[3], Drift: r.Drift.DriftInput(w[3]), Incidents: r.Incidents.IncidentsInput(w[3])}, at)
		return r.checkRecord(res, c, bad, fail)
	case len(w) == 5 && w[1] == "burst" && w[2] == "at":
		at, err := ParseTime(w[3])
		if err != nil {
			return bad("%v", err)
		}
		b, flagged := r.Bursts.OwnerBurst(w[4], at)
		for _, x := range c.Expect {
			if len(x.Words) != 2 {
				return fmt.Errorf("%s:%d: want KEY VALUE", file, x.Line)
			}
			got := ""
			switch x.Words[0] {
			case "flagged":
				got = strconv.FormatBool(flagged)
			case "recurring":
				got = strconv.FormatBool(b.RecurringBurst)
			case "first_window":
				got = strconv.FormatBool(b.FirstWindowBurst)
			case "windows":
				got = strconv.Itoa(b.WindowsOverThreshold)
			case "per_window":
				parts := make([]string, len(b.PerWindowNew))
				for i, n := range b.PerWindowNew {
					parts[i] = strconv.Itoa(n)
				}
				got = strings.Join(parts, ",")
			default:
				return fmt.Errorf("%s:%d: unknown burst expectation %q", file, x.Line, x.Words[0])
			}
			if got != x.Words[1] {
				fail(x.Line, "%s of %s at %s: got %s, want %s", x.Words[0], w[4], w[3], got, x.Words[1])
			}
		}
	case len(w) == 4 && w[1] == "flagged" && w[2] == "at":
		at, err := ParseTime(w[3])
		if err != nil {
			return bad("%v", err)
		}
		var got []string
		for _, b := range r.Bursts.Flagged(at) {
			got = append(got, b.Namespace)
		}
		var want []string
		for _, x := range c.Expect {
			for _, ns := range x.Words {
				if ns != "none" {
					want = append(want, ns)
				}
			}
		}
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			fail(c.Line, "flagged at %s: got [%s], want [%s]", w[3], strings.Join(got, " "), strings.Join(want, " "))
		}
	default:
		return bad("usage: eval at TIME SERVER | eval burst at TIME NAMESPACE | eval flagged at TIME")
	}
	return nil
}

func fmtValue(v *float64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func sameValue(got *float64, want string) bool {
	if want == "null" {
		return got == nil
	}
	f, err := strconv.ParseFloat(want, 64)
	return err == nil && got != nil && math.Abs(*got-f) < 0.005
}

func (r *Runner) checkRecord(res trust.Result, c Cmd, bad func(string, ...any) error, fail func(int, string, ...any)) error {
	subs := map[string]trust.SubScore{"drift": res.Drift, "incidents": res.Incidents, "provenance": res.Provenance, "static": res.Static}
	hasSignal := func(ref string) (bool, error) {
		sub, id, ok := strings.Cut(ref, "/")
		s, known := subs[sub]
		if !ok || !known {
			return false, fmt.Errorf("signal %q: want SUB/ID with SUB drift, incidents, provenance or static", ref)
		}
		for _, sg := range s.Signals {
			if sg.ID == id {
				return true, nil
			}
		}
		return false, nil
	}
	for _, x := range c.Expect {
		k := x.Words[0]
		args := x.Words[1:]
		switch k {
		case "drift", "incidents":
			if len(args) != 1 {
				return bad("line %d: want %s VALUE|null", x.Line, k)
			}
			if !sameValue(subs[k].Value, args[0]) {
				fail(x.Line, "%s of %s: got %s, want %s (signals %s)", k, res.Server, fmtValue(subs[k].Value), args[0], describe(subs[k]))
			}
		case "open":
			var got []string
			for _, o := range res.OpenSignals {
				got = append(got, o.SubScore+"/"+o.ID)
			}
			sort.Strings(got)
			want := []string{}
			for _, a := range args {
				if a != "none" {
					want = append(want, a)
				}
			}
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				fail(x.Line, "open signals of %s: got [%s], want [%s]", res.Server, strings.Join(got, " "), strings.Join(want, " "))
			}
		case "signal", "nosignal":
			for _, a := range args {
				ok, err := hasSignal(a)
				if err != nil {
					return bad("line %d: %v", x.Line, err)
				}
				if ok != (k == "signal") {
					fail(x.Line, "%s %s of %s: present=%v (drift %s; incidents %s)", k, a, res.Server, ok, describe(res.Drift), describe(res.Incidents))
				}
			}
		case "band":
			if len(args) != 1 || res.Band != args[0] {
				fail(x.Line, "band of %s: got %s (%s), want %s", res.Server, res.Band, res.BandReason, strings.Join(args, " "))
			}
		case "observed_since":
			if len(args) != 1 {
				return bad("line %d: want observed_since TIME", x.Line)
			}
			want, err := ParseTime(args[0])
			if err != nil {
				return bad("line %d: %v", x.Line, err)
			}
			if res.DriftObservedSince == nil || !res.DriftObservedSince.Equal(want) {
				fail(x.Line, "observed_since of %s: got %v, want %s", res.Server, res.DriftObservedSince, want.Format(time.RFC3339))
			}
		default:
			return bad("line %d: unknown expectation %q", x.Line, k)
		}
	}
	return nil
}

func describe(s trust.SubScore) string {
	parts := []string{}
	for _, sg := range s.Signals {
		parts = append(parts, fmt.Sprintf("%s=%.4g(open=%v)", sg.ID, sg.Penalty, sg.Open))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
