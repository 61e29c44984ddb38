package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/ownerburst"
	"github.com/forum-mcp/forum/schema"
)

// burstDay is the detector's answer at one snapshot's capture time.
type burstDay struct {
	Day            string                      `json:"day"`
	At             time.Time                   `json:"at"`
	Snapshot       string                      `json:"snapshot"`
	Partial        bool                        `json:"partial"`
	Namespaces     int                         `json:"namespaces"` // namespaces in the known registry
	Servers        int                         `json:"servers"`
	Records        int                         `json:"records"`
	Flagged        []ownerburst.NamespaceBurst `json:"flagged"`
	FlaggedServers int                         `json:"flagged_servers"` // servers of flagged namespaces
	FlaggedRecords int                         `json:"flagged_records"` // registry records (all versions) of flagged namespaces
}

// burstReport is what `forum bursts` prints.
type burstReport struct {
	Snapshots         int            `json:"snapshots"`
	Baseline          string         `json:"baseline"`
	Days              []burstDay     `json:"days"`
	DistinctFlagged   []string       `json:"distinct_flagged"`
	FlaggedDays       map[string]int `json:"flagged_days"` // namespace -> days flagged
	NamespaceDays     int            `json:"namespace_days"`
	DaysWithFlag      int            `json:"days_with_flag"`
	MaxFlaggedRecords int            `json:"max_flagged_records"`
	MaxRecordsShare   float64        `json:"max_records_share"`
	LastNamespaces    int            `json:"last_namespaces"`
}

// burstsOver replays snapshot files through the pure differ and the
// detector (the same code the pipeline's stages run), evaluating the
// detector at each capture time.
func burstsOver(files []registry.SnapshotFile, progress func(string)) (*burstReport, error) {
	known := differ.NewState()
	det := ownerburst.NewStateWith(method.Embedded().Weights)
	rep := &burstReport{FlaggedDays: map[string]int{}}
	for _, f := range files {
		entries, _, st, err := registry.LoadSnapshotFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		snap := differ.Snapshot{ID: registry.SnapshotID(f.CapturedAt), Mode: schema.ModeFull, ObservedAt: f.CapturedAt, Entries: entries, Incomplete: !st.Whole()}
		res := differ.Diff(known, snap, differ.Options{})
		known = res.Next
		det.ApplySnapshot(schema.SnapshotSummary{ID: snap.ID, ObservedAt: snap.ObservedAt, Source: filepath.Base(f.Path)})
		det.Apply(res.Events...)
		det.Prune(snap.ObservedAt) // as the stage does at each released snapshot
		if rep.Baseline == "" {
			rep.Baseline = filepath.Base(f.Path)
		}
		day := burstDay{Day: f.CapturedAt.UTC().Format("2006-01-02"), At: f.CapturedAt.UTC(), Snapshot: filepath.Base(f.Path), Partial: res.Partial}
		day.Flagged = det.Flagged(f.CapturedAt)
		flagged := map[string]bool{}
		for _, b := range day.Flagged {
			flagged[b.Namespace] = true
		}
		nss := map[string]bool{}
		for name, vs := range known.Versions {
			ns := schema.Namespace(name)
			nss[ns] = true
			day.Servers++
			day.Records += len(vs)
			if flagged[ns] {
				day.FlaggedServers++
				day.FlaggedRecords += len(vs)
			}
		}
		day.Namespaces = len(nss)
		rep.Days = append(rep.Days, day)
		if progress != nil {
			progress(fmt.Sprintf("%s  %d servers  %d flagged", day.Day, day.Servers, len(day.Flagged)))
		}
	}
	rep.Snapshots = len(files)
	for _, d := range rep.Days {
		if len(d.Flagged) > 0 {
			rep.DaysWithFlag++
		}
		rep.NamespaceDays += len(d.Flagged)
		for _, b := range d.Flagged {
			rep.FlaggedDays[b.Namespace]++
		}
		if d.FlaggedRecords > rep.MaxFlaggedRecords {
			rep.MaxFlaggedRecords = d.FlaggedRecords
			rep.MaxRecordsShare = float64(d.FlaggedRecords) / float64(max(d.Records, 1))
		}
	}
	for ns := range rep.FlaggedDays {
		rep.DistinctFlagged = append(rep.DistinctFlagged, ns)
	}
	sort.Strings(rep.DistinctFlagged)
	if rep.DistinctFlagged == nil {
		rep.DistinctFlagged = []string{}
	}
	if n := len(rep.Days); n > 0 {
		rep.LastNamespaces = rep.Days[n-1].Namespaces
	}
	return rep, nil
}

