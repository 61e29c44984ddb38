package registry

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/forum-mcp/forum/bench/corpus"
	"github.com/forum-mcp/forum/schema"
)

// sharedCorpus is the real corpus, when shared/ is beside the checkout.
const sharedCorpus = "../../../shared/corpus/registry-daily"

// equivDocs are the documents the fast path is compared on: the bundled
// snapshots, the real corpus when present, and a generated registry (day 0
// and a day of churn).
func equivDocs(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	files, _ := filepath.Glob("testdata/snapshots/*.json.gz")
	real, _ := filepath.Glob(sharedCorpus + "/*.json.gz")
	if testing.Short() && len(real) > 8 {
		real = real[len(real)-8:]
	}
	for _, f := range append(files, real...) {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(fh)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	r := corpus.New(corpus.Config{Servers: 1500, Seed: 3})
	for day := range 2 {
		var buf bytes.Buffer
		if _, err := r.WriteSnapshot(&buf); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("generated day %d", day)] = buf.Bytes()
		r.Advance()
	}
	return out
}

// rawEntries cuts a document into its entry values with encoding/json.
func rawEntries(t testing.TB, doc []byte) [][]byte {
	t.Helper()
	var raws []json.RawMessage
	if err := json.Unmarshal(bytes.TrimPrefix(doc, []byte("\ufeff")), &raws); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(raws))
	for i, r := range raws {
		out[i] = r
	}
	return out
}

// sameParse reports how FastParseEntry and ParseEntry differ on raw, or "".
func sameParse(raw []byte) string {
	want, werr := ParseEntry(raw)
	got, gerr := FastParseEntry(raw)
	switch {
	case werr != nil || gerr != nil:
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			return fmt.Sprintf("errors differ: reference %v, fast %v", werr, gerr)
		}
	case !reflect.DeepEqual(want, got):
		return fmt.Sprintf("entries differ:\nreference %+v\nfast      %+v", want, got)
	}
	return ""
}

// TestFastParseEntryMatchesReference: on every entry of the real and the
// generated corpus, the fast parser gives ParseEntry's Entry exactly
// (reflect.DeepEqual: every field, nil vs empty slices, times, pointers).
// It also says how many entries took the fast path.
func TestFastParseEntryMatchesReference(t *testing.T) {
	for name, doc := range equivDocs(t) {
		fast, total := 0, 0
		p := newEntryParser()
		for _, raw := range rawEntries(t, doc) {
			if d := sameParse(raw); d != "" {
				t.Fatalf("%s: %s\nraw: %s", name, d, raw)
			}
			p.b = raw
			if _, end, st := p.entry(0); st == stOK && end == len(raw) {
				fast++
			}
			total++
		}
		t.Logf("%s: %d of %d entries on the fast path", name, fast, total)
		if strings.HasPrefix(name, "generated") && fast != total {
			t.Errorf("%s: %d of %d generated entries fell back to the reference", name, total-fast, total)
		}
	}
}

