package registry

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSeenSetIsExact: with hashes narrowed to a few bits (most keys and
// names collide), the hashed set answers as the exact maps do, on a random
// stream of keys with duplicates, versions over the bound and latest marks.
func TestSeenSetIsExact(t *testing.T) {
	for _, mask := range []uint64{0, 1, 7, ^uint64(0)} {
		r := rand.New(rand.NewPCG(mask, 1))
		hashed, exact := newSeenSet(0, false), newSeenSet(0, true)
		for i := range 200_000 {
			name := fmt.Sprintf("io.x/s%d", r.IntN(40))
			k := entryKey{name, fmt.Sprint(r.IntN(MaxVersionsPerName + 200))}
			h := hashEntry(hashed.seed, k.name, k.version)
			h.name &= mask
			h.key &= mask
			latest := r.IntN(50) == 0
			dup := hashed.has(k, h.key)
			if want := exact.has(k, 0); dup != want {
				t.Fatalf("mask %x, step %d: has(%v) = %v, exact %v", mask, i, k, dup, want)
			}
			if dup {
				continue
			}
			ok := hashed.admit(k.name, h.name, latest)
			if want := exact.admit(k.name, 0, latest); ok != want {
				t.Fatalf("mask %x, step %d: admit(%v, latest %v) = %v, exact %v", mask, i, k, latest, ok, want)
			}
			if !ok {
				continue
			}
			hashed.add(k, h.key)
			exact.add(k, 0)
			if hashed.distinctNames() != exact.distinctNames() {
				t.Fatalf("mask %x, step %d: %d names, exact %d", mask, i, hashed.distinctNames(), exact.distinctNames())
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
