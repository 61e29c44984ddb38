package examples_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/clickhouse"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// envDSN names the ClickHouse server of the test (as in sql/clickhouse):
// unset, the ClickHouse half skips; set, it must run and fails when the
// server cannot be reached.
const envDSN = "FORUM_TEST_CLICKHOUSE"

// now is the reference instant substituted for {{now_ms}}: the window of
// every example is [2025-03-01T00:00Z, 2025-03-31T00:00Z).
var now = time.Date(2025, 3, 31, 0, 0, 0, 0, time.UTC)

func day(d, h, m int) time.Time { return time.Date(2025, 3, d, h, m, 0, 0, time.UTC) }

// ms1 is one millisecond: the window edges are tested to the millisecond.
const ms1 = time.Millisecond

func check(id, server string, t time.Time, outcome string, latency float64) store.HealthCheck {
	return store.HealthCheck{
		ID: id, Server: server, RemoteURL: "https://" + strings.ReplaceAll(server, "/", ".") + ".example/mcp",
		ObservedAt: t, Transport: "streamable-http", Outcome: outcome, LatencyMS: latency,
		AuthKind: "none", Check: `{"id":"` + id + `"}`,
	}
}

func event(id, server, kind string, t time.Time) schema.DriftEvent {
	return schema.DriftEvent{ID: id, Server: server, Namespace: schema.Namespace(server), Kind: kind, ObservedAt: t, SnapshotID: "s"}
}

