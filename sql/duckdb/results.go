package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/forum-mcp/forum/sql/store"
)

// The store.ResultStore half of the DuckDB store (tables of
// migrations/0009_results.sql, append-only since 0012): a batch is reduced
// in Go (the last row of a key, store.Reduce*) and appended (history.go);
// reads keep the last write of each key.

var _ store.ResultStore = (*Store)(nil)

// nullFloat is NULL for nil.
func nullFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// floatPtr is the *float64 of a nullable column.
func floatPtr(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	v := f.Float64
	return &v
}

var driftStateCols = []string{"server", "namespace", "as_of", "score", "strong_negative", "events", "state"}

func driftStateBatch(rows []store.DriftStateRow) batch {
	return batch{"drift_states", driftStateCols, mapArgs(store.ReduceDriftStates(rows), func(r store.DriftStateRow) []any {
		return []any{r.Server, r.Namespace, store.Millis(r.AsOf), nullFloat(r.Score), r.StrongNegative, int32(r.Events), r.State}
	}), ""}
}

// InsertDriftStates appends drift_states rows; the last write of (server, as_of) wins.
func (s *Store) InsertDriftStates(ctx context.Context, rows []store.DriftStateRow) error {
	if len(rows) == 0 {
		return nil
	}
	if err := s.write(ctx, driftStateBatch(rows)); err != nil {
		return fmt.Errorf("duckdb: insert drift states: %w", err)
	}
	return nil
}

var incidentStateCols = []string{"server", "as_of", "score", "incidents", "counted", "state"}

func incidentStateBatch(rows []store.IncidentStateRow) batch {
	return batch{"incident_states", incidentStateCols, mapArgs(store.ReduceIncidentStates(rows), func(r store.IncidentStateRow) []any {
		return []any{r.Server, store.Millis(r.AsOf), nullFloat(r.Score), int32(r.Incidents), int32(r.Counted), r.State}
	}), ""}
}

// InsertIncidentStates appends incident_states rows; the last write of (server, as_of) wins.
func (s *Store) InsertIncidentStates(ctx context.Context, rows []store.IncidentStateRow) error {
	if len(rows) == 0 {
		return nil
	}
	if err := s.write(ctx, incidentStateBatch(rows)); err != nil {
		return fmt.Errorf("duckdb: insert incident states: %w", err)
	}
	return nil
}

var ownerBurstCols = []string{"namespace", "day", "as_of", "flagged", "recurring_burst", "first_window_burst",
	"windows_over_threshold", "current_window_new", "state"}

func ownerBurstBatch(rows []store.OwnerBurstRow) (batch, error) {
	if err := store.CheckOwnerBursts(rows); err != nil {
		return batch{}, err
	}
	return batch{"owner_bursts", ownerBurstCols, mapArgs(store.ReduceOwnerBursts(rows), func(r store.OwnerBurstRow) []any {
		day, _ := store.ParseDay(r.Day) // checked above
		return []any{r.Namespace, day, store.Millis(r.AsOf), r.Flagged, r.RecurringBurst, r.FirstWindowBurst,
			int32(r.WindowsOverThreshold), int32(r.CurrentWindowNew), r.State}
	}), ""}, nil
}

// InsertOwnerBursts appends owner_bursts rows; the last write of (namespace, day, as_of) wins.
func (s *Store) InsertOwnerBursts(ctx context.Context, rows []store.OwnerBurstRow) error {
	if len(rows) == 0 {
		return nil
	}
	b, err := ownerBurstBatch(rows)
	if err == nil {
		err = s.write(ctx, b)
	}
	if err != nil {
		return fmt.Errorf("duckdb: insert owner bursts: %w", err)
	}
	return nil
}

var provenanceSignalCols = []string{"server", "as_of", "repo", "repo_url", "score", "reason", "observed", "resolved",
	"flag_fork", "flag_archived", "flag_no_license", "flag_repo_under_30d", "flag_namespace_owner_mismatch",
	"flag_late_gt_30d", "flag_late_1_30d", "flag_no_commits_90d", "flag_single_author_90d", "flag_commit_cap_hit",
	"flag_co_registration", "flag_one_repo_many", "flag_verified_90d", "flag_stars_ge_100", "flag_owner_older_than_1y", "state"}

