package publish

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"
)

// The kept tree gives the same root and the same proofs as the recursive
// RFC 6962 definition, for every leaf of every size up to 70 and a few
// larger ones, and every proof verifies.
func TestTreeEqualsRecursiveDefinition(t *testing.T) {
	sizes := []int{}
	for n := 0; n <= 70; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 127, 128, 129, 1000, 1023, 1025)
	for _, n := range sizes {
		leaves := make([][]byte, n)
		for i := range leaves {
			h := sha256.Sum256([]byte(fmt.Sprint(i)))
			leaves[i] = LeafHash(h[:])
		}
		tr := NewTree(leaves)
		if !bytes.Equal(tr.Root(), RootFromLeaves(leaves)) {
			t.Fatalf("n=%d: root differs", n)
		}
		for m := 0; m < n; m++ {
			if n > 200 && m%97 != 0 && m != n-1 {
				continue
			}
			want, _ := InclusionProof(leaves, m)
			got, err := tr.Proof(m)
			if err != nil || len(got) != len(want) {
				t.Fatalf("n=%d m=%d: proof of %d hashes, want %d (%v)", n, m, len(got), len(want), err)
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("n=%d m=%d: hash %d differs", n, m, i)
				}
			}
			if err := VerifyInclusion(m, n, leaves[m], got, tr.Root()); err != nil {
				t.Fatalf("n=%d m=%d: %v", n, m, err)
			}
		}
	}
	if _, err := NewTree(nil).Proof(0); err == nil {
		t.Fatal("a proof in the empty tree")
	}
}