// Entries the fast parser must hand to the reference, and still match it.
var oddEntries = []string{
	good1, good2, legacy,
	`{}`, `[]`, `42`, `null`, `{"server":{}}`, `{"server":null}`, `{"server":[]}`,
	`{"server":{"name":"a/b"}}`, `{"server":{"name":"io.x/y"}}`,
	`{"server":{"name":"io.x/y","Name":"io.x/z"}}`,
	`{"server":{"name":"io.x/y","NAME":"io.x/z"}}`,
	`{"server":{"name":"io.x/y","name":"io.x/z"}}`,
	`{"server":{"name":"io.x/y"},"server":{"name":"io.x/z"}}`,
	`{"server":{"name":"io.x/y","description":null}}`,
	`{"server":{"name":"io.x/y","description":5}}`,
	`{"server":{"name":"io.x/y","description":"a\"b\\c\u00e9\ud83d\ude00\ud800"}}`,
	`{"server":{"name":"io.x/\u0079"}}`,
	`{"ser\u0076er":{"name":"io.x/y"}}`,
	`{"server":{"name":"io.x/y","repository":null}}`,
	`{"server":{"name":"io.x/y","repository":{}}}`,
	`{"server":{"name":"io.x/y","packages":[]}}`,
	`{"server":{"name":"io.x/y","packages":[null]}}`,
	`{"server":{"name":"io.x/y","packages":[{"environmentVariables":[{"name":"A","isRequired":true,"isSecret":false,"format":"string"}],"transport":{"type":"stdio","headers":[]}}]}}`,
	`{"server":{"name":"io.x/y","remotes":[{"type":"sse","url":"https://x","headers":[{"name":"Authorization","isRequired":null}]}]}}`,
	`{"server":{"name":"io.x/y","remotes":"not-a-list"}}`,
	`{"server":{"name":"io.x/y","icons":[{"src":"x","sizes":["1x1"]}],"x":[1,-2.5e+3,true,false,null,{"a":[]}]}}`,
	`{"server":{"name":"io.x/y","x":01}}`, `{"server":{"name":"io.x/y","x":1.}}`, `{"server":{"name":"io.x/y","x":-}}`,
	`{"server":{"name":"io.x/y"},"_meta":null}`, `{"server":{"name":"io.x/y"},"_meta":5}`,
	`{"server":{"name":"io.x/y"},"_meta":{"io.modelcontextprotocol.registry/official":null}}`,
	`{"server":{"name":"io.x/y"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"beta","isLatest":"yes"}}}`,
	`{"server":{"name":"io.x/y"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"deleted","statusMessage":"gone","statusChangedAt":"2025-02-29T00:00:00Z","publishedAt":"2025-10-01T12:00:00.123+02:00","updatedAt":"2025-10-01 12:00:00Z"}}}`,
	`{"server":{"name":"io.x/y"},"_meta":{"io.modelcontextprotocol.registry/official":{"publishedAt":"2024-02-29T23:59:59.1Z","updatedAt":"2025-10-01T24:00:00Z","status_message":"x"}}}`,
	`{"server":{"name":"io.x/y"},"_meta":{"io.modelcontextprotocol.registry/official":{"publishedAt":"2025-10-01T12:00:00.1234567891Z","isLatest":true,"isLatest":false}}}`,
	`{"server":{"name":"io.x/y"},"_meta":{"io.modelcontextprotocol.registry/publisher-provided":{"a":1},"io.modelcontextprotocol.registry/official":{"isLatest":true}}}`,
	"{\"server\":{\"name\":\"io.x/y\",\"description\":\"tab\there\"}}",
	"{\"server\":{\"name\":\"io.x/y\",\"description\":\"bad \xff utf8\"}}",
	"{\"server\" : { \"name\" : \"io.x/y\" , \"description\" : \"a b\" , \"remotes\" : [ { \"type\" : \"sse\" , \"url\" : \"u\" } ] } , \"_meta\" : { } }",
	`{"server":{"name":"io.x/y/z/w","description":"` + strings.Repeat("é", 40) + `"}}`,
	`{"server":{"name":"io.x_/y"}}`, `{"server":{"name":"io.x/y//z"}}`, `{"server":{"name":"io.x/y/"}}`,
	`{"server":{"name":"io.x/y"}} `, ` {"server":{"name":"io.x/y"}}`,
}

func TestFastParseEntryOddInputs(t *testing.T) {
	for _, s := range oddEntries {
		if d := sameParse([]byte(s)); d != "" {
			t.Errorf("%s\nraw: %s", d, s)
		}
	}
}

func TestValidNameIsTheRegexp(t *testing.T) {
	for _, n := range []string{"a/b", "io.x/y", "io.x/y/z", "io.x/y/", "/y", "x/", "x//y", "io_x/y", "io.x/y_z", "io.x/y z", "a.b-c/d.e_f-g/h", "é/x", "x/é", ""} {
		if validName(n) != nameRE.MatchString(n) {
			t.Errorf("%q: validName %v, regexp %v", n, validName(n), nameRE.MatchString(n))
		}
	}
}

func FuzzFastParseEntry(f *testing.F) {
	for _, s := range oddEntries {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if d := sameParse(raw); d != "" {
			t.Fatal(d)
		}
		if n := string(raw); len(n) < 300 && validName(n) != nameRE.MatchString(n) {
			t.Fatalf("%q: validName %v, regexp %v", n, validName(n), nameRE.MatchString(n))
		}
	})
}

// readBoth reads doc with the fast path (small windows, three workers,
// windows scribbled over once used) and with the reference path, and
// reports the first difference in entries, dead letters, stats or error.
func readBoth(doc []byte, window, workers int) string {
	defer func(w, k, m int, s bool) { fastWindow, fastWorkers, fastMinSplit, scribbleWindows = w, k, m, s }(fastWindow, fastWorkers, fastMinSplit, scribbleWindows)
	fastWindow, fastWorkers, fastMinSplit, scribbleWindows = window, workers, 0, true
	type out struct {
		es  []schema.Entry
		dl  []schema.DLQMessage
		st  SnapshotStats
		err string
	}
	read := func(fast bool) out {
		var o out
		st, err := readSnapshot(bytes.NewReader(doc), "doc.json", t0,
			func(e schema.Entry) error { o.es = append(o.es, e); return nil },
			func(d schema.DLQMessage) error { o.dl = append(o.dl, d); return nil }, fast)
		o.st = st
		if err != nil {
			o.err = err.Error()
		}
		return o
	}
	want, got := read(false), read(true)
	if want.st != got.st || want.err != got.err {
		return fmt.Sprintf("stats %+v err %q, reference %+v err %q", got.st, got.err, want.st, want.err)
	}
	if len(want.es) != len(got.es) {
		return fmt.Sprintf("%d entries, reference %d", len(got.es), len(want.es))
	}
	for i := range want.es {
		if !reflect.DeepEqual(want.es[i], got.es[i]) {
			return fmt.Sprintf("entry %d: %+v\nreference %+v", i, got.es[i], want.es[i])
		}
	}
	if !reflect.DeepEqual(want.dl, got.dl) {
		return fmt.Sprintf("dead letters differ:\n%+v\nreference %+v", got.dl, want.dl)
	}
	return ""
}

