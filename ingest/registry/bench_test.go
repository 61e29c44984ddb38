package registry

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"testing"
	"time"

	"github.com/forum-mcp/forum/bench/corpus"
	"github.com/forum-mcp/forum/schema"
)

// BenchmarkReadSnapshot decodes and validates a real capture (2025-10-09,
// 1,087 entries) from uncompressed JSON: the per-entry cost of the reader.
func BenchmarkReadSnapshot(b *testing.B) {
	f, err := os.Open("testdata/snapshots/2025-10-09.json.gz")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		_, err := ReadSnapshot(bytes.NewReader(doc), "bench", time.Time{}, func(schema.Entry) error { n++; return nil }, func(schema.DLQMessage) error { return nil })
		if err != nil || n != 1087 {
			b.Fatalf("%d entries, %v", n, err)
		}
	}
}

// benchDoc is a generated registry of 2,000 servers (~6,800 records), compact.
func benchDoc(b *testing.B) []byte {
	b.Helper()
	var buf bytes.Buffer
	if _, err := corpus.New(corpus.Config{Servers: 2000, Seed: 1}).WriteSnapshot(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkReadSnapshotGenerated: the fast path (what ReadSnapshot does)
// against the reference path, on the same generated document.
func BenchmarkReadSnapshotGenerated(b *testing.B) {
	doc := benchDoc(b)
	for _, arm := range []struct {
		name string
		fast bool
	}{{"fast", true}, {"reference", false}} {
		b.Run(arm.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				_, err := readSnapshot(bytes.NewReader(doc), "bench", time.Time{}, func(schema.Entry) error { return nil }, func(schema.DLQMessage) error { return nil }, arm.fast)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseEntry: one entry at a time, the fast parser against
// ParseEntry.
func BenchmarkParseEntry(b *testing.B) {
	doc := benchDoc(b)
	var raws []json.RawMessage
	if err := json.Unmarshal(doc, &raws); err != nil {
		b.Fatal(err)
	}
	p := newEntryParser()
	for _, arm := range []struct {
		name  string
		parse func([]byte) (schema.Entry, error)
	}{{"fast", p.parseRaw}, {"reference", ParseEntry}} {
		b.Run(arm.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc) / len(raws)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := arm.parse(raws[i%len(raws)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
