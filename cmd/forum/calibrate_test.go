package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/trust"
)

// calibrationFixture saves a provenance state of 400 resolved servers, half
// of them without a license (pinned rate 23 %), into dir, and returns it
// with a runner of 'forum calibrate' on dir at at.
func calibrationFixture(t *testing.T, dir string, at time.Time) (*provenance.State, func(args ...string) (string, error)) {
	t.Helper()
	st := provenance.NewState()
	var ls []provenance.Listing
	for i := 0; i < 400; i++ {
		repo := "github.com/o/r" + string(rune('a'+i%26)) + itoaCal(i)
		ls = append(ls, provenance.Listing{Server: "io.github.o/s" + itoaCal(i), RepoURL: "https://" + repo, ListedAt: at.Add(-500 * 24 * time.Hour)})
		lic := "MIT"
		if i%2 == 0 {
			lic = "" // 50 % no_license, pinned 23 %
		}
		st.Apply(github.Observation{Repo: repo, ID: "github:" + repo + "@1", Status: github.StatusResolved, ObservedAt: at.Add(-time.Hour),
			CreatedAt: at.Add(-600 * 24 * time.Hour), PushedAt: at.Add(-24 * time.Hour), LicenseSPDX: lic,
			Commits: &github.CommitStats{ObservedAt: at.Add(-time.Hour), Count: 5, Authors: 2}})
	}
	st.SetListings(ls)
	if err := st.Save(filepath.Join(dir, provenance.CheckpointFile)); err != nil {
		t.Fatal(err)
	}
	return st, func(args ...string) (string, error) {
		c := newCalibrateCmd()
		c.SilenceUsage, c.SilenceErrors = true, true
		var out bytes.Buffer
		c.SetOut(&out)
		c.SetArgs(append([]string{"--data-dir", dir, "--at", at.Format(time.RFC3339), "--log-level", "error"}, args...))
		err := c.Execute()
		return out.String(), err
	}
}

// forum calibrate prints live vs pinned; --adopt writes a new method version
// and a change-log row, and never touches the current weights.
func TestCalibrateCommand(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	_, run := calibrationFixture(t, dir, at)
	out, err := run()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "no_license") || !strings.Contains(out, "50.00%") || !strings.Contains(out, "+27.00") {
		t.Fatalf("calibrate output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "method")); err == nil {
		t.Fatal("calibrate without --adopt wrote something")
	}
	out, err = run("--adopt", "--version", "0.1.0-draft5-cal-test", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep calibrateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Adopted == nil || rep.Adopted.Version != "0.1.0-draft5-cal-test" || len(rep.Written) != 3 {
		t.Fatalf("adopt: %+v", rep)
	}
	b, err := os.ReadFile(filepath.Join(dir, "method", "weights-0.1.0-draft5-cal-test.json"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := method.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if w.MethodVersion != "0.1.0-draft5-cal-test" || w.Provenance.Signals["no_license"].BaseRate != 0.5 {
		t.Fatalf("adopted weights: %s %+v", w.MethodVersion, w.Provenance.Signals["no_license"])
	}
	if method.Embedded().Weights.Provenance.Signals["no_license"].BaseRate != 0.23 {
		t.Fatal("the method in force changed")
	}
	if _, err := run("--adopt", "--version", "0.1.0-draft5-cal-test"); err == nil {
		t.Fatal("a second adopt of the same version succeeded")
	}
}

func itoaCal(i int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

// The adopt step end to end: calibrate --adopt writes weights-<v>.json and
// its change-log row; loading that file (method.Load, what
// --method-weights / FORUM_METHOD_WEIGHTS does at startup) gives the
// adopted method, and provenance scores follow its pinned rates; calibrate
// --method-weights compares with it; a file without its change-log row is
// refused and the embedded method is untouched.
func TestCalibrateAdoptThenUse(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	st, run := calibrationFixture(t, dir, at)
	server := "io.github.o/s0" // no license
	score := func(w *method.Weights) float64 {
		sv, ok := st.Snapshot(w, at).Lookup(server)
		if !ok || sv.Provenance.Value == nil || !sv.Flags.NoLicense {
			t.Fatalf("%s: %+v", server, sv)
		}
		return *sv.Provenance.Value
	}
	before := score(method.Embedded().Weights)
	out, err := run("--adopt", "--version", "0.1.0-draft5-cal-use", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep calibrateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Adopted == nil {
		t.Fatalf("%v %s", err, out)
	}
	path := rep.Written[0]
	m, err := method.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Weights.MethodVersion != "0.1.0-draft5-cal-use" || m.Version() != "0.1.0-draft5-cal-use" || m.SHA256 != rep.Adopted.Row.WeightsSHA256 {
		t.Fatalf("loaded: %s / %s / %s", m.Weights.MethodVersion, m.Version(), m.SHA256)
	}
	after := score(m.Weights)
	// no_license: 10 × f(0.23) before, 10 × f(0.5) after.
	w := method.Embedded().Weights
	want := before + 10*trust.BaseRateFactor(w, 0.23) - 10*trust.BaseRateFactor(w, 0.5)
	if after == before || math.Abs(after-want) > 0.01 {
		t.Fatalf("provenance %v under the adopted method (was %v), want %.2f", after, before, want)
	}
	// calibrate --method-weights compares with the adopted method.
	out, err = run("--method-weights", path, "--json")
	if err != nil {
		t.Fatal(err)
	}
	rep = calibrateReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rates {
		if r.Flag == "no_license" && (r.Pinned == nil || *r.Pinned != 0.5 || r.DeltaPP == nil || *r.DeltaPP != 0) {
			t.Fatalf("no_license under the adopted method: %+v", r)
		}
	}
	if rep.MethodVersion != "0.1.0-draft5-cal-use" {
		t.Fatalf("calibrate --method-weights: method %s", rep.MethodVersion)
	}
	// The same file away from its change log is refused.
	lone := filepath.Join(t.TempDir(), filepath.Base(path))
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(lone, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run("--method-weights", lone); err == nil || !errors.Is(err, method.ErrNotAdopted) || !strings.Contains(err.Error(), "changelog.json") {
		t.Fatalf("a file without its change-log row: %v", err)
	}
	if method.Embedded().Version() != method.EmbeddedVersion || score(method.Embedded().Weights) != before {
		t.Fatal("a refused file changed the embedded method")
	}
}
