package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
)

// 'forum calibrate': live vs pinned provenance base rates, and the explicit
// adopt step (SPEC §4 "no silent retune").
//
// Where an adopted calibration goes: --adopt writes, into --out (default
// DATA_DIR/method; point it at processors/method to put it in the repo):
//   weights-<version>.json   the new weights file (the current one with the
//                            adopted base rates and method_version = <version>)
//   changelog.json           the embedded change log plus the new row
//   CHANGELOG.md             the new row appended
// Nothing changes for a running scorer: it uses the embedded weights
// (processors/method, weights-v0.1.0.json) until the adopted file is put in
// force explicitly at startup, FORUM_METHOD_WEIGHTS=DATA_DIR/method/
// weights-<version>.json or --method-weights (method.Load: refused unless
// the changelog.json beside it has the row with the file's SHA-256). A
// version's file is never overwritten. calibrate itself takes the same
// variable (or --method-weights), so a second calibration compares with,
// and builds on, the adopted method.

type calibrateReport struct {
	At            time.Time            `json:"at"`
	MethodVersion string               `json:"method_version"`
	WeightsSHA256 string               `json:"weights_sha256"`
	Gate          provenance.GateState `json:"gate"`
	Rates         []provenance.Rate    `json:"rates"`
	Adopted       *provenance.Adoption `json:"adopted,omitempty"`
	Written       []string             `json:"written,omitempty"`
}

func newCalibrateCmd() *cobra.Command {
	cfg := &config{}
	var adopt, asJSON bool
	var version, out, atStr, state string
	var minN int
	cmd := &cobra.Command{
		Use:   "calibrate [--adopt --version V]",
		Short: "Compare live provenance base rates with the pinned calibration; --adopt makes them a new method version",
		Long: `calibrate reads the provenance processor's checkpoint (DATA_DIR/provenance-state.json:
the latest GitHub observation per repo and the registry listings) and prints, for
every provenance flag, the live registry-wide base rate (count / n), the rate pinned
by the method version in force, and the difference in percentage points.

Scores always use the pinned rates. --adopt writes a NEW method version: a new
weights file with the live rates (only flags with n >= --min-n), a change-log row in
changelog.json and CHANGELOG.md, into --out (default DATA_DIR/method). It never
edits the current weights file, and refuses to overwrite a version. The new file
is in force once named at startup: FORUM_METHOD_WEIGHTS=<out>/weights-<version>.json
(refused unless <out>/changelog.json holds its row with the same weights_sha256).

Examples:
  forum calibrate --data-dir ./data
  forum calibrate --adopt --version 0.1.0-draft6
  FORUM_METHOD_WEIGHTS=./data/method/weights-0.1.0-draft6.json forum run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := method.Load(cfg.MethodWeights)
			if err != nil {
				return usageError{fmt.Errorf("--method-weights: %w", err)}
			}
			if state == "" {
				state = filepath.Join(cfg.DataDir, provenance.CheckpointFile)
			}
			if _, err := os.Stat(state); err != nil {
				return usageError{fmt.Errorf("no provenance state at %s (run the pipeline with 'forum github' first): %w", state, err)}
			}
			st, err := provenance.Load(state)
			if err != nil {
				return err
			}
			at := time.Now().UTC()
			if atStr != "" {
				if at, err = time.Parse(time.RFC3339, atStr); err != nil {
					return usageError{fmt.Errorf("--at: %w", err)}
				}
			}
			snap := st.Snapshot(m.Weights, at)
			rep := calibrateReport{At: snap.At, MethodVersion: m.Version(), WeightsSHA256: m.SHA256, Gate: snap.Gate, Rates: snap.Rates}
			if adopt {
				if version == "" {
					version = m.Version() + "-cal" + at.Format("20060102")
				}
				a, err := provenance.Adopt(m.Raw, snap.Rates, version, at.Format("2006-01-02"), minN)
				if err != nil {
					return err
				}
				if out == "" {
					out = filepath.Join(cfg.DataDir, "method")
				}
				written, err := provenance.WriteAdoption(out, a, m)
				if err != nil {
					return err
				}
				rep.Adopted, rep.Written = &a, written
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printCalibration(cmd, rep)
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cmd.Flags().BoolVar(&adopt, "adopt", false, "write the live rates as a new method version (weights file + change-log row)")
	cmd.Flags().StringVar(&version, "version", "", "the new method version for --adopt (default <current>-calYYYYMMDD)")
	cmd.Flags().StringVar(&out, "out", "", "where --adopt writes (default DATA_DIR/method; processors/method for the repo)")
	cmd.Flags().IntVar(&minN, "min-n", provenance.MinAdoptN, "smallest denominator whose live rate --adopt takes")
	cmd.Flags().StringVar(&atStr, "at", "", "evaluate at this time (RFC 3339; default now)")
	cmd.Flags().StringVar(&state, "state", "", "provenance checkpoint (default DATA_DIR/"+provenance.CheckpointFile+")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printCalibration(cmd *cobra.Command, rep calibrateReport) {
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "method %s  weights %s…  at %s\n", rep.MethodVersion, rep.WeightsSHA256[:12], rep.At.Format(time.RFC3339))
	fmt.Fprintf(w, "coverage gate: open=%v  %.2f%% of %d repos fresh (< 48 h)\n\n", rep.Gate.Open, rep.Gate.CoveragePct, rep.Gate.Resolvable)
	fmt.Fprintln(w, "flag\tlive\tcount/n\tpinned\tΔ pp\tdenominator")
	f := func(p *float64, scale float64, format string) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf(format, *p*scale)
	}
	for _, r := range rep.Rates {
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\t%s\t%s\n", r.Flag, f(r.Live, 100, "%.2f%%"), r.Count, r.N, f(r.Pinned, 100, "%.2f%%"), f(r.DeltaPP, 1, "%+.2f"), r.Denominator)
	}
	w.Flush()
	if rep.Adopted != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "\nadopted as method %s (previous %s):\n", rep.Adopted.Version, rep.Adopted.Previous)
		for _, c := range rep.Adopted.Changed {
			fmt.Fprintln(cmd.OutOrStdout(), "  "+c)
		}
		for _, p := range rep.Written {
			fmt.Fprintln(cmd.OutOrStdout(), "  wrote "+p)
		}
		if len(rep.Written) > 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "in force only once named at startup: %s=%s (no silent retune)\n", method.EnvWeights, rep.Written[0])
		}
	}
}