// The dataset. Each batch is written twice (at-least-once delivery, and on
// ClickHouse unmerged duplicate parts the views must hide), then the
// rewrites, whose last write must win.
var (
	checks = []store.HealthCheck{
		check("a1", "a/alpha", day(1, 0, 0), "ok", 100), // the window's first ms: in
		check("a2", "a/alpha", day(10, 0, 0), "ok", 300),
		check("a3", "a/alpha", day(20, 0, 0), "auth_required", 0),
		check("a4", "a/alpha", day(31, 0, 0).Add(-ms1), "unreachable", 0), // the window's last ms: in
		check("a5", "a/alpha", day(1, 0, 0).Add(-ms1), "ok", 5),           // before the window
		check("a6", "a/alpha", now, "unreachable", 0),                     // at now: out
		check("a7", "a/alpha", day(15, 0, 0), "not_checked", 0),           // not attempted: out
		check("b1", "b/beta", day(5, 0, 0), "unreachable", 0),             // rewritten below as ok, 50
		check("b2", "b/beta", day(6, 0, 0), "handshake_failed", 0),
		check("b3", "b/beta", day(7, 0, 0), "ok", 70),
		check("b4", "b/beta", day(8, 0, 0), "ok", 10),
		check("b5", "b/beta", day(9, 0, 0), "unreachable", 0),
		check("c1", "c/gamma", day(2, 0, 0), "auth_required", 0),
		check("c2", "c/gamma", day(3, 0, 0), "auth_required", 0),
		check("d1", "d/delta", day(10, 0, 0), "not_checked", 0),                      // only not_checked: no row
		check("d2", "d/delta", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), "ok", 1), // long before
	}
	checkRewrites = []store.HealthCheck{check("b1", "b/beta", day(5, 0, 0), "ok", 50)}

	events = []schema.DriftEvent{
		event("e1", "a/alpha", schema.KindNewServer, day(1, 0, 0)),
		event("e2", "b/beta", schema.KindNewServer, day(2, 0, 0).Add(-ms1)), // still March 1st
		event("e3", "a/alpha", schema.KindVersionAdded, day(2, 0, 0)),
		event("e4", "a/alpha", schema.KindDescriptionChanged, day(2, 12, 0)), // rewritten below
		event("e5", "b/beta", schema.KindVersionAdded, day(2, 13, 0)),
		event("e6", "a/alpha", schema.KindVersionAdded, day(2, 14, 0)),
		event("e7", "c/gamma", schema.KindRemoved, day(1, 0, 0).Add(-ms1)), // before the window
		event("e8", "c/gamma", schema.KindRemoved, now),                    // at now: out
		event("e9", "c/gamma", schema.KindTitleChanged, day(31, 0, 0).Add(-ms1)),
	}
	eventRewrites = []schema.DriftEvent{event("e4", "a/alpha", schema.KindStatusChanged, day(2, 12, 0))}

	// GitHub observations (see base_rate_trends in expected). r3's commit
	// fetch re-publishes p4 under the same id with the commit flags set.
	p1    = prov("r1", day(5, 10, 0), true, map[string]bool{"no_license": true})
	p2    = prov("r1", day(5, 12, 0), true, map[string]bool{"owner_older_than_1y": true})
	p3    = prov("r2", day(5, 8, 0), false, nil)
	p4    = prov("r3", day(5, 9, 0), true, map[string]bool{"no_license": true, "fork": true})
	p5    = prov("r1", day(6, 0, 0), true, map[string]bool{"no_license": true, "repo_under_30d": true})
	p6    = prov("r4", day(1, 0, 0).Add(-ms1), true, map[string]bool{"no_license": true}) // before the window
	p7    = prov("r5", now, true, map[string]bool{"no_license": true})                    // at now: out
	p4c   = withCommits(p4, map[string]bool{"single_author_90d": true})
	provs = []store.Provenance{p1, p2, p3, p4, p5, p6, p7}

	// Publications (see band_changes in expected): pub-0301 is older than
	// the pair compared, pub-0331 is at now (out), pub-0325 has records but
	// no publications row (invisible).
	pubs = []store.Publication{pubRow("pub-0301", day(1, 0, 0)), pubRow("pub-0310", day(10, 0, 0)),
		pubRow("pub-0320", day(20, 0, 0)), pubRow("pub-0331", now),
		// Older ones, for band_history (band_changes compares the two newest):
		// pub-1201 is before its 90-day window, pub-1231 on its first ms.
		pubRow("pub-1201", time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC)), pubRow("pub-1231", now.Add(-90*24*time.Hour)),
		pubRow("pub-0102", time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)), pubRow("pub-0115", time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC))}
	trusts = []store.TrustRecord{
		trec("a/alpha", "pub-1201", time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC), fp(55), "C"),
		trec("a/alpha", "pub-1231", now.Add(-90*24*time.Hour), fp(58), "C"),
		trec("a/alpha", "pub-0102", time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC), fp(59), "C"), // rewritten below as C, 60
		trec("b/beta", "pub-0115", time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC), fp(75), "B"), // a/alpha is not in pub-0115
		trec("a/alpha", "pub-0301", day(1, 0, 0), nil, "F"),
		trec("a/alpha", "pub-0310", day(10, 0, 0), fp(85), "A"),
		trec("a/alpha", "pub-0320", day(20, 0, 0), fp(70), "B"),
		trec("a/alpha", "pub-0325", day(25, 0, 0), fp(10), "D"),
		trec("a/alpha", "pub-0331", now, fp(95), "A"),
		trec("b/beta", "pub-0310", day(10, 0, 0), nil, "C"),
		trec("b/beta", "pub-0320", day(20, 0, 0), fp(50), "C"), // rewritten below as A, 90
		trec("c/gamma", "pub-0310", day(10, 0, 0), fp(65), "B"),
		trec("c/gamma", "pub-0320", day(20, 0, 0), fp(66), "B"),
		trec("d/delta", "pub-0320", day(20, 0, 0), fp(30), "D"),
		trec("e/eps", "pub-0310", day(10, 0, 0), fp(30), "D"),
		trec("f/phi", "pub-0310", day(10, 0, 0), fp(30), "D"),
		trec("f/phi", "pub-0320", day(20, 0, 0), fp(10), "F"),
	}
	trustRewrites = []store.TrustRecord{trec("b/beta", "pub-0320", day(20, 0, 0), fp(90), "A"),
		trec("a/alpha", "pub-0102", time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC), fp(60), "C")}

	// Owner-burst evaluations (see burst_history in expected); the view keeps
	// the latest of each (namespace, day).
	bursts = []store.OwnerBurstRow{
		burstRow("com.acme", day(5, 10, 0), 1, 5, "first"),
		burstRow("com.acme", day(5, 20, 0), 3, 7, "recurring", "first"), // the day's latest
		burstRow("Z.upper", day(5, 12, 0), 1, 2, "first"),
		burstRow("io.github.beta", day(6, 9, 0), 2, 4, "recurring"),
		burstRow("io.github.beta", day(6, 23, 0), 0, 0),                        // cleared by the evening: not a flagged day
		burstRow("io.github.gamma", day(1, 0, 0).Add(-ms1), 2, 6, "recurring"), // before the window
		burstRow("com.acme", day(31, 0, 0).Add(-ms1), 1, 3, "first"),           // the window's last ms: in
		burstRow("io.github.delta", now, 1, 8, "first"),                        // at now: out
		burstRow("io.github.eps", day(1, 0, 0), 4, 2, "recurring"),             // the window's first ms; rewritten below
	}
	burstRewrites = []store.OwnerBurstRow{burstRow("io.github.eps", day(1, 0, 0), 4, 9, "recurring")}

	// Provenance signals (see provenance_flags_over_time in expected).
	signals = []store.ProvenanceSignalRow{
		signalRow("a/alpha", day(5, 8, 0), "fork", "no_license"),
		signalRow("a/alpha", day(5, 20, 0), "no_license", "single_author_90d"),            // a/alpha's latest of 03-05
		signalRow("b/beta", day(5, 12, 0), "namespace_owner_mismatch", "co_registration"), // rewritten below
		signalRow("c/gamma", day(5, 9, 0)),
		signalRow("a/alpha", day(6, 0, 0), "archived", "fork"),
		signalRow("b/beta", day(1, 0, 0), "one_repo_many"),
		signalRow("e/eps", day(20, 12, 0), "late_gt_30d", "verified_90d", "stars_ge_100", "owner_older_than_1y", "commit_cap_hit"),
		signalRow("f/phi", day(20, 13, 0), "late_1_30d", "stars_ge_100", "owner_older_than_1y"),
		signalRow("g/g", day(20, 14, 0), "owner_older_than_1y"),
		signalRow("c/gamma", day(31, 0, 0).Add(-ms1), "no_commits_90d", "repo_under_30d", "co_registration"),
		signalRow("d/delta", day(1, 0, 0).Add(-ms1), "fork"), // before the window
		signalRow("d/delta", now, "fork"),                    // at now: out
	}
	signalRewrites = []store.ProvenanceSignalRow{signalRow("b/beta", day(5, 12, 0), "namespace_owner_mismatch", "one_repo_many")}
)