// TestReadSnapshotMatchesReference: the fast path reads every document as
// the reference reader does — the corpus documents, and each document of
// the DLQ table, at window sizes that put boundaries everywhere.
func TestReadSnapshotMatchesReference(t *testing.T) {
	docs := equivDocs(t)
	i := 0
	for name, doc := range docs {
		// Every document whole (the production window); a few of them in
		// 4 KB windows too, which puts a window edge in every few entries.
		windows := []int{8 << 20}
		if i++; i%4 == 0 || strings.HasPrefix(name, "generated") {
			windows = append(windows, 4<<10)
		}
		for _, w := range windows {
			if d := readBoth(doc, w, 3); d != "" {
				t.Fatalf("%s, window %d: %s", name, w, d)
			}
		}
	}
	for _, doc := range badDocs() {
		for _, w := range []int{1, 7, 64, 4 << 10} {
			if d := readBoth([]byte(doc), w, 2); d != "" {
				t.Errorf("window %d, doc %.200q: %s", w, doc, d)
			}
		}
	}
}

// TestReadSnapshotTruncatedAnywhere: a generated document cut at many points
// (a crawl or a copy that broke off) reads the same on both paths.
func TestReadSnapshotTruncatedAnywhere(t *testing.T) {
	var buf bytes.Buffer
	if _, err := corpus.New(corpus.Config{Servers: 60, Seed: 5}).WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	doc := buf.Bytes()
	for cut := 0; cut < len(doc); cut += 1 + cut/50 {
		if d := readBoth(doc[:cut], 1<<10, 3); d != "" {
			t.Fatalf("cut at %d: %s", cut, d)
		}
	}
}

func badDocs() []string {
	bigDesc := strings.Replace(good2, `"second"`, `"`+strings.Repeat("x", 300<<10)+`"`, 1)
	g := generatedEntries(5)
	return []string{
		"[" + good1 + "," + good2[:40],
		"[" + good1 + "," + strings.Replace(good2, "second", "sec\xff\xfeond", 1) + "]",
		"[" + good1 + "," + bigDesc + "," + legacy + "]",
		"[" + good1 + `,{"server":{"description":"no name","version":"1"}}` + "," + good2 + "]",
		"[" + strings.Replace(good1, "io.example/one", "no slash here", 1) + "," + good2 + "]",
		"[" + good1 + "," + good2 + "," + good1 + "]",
		"[" + good1 + `,42,` + good2 + "]",
		"[" + good1 + `,"x",null,[],` + good2 + "]",
		"[" + good1 + ` ]]] ` + good2 + "]",
		"[" + good1 + `] x`, "[" + good1 + `]    `, "[" + good1 + `] [`, "[" + good1 + `,]`, "[,]", "[", "[]", " [ ] ", "[ ", "[]]",
		"\ufeff[" + good1 + "]",
		"[" + good1 + "," + good1 + "\n,\n" + good2 + "]",
		"[" + good1 + `,{"a":"` + "\x01" + `"},` + good2 + "]",
		"[" + good1 + `,{"a":1e},` + good2 + "]",
		"[" + good1 + `,{"a":tru},` + good2 + "]",
		"[" + g[0] + "," + g[1] + ",\n" + g[2] + "," + g[3] + "," + g[4] + "]",
		"[" + g[0] + "," + g[1] + "," + g[2] + "," + g[3][:len(g[3])/2],
		"[" + g[0] + "," + `{"server":{"name":"io.x/y","x":"` + strings.Repeat(`\"server\",{`, 20) + `"}}` + "," + g[1] + "]",
		`{"servers":[` + good1 + `],"metadata":{"next_cursor":"x"}}`,
		"[" + strings.Repeat(good1+",", 3) + good2 + "]",
	}
}

func generatedEntries(n int) []string {
	var buf bytes.Buffer
	if _, err := corpus.New(corpus.Config{Servers: n, Seed: 9}).WriteSnapshot(&buf); err != nil {
		panic(err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &raws); err != nil {
		panic(err)
	}
	out := make([]string, len(raws))
	for i, r := range raws {
		out[i] = string(r)
	}
	return out
}

// FuzzReadSnapshotFast: on any input, the fast path and the reference read
// the same entries, dead letters and stats.
func FuzzReadSnapshotFast(f *testing.F) {
	for _, d := range badDocs() {
		f.Add([]byte(d), uint16(64))
	}
	f.Add([]byte("["+good1+","+good2+","+legacy+"]"), uint16(100))
	// Empty documents, and gzip streams whole and cut short (the gzip
	// layer's own errors must reach both paths alike).
	z := gz([]byte("[" + good1 + "," + good2 + "]"))
	for _, d := range [][]byte{nil, []byte(" \n "), gz(nil), z, z[:len(z)-4], z[:len(z)/2]} {
		f.Add(d, uint16(64))
	}
	f.Fuzz(func(t *testing.T, doc []byte, window uint16) {
		if d := readBoth(doc, 1+int(window), 3); d != "" {
			t.Fatal(d)
		}
	})
}
