package duckdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

var _ store.BulkReader = (*Store)(nil)

// newNonce names one Store's run of ChangeMarker values.
func newNonce() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // never fails (crypto/rand); a zero nonce would only weaken the marker across reopens
	return hex.EncodeToString(b)
}

// changed counts a committed write the read models can see. Called after
// the commit, never before: a reader that sees the new marker then reads
// the new rows.
func (s *Store) changed() { s.changes.Add(1) }

// ChangeMarker returns the Store's nonce and its count of committed writes
// to the tables the read models are built from (records, the latest view,
// drift events, snapshots, trust records, publications, registry loads).
// A counter in the process, not a read of the file: the embedded process
// owns the DuckDB file (DuckDB locks it), so every write goes through this
// Store, and DuckDB has no cheap per-table version to read instead. The
// nonce makes markers of two Stores over the same file differ.
func (s *Store) ChangeMarker(ctx context.Context) (string, error) {
	return s.nonce + "-" + strconv.FormatUint(s.changes.Load(), 10), nil
}

// AllLatest returns every row of the latest view ordered by name.
func (s *Store) AllLatest(ctx context.Context) ([]store.Record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+recordSelect+` FROM servers_latest ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("duckdb: all latest: %w", err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: all latest: %w", err)
	}
	if recs == nil {
		recs = []store.Record{}
	}
	return recs, nil
}

// AllVersions calls fn for every stored record, by name then as Versions
// orders and serves them (the server object left empty), while iterating
// the rows: one server's rows are held at a time, for store.ServeVersions.
func (s *Store) AllVersions(ctx context.Context, fn func(store.Record) error) error {
	var group []store.Record
	flush := func() error {
		for _, r := range store.ServeVersions(group) {
			if err := fn(r); err != nil {
				return err
			}
		}
		group = group[:0]
		return nil
	}
	err := s.query(ctx, func(rows *sql.Rows) error {
		r, err := scanHistory(rows, false)
		if err != nil {
			return err
		}
		if len(group) > 0 && group[0].Name != r.Name {
			if err := flush(); err != nil {
				return err
			}
		}
		group = append(group, r)
		return nil
	}, fmt.Sprintf(historySelect, "NULL", ""))
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("duckdb: all versions: %w", err)
	}
	return nil
}

// AllEvents calls fn for every drift event by server, observed_at, id.
func (s *Store) AllEvents(ctx context.Context, fn func(schema.DriftEvent) error) error {
	err := s.query(ctx, func(rows *sql.Rows) error {
		var e schema.DriftEvent
		if err := rows.Scan(&e.ID, &e.Server, &e.Namespace, &e.Kind, &e.Version, &e.Before, &e.After,
			&e.ObservedAt, &e.VersionBump, &e.SnapshotID); err != nil {
			return err
		}
		e.ObservedAt = e.ObservedAt.UTC()
		return fn(e)
	}, `SELECT `+strings.Join(eventCols, ", ")+` FROM drift_events_v ORDER BY server, observed_at, id`)
	if err != nil {
		return fmt.Errorf("duckdb: all events: %w", err)
	}
	return nil
}