// burstRow is a namespace's owner-burst evaluation at asOf; kinds holds
// "recurring" and/or "first".
func burstRow(ns string, asOf time.Time, windows, current int, kinds ...string) store.OwnerBurstRow {
	r := store.OwnerBurstRow{Namespace: ns, Day: asOf.UTC().Format(time.DateOnly), AsOf: asOf,
		RecurringBurst: slices.Contains(kinds, "recurring"), FirstWindowBurst: slices.Contains(kinds, "first"),
		WindowsOverThreshold: windows, CurrentWindowNew: current, State: "{}"}
	r.Flagged = r.RecurringBurst || r.FirstWindowBurst
	return r
}

// signalRow is a server's provenance signal at asOf with the named flags set.
func signalRow(server string, asOf time.Time, flags ...string) store.ProvenanceSignalRow {
	r := store.ProvenanceSignalRow{Server: server, AsOf: asOf, Observed: len(flags) > 0, Resolved: len(flags) > 0, State: "{}"}
	set := map[string]*bool{"fork": &r.Fork, "archived": &r.Archived, "no_license": &r.NoLicense,
		"repo_under_30d": &r.RepoUnder30d, "namespace_owner_mismatch": &r.NamespaceOwnerMismatch,
		"late_gt_30d": &r.LateGT30d, "late_1_30d": &r.Late1to30d, "no_commits_90d": &r.NoCommits90d,
		"single_author_90d": &r.SingleAuthor90d, "commit_cap_hit": &r.CommitCap, "co_registration": &r.CoRegistration,
		"one_repo_many": &r.OneRepoMany, "verified_90d": &r.Verified90d, "stars_ge_100": &r.StarsGE100,
		"owner_older_than_1y": &r.OwnerOld1y}
	for _, f := range flags {
		*set[f] = true
	}
	return r
}

