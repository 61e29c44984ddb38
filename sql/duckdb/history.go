package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/forum-mcp/forum/sql/store"
)

// The histories (health checks, drift events, GitHub observations and the
// processors' results, migrations/0012_append_only.sql) are append-only:
// rows go through DuckDB's appender straight into the table, with no key
// to probe, and every row carries its write's _seq. A redelivered batch is
// a second copy of its rows; every read keeps one row per key (the
// greatest _seq, or for provenance the greatest (stamp, _seq)), as the *_v
// views do. That is ClickHouse's ReplacingMergeTree read with FINAL, done
// by the query instead of a merge; Optimize also deletes the superseded
// copies (the merge), which no read depends on.

// historyTables are the append-only tables and their keys (what a read
// keeps one row of).
var historyTables = []struct{ table, key string }{
	{"health_checks", "id"},
	{"drift_events", "id"},
	{"provenance", "id"},
	{"drift_states", "server, as_of"},
	{"incident_states", "server, as_of"},
	{"owner_bursts", "day, namespace, as_of"},
	{"provenance_signals", "server, as_of"},
	{"base_rates", "as_of, flag"},
	{"provenance_gate", "as_of"},
	{"registry_loads", "snapshot_id"},
}

// nextSeq returns the _seq of a write: greater than every _seq this Store
// handed out and every _seq stored before it was opened, so a later write
// of a key always wins over an earlier one, across restarts too. It is
// the clock in nanoseconds where that is larger (a fresh store needs no
// read to start), else the last value plus one.
func (s *Store) nextSeq(ctx context.Context) (int64, error) {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	if !s.seqLoaded {
		var parts []string
		for _, h := range historyTables {
			parts = append(parts, "SELECT max(_seq) AS m FROM "+h.table)
		}
		var last *int64
		if err := s.db.QueryRowContext(ctx, `SELECT max(m) FROM (`+strings.Join(parts, " UNION ALL ")+`)`).Scan(&last); err != nil {
			return 0, fmt.Errorf("greatest stored _seq: %w", err)
		}
		if last != nil {
			s.seq = *last
		}
		s.seqLoaded = true
	}
	v := time.Now().UnixNano()
	if v <= s.seq {
		v = s.seq + 1
	}
	s.seq = v
	return v, nil
}

// appendRows appends rows to an append-only table on dc (inside the
// caller's transaction) with DuckDB's appender, each row followed by seq.
func appendRows(dc driver.Conn, table string, cols []string, rows [][]any, seq int64) error {
	a, err := duckdb.NewAppenderWithColumns(dc, "", "", table, append(cols[:len(cols):len(cols)], "_seq"))
	if err != nil {
		return err
	}
	vals := make([]driver.Value, len(cols)+1)
	vals[len(cols)] = seq
	for _, r := range rows {
		for i, v := range r {
			vals[i] = v
		}
		if err := a.AppendRow(vals...); err != nil {
			return errors.Join(err, a.Close())
		}
	}
	return a.Close()
}

// dedup is the clause that keeps one row per key of an append-only table
// (the last write), for queries that filter by the key's columns first.
func dedup(key string) string {
	return " QUALIFY row_number() OVER (PARTITION BY " + key + " ORDER BY _seq DESC) = 1"
}

// Optimize merges the histories (each superseded copy of a key is
// deleted, as ClickHouse's OPTIMIZE … FINAL does) and checkpoints the
// database file. Reads never depend on it.
func (s *Store) Optimize(ctx context.Context) error {
	for _, h := range historyTables {
		order := "_seq"
		if h.table == "provenance" {
			order = "(" + provenanceStamp("provenance") + ", _seq)"
		}
		q := `DELETE FROM ` + h.table + ` WHERE rowid IN (SELECT rowid FROM ` + h.table +
			` QUALIFY row_number() OVER (PARTITION BY ` + h.key + ` ORDER BY ` + order + ` DESC) > 1)`
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("duckdb: merge %s: %w", h.table, err)
		}
	}
	if _, err := s.db.ExecContext(ctx, `CHECKPOINT`); err != nil {
		return fmt.Errorf("duckdb: checkpoint: %w", err)
	}
	return nil
}

var _ store.BatchWriter = (*Store)(nil)

// WriteBatch writes every table of a sink's batch in one transaction: one
// commit (WAL write and fsync) instead of one per table, and, all or
// nothing, the orders Batch documents hold trivially.
func (s *Store) WriteBatch(ctx context.Context, b *store.Batch) error {
	var bs []batch
	add := func(n int, f func() []batch) {
		if n > 0 {
			bs = append(bs, f()...)
		}
	}
	one := func(x batch) []batch { return []batch{x} }
	add(len(b.Records), func() []batch { return recordBatches(b.Records) })
	add(len(b.Loads), func() []batch { return one(registryLoadBatch(b.Loads)) })
	add(len(b.Events), func() []batch { return one(eventBatch(b.Events)) })
	if len(b.Snapshots) > 0 {
		x, err := snapshotBatch(b.Snapshots)
		if err != nil {
			return fmt.Errorf("duckdb: write batch: snapshots: %w", err)
		}
		bs = append(bs, x)
	}
	add(len(b.Checks), func() []batch { return one(healthBatch(b.Checks)) })
	add(len(b.Prov), func() []batch { return one(provenanceBatch(b.Prov)) })
	add(len(b.Audit), func() []batch { return one(auditBatch(b.Audit)) })
	add(len(b.Incidents), func() []batch { return one(incidentBatch(b.Incidents)) })
	add(len(b.DLQ), func() []batch { return one(dlqBatch(b.DLQ)) })
	add(len(b.DriftStates), func() []batch { return one(driftStateBatch(b.DriftStates)) })
	add(len(b.IncidentStates), func() []batch { return one(incidentStateBatch(b.IncidentStates)) })
	if len(b.OwnerBursts) > 0 {
		x, err := ownerBurstBatch(b.OwnerBursts)
		if err != nil {
			return fmt.Errorf("duckdb: write batch: owner bursts: %w", err)
		}
		bs = append(bs, x)
	}
	add(len(b.ProvSignals), func() []batch { return one(provenanceSignalBatch(b.ProvSignals)) })
	add(len(b.BaseRates)+len(b.Gates), func() []batch { return baseRateBatches(b.BaseRates, b.Gates) })
	add(len(b.TrustRecords), func() []batch { return one(trustRecordBatch(b.TrustRecords)) })
	if len(bs) == 0 {
		return nil
	}
	if err := s.write(ctx, bs...); err != nil {
		return fmt.Errorf("duckdb: write batch: %w", err)
	}
	// The read models' marker moves after the commit (bulk.go).
	if len(b.Records)+len(b.Loads)+len(b.Events)+len(b.Snapshots)+len(b.TrustRecords) > 0 {
		s.changed()
	}
	return nil
}
