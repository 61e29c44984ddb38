package scorer

import (
	"crypto/ed25519"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/forum-mcp/forum/processors/publish"
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

// BenchmarkCanonicalRecord writes one generated record's RFC 8785 canonical
// JSON with the canonical encoder (what Seal does per record: fields read at
// their addresses; and by value, through reflect.Values), seals it
// (content hash, member insertion, leaf hash), and runs the generic path the
// encoder replaced (encoding/json, a map, jcs) and SHA-256 of the same
// bytes (the floor).
func BenchmarkCanonicalRecord(b *testing.B) {
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	g := Generate(50, 1, at)
	recs := Compute(g.Inputs, g.Sources, Meta{PublicationID: PublicationID(at), ComputedAt: at}, nil)
	r := &recs[len(recs)/2]
	c, _, err := publish.EncodeCanonical(nil, r)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encoder", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(c)))
		buf := make([]byte, 0, 2*len(c))
		for b.Loop() {
			buf, _, _ = publish.EncodeCanonical(buf[:0], r)
		}
	})
	b.Run("encoder-by-value", func(b *testing.B) { // not addressable: the reflect.Value path
		b.ReportAllocs()
		b.SetBytes(int64(len(c)))
		buf := make([]byte, 0, 2*len(c))
		for b.Loop() {
			buf, _, _ = publish.EncodeCanonical(buf[:0], *r)
		}
	})
	b.Run("seal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(c)))
		for b.Loop() {
			_, _ = publish.SealCanonical(c, r.Server)
		}
	})
	b.Run("json+jcs", func(b *testing.B) { // the path the encoder replaced (Seal ran it twice per record)
		b.ReportAllocs()
		b.SetBytes(int64(len(c)))
		for b.Loop() {
			if _, err := jcsCanon(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sha256-floor", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(c)))
		for b.Loop() {
			_ = sha256.Sum256(c)
		}
	})
}