// provenanceFlags are the flags of provenance_flags_over_time.sql, in its
// output order (byte order).
var provenanceFlags = []string{"archived", "co_registration", "commit_cap_hit", "fork", "late_1_30d", "late_gt_30d",
	"namespace_owner_mismatch", "no_commits_90d", "no_license", "one_repo_many", "owner_older_than_1y",
	"repo_under_30d", "single_author_90d", "stars_ge_100", "verified_90d"}

// flagDay is one day of provenance_flags_over_time: every flag, with the
// hand-counted servers flagged (absent: 0).
func flagDay(day string, servers int, flagged map[string]int) [][]string {
	var rows [][]string
	for _, f := range provenanceFlags {
		rows = append(rows, []string{day, f, strconv.Itoa(servers), strconv.Itoa(flagged[f])})
	}
	return rows
}

func fp(f float64) *float64 { return &f }

func bp(b bool) *bool { return &b }

// prov is an observation of repo at t: resolved ones define every
// GitHub-side flag (false unless set), never the commit flags; set may
// also name owner_older_than_1y. Unresolved ones define no flag.
func prov(repo string, t time.Time, resolved bool, set map[string]bool) store.Provenance {
	p := store.Provenance{ID: "github:github.com/o/" + repo + "@" + t.UTC().Format(time.RFC3339), Repo: "github.com/o/" + repo,
		ObservedAt: t, Status: "unresolved", HTTPStatus: 404}
	if !resolved {
		return p
	}
	p.Status, p.HTTPStatus = "resolved", 200
	f := &p.Flags
	f.NoLicense, f.RepoUnder30d, f.StaleOver1y = bp(set["no_license"]), bp(set["repo_under_30d"]), bp(set["stale_over_1y"])
	f.Archived, f.Fork, f.StarsGE100 = bp(set["archived"]), bp(set["fork"]), bp(set["stars_ge_100"])
	if set["owner_older_than_1y"] {
		f.OwnerOlderThan1y = bp(true)
	}
	return p
}

// withCommits is p after its commit fetch: the commit flags defined.
func withCommits(p store.Provenance, set map[string]bool) store.Provenance {
	p.CommitsFetched, p.CommitsObservedAt = true, p.ObservedAt.Add(time.Minute)
	f := &p.Flags
	f.SingleAuthor90d, f.NoCommits90d, f.CommitCapHit = bp(set["single_author_90d"]), bp(set["no_commits_90d"]), bp(set["commit_cap_hit"])
	return p
}

func pubRow(id string, at time.Time) store.Publication {
	return store.Publication{ID: id, MethodVersion: "m", WeightsSHA256: "w", MerkleRoot: "r", Signature: "s", KeyID: "k", ComputedAt: at}
}

func trec(server, pub string, at time.Time, score *float64, band string) store.TrustRecord {
	return store.TrustRecord{Server: server, PublicationID: pub, ComputedAt: at, Score: score, Band: band,
		ContentSHA256: "sha-" + server + pub, Record: "{}"}
}

// result is an expected answer: column names and rows, values as norm
// formats them ("NULL" for NULL, dates as 2006-01-02).
type result struct {
	cols []string
	rows [][]string
}

