package diffbench

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forum-mcp/forum/bench/corpus"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
)

func docs(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	var buf bytes.Buffer
	r := corpus.New(corpus.Config{Servers: 2000, Seed: 7})
	r.Advance()
	if _, err := r.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	out["generated"] = buf.Bytes()
	files, _ := filepath.Glob("../../../shared/corpus/registry-daily/*.json.gz")
	for _, f := range files {
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
		out[filepath.Base(f)] = b
	}
	return out
}

// The prototypes read every document exactly as registry.ReadSnapshot does.
func TestPrototypesMatchReadSnapshot(t *testing.T) {
	for name, doc := range docs(t) {
		var want []schema.Entry
		var rejects int
		st, err := registry.ReadSnapshot(bytes.NewReader(doc), name, schemaTime, func(e schema.Entry) error { want = append(want, e); return nil },
			func(schema.DLQMessage) error { rejects++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		raws, err := SplitEntries(doc)
		if err == ErrNotArray {
			continue // envelopes: ReadSnapshot only
		}
		if err != nil {
			if st.Incomplete {
				continue
			}
			t.Fatalf("%s: split: %v", name, err)
		}
		for _, parse := range []struct {
			n string
			f ParseFunc
		}{{"ParseEntry", registry.ParseEntry}, {"FastParseEntry", FastParseEntry}} {
			got, rej := ParallelParse(raws, parse.f, 3)
			if rej != rejects {
				t.Errorf("%s %s: %d rejects, ReadSnapshot %d", name, parse.n, rej, rejects)
			}
			if d := SameEntries(want, got); d != "" {
				t.Errorf("%s %s: %s", name, parse.n, d)
			}
		}
	}
}

func BenchmarkParseEntry(b *testing.B) { benchParse(b, registry.ParseEntry) }

func BenchmarkFastParseEntry(b *testing.B) { benchParse(b, FastParseEntry) }

func benchParse(b *testing.B, parse ParseFunc) {
	var buf bytes.Buffer
	if _, err := corpus.New(corpus.Config{Servers: 1000}).WriteSnapshot(&buf); err != nil {
		b.Fatal(err)
	}
	raws, err := SplitEntries(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(buf.Len() / len(raws)))
	i := 0
	for b.Loop() {
		if _, err := parse(raws[i%len(raws)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkSplitEntries(b *testing.B) {
	var buf bytes.Buffer
	if _, err := corpus.New(corpus.Config{Servers: 1000}).WriteSnapshot(&buf); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := SplitEntries(buf.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
}

var schemaTime = time.Unix(0, 0)
