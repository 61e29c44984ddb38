package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
)

// forum calibrate prints live vs pinned; --adopt writes a new method version
// and a change-log row, and never touches the current weights.
func TestCalibrateCommand(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
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
	if err := st.Save(filepath.Join(dir, provenanceCheckpoint)); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		c := newCalibrateCmd()
		c.SilenceUsage, c.SilenceErrors = true, true
		var out bytes.Buffer
		c.SetOut(&out)
		c.SetArgs(append([]string{"--data-dir", dir, "--at", at.Format(time.RFC3339)}, args...))
		err := c.Execute()
		return out.String(), err
	}
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
	if method.Current().Provenance.Signals["no_license"].BaseRate != 0.23 {
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