// signalFlags are the flag columns of a row, in provenanceSignalCols order.
func signalFlags(r *store.ProvenanceSignalRow) []*bool {
	return []*bool{&r.Fork, &r.Archived, &r.NoLicense, &r.RepoUnder30d, &r.NamespaceOwnerMismatch,
		&r.LateGT30d, &r.Late1to30d, &r.NoCommits90d, &r.SingleAuthor90d, &r.CommitCap,
		&r.CoRegistration, &r.OneRepoMany, &r.Verified90d, &r.StarsGE100, &r.OwnerOld1y}
}

func provenanceSignalBatch(rows []store.ProvenanceSignalRow) batch {
	return batch{"provenance_signals", provenanceSignalCols, mapArgs(store.ReduceProvenanceSignals(rows), func(r store.ProvenanceSignalRow) []any {
		a := []any{r.Server, store.Millis(r.AsOf), r.Repo, r.RepoURL, nullFloat(r.Score), r.Reason, r.Observed, r.Resolved}
		for _, f := range signalFlags(&r) {
			a = append(a, *f)
		}
		return append(a, r.State)
	}), ""}
}

// InsertProvenanceSignals appends provenance_signals rows; the last write of (server, as_of) wins.
func (s *Store) InsertProvenanceSignals(ctx context.Context, rows []store.ProvenanceSignalRow) error {
	if len(rows) == 0 {
		return nil
	}
	if err := s.write(ctx, provenanceSignalBatch(rows)); err != nil {
		return fmt.Errorf("duckdb: insert provenance signals: %w", err)
	}
	return nil
}

var baseRateCols = []string{"flag", "as_of", "denominator", "flagged", "n", "live", "pinned", "delta_pp", "scored",
	"direction", "method_version", "state"}

var gateCols = []string{"as_of", "open", "coverage_pct", "resolvable", "fresh", "observed", "state"}

func baseRateBatches(rates []store.BaseRateRow, gates []store.GateRow) []batch {
	rateArgs := mapArgs(store.ReduceBaseRates(rates), func(r store.BaseRateRow) []any {
		return []any{r.Flag, store.Millis(r.AsOf), r.Denominator, int64(r.Count), int64(r.N), nullFloat(r.Live),
			nullFloat(r.Pinned), nullFloat(r.DeltaPP), r.Scored, r.Direction, r.MethodVersion, r.State}
	})
	gateArgs := mapArgs(store.ReduceGates(gates), func(g store.GateRow) []any {
		return []any{store.Millis(g.AsOf), g.Open, g.CoveragePct, int64(g.Resolvable), int64(g.Fresh), int64(g.Observed), g.State}
	})
	return []batch{{"base_rates", baseRateCols, rateArgs, ""}, {"provenance_gate", gateCols, gateArgs, ""}}
}

// InsertBaseRates appends base_rates and provenance_gate rows in one transaction.
func (s *Store) InsertBaseRates(ctx context.Context, rates []store.BaseRateRow, gates []store.GateRow) error {
	if len(rates) == 0 && len(gates) == 0 {
		return nil
	}
	if err := s.write(ctx, baseRateBatches(rates, gates)...); err != nil {
		return fmt.Errorf("duckdb: insert base rates: %w", err)
	}
	return nil
}

var registryLoadCols = []string{"snapshot_id", "observed_at", "entries"}

func registryLoadBatch(rows []store.RegistryLoad) batch {
	return batch{"registry_loads", registryLoadCols, mapArgs(store.ReduceRegistryLoads(rows), func(r store.RegistryLoad) []any {
		return []any{r.SnapshotID, store.Millis(r.ObservedAt), int64(r.Entries)}
	}), ""}
}

// InsertRegistryLoads records loaded snapshots; the last write of an id wins.
func (s *Store) InsertRegistryLoads(ctx context.Context, rows []store.RegistryLoad) error {
	if len(rows) == 0 {
		return nil
	}
	if err := s.write(ctx, registryLoadBatch(rows)); err != nil {
		return fmt.Errorf("duckdb: insert registry loads: %w", err)
	}
	s.changed()
	return nil
}