func newBurstsCmd() *cobra.Command {
	var dir, jsonOut string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "bursts --snapshots DIR",
		Short: "Report which namespaces the owner-burst detector flags on which days",
		Long: `bursts replays snapshot files offline (the differ and the owner-burst detector
of the pipeline, no bus, no store) and evaluates the detector (SPEC §4 Owner
burst, draft6: 7 windows of 24 h ending at each capture; recurring_burst when
>= 10 new servers in >= 2 windows, first_window_burst when >= 20 in the current
one) at every capture time. It prints, per day, the flagged namespaces with
their per-window counts and how many servers and registry records (all
versions) they hold, then a summary: how sparse the flag is at namespace level
and how far it reaches at record level.

The first capture is the baseline (every server in it is "new"): its events
never count as a burst.

Example:
  forum bursts --snapshots ../shared/corpus/registry-daily`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usageError{errors.New("--snapshots DIR is required")}
			}
			files, err := registry.ListSnapshots(dir)
			if err != nil {
				return usageError{err}
			}
			if len(files) == 0 {
				return usageError{fmt.Errorf("no *.json or *.json.gz snapshot files in %s", dir)}
			}
			var progress func(string)
			if !quiet {
				progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
			}
			rep, err := burstsOver(files, progress)
			if err != nil {
				return err
			}
			printBursts(rep)
			if jsonOut != "" {
				b, _ := json.MarshalIndent(rep, "", "  ")
				if jsonOut == "-" {
					fmt.Println(string(b))
				} else if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "snapshots", "", "directory of snapshot files (required)")
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the report as JSON to this file ('-' for stdout)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no per-file progress on stderr")
	return cmd
}

func printBursts(rep *burstReport) {
	fmt.Printf("snapshots: %d (baseline %s, its servers never count as new)\n", rep.Snapshots, rep.Baseline)
	fmt.Printf("%-10s  %-40s  %-9s  %-9s  %-22s  %8s  %8s\n", "day", "flagged namespace", "recurring", "first_win", "per_window_new", "servers", "records")
	for _, d := range rep.Days {
		for _, b := range d.Flagged {
			per := make([]string, len(b.PerWindowNew))
			for i, n := range b.PerWindowNew {
				per[i] = fmt.Sprint(n)
			}
			fmt.Printf("%-10s  %-40s  %-9v  %-9v  %-22s  %8s  %8s\n", d.Day, b.Namespace, b.RecurringBurst, b.FirstWindowBurst, strings.Join(per, ","), "", "")
		}
		if len(d.Flagged) > 0 {
			fmt.Printf("%-10s  %-40s  %-9s  %-9s  %-22s  %8d  %8d   of %d servers / %d records (%.2f%% of records)\n", d.Day, fmt.Sprintf("= %d of %d namespaces", len(d.Flagged), d.Namespaces), "", "", "",
				d.FlaggedServers, d.FlaggedRecords, d.Servers, d.Records, 100*float64(d.FlaggedRecords)/float64(max(d.Records, 1)))
		}
	}
	fmt.Printf("\ndays with a flag: %d of %d; namespace-days flagged: %d; distinct namespaces flagged: %d of %d (%.2f%%)\n",
		rep.DaysWithFlag, len(rep.Days), rep.NamespaceDays, len(rep.DistinctFlagged), rep.LastNamespaces,
		100*float64(len(rep.DistinctFlagged))/float64(max(rep.LastNamespaces, 1)))
	fmt.Printf("largest record reach on one day: %d records (%.2f%% of that day's records)\n", rep.MaxFlaggedRecords, 100*rep.MaxRecordsShare)
	for _, ns := range rep.DistinctFlagged {
		fmt.Printf("  %-40s flagged on %d day(s)\n", ns, rep.FlaggedDays[ns])
	}
}
