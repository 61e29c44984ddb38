package store

import (
	"time"
)

// A registry record's row is keyed by (name, version, content_sha256), and
// the content hash covers the official metadata (isLatest, status), so one
// version can have several rows: when a new version is published the
// crawler re-observes the old latest with isLatest=false, which is a new
// row beside the one first seen with isLatest=true. A row keeps its
// earliest observation (ObservedAt) and, in registry_sightings, its most
// recent one (LastObservedAt). The rules below serve a version's flags from
// its most recent sighting, once for every engine:
//
//   - a version's current row, as of a time T, is its row with the most
//     recent sighting by T: LastObservedAt when that is not after T, else
//     ObservedAt (the only sighting known to be by T); ties: the later
//     first sighting, then the greater content hash;
//   - the server's latest row as of T is, among the current rows sighted
//     with isLatest, the one the latest view's rule (NewerLatest) picks
//     when each is dated at its sighting — the rule servers_latest applies
//     to the same sightings as they are written;
//   - when no current row was sighted with isLatest, the rule picks among
//     every row sighted with isLatest by T, dating one whose sightings span
//     T (first by T, last after it) at T: a content that was latest before
//     T and again after it. As of now that is the latest view's own row.
//
// So at most one row is latest, a version demoted by a later sighting is
// not, and a version that becomes latest again (re-sighted with the content
// it was first seen with) is, whatever order the rows were written in.
// Only the first and the last sighting of a content are kept, so between
// the two the rule cannot see a sighting in the middle: for a content that
// came back (A, then B, then A again, then A unchanged), as of a time after
// A came back and before its last sighting the version reads as B, and the
// fallback above keeps the server listed, on the content that spans T.

// LastSightings returns, per (name, version, content_sha256) key of a
// batch, the record with the latest ObservedAt (on a tie the later write),
// in first-seen order: what the batch writes into registry_sightings.
func LastSightings(recs []Record) []Record {
	type key struct{ name, version, sha string }
	at := make(map[key]int, len(recs))
	var out []Record
	for _, r := range recs {
		k := key{r.Name, r.Version, r.ContentSHA256}
		if i, ok := at[k]; !ok {
			at[k] = len(out)
			out = append(out, r)
		} else if !Millis(r.ObservedAt).Before(Millis(out[i].ObservedAt)) {
			out[i] = r
		}
	}
	return out
}

// endOfTime is after every sighting: "as of now" for the rules above.
var endOfTime = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// sightingBy is the most recent sighting of r known to be by t (zero when r
// was first seen after t).
func sightingBy(r Record, t time.Time) time.Time {
	first, last := Millis(r.ObservedAt), Millis(r.LastObservedAt)
	if first.After(t) {
		return time.Time{}
	}
	if last.After(first) && !last.After(t) {
		return last
	}
	return first
}

// currentAsOf applies the rules above to one server's rows as of t: the
// index of each row's version's current row (-1 for a row first seen after
// t), and the index of the latest row (-1 when none).
func currentAsOf(rows []Record, t time.Time) (current []int, latest int) {
	t = Millis(t)
	best := map[string]int{}
	seen := make([]time.Time, len(rows))
	for i, r := range rows {
		seen[i] = sightingBy(r, t)
		if seen[i].IsZero() {
			continue
		}
		j, ok := best[r.Version]
		if !ok {
			best[r.Version] = i
			continue
		}
		if c := seen[i].Compare(seen[j]); c > 0 ||
			c == 0 && (Millis(r.ObservedAt).After(Millis(rows[j].ObservedAt)) ||
				Millis(r.ObservedAt).Equal(Millis(rows[j].ObservedAt)) && r.ContentSHA256 > rows[j].ContentSHA256) {
			best[r.Version] = i
		}
	}
	current = make([]int, len(rows))
	latest = -1
	for i, r := range rows {
		current[i] = -1
		if seen[i].IsZero() {
			continue
		}
		current[i] = best[r.Version]
		if current[i] != i || !r.IsLatest {
			continue
		}
		if latest < 0 {
			latest = i
			continue
		}
		if newerSighted(rows, seen, i, latest) {
			latest = i
		}
	}
	if latest >= 0 {
		return current, latest
	}
	for i, r := range rows {
		if !r.IsLatest || seen[i].IsZero() {
			continue
		}
		if Millis(r.LastObservedAt).After(t) {
			seen[i] = t // sighted before t and after it
		}
		if latest < 0 || newerSighted(rows, seen, i, latest) {
			latest = i
		}
	}
	return current, latest
}

// newerSighted is NewerLatest of rows i and j dated at their sightings.
func newerSighted(rows []Record, seen []time.Time, i, j int) bool {
	a, b := rows[i], rows[j]
	a.ObservedAt, b.ObservedAt = seen[i], seen[j]
	return NewerLatest(a, b)
}

// ServeVersions returns a server's rows (VersionHistory's, in its order)
// as Versions serves them now: every row carries its version's status from
// the version's most recent sighting, and IsLatest is set on the server's
// latest row only.
func ServeVersions(rows []Record) []Record {
	current, latest := currentAsOf(rows, endOfTime)
	out := make([]Record, len(rows))
	for i, r := range rows {
		if c := current[i]; c >= 0 {
			r.Status = rows[c].Status
		}
		r.IsLatest = i == latest
		out[i] = r
	}
	return out
}

// LatestOfHistory is the server's latest row as of t among its rows
// (VersionHistory's), with the flags it was sighted with; false when no
// row was latest by then.
func LatestOfHistory(rows []Record, t time.Time) (Record, bool) {
	_, latest := currentAsOf(rows, t)
	if latest < 0 {
		return Record{}, false
	}
	return rows[latest], true
}
