package registry

// "An honest instrument": what the reader and the crawler hand on must let
// no fault of ours (a flag a page did not carry, a flood of versions, a
// broken file) pass for the registry's word, and must never echo bad input
// whole.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// setOfficial rewrites fields of a raw v0.1 entry's official metadata (and
// the version, when v is not "").
func setOfficial(t testing.TB, raw json.RawMessage, v string, meta map[string]any) json.RawMessage {
	t.Helper()
	var e map[string]map[string]any
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	if v != "" {
		e["server"]["version"] = v
	}
	off := e["_meta"][OfficialMetaKey].(map[string]any)
	for k, x := range meta {
		off[k] = x
	}
	out, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCrawlIncrementalMarksTheOldLatest: the registry publishes a new
// version of a server and flips the old latest's isLatest without changing
// its updatedAt. The incremental crawl after it must hand on what is needed
// for the old latest to be known as not latest: taking, per (name, version),
// the newest observation of the two crawls, each server has one latest.
func TestCrawlIncrementalMarksTheOldLatest(t *testing.T) {
	rows := crawlRealRows(t)
	all := crawlParseAll(t, rows)
	// A real server with more than one version, and its latest row.
	count := map[string]int{}
	for _, e := range all {
		count[e.Server.Name]++
	}
	li := -1
	for i, e := range all {
		if count[e.Server.Name] > 1 && e.Meta.IsLatest {
			li = i
			break
		}
	}
	if li < 0 {
		t.Fatal("no server with several versions in the crawl pages")
	}
	name, oldV := all[li].Server.Name, all[li].Server.Version

	fake, srv := newCrawlFake(t, rows)
	c := newCrawlTestCrawler(t, srv, nil, nil)
	first, res1, err := crawlRun(t, c, time.Time{})
	if err != nil {
		t.Fatal(err)
	}

	// The registry, a day later: a new latest, the old one flipped in place.
	next := crawlMaxUpdated(all).Add(time.Hour).Format(time.RFC3339Nano)
	after := append([]json.RawMessage(nil), rows...)
	after[li] = setOfficial(t, rows[li], "", map[string]any{"isLatest": false}) // updatedAt untouched
	after = append(after, setOfficial(t, rows[li], "99.0.0", map[string]any{"isLatest": true, "publishedAt": next, "updatedAt": next}))
	fake.mu.Lock()
	fake.rows = after
	fake.mu.Unlock()
	second, res2, err := crawlRun(t, c, res1.Watermark)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Mode != schema.ModeIncremental || !res2.Watermark.Equal(crawlMaxUpdated(second.entries[:1])) {
		t.Fatalf("second crawl %+v: the watermark moves with the listing only", res2)
	}

	newest := map[string]schema.Entry{} // name@version -> newest observation
	for _, es := range [][]schema.Entry{first.entries, second.entries} {
		for _, e := range es {
			newest[e.Server.Name+"@"+e.Server.Version] = e
		}
	}
	marked := map[string][]string{}
	for k, e := range newest {
		if e.Meta.IsLatest {
			marked[e.Server.Name] = append(marked[e.Server.Name], k)
		}
	}
	for n, ks := range marked {
		if len(ks) != 1 {
			t.Errorf("%s: %d versions marked latest: %v", n, len(ks), ks)
		}
	}
	if got := marked[name]; len(got) != 1 || got[0] != name+"@99.0.0" {
		t.Errorf("%s: marked latest %v, want only 99.0.0 (the old latest was %s)", name, got, oldV)
	}
	if o, ok := newest[name+"@"+oldV]; !ok || o.Meta.IsLatest {
		t.Errorf("the incremental crawl did not hand on %s@%s as no longer latest", name, oldV)
	}
}

// TestVersionsPerNameBound: a listing with 10,000 versions of one name keeps
// MaxVersionsPerName of them and the one marked latest; the rest go to the
// DLQ with their reason, and the listing stays whole (its server is listed).
func TestVersionsPerNameBound(t *testing.T) {
	const flood = 10_000
	base := crawlRealRows(t)[0]
	rows := make([]json.RawMessage, 0, flood+1)
	for i := range flood + 1 {
		// The latest is the last row: past the bound, and still taken.
		rows = append(rows, setOfficial(t, base, fmt.Sprintf("0.%d.0", i), map[string]any{"isLatest": i == flood}))
	}
	name := crawlFakeName(base)
	check := func(t *testing.T, es []schema.Entry, dl []schema.DLQMessage, whole bool, took time.Duration) {
		t.Helper()
		if len(es) != MaxVersionsPerName+1 || !es[len(es)-1].Meta.IsLatest {
			t.Errorf("%d entries taken (last latest: %v), want %d and the latest", len(es), len(es) > 0 && es[len(es)-1].Meta.IsLatest, MaxVersionsPerName+1)
		}
		if len(dl) != flood-MaxVersionsPerName {
			t.Fatalf("%d dead letters, want %d", len(dl), flood-MaxVersionsPerName)
		}
		for _, d := range dl {
			if d.Reason != schema.ReasonTooManyVersions || !strings.HasPrefix(d.Key, name+"@") || len(d.Payload) > schema.MaxDLQPayload {
				t.Fatalf("dead letter %s %q", d.Reason, d.Key)
			}
		}
		if !whole {
			t.Error("versions over the bound hide no server: the listing is whole")
		}
		if took > 10*time.Second {
			t.Errorf("took %v", took)
		}
	}

	t.Run("snapshot file", func(t *testing.T) {
		doc := []byte("[")
		for i, r := range rows {
			if i > 0 {
				doc = append(doc, ',')
			}
			doc = append(doc, r...)
		}
		doc = append(doc, ']')
		for _, fast := range []bool{true, false} {
			var es []schema.Entry
			var dl []schema.DLQMessage
			start := time.Now()
			st, err := readSnapshot(bytes.NewReader(doc), "flood.json", t0,
				func(e schema.Entry) error { es = append(es, e); return nil },
				func(d schema.DLQMessage) error { dl = append(dl, d); return nil }, fast)
			if err != nil {
				t.Fatal(err)
			}
			check(t, es, dl, st.Whole(), time.Since(start))
			if st.Rejects != len(dl) || st.Entries != len(es) || st.Names != 1 {
				t.Errorf("fast %v: stats %+v", fast, st)
			}
		}
	})
	t.Run("crawl", func(t *testing.T) {
		_, srv := newCrawlFake(t, rows)
		start := time.Now()
		s, res, err := crawlRun(t, newCrawlTestCrawler(t, srv, nil, nil), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, s.entries, s.dlq, res.Unreadable == 0, time.Since(start))
		if res.Rejects != len(s.dlq) || res.Entries != len(s.entries) {
			t.Errorf("result %+v", res)
		}
	})
}

// TestUnreadableCountsWhatMayHideAServer: the rejects that make a listing
// not whole, and those that do not.
func TestUnreadableCountsWhatMayHideAServer(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		unreadable int
		whole      bool
	}{
		{"clean", "[" + good1 + "," + good2 + "]", 0, true},
		{"missing name", "[" + good1 + `,{"server":{"description":"no name","version":"1"}}` + "," + good2 + "]", 1, false},
		{"invalid name", "[" + strings.Replace(good1, "io.example/one", "no slash here", 1) + "," + good2 + "]", 1, false},
		{"invalid UTF-8", "[" + good1 + "," + strings.Replace(good2, "second", "sec\xff\xfeond", 1) + "]", 1, false},
		{"not an object", "[" + good1 + `,42,` + good2 + "]", 1, false},
		{"duplicate: the first copy is kept", "[" + good1 + "," + good2 + "," + good1 + "]", 0, true},
		{"truncated", "[" + good1 + "," + good2[:40], 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, st := readAll(t, []byte(tc.doc))
			if st.Unreadable != tc.unreadable || st.Whole() != tc.whole {
				t.Errorf("unreadable %d whole %v, want %d %v", st.Unreadable, st.Whole(), tc.unreadable, tc.whole)
			}
		})
	}
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestReadSnapshotSaysWhereItBreaks: a document that cannot be read whole
// gets a dead letter that says what is wrong and where, for operators (the
// diff command prints it).
func TestReadSnapshotSaysWhereItBreaks(t *testing.T) {
	doc := []byte("[" + good1 + "," + good2 + "]")
	cut := doc[:len(good1)+20]
	zcut := gz(doc)
	zcut = zcut[:len(zcut)-12]
	tests := []struct {
		name   string
		in     []byte
		reason string
		detail []string
	}{
		{"empty file", nil, schema.ReasonTruncatedJSON, []string{"empty", "0 bytes"}},
		{"whitespace only", []byte(" \n "), schema.ReasonTruncatedJSON, []string{"empty", "3 bytes"}},
		{"empty gzip", gz(nil), schema.ReasonTruncatedJSON, []string{"empty", "0 bytes (after gunzip)"}},
		{"JSON cut short", cut, schema.ReasonTruncatedJSON, []string{fmt.Sprintf("cut short at byte %d", len(cut)), "after 1 entries"}},
		{"gzip cut short", zcut, schema.ReasonTruncatedJSON, []string{"the gzip stream itself is cut short"}},
		{"JSON cut short, gzip whole", gz(cut), schema.ReasonTruncatedJSON, []string{fmt.Sprintf("cut short at byte %d (after gunzip), after 1 entries", len(cut))}},
		{"HTML", []byte("<html>502</html>"), schema.ReasonNotJSON, []string{"HTML"}},
		{"bad gzip header", []byte{0x1f, 0x8b, 0, 0, 0}, schema.ReasonMalformedJSON, []string{"gzip"}},
		{"not an array", []byte(`"` + strings.Repeat("x", 100<<10) + `"`), schema.ReasonMalformedJSON, []string{"not a JSON array"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, dl, st := readAll(t, tc.in)
			if !st.Incomplete || len(dl) == 0 {
				t.Fatalf("incomplete %v, %d dead letters", st.Incomplete, len(dl))
			}
			last := dl[len(dl)-1]
			if last.Reason != tc.reason {
				t.Errorf("reason %s, want %s (%s)", last.Reason, tc.reason, last.Detail)
			}
			for _, d := range tc.detail {
				if !strings.Contains(last.Detail, d) {
					t.Errorf("detail %q does not say %q", last.Detail, d)
				}
			}
			if len(last.Detail) > 300 {
				t.Errorf("detail is %d bytes: bad input echoed", len(last.Detail))
			}
		})
	}
}

