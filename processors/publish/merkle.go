package publish

import (
	"encoding/hex"
	"fmt"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

var hasher = rfc6962.DefaultHasher

// LeafHash is SHA-256(0x00 || data) (RFC 6962 §2.1).
func LeafHash(data []byte) []byte { return hasher.HashLeaf(data) }

// largestPow2Below returns the largest power of two strictly less than n (n > 1).
func largestPow2Below(n int) int {
	k := 1
	for k<<1 < n {
		k <<= 1
	}
	return k
}

// RootFromLeaves is the RFC 6962 Merkle Tree Hash over leaf hashes:
// MTH({}) = SHA-256(""), MTH({d}) = leaf, MTH(D[n]) =
// SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n])) with k the largest power of two < n.
func RootFromLeaves(leaves [][]byte) []byte {
	switch len(leaves) {
	case 0:
		return hasher.EmptyRoot()
	case 1:
		return leaves[0]
	}
	k := largestPow2Below(len(leaves))
	return hasher.HashChildren(RootFromLeaves(leaves[:k]), RootFromLeaves(leaves[k:]))
}

// InclusionProof is the RFC 6962 audit path PATH(m, D[n]) for leaf m.
func InclusionProof(leaves [][]byte, m int) ([][]byte, error) {
	if m < 0 || m >= len(leaves) {
		return nil, fmt.Errorf("%w: %d of %d", ErrProofIndex, m, len(leaves))
	}
	return path(m, leaves), nil
}

func path(m int, d [][]byte) [][]byte {
	if len(d) <= 1 {
		return [][]byte{}
	}
	k := largestPow2Below(len(d))
	if m < k {
		return append(path(m, d[:k]), RootFromLeaves(d[k:]))
	}
	return append(path(m-k, d[k:]), RootFromLeaves(d[:k]))
}

// VerifyInclusion checks that leafHash is leaf `index` of a tree of `size`
// leaves with the given root (delegates to transparency-dev/merkle).
func VerifyInclusion(index, size int, leafHash []byte, proofPath [][]byte, root []byte) error {
	if index < 0 || size <= 0 {
		return ErrProofIndex
	}
	if err := proof.VerifyInclusion(hasher, uint64(index), uint64(size), leafHash, proofPath, root); err != nil {
		return fmt.Errorf("%w: %v", ErrRootMismatch, err)
	}
	return nil
}

// VerifyRecordInclusion hashes a sealed (or unsealed) record and checks it
// against a hex root with a proof — what an API consumer does with
// /v1/servers/{name}/proof.
func VerifyRecordInclusion(record []byte, index, size int, proofPath [][]byte, rootHex string) error {
	c, _, err := Canonical(record)
	if err != nil {
		return err
	}
	root, err := hex.DecodeString(rootHex)
	if err != nil {
		return fmt.Errorf("%w: root is not hex", ErrBadExport)
	}
	return VerifyInclusion(index, size, LeafHash(c), proofPath, root)
}

// Tree is an RFC 6962 tree kept whole: every node over an aligned range
// D[i·2^l : min((i+1)·2^l, n)], level by level, so an inclusion proof is
// read off in O(log n) instead of recomputing subtree hashes (the API
// serves proofs of 50k-record publications this way). Building it costs
// n−1 hashes; it holds about 2n hashes.
type Tree struct {
	levels [][][]byte // levels[0] are the leaves; the last level has one node, the root
}

// NewTree builds the tree over leaf hashes (in leaf order).
func NewTree(leaves [][]byte) *Tree {
	t := &Tree{levels: [][][]byte{leaves}}
	for cur := leaves; len(cur) > 1; {
		next := make([][]byte, (len(cur)+1)/2)
		for i := range next {
			if 2*i+1 < len(cur) {
				next[i] = hasher.HashChildren(cur[2*i], cur[2*i+1])
			} else {
				// A node without a right sibling is the truncated range's
				// own hash: RFC 6962 splits at the largest power of two,
				// so it carries up unchanged.
				next[i] = cur[2*i]
			}
		}
		t.levels = append(t.levels, next)
		cur = next
	}
	return t
}

// Size is the number of leaves.
func (t *Tree) Size() int { return len(t.levels[0]) }

// Root is the tree's root (MTH of the empty tree when it has no leaves).
func (t *Tree) Root() []byte {
	if t.Size() == 0 {
		return hasher.EmptyRoot()
	}
	return t.levels[len(t.levels)-1][0]
}

// Leaf returns leaf m's hash.
func (t *Tree) Leaf(m int) []byte { return t.levels[0][m] }

// Proof is PATH(m, D[n]) (RFC 6962 §2.1.1), leaf to root: at each level
// the sibling of m's ancestor, where it has one.
func (t *Tree) Proof(m int) ([][]byte, error) {
	if m < 0 || m >= t.Size() {
		return nil, fmt.Errorf("%w: %d of %d", ErrProofIndex, m, t.Size())
	}
	out := make([][]byte, 0, len(t.levels))
	for l := 0; l < len(t.levels)-1; l++ {
		idx := m >> l
		if sib := idx ^ 1; sib < len(t.levels[l]) {
			out = append(out, t.levels[l][sib])
		}
	}
	return out, nil
}