// expected holds, per example file, the rows hand-computed from the dataset.
var expected = map[string]result{
	// In the window, not_checked left out: ok a1 a2 b1 (the rewrite) b3 b4 →
	// 5 checks on 2 servers; auth_required a3 c1 c2 → 3 on 2; handshake_failed
	// b2 → 1 on 1; unreachable a4 b5 → 2 on 2; 11 attempted checks in all.
	"health_outcome_rates_30d.sql": {
		cols: []string{"outcome", "checks", "servers", "share"},
		rows: [][]string{
			{"auth_required", "3", "2", "0.2727272727272727"},
			{"handshake_failed", "1", "1", "0.09090909090909091"},
			{"ok", "5", "2", "0.45454545454545453"},
			{"unreachable", "2", "2", "0.18181818181818182"},
		},
	},
	// a/alpha: a1 ok, a2 ok, a3 auth_required, a4 unreachable → 3 of 4 up;
	//          answered latencies {100, 300} → median 200.
	// b/beta:  b1 ok (the rewrite), b2 handshake_failed, b3 ok, b4 ok,
	//          b5 unreachable → 3 of 5 up; latencies {50, 70, 10} → 50.
	// c/gamma: two auth_required checks → 2 of 2 up; no latency → NULL.
	// d/delta: nothing attempted in the window → no row.
	"uptime_30d.sql": {
		cols: []string{"server", "checks", "up_checks", "uptime", "p50_latency_ms"},
		rows: [][]string{
			{"a/alpha", "4", "3", "0.75", "200"},
			{"b/beta", "5", "3", "0.6", "50"},
			{"c/gamma", "2", "2", "1", "NULL"},
		},
	},
	// 03-01: e1, e2 new_server (a, b). 03-02: e3, e5, e6 version_added (a, b,
	// a), e4 status_changed (the rewrite). 03-30: e9. e7 and e8 are outside.
	"drift_events_per_kind_per_day.sql": {
		cols: []string{"day", "kind", "events", "servers"},
		rows: [][]string{
			{"2025-03-01", "new_server", "2", "2"},
			{"2025-03-02", "status_changed", "1", "1"},
			{"2025-03-02", "version_added", "3", "2"},
			{"2025-03-30", "title_changed", "1", "1"},
		},
	},
	// 03-05, latest per repo: r1 = p2 (all GitHub flags false, owner old),
	// r2 = p3 (unresolved: nothing defined), r3 = p4 with commits (no
	// license, fork, single author). 03-06: r1 = p5 (no license, repo under
	// 30 d; no commits, no owner). p6 and p7 are outside the window.
	"base_rate_trends.sql": {
		cols: []string{"day", "flag", "repos_observed", "repos", "flagged", "share"},
		rows: [][]string{
			{"2025-03-05", "archived", "3", "2", "0", "0"},
			{"2025-03-05", "commit_cap_hit", "3", "1", "0", "0"},
			{"2025-03-05", "fork", "3", "2", "1", "0.5"},
			{"2025-03-05", "no_commits_90d", "3", "1", "0", "0"},
			{"2025-03-05", "no_license", "3", "2", "1", "0.5"},
			{"2025-03-05", "owner_older_than_1y", "3", "1", "1", "1"},
			{"2025-03-05", "repo_under_30d", "3", "2", "0", "0"},
			{"2025-03-05", "single_author_90d", "3", "1", "1", "1"},
			{"2025-03-05", "stale_over_1y", "3", "2", "0", "0"},
			{"2025-03-05", "stars_ge_100", "3", "2", "0", "0"},
			{"2025-03-06", "archived", "1", "1", "0", "0"},
			{"2025-03-06", "commit_cap_hit", "1", "0", "0", "NULL"},
			{"2025-03-06", "fork", "1", "1", "0", "0"},
			{"2025-03-06", "no_commits_90d", "1", "0", "0", "NULL"},
			{"2025-03-06", "no_license", "1", "1", "1", "1"},
			{"2025-03-06", "owner_older_than_1y", "1", "0", "0", "NULL"},
			{"2025-03-06", "repo_under_30d", "1", "1", "1", "1"},
			{"2025-03-06", "single_author_90d", "1", "0", "0", "NULL"},
			{"2025-03-06", "stale_over_1y", "1", "1", "0", "0"},
			{"2025-03-06", "stars_ge_100", "1", "1", "0", "0"},
		},
	},
	// The pair is pub-0310 → pub-0320 (pub-0331 is at now, pub-0325 has no
	// publications row). c/gamma keeps B; d/delta and e/eps are in one only;
	// b/beta's record was rewritten to A, 90.
	"band_changes.sql": {
		cols: []string{"server", "old_publication", "new_publication", "old_band", "new_band", "old_score", "new_score", "direction"},
		rows: [][]string{
			{"a/alpha", "pub-0310", "pub-0320", "A", "B", "85", "70", "down"},
			{"b/beta", "pub-0310", "pub-0320", "C", "A", "NULL", "90", "up"},
			{"f/phi", "pub-0310", "pub-0320", "D", "F", "30", "10", "down"},
		},
	},
	// The latest evaluation of each (namespace, day) with as_of in the
	// window, when flagged: io.github.eps on its first ms (the rewrite: 9
	// new servers), Z.upper and com.acme (its 20:00 evaluation) on 03-05,
	// com.acme on the window's last ms. io.github.beta's 03-06 was cleared
	// by its latest evaluation; gamma is before the window, delta at now.
	"burst_history.sql": {
		cols: []string{"day", "namespace", "kinds", "windows_over_threshold", "current_window_new"},
		rows: [][]string{
			{"2025-03-01", "io.github.eps", "recurring", "4", "9"},
			{"2025-03-05", "Z.upper", "first_window", "1", "2"},
			{"2025-03-05", "com.acme", "recurring+first_window", "3", "7"},
			{"2025-03-30", "com.acme", "first_window", "1", "3"},
		},
	},
	// 03-01: b/beta (one_repo_many). 03-05, latest per server: a/alpha at
	// 20:00 (no_license, single_author_90d; its 08:00 fork is gone), b/beta
	// as rewritten (namespace_owner_mismatch, one_repo_many), c/gamma with
	// no flag. 03-06: a/alpha (archived, fork). 03-20: e/eps, f/phi, g/g.
	// 03-30: c/gamma on the window's last ms. d/delta's are outside.
	"provenance_flags_over_time.sql": {
		cols: []string{"day", "flag", "servers", "flagged"},
		rows: slices.Concat(
			flagDay("2025-03-01", 1, map[string]int{"one_repo_many": 1}),
			flagDay("2025-03-05", 3, map[string]int{"no_license": 1, "single_author_90d": 1, "namespace_owner_mismatch": 1, "one_repo_many": 1}),
			flagDay("2025-03-06", 1, map[string]int{"archived": 1, "fork": 1}),
			flagDay("2025-03-20", 3, map[string]int{"late_gt_30d": 1, "verified_90d": 1, "stars_ge_100": 2, "owner_older_than_1y": 3,
				"commit_cap_hit": 1, "late_1_30d": 1}),
			flagDay("2025-03-30", 1, map[string]int{"no_commits_90d": 1, "repo_under_30d": 1, "co_registration": 1}),
		),
	},
	// a/alpha from 2024-12-31 (now - 90 days, in) to now (out): pub-1231's
	// previous is pub-1201, before the window; pub-0102 as rewritten (60);
	// pub-0115 does not hold it; pub-0325 is invisible, pub-0331 at now.
	"band_history.sql?server=a/alpha": {
		cols: bandHistoryCols,
		rows: [][]string{
			{"pub-1231", "1735603200000", "2024-12-31", "C", "58", "pub-1201", "C", "55", "3", "same"},
			{"pub-0102", "1735776000000", "2025-01-02", "C", "60", "pub-1231", "C", "58", "2", "same"},
			{"pub-0301", "1740787200000", "2025-03-01", "F", "NULL", "pub-0102", "C", "60", "NULL", "down"},
			{"pub-0310", "1741564800000", "2025-03-10", "A", "85", "pub-0301", "F", "NULL", "NULL", "up"},
			{"pub-0320", "1742428800000", "2025-03-20", "B", "70", "pub-0310", "A", "85", "-15", "down"},
		},
	},
	// b/beta's first record is pub-0115 (no previous); pub-0320 as
	// rewritten (A, 90).
	"band_history.sql?server=b/beta": {
		cols: bandHistoryCols,
		rows: [][]string{
			{"pub-0115", "1736899200000", "2025-01-15", "B", "75", "NULL", "NULL", "NULL", "NULL", "NULL"},
			{"pub-0310", "1741564800000", "2025-03-10", "C", "NULL", "pub-0115", "B", "75", "NULL", "down"},
			{"pub-0320", "1742428800000", "2025-03-20", "A", "90", "pub-0310", "C", "NULL", "NULL", "up"},
		},
	},
}

