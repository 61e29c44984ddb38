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
