package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// RunTrust is the conformance suite of store.TrustStore. open must return a
// new, empty store (not yet migrated) that implements store.TrustStore.
func RunTrust(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store, ts store.TrustStore)
	}{
		{"TrustRecordsRoundTrip", testTrustRecordsRoundTrip},
		{"TrustRecordsLastWriteWins", testTrustRecordsLastWriteWins},
		{"LatestTrustRecordNeedsPublication", testLatestTrustRecord},
		{"Publications", testPublications},
		{"EvidenceByID", testEvidenceByID},
		{"FirstListed", testFirstListed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			ts, ok := s.(store.TrustStore)
			if !ok {
				t.Fatalf("%T does not implement store.TrustStore", s)
			}
			must(t, "Migrate", s.Migrate(ctx(t)))
			tt.f(t, s, ts)
		})
	}
}

func fptr(f float64) *float64 { return &f }

func trec(server, pub string, at time.Time, score *float64, band string) store.TrustRecord {
	return store.TrustRecord{
		Server: server, PublicationID: pub, ComputedAt: at, Score: score, Band: band, ToolfinderScore: 42,
		ContentSHA256: "sha-" + server + "-" + pub,
		LeafHash:      leafHash(server, pub),
		Record:        `{"server":"` + server + `","publication_id":"` + pub + `","band":"` + band + `"}`,
	}
}

// leafHash is a stand-in leaf hash (64 hex digits) that differs per
// record, so a leaf read back under the wrong server shows.
func leafHash(server, pub string) string {
	h := sha256.Sum256([]byte(server + "\x00" + pub))
	return hex.EncodeToString(h[:])
}

func normTrust(rs ...store.TrustRecord) []store.TrustRecord {
	out := make([]store.TrustRecord, len(rs))
	for i, r := range rs {
		r.ComputedAt = store.Millis(r.ComputedAt)
		out[i] = r
	}
	return out
}

func pubRow(id string, at time.Time, n int) store.Publication {
	return store.Publication{ID: id, MethodVersion: "0.1.0-draft5", WeightsSHA256: "w", RecordCount: n,
		MerkleRoot: "root-" + id, Signature: "c2ln", KeyID: "k", ComputedAt: at}
}

func testTrustRecordsRoundTrip(t *testing.T, s store.Store, ts store.TrustStore) {
	a := trec("b.example/two", "pub-1", at(0), fptr(71.25), "B")
	b := trec("a.example/one", "pub-1", at(0), nil, "C") // unknown overall score stays nil
	c := trec("a.example/one", "pub-2", at(time.Hour), fptr(0), "D")
	must(t, "InsertTrustRecords", ts.InsertTrustRecords(ctx(t), []store.TrustRecord{a, b, c}))
	got, err := ts.PublicationRecords(ctx(t), "pub-1")
	must(t, "PublicationRecords", err)
	equal(t, "records of pub-1 (ordered by server)", got, normTrust(b, a))
	got, err = ts.PublicationRecords(ctx(t), "missing")
	must(t, "PublicationRecords(missing)", err)
	equal(t, "records of a missing publication", got, []store.TrustRecord{})
}

func testTrustRecordsLastWriteWins(t *testing.T, s store.Store, ts store.TrustStore) {
	a := trec("a.example/one", "pub-1", at(0), fptr(50), "C")
	must(t, "insert", ts.InsertTrustRecords(ctx(t), []store.TrustRecord{a, a}))
	a2 := a
	a2.Band, a2.Score, a2.Record = "B", fptr(61), `{"server":"a.example/one","v":2}`
	must(t, "rewrite", ts.InsertTrustRecords(ctx(t), []store.TrustRecord{a2}))
	must(t, "identical rewrite", ts.InsertTrustRecords(ctx(t), []store.TrustRecord{a2}))
	optimize(t, s)
	got, err := ts.PublicationRecords(ctx(t), "pub-1")
	must(t, "PublicationRecords", err)
	equal(t, "last write of the key", got, normTrust(a2))
}

