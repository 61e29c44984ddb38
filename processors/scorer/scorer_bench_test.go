package scorer

import (
	"crypto/ed25519"
	"crypto/sha256"
	"testing"
	"time"
)

// BenchmarkCompute scores a 1,000-server generated population (the seed's
// base rates); bench/RESULTS.md has the 50k publication end to end.
func BenchmarkCompute(b *testing.B) {
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	g := Generate(1000, 1, at)
	meta := Meta{PublicationID: PublicationID(at), ComputedAt: at}
	b.ReportAllocs()
	for b.Loop() {
		if recs := Compute(g.Inputs, g.Sources, meta, nil); len(recs) == 0 {
			b.Fatal("no records")
		}
	}
}

// BenchmarkSeal seals 1,000 computed records: canonical JSON, hashes, Merkle
// root, signature.
func BenchmarkSeal(b *testing.B) {
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	g := Generate(1000, 1, at)
	meta := Meta{PublicationID: PublicationID(at), ComputedAt: at}
	recs := Compute(g.Inputs, g.Sources, meta, nil)
	seed := sha256.Sum256([]byte("bench"))
	key := ed25519.NewKeyFromSeed(seed[:])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Seal(recs, meta, key); err != nil {
			b.Fatal(err)
		}
	}
}