var bandHistoryCols = []string{"publication_id", "computed_at_ms", "computed_day", "band", "score",
	"previous_publication_id", "previous_band", "previous_score", "score_change", "band_change"}

// banned are constructs one of the engines lacks (ClickHouse 18.16: window
// functions, WITH name AS (subquery), DateTime64; DuckDB: FINAL, LIMIT BY).
var banned = regexp.MustCompile(`(?i)\bOVER\s*\(|\bQUALIFY\b|\bWITH\s+\w+\s+AS\s*\(|DateTime64|\bFINAL\b|\bLIMIT\s+\d+\s+BY\b|\bFILTER\s*\(|::`)

func load(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := s.InsertHealthChecks(ctx, checks); err != nil {
			t.Fatalf("InsertHealthChecks: %v", err)
		}
		if err := s.InsertEvents(ctx, events); err != nil {
			t.Fatalf("InsertEvents: %v", err)
		}
	}
	if err := s.InsertHealthChecks(ctx, checkRewrites); err != nil {
		t.Fatalf("InsertHealthChecks: %v", err)
	}
	if err := s.InsertEvents(ctx, eventRewrites); err != nil {
		t.Fatalf("InsertEvents: %v", err)
	}
	ps, ok := s.(store.ProvenanceStore)
	if !ok {
		t.Fatalf("%T keeps no provenance", s)
	}
	ts, ok := s.(store.TrustStore)
	if !ok {
		t.Fatalf("%T keeps no trust records", s)
	}
	for i := 0; i < 2; i++ {
		if err := ps.InsertProvenance(ctx, provs); err != nil {
			t.Fatalf("InsertProvenance: %v", err)
		}
		if err := ts.InsertTrustRecords(ctx, trusts); err != nil {
			t.Fatalf("InsertTrustRecords: %v", err)
		}
		for _, p := range pubs {
			if err := ts.InsertPublication(ctx, p); err != nil {
				t.Fatalf("InsertPublication: %v", err)
			}
		}
	}
	if err := ps.InsertProvenance(ctx, []store.Provenance{p4c}); err != nil {
		t.Fatalf("InsertProvenance: %v", err)
	}
	if err := ts.InsertTrustRecords(ctx, trustRewrites); err != nil {
		t.Fatalf("InsertTrustRecords: %v", err)
	}
	rs, ok := s.(store.ResultStore)
	if !ok {
		t.Fatalf("%T keeps no results", s)
	}
	for i := 0; i < 2; i++ {
		if err := rs.InsertOwnerBursts(ctx, bursts); err != nil {
			t.Fatalf("InsertOwnerBursts: %v", err)
		}
		if err := rs.InsertProvenanceSignals(ctx, signals); err != nil {
			t.Fatalf("InsertProvenanceSignals: %v", err)
		}
	}
	if err := rs.InsertOwnerBursts(ctx, burstRewrites); err != nil {
		t.Fatalf("InsertOwnerBursts: %v", err)
	}
	if err := rs.InsertProvenanceSignals(ctx, signalRewrites); err != nil {
		t.Fatalf("InsertProvenanceSignals: %v", err)
	}
}