func testLatestTrustRecord(t *testing.T, s store.Store, ts store.TrustStore) {
	old := trec("a.example/one", "pub-1", at(0), fptr(80), "A")
	newer := trec("a.example/one", "pub-2", at(time.Hour), fptr(30), "D")
	must(t, "insert", ts.InsertTrustRecords(ctx(t), []store.TrustRecord{old, newer}))
	if _, err := ts.LatestTrustRecord(ctx(t), "a.example/one"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("records without a publication row are not visible: got err %v, want ErrNotFound", err)
	}
	must(t, "pub-1", ts.InsertPublication(ctx(t), pubRow("pub-1", at(0), 1)))
	got, err := ts.LatestTrustRecord(ctx(t), "a.example/one")
	must(t, "LatestTrustRecord", err)
	equal(t, "latest visible record (pub-2 not published yet)", got, normTrust(old)[0])
	must(t, "pub-2", ts.InsertPublication(ctx(t), pubRow("pub-2", at(time.Hour), 1)))
	got, err = ts.LatestTrustRecord(ctx(t), "a.example/one")
	must(t, "LatestTrustRecord", err)
	equal(t, "latest visible record", got, normTrust(newer)[0])
	if _, err := ts.LatestTrustRecord(ctx(t), "nobody/here"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown server: err %v, want ErrNotFound", err)
	}
}

func testPublications(t *testing.T, s store.Store, ts store.TrustStore) {
	p1, p2, p3 := pubRow("pub-1", at(0), 3), pubRow("pub-2", at(time.Hour), 4), pubRow("pub-0", at(time.Hour), 5)
	for _, p := range []store.Publication{p1, p2, p3, p2} {
		must(t, "InsertPublication", ts.InsertPublication(ctx(t), p))
	}
	p1b := p1
	p1b.RecordCount = 9
	must(t, "rewrite", ts.InsertPublication(ctx(t), p1b))
	optimize(t, s)
	norm := func(ps ...store.Publication) []store.Publication {
		for i := range ps {
			ps[i].ComputedAt = store.Millis(ps[i].ComputedAt)
		}
		return ps
	}
	got, err := ts.Publications(ctx(t), 10)
	must(t, "Publications", err)
	equal(t, "newest first, ties by id descending", got, norm(p2, p3, p1b))
	got, err = ts.Publications(ctx(t), 1)
	must(t, "Publications(1)", err)
	equal(t, "limit", got, norm(p2))
	one, err := ts.GetPublication(ctx(t), "pub-1")
	must(t, "GetPublication", err)
	equal(t, "GetPublication", one, norm(p1b)[0])
	if _, err := ts.GetPublication(ctx(t), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetPublication(nope): err %v, want ErrNotFound", err)
	}
}

func testEvidenceByID(t *testing.T, s store.Store, ts store.TrustStore) {
	e := ev("ev-1", "a.example/one", schema.KindEndpointsChanged, at(time.Minute))
	must(t, "InsertEvents", s.InsertEvents(ctx(t), []schema.DriftEvent{e, ev("ev-2", "b.example/two", schema.KindNewServer, at(0))}))
	got, err := ts.EventByID(ctx(t), "ev-1")
	must(t, "EventByID", err)
	equal(t, "EventByID", got, normEvent(e))
	if _, err := ts.EventByID(ctx(t), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("EventByID(nope): err %v, want ErrNotFound", err)
	}
	c := store.HealthCheck{ID: "hc-1", Server: "a.example/one", RemoteURL: "https://a.example/mcp", ObservedAt: at(2 * time.Minute),
		Transport: "streamable-http", Outcome: "ok", HTTPStatus: 200, LatencyMS: 120.5, AuthKind: "none", ProtocolVersion: "2025-06-18",
		ToolCount: 2, ToolsListed: true, Check: `{"id":"hc-1"}`}
	must(t, "InsertHealthChecks", s.InsertHealthChecks(ctx(t), []store.HealthCheck{c}))
	gotC, err := ts.HealthCheckByID(ctx(t), "hc-1")
	must(t, "HealthCheckByID", err)
	c.ObservedAt = store.Millis(c.ObservedAt)
	equal(t, "HealthCheckByID", gotC, c)
	if _, err := ts.HealthCheckByID(ctx(t), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("HealthCheckByID(nope): err %v, want ErrNotFound", err)
	}
}

func testFirstListed(t *testing.T, s store.Store, ts store.TrustStore) {
	r1 := rec("a.example/one", "1.0.0", "s1", at(0), false)
	r2 := rec("a.example/one", "2.0.0", "s2", at(time.Hour), true)
	r3 := rec("b.example/two", "1.0.0", "s3", at(0), true)
	r3.PublishedAt = time.Time{} // unknown: not a listing date
	insertRecords(t, s, r1, r2, r3)
	got, err := ts.FirstListed(ctx(t))
	must(t, "FirstListed", err)
	equal(t, "FirstListed", got, map[string]time.Time{"a.example/one": store.Millis(r1.PublishedAt)})
}
