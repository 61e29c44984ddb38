package registry

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
	"time"

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