// serverRuns lists the servers a file with the {{server}} placeholder is
// run for; the expected rows of each run are under "file?server=name".
var serverRuns = map[string][]string{"band_history.sql": {"a/alpha", "b/beta"}}

// examples returns the example runs and their SQL, placeholders replaced:
// {{now_ms}} in every file, {{server}} once per server of serverRuns (the
// run is then named "file?server=name").
func examples(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example files (%v)", err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if !strings.Contains(src, "{{now_ms}}") {
			t.Errorf("%s: no {{now_ms}} placeholder", f)
		}
		if m := banned.FindString(stripComments(src)); m != "" {
			t.Errorf("%s uses %q, which one of the engines lacks", f, m)
		}
		q := strings.ReplaceAll(src, "{{now_ms}}", strconv.FormatInt(now.UnixMilli(), 10))
		runs := map[string]string{f: q}
		if servers, ok := serverRuns[f]; ok {
			if !strings.Contains(src, "{{server}}") {
				t.Errorf("%s: no {{server}} placeholder", f)
			}
			runs = map[string]string{}
			for _, sv := range servers {
				runs[f+"?server="+sv] = strings.ReplaceAll(q, "{{server}}", sv)
			}
		}
		for name, q := range runs {
			if strings.Contains(stripComments(q), "{{") {
				t.Errorf("%s: a placeholder other than {{now_ms}} (and {{server}} where serverRuns says) is left", name)
			}
			out[name] = q
		}
	}
	for f := range expected {
		if _, ok := out[f]; !ok {
			t.Errorf("expected rows for %s, which does not exist", f)
		}
	}
	return out
}

