package clickhouse

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/forum-mcp/forum/sql/store"
)

// The store.ResultStore half of the ClickHouse store (tables of
// migrations/0009_results.sql): ReplacingMergeTree without a version column
// whose ORDER BY is the key, so the last inserted row of a key wins; every
// read goes through FINAL (18.16 has no other way to see one row per key
// before a merge), with readCtx so filters apply after the replacing merge.

var _ store.ResultStore = (*Store)(nil)

// resultTables are the tables of migrations/0009_results.sql (Optimize
// merges them too; OPTIMIZE of a materialized view merges its table).
var resultTables = []string{"drift_states", "incident_states", "owner_bursts", "provenance_signals", "base_rates", "provenance_gate",
	"registry_loads", "publication_leaves"}

const driftStateCols = "server, namespace, as_of_ms, score, strong_negative, events, state"

// InsertDriftStates appends drift_states rows; the last write of (server, as_of) wins.
func (s *Store) InsertDriftStates(ctx context.Context, rows []store.DriftStateRow) error {
	rows = store.ReduceDriftStates(rows)
	err := s.send(ctx, "INSERT INTO drift_states ("+driftStateCols+")", len(rows), func(b driver.Batch) error {
		for _, r := range rows {
			if err := b.Append(r.Server, r.Namespace, ms(r.AsOf), r.Score, b8(r.StrongNegative), int32(r.Events), r.State); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert drift_states: %w", err)
	}
	return nil
}

const incidentStateCols = "server, as_of_ms, score, incidents, counted, state"

// InsertIncidentStates appends incident_states rows; the last write of (server, as_of) wins.
func (s *Store) InsertIncidentStates(ctx context.Context, rows []store.IncidentStateRow) error {
	rows = store.ReduceIncidentStates(rows)
	err := s.send(ctx, "INSERT INTO incident_states ("+incidentStateCols+")", len(rows), func(b driver.Batch) error {
		for _, r := range rows {
			if err := b.Append(r.Server, ms(r.AsOf), r.Score, int32(r.Incidents), int32(r.Counted), r.State); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert incident_states: %w", err)
	}
	return nil
}

const ownerBurstCols = "namespace, day, as_of_ms, flagged, recurring_burst, first_window_burst, windows_over_threshold, current_window_new, state"

// InsertOwnerBursts appends owner_bursts rows; the last write of (namespace, day, as_of) wins.
func (s *Store) InsertOwnerBursts(ctx context.Context, rows []store.OwnerBurstRow) error {
	if err := store.CheckOwnerBursts(rows); err != nil {
		return fmt.Errorf("clickhouse: insert owner_bursts: %w", err)
	}
	rows = store.ReduceOwnerBursts(rows)
	err := s.send(ctx, "INSERT INTO owner_bursts ("+ownerBurstCols+")", len(rows), func(b driver.Batch) error {
		for _, r := range rows {
			day, _ := store.ParseDay(r.Day) // checked above; UTC midnight, which the Date column stores as that day
			if err := b.Append(r.Namespace, day, ms(r.AsOf), b8(r.Flagged), b8(r.RecurringBurst), b8(r.FirstWindowBurst),
				int32(r.WindowsOverThreshold), int32(r.CurrentWindowNew), r.State); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert owner_bursts: %w", err)
	}
	return nil
}

const provenanceSignalCols = "server, as_of_ms, repo, repo_url, score, reason, observed, resolved, " +
	"flag_fork, flag_archived, flag_no_license, flag_repo_under_30d, flag_namespace_owner_mismatch, " +
	"flag_late_gt_30d, flag_late_1_30d, flag_no_commits_90d, flag_single_author_90d, flag_commit_cap_hit, " +
	"flag_co_registration, flag_one_repo_many, flag_verified_90d, flag_stars_ge_100, flag_owner_older_than_1y, state"

// signalFlags are the flag columns of a row, in provenanceSignalCols order.
func signalFlags(r *store.ProvenanceSignalRow) []*bool {
	return []*bool{&r.Fork, &r.Archived, &r.NoLicense, &r.RepoUnder30d, &r.NamespaceOwnerMismatch,
		&r.LateGT30d, &r.Late1to30d, &r.NoCommits90d, &r.SingleAuthor90d, &r.CommitCap,
		&r.CoRegistration, &r.OneRepoMany, &r.Verified90d, &r.StarsGE100, &r.OwnerOld1y}
}

// InsertProvenanceSignals appends provenance_signals rows; the last write of (server, as_of) wins.
func (s *Store) InsertProvenanceSignals(ctx context.Context, rows []store.ProvenanceSignalRow) error {
	rows = store.ReduceProvenanceSignals(rows)
	err := s.send(ctx, "INSERT INTO provenance_signals ("+provenanceSignalCols+")", len(rows), func(b driver.Batch) error {
		for i := range rows {
			r := &rows[i]
			args := []any{r.Server, ms(r.AsOf), r.Repo, r.RepoURL, r.Score, r.Reason, b8(r.Observed), b8(r.Resolved)}
			for _, f := range signalFlags(r) {
				args = append(args, b8(*f))
			}
			if err := b.Append(append(args, r.State)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert provenance_signals: %w", err)
	}
	return nil
}

const baseRateCols = "flag, as_of_ms, denominator, flagged, n, live, pinned, delta_pp, scored, direction, method_version, state"

const gateCols = "as_of_ms, open, coverage_pct, resolvable, fresh, observed, state"

// InsertBaseRates appends base_rates rows, then provenance_gate rows (no
// multi-table transactions here: a failed second write is retried by the
// caller, and both are idempotent).
func (s *Store) InsertBaseRates(ctx context.Context, rates []store.BaseRateRow, gates []store.GateRow) error {
	rates, gates = store.ReduceBaseRates(rates), store.ReduceGates(gates)
	err := s.send(ctx, "INSERT INTO base_rates ("+baseRateCols+")", len(rates), func(b driver.Batch) error {
		for _, r := range rates {
			if err := b.Append(r.Flag, ms(r.AsOf), r.Denominator, int64(r.Count), int64(r.N), r.Live, r.Pinned, r.DeltaPP,
				b8(r.Scored), r.Direction, r.MethodVersion, r.State); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert base_rates: %w", err)
	}
	err = s.send(ctx, "INSERT INTO provenance_gate ("+gateCols+")", len(gates), func(b driver.Batch) error {
		for _, g := range gates {
			if err := b.Append(ms(g.AsOf), b8(g.Open), g.CoveragePct, int64(g.Resolvable), int64(g.Fresh), int64(g.Observed), g.State); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert provenance_gate: %w", err)
	}
	return nil
}

const registryLoadCols = "snapshot_id, observed_at_ms, entries"

// InsertRegistryLoads records loaded snapshots; the last write of an id wins.
func (s *Store) InsertRegistryLoads(ctx context.Context, rows []store.RegistryLoad) error {
	rows = store.ReduceRegistryLoads(rows)
	err := s.send(ctx, "INSERT INTO registry_loads ("+registryLoadCols+")", len(rows), func(b driver.Batch) error {
		for _, r := range rows {
			if err := b.Append(r.SnapshotID, ms(r.ObservedAt), int64(r.Entries)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert registry_loads: %w", err)
	}
	return nil
}

// SnapshotLoaded reports whether a registry_loads row of the snapshot
// exists (any copy will do: no FINAL needed to know that one exists).
func (s *Store) SnapshotLoaded(ctx context.Context, snapshotID string) (bool, error) {
	var n uint64
	if err := s.conn.QueryRow(ctx, `SELECT count() FROM registry_loads WHERE snapshot_id = ?`, snapshotID).Scan(&n); err != nil {
		return false, fmt.Errorf("clickhouse: snapshot %q loaded: %w", snapshotID, err)
	}
	return n > 0, nil
}

// query runs q with readCtx and calls scan for every row. When scan fails
// the query is cancelled before the rows are closed: Close would otherwise
// drain the rest of the result (AllVersions' callback may stop early).
func (s *Store) query(ctx context.Context, scan func(rows driver.Rows) error, q string, args ...any) error {
	ctx, cancel := context.WithCancel(readCtx(ctx))
	defer cancel()
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := scan(rows); err != nil {
			cancel()
			rows.Close() // its error is the cancellation's; scan's is the one to report
			return err
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// LatestProvenanceSignal returns the server's newest provenance_signals row.
func (s *Store) LatestProvenanceSignal(ctx context.Context, server string) (store.ProvenanceSignalRow, error) {
	var out []store.ProvenanceSignalRow
	err := s.query(ctx, func(rows driver.Rows) error {
		var r store.ProvenanceSignalRow
		var at int64
		var observed, resolved uint8
		var flags [15]uint8
		dst := []any{&r.Server, &at, &r.Repo, &r.RepoURL, &r.Score, &r.Reason, &observed, &resolved}
		for i := range flags {
			dst = append(dst, &flags[i])
		}
		if err := rows.Scan(append(dst, &r.State)...); err != nil {
			return err
		}
		r.AsOf, r.Observed, r.Resolved = fromMS(at), observed != 0, resolved != 0
		for i, f := range signalFlags(&r) {
			*f = flags[i] != 0
		}
		out = append(out, r)
		return nil
	}, `SELECT `+provenanceSignalCols+` FROM provenance_signals FINAL WHERE server = ? ORDER BY as_of_ms DESC LIMIT 1`, server)
	if err != nil {
		return store.ProvenanceSignalRow{}, fmt.Errorf("clickhouse: provenance signal of %q: %w", server, err)
	}
	if len(out) == 0 {
		return store.ProvenanceSignalRow{}, fmt.Errorf("clickhouse: provenance signal of %q: %w", server, store.ErrNotFound)
	}
	return out[0], nil
}

// LatestBaseRates returns the newest as_of's base rates (by flag) and the
// newest gate. The newest as_of is read with IN (… LIMIT 1), which is an
// empty set on an empty table (max() would be 0 there, a valid time).
func (s *Store) LatestBaseRates(ctx context.Context) ([]store.BaseRateRow, store.GateRow, error) {
	rates := []store.BaseRateRow{}
	err := s.query(ctx, func(rows driver.Rows) error {
		var r store.BaseRateRow
		var at, count, n int64
		var scored uint8
		if err := rows.Scan(&r.Flag, &at, &r.Denominator, &count, &n, &r.Live, &r.Pinned, &r.DeltaPP, &scored,
			&r.Direction, &r.MethodVersion, &r.State); err != nil {
			return err
		}
		r.AsOf, r.Count, r.N, r.Scored = fromMS(at), int(count), int(n), scored != 0
		rates = append(rates, r)
		return nil
	}, `SELECT `+baseRateCols+` FROM base_rates FINAL
		WHERE as_of_ms IN (SELECT as_of_ms FROM base_rates ORDER BY as_of_ms DESC LIMIT 1) ORDER BY flag`)
	if err != nil {
		return nil, store.GateRow{}, fmt.Errorf("clickhouse: latest base rates: %w", err)
	}
	var gate store.GateRow
	err = s.query(ctx, func(rows driver.Rows) error {
		var at, resolvable, fresh, observed int64
		var open uint8
		if err := rows.Scan(&at, &open, &gate.CoveragePct, &resolvable, &fresh, &observed, &gate.State); err != nil {
			return err
		}
		gate.AsOf, gate.Open = fromMS(at), open != 0
		gate.Resolvable, gate.Fresh, gate.Observed = int(resolvable), int(fresh), int(observed)
		return nil
	}, `SELECT `+gateCols+` FROM provenance_gate FINAL ORDER BY as_of_ms DESC LIMIT 1`)
	if err != nil {
		return nil, store.GateRow{}, fmt.Errorf("clickhouse: latest provenance gate: %w", err)
	}
	return rates, gate, nil
}

// OwnerBursts returns, per (namespace, day), the row with the greatest
// as_of (LIMIT 1 BY on the key filters only), then the flagged filter on
// that row: a day whose latest evaluation is not flagged is left out even
// if an earlier one was.
func (s *Store) OwnerBursts(ctx context.Context, q store.OwnerBurstQuery) ([]store.OwnerBurstRow, error) {
	if err := store.CheckOwnerBurstQuery(q); err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	var where []string
	var args []any
	// Only non-empty filters go in: 18.16 evaluates both sides of an OR, so
	// toDate('') would fail even when it does not matter.
	if q.Namespace != "" {
		where, args = append(where, "namespace = ?"), append(args, q.Namespace)
	}
	if q.From != "" {
		where, args = append(where, "day >= toDate(?)"), append(args, q.From)
	}
	if q.To != "" {
		where, args = append(where, "day <= toDate(?)"), append(args, q.To)
	}
	inner := `SELECT ` + ownerBurstCols + ` FROM owner_bursts FINAL`
	if len(where) > 0 {
		inner += " WHERE " + strings.Join(where, " AND ")
	}
	inner += " ORDER BY as_of_ms DESC LIMIT 1 BY namespace, day"
	outer := `SELECT ` + ownerBurstCols + ` FROM (` + inner + `)`
	if q.FlaggedOnly {
		outer += " WHERE flagged = 1"
	}
	outer += " ORDER BY day, namespace LIMIT ?"
	args = append(args, store.ClampLimit(q.Limit, store.MaxEventLimit))
	out := []store.OwnerBurstRow{}
	err := s.query(ctx, func(rows driver.Rows) error {
		var r store.OwnerBurstRow
		var day time.Time
		var at int64
		var flagged, recurring, first uint8
		var windows, current int32
		if err := rows.Scan(&r.Namespace, &day, &at, &flagged, &recurring, &first, &windows, &current, &r.State); err != nil {
			return err
		}
		// A Date comes back at midnight in the column's zone: its wall clock is the day.
		r.Day, r.AsOf = day.Format(time.DateOnly), fromMS(at)
		r.Flagged, r.RecurringBurst, r.FirstWindowBurst = flagged != 0, recurring != 0, first != 0
		r.WindowsOverThreshold, r.CurrentWindowNew = int(windows), int(current)
		out = append(out, r)
		return nil
	}, outer, args...)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: owner bursts: %w", err)
	}
	return out, nil
}

// LatestOwnerBurstDay returns the newest day of owner_bursts, "" when
// empty (max() of an empty Date column is 1970-01-01, hence the count).
func (s *Store) LatestOwnerBurstDay(ctx context.Context) (string, error) {
	var n uint64
	var day time.Time
	if err := s.conn.QueryRow(ctx, `SELECT count(), max(day) FROM owner_bursts`).Scan(&n, &day); err != nil {
		return "", fmt.Errorf("clickhouse: latest owner burst day: %w", err)
	}
	if n == 0 {
		return "", nil
	}
	return day.Format(time.DateOnly), nil
}

// DriftStates returns a server's drift states, newest as_of first.
func (s *Store) DriftStates(ctx context.Context, server string, limit int) ([]store.DriftStateRow, error) {
	out := []store.DriftStateRow{}
	err := s.query(ctx, func(rows driver.Rows) error {
		var r store.DriftStateRow
		var at int64
		var strong uint8
		var events int32
		if err := rows.Scan(&r.Server, &r.Namespace, &at, &r.Score, &strong, &events, &r.State); err != nil {
			return err
		}
		r.AsOf, r.StrongNegative, r.Events = fromMS(at), strong != 0, int(events)
		out = append(out, r)
		return nil
	}, `SELECT `+driftStateCols+` FROM drift_states FINAL WHERE server = ? ORDER BY as_of_ms DESC LIMIT ?`,
		server, store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: drift states of %q: %w", server, err)
	}
	return out, nil
}

// IncidentStates returns a server's incident states, newest as_of first.
func (s *Store) IncidentStates(ctx context.Context, server string, limit int) ([]store.IncidentStateRow, error) {
	out := []store.IncidentStateRow{}
	err := s.query(ctx, func(rows driver.Rows) error {
		var r store.IncidentStateRow
		var at int64
		var incidents, counted int32
		if err := rows.Scan(&r.Server, &at, &r.Score, &incidents, &counted, &r.State); err != nil {
			return err
		}
		r.AsOf, r.Incidents, r.Counted = fromMS(at), int(incidents), int(counted)
		out = append(out, r)
		return nil
	}, `SELECT `+incidentStateCols+` FROM incident_states FINAL WHERE server = ? ORDER BY as_of_ms DESC LIMIT ?`,
		server, store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: incident states of %q: %w", server, err)
	}
	return out, nil
}

// PublicationLeaves returns a publication's servers and leaf hashes in
// server order, in one query on publication_leaves, the copy of
// trust_records keyed by (publication_id, server) that ClickHouse fills on
// insert (migrations/0009_results.sql): one range of its primary key,
// however many publications are stored. FINAL: the last write of a
// (server, publication_id) wins, as in PublicationRecords.
func (s *Store) PublicationLeaves(ctx context.Context, publicationID string) (servers, leaves []string, err error) {
	servers, leaves = []string{}, []string{}
	err = s.query(ctx, func(rows driver.Rows) error {
		var sv, leaf string
		if err := rows.Scan(&sv, &leaf); err != nil {
			return err
		}
		servers, leaves = append(servers, sv), append(leaves, leaf)
		return nil
	}, `SELECT server, leaf_hash FROM publication_leaves FINAL WHERE publication_id = ? ORDER BY server`, publicationID)
	if err != nil {
		return nil, nil, fmt.Errorf("clickhouse: leaves of publication %q: %w", publicationID, err)
	}
	return servers, leaves, nil
}
