package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
)

// TestValidateLabelsOnAGeneratedPopulation is the done-when: on a
// generated population with planted known-bad servers (a tool-poisoning
// description, a hardcoded token, an endpoint moved to a tunnel domain, a
// repo created 60 days after its listing), `forum validate --labels`
// reports each arm and every planted server ranks in the bottom decile.
func TestValidateLabelsOnAGeneratedPopulation(t *testing.T) {
	dir := t.TempDir()
	g := scorer.Generate(500, 42, trustTestAt)
	meta := scorer.Meta{PublicationID: scorer.PublicationID(trustTestAt), ComputedAt: trustTestAt}
	sealed, err := scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "pub.jsonl")
	var buf bytes.Buffer
	if err := publish.WriteExport(&buf, sealed.Pub); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(export, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	validate := func(labels map[string]string) (validateReport, string, error) {
		t.Helper()
		lb, _ := json.Marshal(labels)
		lf := filepath.Join(dir, "labels.json")
		if err := os.WriteFile(lf, lb, 0o644); err != nil {
			t.Fatal(err)
		}
		c := newValidateCmd()
		c.SilenceUsage, c.SilenceErrors = true, true // as under the root command
		var out, errb bytes.Buffer
		c.SetOut(&out)
		c.SetErr(&errb)
		c.SetArgs([]string{"--labels", lf, "--export", export})
		runErr := c.Execute()
		var rep validateReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("stdout is not the JSON report: %v\n%s", err, out.String())
		}
		return rep, errb.String(), runErr
	}

	rep, summary, err := validate(g.Labels)
	t.Log("\n" + summary)
	if err != nil || rep.Separation == nil || !rep.Separation.AllPass {
		t.Fatalf("validate --labels: %v", err)
	}
	if len(rep.Separation.Arms) != 3 {
		t.Fatalf("arms: %+v", rep.Separation.Arms)
	}
	planted := 0
	for _, a := range rep.Separation.Arms {
		if a.Scored == 0 || a.InBottomDecile != a.Scored || !strings.Contains(summary, "PASS "+strings.ToUpper(a.Arm)) {
			t.Errorf("arm %s: %d/%d in the bottom decile", a.Arm, a.InBottomDecile, a.Scored)
		}
		for _, s := range a.Servers {
			planted++
			if s.Percentile == nil || *s.Percentile > scorer.BottomDecile {
				t.Errorf("arm %s: planted %s at percentile %v", a.Arm, s.Server, s.Percentile)
			}
		}
	}
	if planted != 4 {
		t.Errorf("%d planted servers ranked, want 4", planted)
	}

	// Arms are independent: a benign server labelled as a drift case fails
	// DRIFT only, and the command exits non-zero.
	bad := map[string]string{}
	for k, v := range g.Labels {
		bad[k] = v
	}
	bad[g.Inputs[0].Entry.Server.Name] = "drift:tunnel_endpoint"
	rep, summary, err = validate(bad)
	if err == nil || rep.Separation.AllPass || len(rep.Separation.Failures) != 1 || rep.Separation.Failures[0] != scorer.ArmDrift {
		t.Errorf("a mislabelled benign server must fail DRIFT alone: err %v, failures %v\n%s", err, rep.Separation.Failures, summary)
	}
}

func TestValidateDriftSelfTestStillRuns(t *testing.T) {
	c := newValidateCmd()
	var out, errb bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&errb)
	c.SetArgs([]string{"--snapshot", "../../ingest/registry/testdata/snapshots/2025-10-09.json.gz"})
	if err := c.Execute(); err != nil {
		t.Fatalf("validate --snapshot: %v\n%s", err, errb.String())
	}
	var rep validateReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.DriftSelfTest == nil || !rep.DriftSelfTest.Passed {
		t.Fatalf("drift self-test report: %v %s", err, out.String())
	}
	if c2 := newValidateCmd(); true {
		c2.SetArgs(nil)
		c2.SetOut(&out)
		c2.SetErr(&errb)
		if err := c2.Execute(); err == nil {
			t.Error("validate without --snapshot or --labels must be a usage error")
		}
	}
}
