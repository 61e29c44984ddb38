package clickhouse

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

var _ store.BulkReader = (*Store)(nil)

// markerTables are the tables whose writes ChangeMarker reports: what the
// API's read models are built from (records, the latest view, drift
// events, snapshots, publications and their records) and registry_loads,
// which says when the latest view holds a whole snapshot.
var markerTables = []string{"registry_records", "registry_sightings", "servers_latest", "drift_events", "snapshots", "trust_records", "publications", "registry_loads"}

// ChangeMarker hashes, per marker table, the greatest block number of its
// active parts. Every INSERT makes a new part with a new block number,
// while a merge keeps the greatest block number of what it merges, so the
// marker moves on each write and on nothing else (OPTIMIZE included). It
// reads system.parts only: metadata, no table data.
func (s *Store) ChangeMarker(ctx context.Context) (string, error) {
	h := fnv.New64a()
	err := s.query(ctx, func(rows driver.Rows) error {
		var table string
		var block int64
		if err := rows.Scan(&table, &block); err != nil {
			return err
		}
		fmt.Fprintf(h, "%s=%d;", table, block)
		return nil
	}, `SELECT table, max(max_block_number) FROM system.parts
		WHERE database = ? AND active AND table IN ('`+strings.Join(markerTables, "', '")+`') GROUP BY table ORDER BY table`, s.database)
	if err != nil {
		return "", fmt.Errorf("clickhouse: change marker: %w", err)
	}
	return strconv.FormatUint(h.Sum64(), 16), nil
}

// latestKeys picks, per name, the winning candidate of servers_latest on
// the key columns only (ListServers' order), so the server objects of the
// other candidates are never sorted.
const latestKeys = `SELECT name, published_at_ms, version, content_sha256 FROM servers_latest FINAL` + latestOrder

// AllLatest returns every row of the latest view ordered by name: the
// winners' keys first, then their full rows. The outer LIMIT 1 BY name
// keeps one row per name should a re-observation land between the two
// reads of servers_latest.
func (s *Store) AllLatest(ctx context.Context) ([]store.Record, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+recordCols+` FROM servers_latest FINAL
		WHERE (name, published_at_ms, version, content_sha256) IN (`+latestKeys+`)`+latestOrder)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: all latest: %w", err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: all latest: %w", err)
	}
	if recs == nil {
		recs = []store.Record{}
	}
	return recs, nil
}

// AllVersions streams every stored record, by name then as Versions orders
// and serves them (the server object left empty). Rows reach fn as the
// driver decodes blocks, one server's rows held at a time for
// store.ServeVersions: the table is never held in memory here.
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
	err := s.query(ctx, func(rows driver.Rows) error {
		r, err := scanHistory(rows)
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
	}, fmt.Sprintf(historyQuery, "''", "", ""))
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("clickhouse: all versions: %w", err)
	}
	return nil
}

// AllEvents streams every drift event by server, observed_at, id.
func (s *Store) AllEvents(ctx context.Context, fn func(schema.DriftEvent) error) error {
	err := s.query(ctx, func(rows driver.Rows) error {
		var e schema.DriftEvent
		var obs int64
		var bump uint8
		if err := rows.Scan(&e.ID, &e.Server, &e.Namespace, &e.Kind, &e.Version, &e.Before, &e.After,
			&obs, &bump, &e.SnapshotID); err != nil {
			return err
		}
		e.ObservedAt, e.VersionBump = fromMS(obs), bump != 0
		return fn(e)
	}, `SELECT `+eventCols+` FROM drift_events FINAL ORDER BY server, observed_at_ms, id`)
	if err != nil {
		return fmt.Errorf("clickhouse: all events: %w", err)
	}
	return nil
}
