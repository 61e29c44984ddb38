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
		for _, row := range rows {
			rec := row.Record
			if presentOnly && row.ObservedAt.Before(asOf) {
				continue
			}
			if rec.ObservedAt.After(asOf) {
				var ok bool
				if rec, ok, err = latestOf(ctx, r, rec.Name, asOf); err != nil {
					return err
				} else if !ok {
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
