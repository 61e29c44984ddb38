package store

import (
	"context"
	"fmt"
	"time"
)

// AsOfReader is what LatestAsOf reads.
type AsOfReader interface {
	ListServers(ctx context.Context, q ListQuery) ([]ServerRow, error)
	VersionHistory(ctx context.Context, name string) ([]Record, error)
}

// HistoriesReader reads many servers' version histories in one call, each
// name's rows in VersionHistory's order. LatestAsOf uses it when the store
// has it: one query per page of the latest view instead of one per server
// (when the store is ahead of asOf, as in a replay, that is every server).
type HistoriesReader interface {
	VersionHistories(ctx context.Context, names []string) (map[string][]Record, error)
}

// LatestAsOf calls fn with every server's latest entry as of asOf, by name:
// the latest view, except that a server whose latest content was observed
// after asOf gets the latest-view rule applied to its versions as they
// were sighted by asOf (LatestOfHistory: a version demoted by a sighting
// after asOf is still latest at asOf, one demoted before is not), and one
// not listed yet at asOf is left out.
// presentOnly leaves out servers not re-observed at asOf exactly: set it for
// a full, non-partial snapshot, which re-observes every listed server, so
// one last seen before it is gone. Both the scorer and the provenance
// processor read the registry this way, so what they conclude at a
// snapshot does not depend on how far the store has got since.
func LatestAsOf(ctx context.Context, r AsOfReader, asOf time.Time, presentOnly bool, fn func(Record) error) error {
	asOf = Millis(asOf)
	cursor := ""
	for {
		rows, err := r.ListServers(ctx, ListQuery{Cursor: cursor, Limit: MaxListLimit})
		if err != nil {
			return fmt.Errorf("latest view: %w", err)
		}
		var hists map[string][]Record
		if hr, ok := r.(HistoriesReader); ok {
			var need []string
			for _, row := range rows {
				if !(presentOnly && row.ObservedAt.Before(asOf)) && row.ObservedAt.After(asOf) {
					need = append(need, row.Name)
				}
			}
			if len(need) > 1 {
				if hists, err = hr.VersionHistories(ctx, need); err != nil {
					return fmt.Errorf("versions of %d servers: %w", len(need), err)
				}
			}
		}
		for _, row := range rows {
			rec := row.Record
			if presentOnly && row.ObservedAt.Before(asOf) {
				continue
			}
			if rec.ObservedAt.After(asOf) {
				var ok bool
				if hists != nil {
					rec, ok = LatestOfHistory(hists[rec.Name], asOf)
				} else if rec, ok, err = latestOf(ctx, r, rec.Name, asOf); err != nil {
					return err
				}
				if !ok {
					continue // not listed yet at asOf
				}
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		if len(rows) < MaxListLimit {
			return nil
		}
		cursor = rows[len(rows)-1].Name
	}
}

// latestOf is the latest-view rule applied to the versions as sighted by asOf.
func latestOf(ctx context.Context, r AsOfReader, name string, asOf time.Time) (Record, bool, error) {
	hist, err := r.VersionHistory(ctx, name)
	if err != nil {
		return Record{}, false, fmt.Errorf("versions of %s: %w", name, err)
	}
	rec, ok := LatestOfHistory(hist, asOf)
	return rec, ok, nil
}