// TestRejectsQuoteInputBounded: an error about bad input quotes some of it,
// never all of it.
func TestRejectsQuoteInputBounded(t *testing.T) {
	huge := strings.Repeat("n", 100<<10)
	for _, raw := range []string{
		strings.Replace(good1, "io.example/one", "bad name "+huge, 1),
		strings.Replace(good1, `"io.example/one"`, strings.Repeat("9", 100<<10), 1), // json quotes a number it cannot take
	} {
		_, err := ParseEntry([]byte(raw))
		if err == nil {
			t.Fatal("accepted")
		}
		if n := len(err.Error()); n > 1024 {
			t.Errorf("%s: error is %d bytes", ReasonOf(err), n)
		}
	}
	_, dl, _ := readAll(t, []byte("["+good1+`] "`+huge+`"`))
	if len(dl) != 1 || len(dl[0].Detail) > 300 {
		t.Errorf("dead letters %d, detail %d bytes", len(dl), len(dl[0].Detail))
	}
}

// TestCrawlQuotesRegistryInputBounded: a cursor of any length sent by the
// registry is never quoted whole in the crawl's errors.
func TestCrawlQuotesRegistryInputBounded(t *testing.T) {
	long := strings.Repeat("c", 200<<10)
	page := func(next string) []byte {
		return []byte(`{"servers":[` + good1 + `],"metadata":{"nextCursor":"` + next + `"}}`)
	}
	tests := []struct {
		name string
		hook func(n int, w http.ResponseWriter, r *http.Request) bool
		want error
	}{
		{"a cursor that comes back", func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Write(page(long))
			return true
		}, ErrCursorLoop},
		{"a cursor the registry then refuses", func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				w.Write(page(long))
			} else {
				http.Error(w, `{"title":"Bad Request","detail":"invalid cursor `+long+`"}`, http.StatusBadRequest)
			}
			return true
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newCrawlFake(t, nil)
			f.hook = tc.hook
			s, _, err := crawlRun(t, newCrawlTestCrawler(t, srv, &crawlSleeps{}, nil), time.Time{})
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if n := len(err.Error()); n > 2048 {
				t.Errorf("error is %d bytes: the cursor is echoed", n)
			}
			for _, d := range s.dlq {
				if len(d.Detail) > 1024 || len(d.Source) > 1024 || len(d.Payload) > schema.MaxDLQPayload {
					t.Errorf("dead letter unbounded: detail %d source %d payload %d", len(d.Detail), len(d.Source), len(d.Payload))
				}
			}
		})
	}
}

// TestReadSnapshotGzipCutAnywhere: a gzip file cut anywhere is a broken
// capture, also when the JSON inside happens to be whole (the cut took only
// the stream's end), and both read paths say so alike.
func TestReadSnapshotGzipCutAnywhere(t *testing.T) {
	doc := []byte("[" + strings.Join(generatedEntries(8), ",") + "]")
	z := gz(doc)
	for cut := 10; cut < len(z); cut += 1 + cut/40 {
		if d := readBoth(z[:cut], 1<<10, 3); d != "" {
			t.Fatalf("cut at %d of %d: %s", cut, len(z), d)
		}
		if _, _, st := readAll(t, z[:cut]); !st.Incomplete {
			t.Errorf("gzip cut at %d of %d bytes read as a whole capture", cut, len(z))
		}
	}
	for _, tail := range []int{1, 4, 8, 12} { // inside the trailer and the last block
		if _, _, st := readAll(t, z[:len(z)-tail]); !st.Incomplete {
			t.Errorf("gzip without its last %d bytes read as a whole capture", tail)
		}
	}
}
