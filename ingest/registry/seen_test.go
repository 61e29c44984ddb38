package registry

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestHashedSeenIsExact: with hashes narrowed to a few bits (most names
// and versions collide), hashedSeen decides as exactSeen does, on random
// streams of keys: duplicates, versions over the bound, latest marks,
// names past the list length (bigAt), names in runs and scattered.
func TestHashedSeenIsExact(t *testing.T) {
	for _, mask := range []uint64{0, 1, 7, ^uint64(0)} {
		for _, runs := range []bool{false, true} {
			r := rand.New(rand.NewPCG(mask, 1))
			hashed := newHashedSeen(0)
			exact := &exactSeen{keys: map[entryKey]struct{}{}, names: versionCounts{}}
			name := ""
			for i := range 100_000 {
				if !runs || r.IntN(8) == 0 {
					name = fmt.Sprintf("io.x/s%d", r.IntN(40))
				}
				version := fmt.Sprint(r.IntN(MaxVersionsPerName + 200))
				if r.IntN(4) == 0 {
					version = fmt.Sprint(r.IntN(bigAt + 2))
				}
				h := hashEntry(hashed.seed, name, version)
				h.name &= mask
				h.version &= mask
				latest := r.IntN(50) == 0
				got, want := hashed.take(name, version, h, latest), exact.take(name, version, h, latest)
				if got != want {
					t.Fatalf("mask %x, runs %v, step %d: take(%s@%s, latest %v) = %d, exact %d", mask, runs, i, name, version, latest, got, want)
				}
				if hashed.distinctNames() != exact.distinctNames() {
					t.Fatalf("mask %x, runs %v, step %d: %d names, exact %d", mask, runs, i, hashed.distinctNames(), exact.distinctNames())
				}
			}
		}
	}
}

// TestReadSnapshotWithCollidingHashes: the fast path with hashes narrowed
// to two bits reads the corpus and the DLQ table as the reference does.
func TestReadSnapshotWithCollidingHashes(t *testing.T) {
	defer func(m uint64) { hashMask = m }(hashMask)
	hashMask = 3
	for name, doc := range equivDocs(t) {
		if d := readBoth(doc, 64<<10, 2); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
	}
	for _, doc := range badDocs() {
		if d := readBoth([]byte(doc), 64, 2); d != "" {
			t.Errorf("doc %.200q: %s", doc, d)
		}
	}
}