func stripComments(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// norm formats a value of either driver: NULL, integers, floats (shortest
// form), dates (2006-01-02 when at midnight) and strings.
func norm(v any) string {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "NULL"
		}
		if b, ok := rv.Interface().(*big.Int); ok {
			return b.String()
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return "NULL"
	}
	switch x := rv.Interface().(type) {
	case time.Time:
		if h, m, s := x.Clock(); h == 0 && m == 0 && s == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.UTC().Format(time.RFC3339Nano)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

func runExamples(t *testing.T, q store.Querier) {
	ex := examples(t)
	names := make([]string, 0, len(ex))
	for f := range ex {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		t.Run(strings.TrimSuffix(strings.Replace(f, ".sql?server=", "/", 1), ".sql"), func(t *testing.T) {
			want, ok := expected[f]
			if !ok {
				t.Fatalf("no expected rows for %s: add them to expected", f)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cols, rows, err := q.Query(ctx, ex[f])
			if err != nil {
				t.Fatalf("Query(%s): %v", f, err)
			}
			got := make([][]string, len(rows))
			for i, r := range rows {
				got[i] = make([]string, len(r))
				for j, v := range r {
					got[i][j] = norm(v)
				}
			}
			if !reflect.DeepEqual(cols, want.cols) {
				t.Errorf("columns:\n got  %q\n want %q", cols, want.cols)
			}
			if !reflect.DeepEqual(got, want.rows) {
				t.Errorf("rows:\n got  %q\n want %q", got, want.rows)
			}
		})
	}
}

func TestExamplesDuckDB(t *testing.T) {
	s, err := duckdb.Open(context.Background(), filepath.Join(t.TempDir(), "examples.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	load(t, s)
	t.Run("unmerged", func(t *testing.T) { runExamples(t, s) })
	if err := s.Optimize(context.Background()); err != nil {
		t.Fatalf("Optimize: %v", err)
	}
	t.Run("merged", func(t *testing.T) { runExamples(t, s) })
}

func TestExamplesClickHouse(t *testing.T) {
	base := testenv.Service(t, envDSN, "run `deploy/clickhouse.sh start` and set it to $(deploy/clickhouse.sh dsn)")
	opts, err := ch.ParseDSN(base)
	if err != nil {
		t.Fatalf("%s=%q: %v", envDSN, base, err)
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	db := "forum_examples_" + hex.EncodeToString(b)
	opts.Auth.Database = "default"
	admin, err := ch.Open(opts)
	if err != nil {
		t.Fatalf("%s=%q: connect: %v", envDSN, base, err)
	}
	t.Cleanup(func() { admin.Close() }) // after the drop below (cleanups run last-in first-out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.Ping(ctx); err != nil {
		t.Fatalf("%s=%q: server unreachable: %v", envDSN, base, err)
	}
	t.Cleanup(func() {
		if err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+db+"`"); err != nil {
			t.Errorf("drop %s: %v", db, err)
		}
	})
	u, query, _ := strings.Cut(base, "?")
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			u = u[:i+3+j]
		}
	}
	dsn := u + "/" + db
	if query != "" {
		dsn += "?" + query
	}
	s, err := clickhouse.Open(context.Background(), dsn, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open(%s): %v", dsn, err)
	}
	defer s.Close()
	// No merges until the fixture is dumped: each insert stays a part, so
	// the dump can replay the inserts in order (chdb_fixture_test.go).
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if err := admin.Exec(context.Background(), "SYSTEM STOP MERGES"); err != nil {
		t.Fatalf("stop merges: %v", err)
	}
	load(t, s)
	checkFixture(t, admin, db)
	if err := admin.Exec(context.Background(), "SYSTEM START MERGES"); err != nil {
		t.Fatalf("start merges: %v", err)
	}
	t.Run("unmerged", func(t *testing.T) { runExamples(t, s) })
	if err := s.Optimize(context.Background()); err != nil {
		t.Fatalf("Optimize: %v", err)
	}
	t.Run("merged", func(t *testing.T) { runExamples(t, s) })
}
