package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/sql/store"
)

// validateReport is what `forum validate` prints on stdout.
type validateReport struct {
	DriftSelfTest *differ.SelfTestReport   `json:"drift_self_test,omitempty"`
	Separation    *scorer.SeparationReport `json:"separation,omitempty"`
	Source        string                   `json:"records_source,omitempty"`
}

func newValidateCmd() *cobra.Command {
	cfg := &config{}
	var snapshot, labels, export string
	cmd := &cobra.Command{
		Use:   "validate [--snapshot FILE] [--labels FILE [--export FILE]]",
		Short: "Run the validation gates: the drift self-test and the three-arm separation test",
		Long: `validate runs the method's validation gates (SPEC §7) and exits 1 when one fails.

--snapshot FILE   the drift engine's self-test on a real snapshot (SPEC §2): the
                  identical pair must give 0 events, and each injected mutation of a
                  known kind must be found with 0 false events.
--labels FILE     the three-arm separation test over a labels file (server -> class;
                  a JSON object, JSON lines {"server","class"}, or "server<TAB>class"
                  lines). Classes name their arm as "static:…", "provenance:…",
                  "drift:…" (or a known class such as tool_poisoning, copycat_class_b,
                  tunnel_endpoint). STATIC: labelled servers must rank in the bottom
                  decile by static sub-score; PROVENANCE: each class's median
                  percentile by provenance must be in the bottom decile (the
                  population's is 50); DRIFT: bottom decile by drift. Arms are
                  independent: a failed arm blocks only the scores derived from it.
                  The population is the records of --export FILE (a publication
                  export, see export-publication), else the store's newest
                  publication.

JSON goes to stdout, a readable summary to stderr.

Examples:
  forum validate --snapshot ingest/registry/testdata/snapshots/2025-10-09.json.gz
  forum validate --labels labels.json --export pub.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if snapshot == "" && labels == "" {
				return usageError{errors.New("give --snapshot FILE, --labels FILE, or both")}
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			rep := validateReport{}
			failed := []string{}
			if snapshot != "" {
				f := registry.SnapshotFile{Path: snapshot, CapturedAt: captureTime(snapshot)}
				entries, _, _, err := registry.LoadSnapshotFile(f)
				if err != nil {
					return err
				}
				st, err := differ.SelfTest(entries, f.CapturedAt)
				if err != nil {
					return err
				}
				rep.DriftSelfTest = &st
				for _, c := range st.Cases {
					mark := "ok  "
					if !c.Passed {
						mark = "FAIL"
					}
					fmt.Fprintf(stderr, "%s %-20s want %v got %v\n", mark, c.Name, c.Want, c.Got)
				}
				fmt.Fprintf(stderr, "drift self-test on %d entries: false events %d, missed %d\n", st.Entries, st.FalseEvents, st.Missed)
				if !st.Passed {
					failed = append(failed, "drift self-test")
				}
			}
			if labels != "" {
				lf, err := os.Open(labels)
				if err != nil {
					return usageError{fmt.Errorf("--labels: %w", err)}
				}
				lm, err := scorer.ReadLabels(lf)
				lf.Close()
				if err != nil {
					return usageError{fmt.Errorf("--labels %s: %w", labels, err)}
				}
				var pop []scorer.Scored
				if export != "" {
					pop, err = scoredFromExport(export)
					rep.Source = export
				} else {
					pop, rep.Source, err = scoredFromStore(cmd, cfg)
				}
				if err != nil {
					return err
				}
				sep := scorer.Separation(pop, lm)
				rep.Separation = &sep
				fmt.Fprint(stderr, sep.Summary())
				if !sep.AllPass {
					failed = append(failed, "separation ("+strings.Join(sep.Failures, ", ")+")")
				}
			}
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false) // criteria read "<= 10", not "\u003c= 10"
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				return err
			}
			if len(failed) > 0 {
				return fmt.Errorf("validation failed: %s", strings.Join(failed, "; "))
			}
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "a snapshot file (json or json.gz) for the drift self-test")
	cmd.Flags().StringVar(&labels, "labels", "", "a labels file for the three-arm separation test")
	cmd.Flags().StringVar(&export, "export", "", "a publication export whose records are the population (default: the store's newest publication)")
	return cmd
}

// scoredFromExport reads the records of a publication export (the header
// line is skipped; it is not verified here: see forum verify).
func scoredFromExport(path string) ([]scorer.Scored, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError{fmt.Errorf("--export: %w", err)}
	}
	defer f.Close()
	return scoredFromReader(f, path)
}

func scoredFromReader(r io.Reader, name string) ([]scorer.Scored, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), publish.MaxExportLine)
	var out []scorer.Scored
	line := 0
	for sc.Scan() {
		line++
		if line == 1 && strings.Contains(sc.Text(), `"format":"`+publish.ExportFormat+`"`) {
			continue
		}
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		s, err := scorer.ScoredFromJSON(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// scoredFromStore reads the records of the store's newest publication.
func scoredFromStore(cmd *cobra.Command, cfg *config) ([]scorer.Scored, string, error) {
	a, err := openApp(cmd.Context(), cfg, withStore)
	if err != nil {
		return nil, "", err
	}
	defer a.close()
	ts, ok := a.store.(store.TrustStore)
	if !ok {
		return nil, "", fmt.Errorf("the store %T keeps no trust records", a.store)
	}
	ps, err := ts.Publications(cmd.Context(), 1)
	if err != nil {
		return nil, "", err
	}
	if len(ps) == 0 {
		return nil, "", errors.New("the store holds no publication yet: run the pipeline (forum replay/run) or pass --export FILE")
	}
	recs, err := ts.PublicationRecords(cmd.Context(), ps[0].ID)
	if err != nil {
		return nil, "", err
	}
	out := make([]scorer.Scored, 0, len(recs))
	for _, r := range recs {
		s, err := scorer.ScoredFromJSON([]byte(r.Record))
		if err != nil {
			return nil, "", fmt.Errorf("record of %s in %s: %w", r.Server, ps[0].ID, err)
		}
		out = append(out, s)
	}
	return out, "publication " + ps[0].ID, nil
}
