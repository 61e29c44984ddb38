package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/schema"
)

func newReplayCmd() *cobra.Command {
	cfg := &config{}
	var dir, jsonOut string
	var serve bool
	cmd := &cobra.Command{
		Use:   "replay --snapshots DIR",
		Short: "Run the pipeline on snapshot files, then print what it stored",
		Long: `replay feeds registry snapshot files (*.json, *.json.gz; legacy flat or v0.1
{server,_meta} entries; BOM or not) through the same pipeline as 'run': each
file is published on registry.records with its capture time as event time
(from DIR/MANIFEST.tsv, else a YYYY-MM-DD date in the file name), the differ
turns it into drift events, every processor concludes, the scorer publishes
one signed publication per snapshot, and the sinks store everything.

It is resumable: a replay killed at any point and started again with the same
--data-dir ends with the same store contents as one that was never stopped.
When every component has caught up it prints the per-kind event counts and
exits (or keeps serving the API with --serve).

Example:
  forum replay --snapshots ingest/registry/testdata/snapshots
  forum replay --snapshots ../shared/corpus/registry-daily --data-dir /tmp/forum-corpus`,
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
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore|withBus)
			if err != nil {
				return err
			}
			defer a.close()
			specs := component.List(component.RoleProcess)
			if serve {
				specs = append(specs, component.List(component.RoleServe)...)
			}
			rctx, stop := context.WithCancel(ctx)
			defer stop()
			g, gctx := errgroup.WithContext(rctx)
			running, err := a.start(gctx, g, specs)
			if err != nil {
				stop()
				return waitAfter(g, err)
			}
			done := make(chan error, 1)
			go func() {
				start := time.Now()
				if err := a.publishSnapshots(gctx, dir, files); err != nil {
					done <- err
					return
				}
				if err := a.waitCaughtUp(gctx, running, start); err != nil {
					done <- err
					return
				}
				done <- a.printSummary(gctx, jsonOut)
			}()
			select {
			case err := <-done:
				if err != nil {
					stop()
					if gerr := g.Wait(); gerr != nil {
						return gerr // what stopped the pipeline, not the wait it cut short
					}
					return err
				}
			case <-gctx.Done():
				if err := g.Wait(); err != nil {
					return err
				}
				return ctx.Err()
			}
			if serve {
				fmt.Fprintln(os.Stderr, "replay done; serving the API until interrupted")
				return g.Wait()
			}
			stop()
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindAPI(cmd.Flags())
	cfg.bindScorer(cmd.Flags())
	cmd.Flags().StringVar(&dir, "snapshots", "", "directory of snapshot files (required)")
	cmd.Flags().BoolVar(&serve, "serve", false, "keep serving the API after the replay")
	cmd.Flags().StringVar(&jsonOut, "summary-json", "", "also write the summary as JSON to this file ('-' for stdout)")
	return cmd
}

// publishSnapshots publishes the snapshot files on registry.records, each
// once (a progress file under the data dir remembers which are on the bus).
func (a *app) publishSnapshots(ctx context.Context, dir string, files []registry.SnapshotFile) error {
	abs, _ := filepath.Abs(dir)
	sum := sha256.Sum256([]byte(abs))
	prog, err := registry.LoadReplayProgress(filepath.Join(a.cfg.DataDir, "replay", hex.EncodeToString(sum[:8])+".json"))
	if err != nil {
		return err
	}
	w := bus.NewWriter(a.brokers, a.log)
	defer w.Close()
	pub := &registry.Publisher{W: w, Log: a.log}
	start := time.Now()
	i := 0
	err = registry.Replay(ctx, pub, files, prog, func(f registry.SnapshotFile, st registry.SnapshotStats, skipped bool) {
		i++
		state := fmt.Sprintf("%d entries, %d names", st.Entries, st.Names)
		if st.Rejects > 0 {
			state += fmt.Sprintf(", %d to the DLQ", st.Rejects)
		}
		if st.Incomplete {
			state += ", INCOMPLETE"
		}
		if skipped {
			state = "already published"
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %s  %s\n", i, len(files), filepath.Base(f.Path), state)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "published %d snapshots in %s; waiting for the pipeline to catch up\n", len(files), time.Since(start).Round(time.Millisecond))
	return nil
}

// waitCaughtUp waits until every running component has done all its input.
func (a *app) waitCaughtUp(ctx context.Context, running []started, start time.Time) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	lastReport := time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		lag, err := a.lag(ctx, running)
		if err != nil {
			a.log.Debug("lag check", zap.Error(err))
			continue
		}
		if lag == 0 {
			fmt.Fprintf(os.Stderr, "caught up in %s\n", time.Since(start).Round(time.Millisecond))
			return nil
		}
		if time.Since(lastReport) > 2*time.Second {
			fmt.Fprintf(os.Stderr, "  %d messages still to process\n", lag)
			lastReport = time.Now()
		}
	}
}

// summary is what replay prints: what the store holds now.
type summary struct {
	Snapshots     int              `json:"snapshots"`
	PartialDays   []string         `json:"partial_snapshots"`
	EventCounts   map[string]int64 `json:"event_counts"`
	Events        int64            `json:"events"`
	DeadLetters   int64            `json:"dead_letters"`
	Servers       int64            `json:"servers"`
	RecordsStored int64            `json:"registry_records"`
	Publications  int              `json:"publications"`
}

func (a *app) printSummary(ctx context.Context, jsonOut string) error {
	counts, err := a.store.EventCounts(ctx)
	if err != nil {
		return err
	}
	snaps, err := a.store.Snapshots(ctx)
	if err != nil {
		return err
	}
	tables, err := a.store.Counts(ctx)
	if err != nil {
		return err
	}
	s := summary{Snapshots: len(snaps), EventCounts: map[string]int64{}, PartialDays: []string{}, DeadLetters: tables["dlq"], Servers: tables["servers_latest"],
		RecordsStored: tables["registry_records"], Publications: int(tables["publications"])}
	for _, k := range schema.EventKinds {
		s.EventCounts[k] = counts[k]
		s.Events += counts[k]
	}
	for _, sn := range snaps {
		if sn.Partial {
			s.PartialDays = append(s.PartialDays, sn.Source)
		}
	}
	fmt.Printf("snapshots applied: %d (partial, no removals: %s)\n", s.Snapshots, strings.Join(orNone(s.PartialDays), ", "))
	fmt.Printf("servers: %d   registry records: %d   dead letters: %d   publications: %d\n", s.Servers, s.RecordsStored, s.DeadLetters, s.Publications)
	fmt.Printf("drift events: %d\n", s.Events)
	for _, k := range schema.EventKinds {
		fmt.Printf("  %-20s %6d\n", k, s.EventCounts[k])
	}
	if jsonOut != "" {
		b, _ := json.MarshalIndent(s, "", "  ")
		if jsonOut == "-" {
			fmt.Println(string(b))
		} else if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func orNone(xs []string) []string {
	if len(xs) == 0 {
		return []string{"none"}
	}
	return xs
}
