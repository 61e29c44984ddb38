package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
)

// errPartialInput is the error of a diff refused because an input cannot be
// read whole (exit status 1).
var errPartialInput = errors.New("refusing to diff an input that cannot be read whole (nothing printed; --allow-partial diffs what could be read)")

func newDiffCmd() *cobra.Command {
	var ratio float64
	var allowPartial bool
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Print the drift events between two snapshot files as JSON lines",
		Long: `diff compares two snapshot files (json or json.gz, either registry format) and
prints one drift event per line on stdout (SPEC §2 fields), then a count per
kind on stderr. The event time is NEW's capture time (from a MANIFEST.tsv
beside it, else a date in its name, else now).

When NEW holds fewer than --partial-ratio of OLD's names it is read as a
partial crawl: removals are not reported.

Both files must read whole. One that cannot (empty, not gzip or not JSON,
truncated, or holding entries that fail validation, such as one without a
server.name) stops the diff before anything is printed, with exit status 1
and a reason naming the file: an incomplete OLD is no baseline (every server
it lacks would read as new), and an incomplete NEW cannot say what is gone.
Duplicate entries and versions over the per-server bound are skipped with a
note; they hide no server.

--allow-partial diffs what could be read instead, with a warning on stderr:
  an incomplete NEW is read as a partial crawl (no removals reported);
  an incomplete OLD is a partial baseline: new_server and version_added are
  not reported (what OLD lacks may be our read's fault, not the registry's),
  changes and removals still are.

Exit status: 0 diffed, 1 an input cannot be read whole or another error,
2 bad usage.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(2)(cmd, args); err != nil {
				return usageError{err}
			}
			if !(ratio > 0 && ratio <= 1) {
				return usageError{fmt.Errorf("--partial-ratio %v: want a share in (0, 1]", ratio)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			old, err := readDiffInput("OLD", args[0], stderr)
			if err != nil {
				return err
			}
			cur, err := readDiffInput("NEW", args[1], stderr)
			if err != nil {
				return err
			}
			var faults []string
			for _, in := range []*diffInput{old, cur} {
				if in.fault != "" {
					faults = append(faults, in.fault)
				}
			}
			if len(faults) > 0 && !allowPartial {
				return fmt.Errorf("%w:\n  %s", errPartialInput, strings.Join(faults, "\n  "))
			}
			if old.fault != "" {
				fmt.Fprintf(stderr, "WARNING: %s\n  OLD is a partial baseline: new_server and version_added are not reported\n", old.fault)
			}
			if cur.fault != "" {
				fmt.Fprintf(stderr, "WARNING: %s\n  NEW is read as a partial listing: removals are not reported\n", cur.fault)
			}

			// An incomplete OLD is applied as a partial listing too, so a
			// server it shows only by older versions gets a stand-in view,
			// and NEW's latest is no change from it.
			base := differ.Diff(differ.NewState(), old.snap, differ.Options{}).Next
			res := differ.Diff(base, cur.snap, differ.Options{PartialRatio: ratio})
			evs, dropped := res.Events, 0
			if old.fault != "" {
				evs = slices.DeleteFunc(slices.Clone(evs), func(e schema.DriftEvent) bool {
					return e.Kind == schema.KindNewServer || e.Kind == schema.KindVersionAdded
				})
				dropped = len(res.Events) - len(evs)
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			for i := range evs {
				if err := enc.Encode(&evs[i]); err != nil {
					return err
				}
			}
			note := ""
			if res.Partial {
				note = " (partial: removals suppressed; " + res.PartialReason + ")"
			}
			if dropped > 0 {
				note += fmt.Sprintf(" (%d new_server/version_added not reported: OLD is incomplete)", dropped)
			}
			fmt.Fprintf(stderr, "%d events%s: %s\n", len(evs), note, differ.FormatCounts(differ.Counts(evs)))
			return nil
		},
	}
	cmd.Flags().Float64Var(&ratio, "partial-ratio", differ.DefaultPartialRatio, "share of OLD's names NEW must hold to be trusted for removals")
	cmd.Flags().BoolVar(&allowPartial, "allow-partial", false, "diff inputs that cannot be read whole (see above) instead of refusing")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return cmd
}

// diffInput is one side of a diff.
type diffInput struct {
	snap  differ.Snapshot
	fault string // why the file cannot be read whole; "" when it can
}

// Bounds of what the diff command prints of a reader's message.
const (
	maxFaultDetail = 300
	maxRejectLines = 5
)

// readDiffInput reads one snapshot file. The error is for a file that
// cannot be opened at all; a file that opens but cannot be read whole has
// a fault that names it, says what is wrong and where.
func readDiffInput(role, path string, stderr io.Writer) (*diffInput, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s %s: a directory, want a snapshot file", role, path)
	}
	f := registry.SnapshotFile{Path: path, CapturedAt: captureTime(path)}
	entries, rejects, st, err := registry.LoadSnapshotFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", role, path, err)
	}
	in := &diffInput{snap: differ.Snapshot{ID: registry.SnapshotID(f.CapturedAt), Mode: schema.ModeFull, ObservedAt: f.CapturedAt,
		Entries: entries, Incomplete: !st.Whole()}}
	var brk *schema.DLQMessage
	if st.Incomplete && len(rejects) > 0 {
		brk = &rejects[len(rejects)-1] // the reader's dead letter for the break is its last
		rejects = rejects[:len(rejects)-1]
	}
	var unreadable, skipped []schema.DLQMessage
	for _, r := range rejects {
		switch r.Reason {
		case schema.ReasonDuplicateEntry, schema.ReasonTooManyVersions:
			skipped = append(skipped, r)
		default:
			unreadable = append(unreadable, r)
		}
	}
	where := role + " " + path
	switch {
	case fi.Size() == 0:
		in.fault = where + ": empty file (0 bytes)"
	case brk != nil:
		in.fault = where + ": " + breakReason(path, *brk)
	case st.Incomplete:
		in.fault = where + ": could not be read to its end"
	case st.Unreadable > 0:
		in.fault = fmt.Sprintf("%s: %d entries fail validation (%s)", where, st.Unreadable, reasonCounts(unreadable))
	}
	if in.fault != "" && len(unreadable) > 0 {
		in.fault += "\n    first: " + schema.Bound(unreadable[0].Detail, maxFaultDetail)
	}
	for i, r := range skipped {
		if i == maxRejectLines {
			fmt.Fprintf(stderr, "%s: ... and %d more skipped\n", where, len(skipped)-i)
			break
		}
		fmt.Fprintf(stderr, "%s: skipped %s: %s\n", where, r.Reason, schema.Bound(r.Detail, maxFaultDetail))
	}
	return in, nil
}

// breakReason says in an operator's words why a document broke off, from
// the reader's dead letter for it.
func breakReason(path string, d schema.DLQMessage) string {
	detail := schema.Bound(d.Detail, maxFaultDetail)
	what := ""
	switch {
	case d.Reason == schema.ReasonNotJSON:
		what = "not JSON: " + detail
	case d.Reason == schema.ReasonTruncatedJSON && strings.Contains(detail, "is empty"):
		what = "empty: " + detail
	case d.Reason == schema.ReasonTruncatedJSON:
		what = "truncated: " + detail
	case d.Reason == schema.ReasonBodyTooLarge:
		what = "too large: " + detail
	case strings.HasPrefix(detail, "bad gzip header"):
		what = "not gzip: " + detail
	case strings.Contains(detail, "gzip stream is corrupt"):
		what = "corrupt gzip stream: " + detail
	default:
		what = "not a snapshot (malformed JSON): " + detail
	}
	if strings.HasSuffix(path, ".gz") && !isGzip(path) {
		what = "not gzip (the name ends in .gz, the bytes are no gzip stream), and " + what
	}
	return what
}

// isGzip reports whether the file starts with gzip's magic bytes.
func isGzip(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [2]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && magic == [2]byte{0x1f, 0x8b}
}

// reasonCounts renders "missing_name 2, invalid_name 1" in first-seen order.
func reasonCounts(ds []schema.DLQMessage) string {
	var order []string
	n := map[string]int{}
	for _, d := range ds {
		if n[d.Reason] == 0 {
			order = append(order, d.Reason)
		}
		n[d.Reason]++
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%s %d", r, n[r])
	}
	return strings.Join(parts, ", ")
}