// SnapshotLoaded reports whether a registry_loads row of the snapshot exists.
func (s *Store) SnapshotLoaded(ctx context.Context, snapshotID string) (bool, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM registry_loads WHERE snapshot_id = ?`, snapshotID).Scan(&n); err != nil {
		return false, fmt.Errorf("duckdb: snapshot %q loaded: %w", snapshotID, err)
	}
	return n > 0, nil
}

// query runs q and calls scan for every row.
func (s *Store) query(ctx context.Context, scan func(rows *sql.Rows) error, q string, args ...any) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// LatestProvenanceSignal returns the server's newest provenance_signals row.
func (s *Store) LatestProvenanceSignal(ctx context.Context, server string) (store.ProvenanceSignalRow, error) {
	var out []store.ProvenanceSignalRow
	err := s.query(ctx, func(rows *sql.Rows) error {
		var r store.ProvenanceSignalRow
		var score sql.NullFloat64
		dst := []any{&r.Server, &r.AsOf, &r.Repo, &r.RepoURL, &score, &r.Reason, &r.Observed, &r.Resolved}
		for _, f := range signalFlags(&r) {
			dst = append(dst, f)
		}
		if err := rows.Scan(append(dst, &r.State)...); err != nil {
			return err
		}
		r.AsOf, r.Score = r.AsOf.UTC(), floatPtr(score)
		out = append(out, r)
		return nil
	}, `SELECT `+strings.Join(provenanceSignalCols, ", ")+` FROM provenance_signals WHERE server = ? ORDER BY as_of DESC, _seq DESC LIMIT 1`, server)
	if err != nil {
		return store.ProvenanceSignalRow{}, fmt.Errorf("duckdb: provenance signal of %q: %w", server, err)
	}
	if len(out) == 0 {
		return store.ProvenanceSignalRow{}, fmt.Errorf("duckdb: provenance signal of %q: %w", server, store.ErrNotFound)
	}
	return out[0], nil
}

// LatestBaseRates returns the newest as_of's base rates (by flag) and the newest gate.
func (s *Store) LatestBaseRates(ctx context.Context) ([]store.BaseRateRow, store.GateRow, error) {
	rates := []store.BaseRateRow{}
	err := s.query(ctx, func(rows *sql.Rows) error {
		var r store.BaseRateRow
		var count, n int64
		var live, pinned, delta sql.NullFloat64
		if err := rows.Scan(&r.Flag, &r.AsOf, &r.Denominator, &count, &n, &live, &pinned, &delta, &r.Scored,
			&r.Direction, &r.MethodVersion, &r.State); err != nil {
			return err
		}
		r.AsOf, r.Count, r.N = r.AsOf.UTC(), int(count), int(n)
		r.Live, r.Pinned, r.DeltaPP = floatPtr(live), floatPtr(pinned), floatPtr(delta)
		rates = append(rates, r)
		return nil
	}, `SELECT `+strings.Join(baseRateCols, ", ")+` FROM base_rates
		WHERE as_of = (SELECT max(as_of) FROM base_rates)`+dedup("flag")+` ORDER BY flag`)
	if err != nil {
		return nil, store.GateRow{}, fmt.Errorf("duckdb: latest base rates: %w", err)
	}
	var g store.GateRow
	var resolvable, fresh, observed int64
	err = s.db.QueryRowContext(ctx, `SELECT `+strings.Join(gateCols, ", ")+` FROM provenance_gate ORDER BY as_of DESC, _seq DESC LIMIT 1`).Scan(
		&g.AsOf, &g.Open, &g.CoveragePct, &resolvable, &fresh, &observed, &g.State)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return rates, store.GateRow{}, nil
	case err != nil:
		return nil, store.GateRow{}, fmt.Errorf("duckdb: latest provenance gate: %w", err)
	}
	g.AsOf, g.Resolvable, g.Fresh, g.Observed = g.AsOf.UTC(), int(resolvable), int(fresh), int(observed)
	return rates, g, nil
}

// OwnerBursts returns, per (namespace, day), the row with the greatest
// as_of (the key filters before QUALIFY), then the flagged filter on that
// row: a day whose latest evaluation is not flagged is left out even if an
// earlier one was.
func (s *Store) OwnerBursts(ctx context.Context, q store.OwnerBurstQuery) ([]store.OwnerBurstRow, error) {
	if err := store.CheckOwnerBurstQuery(q); err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	where := []string{"TRUE"}
	var args []any
	if q.Namespace != "" {
		where, args = append(where, "namespace = ?"), append(args, q.Namespace)
	}
	if q.From != "" {
		where, args = append(where, "day >= CAST(? AS DATE)"), append(args, q.From)
	}
	if q.To != "" {
		where, args = append(where, "day <= CAST(? AS DATE)"), append(args, q.To)
	}
	cols := strings.Join(ownerBurstCols, ", ")
	query := `SELECT ` + cols + ` FROM (SELECT ` + cols + ` FROM owner_bursts WHERE ` + strings.Join(where, " AND ") + `
		QUALIFY row_number() OVER (PARTITION BY namespace, day ORDER BY as_of DESC, _seq DESC) = 1)`
	if q.FlaggedOnly {
		query += " WHERE flagged"
	}
	query += " ORDER BY day, namespace LIMIT ?"
	args = append(args, store.ClampLimit(q.Limit, store.MaxEventLimit))
	out := []store.OwnerBurstRow{}
	err := s.query(ctx, func(rows *sql.Rows) error {
		var r store.OwnerBurstRow
		var day time.Time
		var windows, current int32
		if err := rows.Scan(&r.Namespace, &day, &r.AsOf, &r.Flagged, &r.RecurringBurst, &r.FirstWindowBurst,
			&windows, &current, &r.State); err != nil {
			return err
		}
		r.Day, r.AsOf = day.UTC().Format(time.DateOnly), r.AsOf.UTC()
		r.WindowsOverThreshold, r.CurrentWindowNew = int(windows), int(current)
		out = append(out, r)
		return nil
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: owner bursts: %w", err)
	}
	return out, nil
}

// LatestOwnerBurstDay returns the newest day of owner_bursts, "" when empty.
func (s *Store) LatestOwnerBurstDay(ctx context.Context) (string, error) {
	var day sql.NullTime
	if err := s.db.QueryRowContext(ctx, `SELECT max(day) FROM owner_bursts`).Scan(&day); err != nil {
		return "", fmt.Errorf("duckdb: latest owner burst day: %w", err)
	}
	if !day.Valid {
		return "", nil
	}
	return day.Time.UTC().Format(time.DateOnly), nil
}

// DriftStates returns a server's drift states, newest as_of first.
func (s *Store) DriftStates(ctx context.Context, server string, limit int) ([]store.DriftStateRow, error) {
	out := []store.DriftStateRow{}
	err := s.query(ctx, func(rows *sql.Rows) error {
		var r store.DriftStateRow
		var score sql.NullFloat64
		var events int32
		if err := rows.Scan(&r.Server, &r.Namespace, &r.AsOf, &score, &r.StrongNegative, &events, &r.State); err != nil {
			return err
		}
		r.AsOf, r.Score, r.Events = r.AsOf.UTC(), floatPtr(score), int(events)
		out = append(out, r)
		return nil
	}, `SELECT `+strings.Join(driftStateCols, ", ")+` FROM drift_states WHERE server = ?`+dedup("as_of")+` ORDER BY as_of DESC LIMIT ?`,
		server, store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: drift states of %q: %w", server, err)
	}
	return out, nil
}

// IncidentStates returns a server's incident states, newest as_of first.
func (s *Store) IncidentStates(ctx context.Context, server string, limit int) ([]store.IncidentStateRow, error) {
	out := []store.IncidentStateRow{}
	err := s.query(ctx, func(rows *sql.Rows) error {
		var r store.IncidentStateRow
		var score sql.NullFloat64
		var incidents, counted int32
		if err := rows.Scan(&r.Server, &r.AsOf, &score, &incidents, &counted, &r.State); err != nil {
			return err
		}
		r.AsOf, r.Score, r.Incidents, r.Counted = r.AsOf.UTC(), floatPtr(score), int(incidents), int(counted)
		out = append(out, r)
		return nil
	}, `SELECT `+strings.Join(incidentStateCols, ", ")+` FROM incident_states WHERE server = ?`+dedup("as_of")+` ORDER BY as_of DESC LIMIT ?`,
		server, store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: incident states of %q: %w", server, err)
	}
	return out, nil
}

// PublicationLeaves returns a publication's servers and leaf hashes in
// server order, in one query over the two short columns.
func (s *Store) PublicationLeaves(ctx context.Context, publicationID string) (servers, leaves []string, err error) {
	servers, leaves = []string{}, []string{}
	err = s.query(ctx, func(rows *sql.Rows) error {
		var sv, leaf string
		if err := rows.Scan(&sv, &leaf); err != nil {
			return err
		}
		servers, leaves = append(servers, sv), append(leaves, leaf)
		return nil
	}, `SELECT server, coalesce(leaf_hash, '') FROM trust_records WHERE publication_id = ? ORDER BY server`, publicationID)
	if err != nil {
		return nil, nil, fmt.Errorf("duckdb: leaves of publication %q: %w", publicationID, err)
	}
	return servers, leaves, nil
}
