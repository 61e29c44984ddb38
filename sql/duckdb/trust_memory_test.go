package duckdb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/sql/store"
)

// A publication whose records outweigh DuckDB's buffer pool many times
// over still reads back, in server order: the rows are streamed and sorted
// in Go. (An ORDER BY in SQL failed here with "failed to pin block" — the
// 50k-record publication of the API benchmark under the 384MB default.)
func TestPublicationRecordsLargerThanTheBufferPool(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "t.duckdb")+"?memory_limit=64MB&checkpoint_threshold=16MB", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 30_000
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []store.TrustRecord
	for i := range n {
		body := make([]byte, 6_000) // a sealed record's size: 30,000 × 6 KB = 180 MB of record JSON, ~3× the pool
		for j := range body {
			body[j] = byte('a' + rng.IntN(26))
		}
		recs = append(recs, store.TrustRecord{Server: fmt.Sprintf("io.x/s%05d", (i*7919)%n) /* every server once, out of order */, PublicationID: "pub-1",
			ComputedAt: at, Band: "B", ContentSHA256: fmt.Sprint(i), LeafHash: fmt.Sprint(i), Record: `{"x":"` + string(body) + `"}`})
		if len(recs) == 1000 {
			if err := s.InsertTrustRecords(ctx, recs); err != nil {
				t.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	got, err := s.PublicationRecords(ctx, "pub-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	for i := 1; i < len(got); i++ {
		if strings.Compare(got[i-1].Server, got[i].Server) > 0 {
			t.Fatalf("records out of server order at %d: %s after %s", i, got[i].Server, got[i-1].Server)
		}
	}
}
