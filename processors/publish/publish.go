// Package publish turns one scoring run's records into a verifiable
// publication (SPEC §5): per-record content hashes over RFC 8785 canonical
// JSON, an RFC 6962 Merkle root over the records sorted by server name, an
// Ed25519-signed header, inclusion proofs, a JSON-lines export, an offline
// Verify, and an append-only commitment log behind the Committer interface.
//
// In: records as JSON objects (any Go value that marshals to one) that carry
// a "server" string field; an ed25519 private key; the publication metadata.
// Out: sealed records (with "content_sha256"), the Publication (header +
// signature + leaf hashes), proofs, and the export stream.
//
// Canonical JSON (RFC 8785) is written by the canonical encoder in canon.go
// for structs and maps it can prove equal to github.com/gowebpki/jcs (the
// file comment says why it is hand-written and what it refuses), and by
// encoding/json + jcs for everything else; fuzz and golden tests compare the
// two. Each record is encoded once: the sealed record is the canonical bytes
// with content_sha256 inserted at its sorted place (SealCanonical), which
// is what re-canonicalizing would give. Build seals records on GOMAXPROCS
// goroutines (ForEach); the output does not depend on their number.
// Merkle hashing uses
// github.com/transparency-dev/merkle's RFC 6962 hasher, and its
// proof.VerifyInclusion verifies proofs; the tree root and the audit paths
// are computed here with the RFC 6962 §2.1 recursion (the library builds them
// only through its compact ranges or test helpers), and every generated proof
// is checked against the library's verifier in tests.
//
// Definitions:
//   - content_sha256 = hex SHA-256 of JCS(record without "content_sha256").
//   - leaf data = the same canonical bytes; leaf hash = SHA-256(0x00 || data),
//     node = SHA-256(0x01 || left || right), split at the largest power of
//     two below n; the empty tree's root is SHA-256("").
//   - signature = Ed25519 over "forum-publication-v1\n" || JCS(header); the
//     prefix separates this message from anything else the key might sign.
//
// Export format (one JSON value per line, UTF-8, "\n" separated):
//
//	line 1: {"format":"forum-publication-export","format_version":1,
//	         "header":{publication_id, method_version, weights_sha256,
//	                   record_count, merkle_root, computed_at},
//	         "signature":"<base64 std>","key_id":"<hex sha256 of public key>"}
//	line 2…: one sealed record per line, sorted by server name, each with its
//	         content_sha256.
//
// Verify re-derives every content hash, the order, the count, the root and
// the signature, and names the first offending record (line and server).
package publish

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/gowebpki/jcs"
)

// HashField is the record field that carries the content hash.
const HashField = "content_sha256"

// ServerField is the record field that names the server (the leaf order key).
const ServerField = "server"

// SignaturePrefix is prepended to the canonical header before signing.
const SignaturePrefix = "forum-publication-v1\n"

// Sentinel errors; Verify's errors wrap one of them.
var (
	ErrNotObject      = errors.New("publish: record is not a JSON object")
	ErrNoServer       = errors.New("publish: record has no server name")
	ErrDuplicate      = errors.New("publish: duplicate server in publication")
	ErrHashMismatch   = errors.New("publish: content_sha256 mismatch")
	ErrRootMismatch   = errors.New("publish: merkle root mismatch")
	ErrBadSignature   = errors.New("publish: signature does not verify")
	ErrCountMismatch  = errors.New("publish: record count mismatch")
	ErrOrder          = errors.New("publish: records not sorted by server name")
	ErrBadExport      = errors.New("publish: malformed export")
	ErrProofIndex     = errors.New("publish: leaf index out of range")
	ErrAlreadyCommits = errors.New("publish: publication already committed with another root")
)

// Canonical returns the RFC 8785 canonical JSON of v without the
// content_sha256 field, and the server name. v may be a struct, a map, or raw
// JSON bytes (json.RawMessage / []byte). Structs and maps go through the
// canonical encoder (canon.go) when it accepts them, everything else (and
// anything it refuses) through encoding/json and jcs; both give the same
// bytes.
func Canonical(v any) (canon []byte, server string, err error) {
	return AppendCanonical(nil, v)
}

// AppendCanonical is Canonical appending to dst (which may be reused).
func AppendCanonical(dst []byte, v any) (canon []byte, server string, err error) {
	switch v.(type) {
	case json.RawMessage, []byte:
	default:
		out, srv, err := appendCanonical(dst, v)
		if err == nil {
			if srv == "" {
				return nil, "", ErrNoServer
			}
			return out, srv, nil
		}
	}
	c, srv, err := canonicalJCS(v)
	if err != nil {
		return nil, "", err
	}
	return append(dst, c...), srv, nil
}

// canonicalJCS is the generic path: encoding/json, then jcs.
func canonicalJCS(v any) (canon []byte, server string, err error) {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		raw, err = json.Marshal(v)
		if err != nil {
			return nil, "", fmt.Errorf("publish: marshal record: %w", err)
		}
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, "", fmt.Errorf("%w: %v", ErrNotObject, err)
	}
	delete(m, HashField)
	if s, ok := m[ServerField]; ok {
		_ = json.Unmarshal(s, &server)
	}
	if server == "" {
		return nil, "", ErrNoServer
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, "", fmt.Errorf("publish: re-marshal: %w", err)
	}
	canon, err = jcs.Transform(b)
	if err != nil {
		return nil, "", fmt.Errorf("publish: canonicalize %s: %w", server, err)
	}
	return canon, server, nil
}

// ContentSHA256 is the hex SHA-256 of the record's canonical JSON without
// its content_sha256 field.
func ContentSHA256(v any) (string, error) {
	c, _, err := Canonical(v)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(c)
	return hex.EncodeToString(s[:]), nil
}

// Seal returns the record as canonical JSON with content_sha256 set, plus the
// server name and the leaf data (the canonical bytes without the hash).
func Seal(v any) (sealed []byte, server string, leaf []byte, err error) {
	c, server, err := Canonical(v)
	if err != nil {
		return nil, "", nil, err
	}
	r, err := SealCanonical(c, server)
	if err != nil {
		return nil, "", nil, err
	}
	return r.Sealed, server, c, nil
}

// AppendSealed is AppendCanonical and SealCanonical in one pass of the
// encoder: the canonical JSON without content_sha256 is written to dst
// (reused: canon is returned for the caller to keep), and the sealed record
// gets the hash member where the encoder met its place among the top-level
// members, instead of scanning the bytes for it. Same results as the two
// calls (TestAppendSealed).
func AppendSealed(dst []byte, v any) (canon []byte, r SealedRecord, err error) {
	switch v.(type) {
	case json.RawMessage, []byte:
	default:
		out, srv, at, err := appendCanonicalAt(dst, v)
		if err == nil && srv == "" {
			return nil, SealedRecord{}, ErrNoServer
		}
		if err == nil && at >= 0 {
			return out, sealAt(out, srv, at), nil
		}
		if err == nil {
			r, err := SealCanonical(out, srv)
			return out, r, err
		}
	}
	c, srv, err := AppendCanonical(dst, v)
	if err != nil {
		return nil, SealedRecord{}, err
	}
	r, err = SealCanonical(c, srv)
	return c, r, err
}

// sealAt seals canon with the hash member inserted at byte at, between two
// members (or after '{' or before '}').
func sealAt(canon []byte, server string, at int) SealedRecord {
	sum := sha256.Sum256(canon)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	// Built in a strings.Builder: its buffer is not zeroed before being
	// written over (300 MB for a 50k publication). The bytes are a string's:
	// sealed records are read-only (see Publication.Records).
	var b strings.Builder
	b.Grow(len(canon) + len(HashField) + len(h) + 6)
	b.Write(canon[:at])
	if canon[at-1] != '{' {
		b.WriteByte(',')
	}
	b.WriteByte('"')
	b.WriteString(HashField)
	b.WriteString(`":"`)
	b.Write(h[:])
	b.WriteByte('"')
	if canon[at-1] == '{' && canon[at] != '}' {
		b.WriteByte(',')
	}
	b.Write(canon[at:])
	str := b.String()
	return SealedRecord{Server: server, Sealed: unsafe.Slice(unsafe.StringData(str), len(str)), ContentSHA256: string(h[:]), LeafHash: LeafHash(canon)}
}

// SealedRecord is one record sealed from its canonical JSON.
type SealedRecord struct {
	Server        string
	Sealed        []byte // canonical JSON with content_sha256; read-only
	ContentSHA256 string // hex
	LeafHash      []byte // RFC 6962 leaf hash of the canonical JSON without content_sha256
}

// SealCanonical seals a record from its canonical JSON without
// content_sha256 (what Canonical returns): the hash, the sealed record (the
// hash member inserted where RFC 8785 orders it: canonical JSON with one
// more member is the same canonical JSON with that member in its sorted
// place) and the leaf hash.
func SealCanonical(canon []byte, server string) (SealedRecord, error) {
	sum := sha256.Sum256(canon)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	sealed, err := insertMember(canon, HashField, h[:])
	if err != nil {
		return SealedRecord{}, fmt.Errorf("publish: seal %s: %w", server, err)
	}
	return SealedRecord{Server: server, Sealed: sealed, ContentSHA256: string(h[:]), LeafHash: LeafHash(canon)}, nil
}

// insertMember returns a canonical JSON object with the member name:"value"
// (value: ASCII without escapes) added in its sorted place. obj must be
// canonical JSON (no whitespace) and must not hold name.
func insertMember(obj []byte, name string, value []byte) ([]byte, error) {
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, ErrNotObject
	}
	build := func(at int, comma bool) []byte {
		out := make([]byte, 0, len(obj)+len(name)+len(value)+8)
		out = append(out, obj[:at]...)
		if comma && at > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, `":"`...)
		out = append(out, value...)
		out = append(out, '"')
		if !comma && at < len(obj)-1 {
			out = append(out, ',')
		}
		return append(out, obj[at:]...)
	}
	i := 1
	for obj[i] != '}' {
		if obj[i] != '"' {
			return nil, ErrNotObject
		}
		end, err := skipString(obj, i)
		if err != nil {
			return nil, err
		}
		var key string
		if end-1 > i+1 {
			key = unsafe.String(&obj[i+1], end-1-(i+1)) // read only while obj is
		}
		if bytes.IndexByte(obj[i:end], '\\') >= 0 {
			var esc string // escapes to the heap: only for keys with escapes
			if err := json.Unmarshal(obj[i:end], &esc); err != nil {
				return nil, ErrNotObject
			}
			key = esc
		}
		switch c := compareUTF16(name, key); {
		case c == 0:
			return nil, fmt.Errorf("%w: %s already present", ErrNotObject, name)
		case c < 0:
			return build(i, false), nil
		}
		if end >= len(obj) || obj[end] != ':' {
			return nil, ErrNotObject
		}
		next, err := skipValue(obj, end+1)
		if err != nil {
			return nil, err
		}
		switch obj[next] {
		case ',':
			i = next + 1
		case '}':
			return build(next, true), nil
		default:
			return nil, ErrNotObject
		}
	}
	return build(i, true), nil
}

// skipString returns the index after the string starting at obj[i] == '"'.
func skipString(obj []byte, i int) (int, error) {
	for j := i + 1; j < len(obj); j++ {
		switch obj[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, ErrNotObject
}

// skipValue returns the index after the JSON value starting at obj[i].
func skipValue(obj []byte, i int) (int, error) {
	if i >= len(obj) {
		return 0, ErrNotObject
	}
	switch obj[i] {
	case '"':
		return skipString(obj, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(obj); j++ {
			switch obj[j] {
			case '"':
				e, err := skipString(obj, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, ErrNotObject
	}
	for j := i; j < len(obj); j++ {
		switch obj[j] {
		case ',', '}', ']':
			return j, nil
		}
	}
	return 0, ErrNotObject
}

// Header is the signed publication header.
type Header struct {
	PublicationID string `json:"publication_id"`
	MethodVersion string `json:"method_version"`
	WeightsSHA256 string `json:"weights_sha256"`
	RecordCount   int    `json:"record_count"`
	MerkleRoot    string `json:"merkle_root"` // hex
	ComputedAt    string `json:"computed_at"` // RFC 3339, UTC
}

// SigningBytes is the message the header's signature covers.
func (h Header) SigningBytes() ([]byte, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	c, err := jcs.Transform(b)
	if err != nil {
		return nil, err
	}
	return append([]byte(SignaturePrefix), c...), nil
}

// Publication is one scoring run's sealed output.
type Publication struct {
	Header    Header
	Signature []byte
	KeyID     string   // hex SHA-256 of the public key
	Servers   []string // sorted; leaf i is Servers[i]
	Records   [][]byte // sealed canonical records, same order; read-only (they may be a string's memory, see AppendSealed)
	Leaves    [][]byte // leaf hashes, same order
}

// Meta is what the caller says about a publication.
type Meta struct {
	PublicationID string
	MethodVersion string
	WeightsSHA256 string
	ComputedAt    time.Time
}

// KeyID is the hex SHA-256 of an Ed25519 public key.
func KeyID(pub ed25519.PublicKey) string {
	s := sha256.Sum256(pub)
	return hex.EncodeToString(s[:])
}

// Build seals every record, sorts them by server name, computes the Merkle
// root and signs the header. Records must have distinct server names.
// Records are sealed on GOMAXPROCS goroutines; the output does not depend on
// how many.
func Build(records []any, meta Meta, key ed25519.PrivateKey) (*Publication, error) {
	sealed := make([]SealedRecord, len(records))
	err := ForEach(len(records), func(i int) error {
		c, srv, err := Canonical(records[i])
		if err == nil {
			sealed[i], err = SealCanonical(c, srv)
		}
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return Assemble(sealed, meta, key)
}

// Assemble builds the publication from sealed records (in any order; they
// are sorted by server name here): duplicates are refused, then the Merkle
// root and the signed header.
func Assemble(sealed []SealedRecord, meta Meta, key ed25519.PrivateKey) (*Publication, error) {
	order := make([]int, len(sealed))
	for i := range order {
		order[i] = i
	}
	if !sort.SliceIsSorted(sealed, func(i, j int) bool { return sealed[i].Server < sealed[j].Server }) {
		sort.Slice(order, func(i, j int) bool { return sealed[order[i]].Server < sealed[order[j]].Server })
	}
	p := &Publication{
		Servers: make([]string, 0, len(sealed)),
		Records: make([][]byte, 0, len(sealed)),
		Leaves:  make([][]byte, 0, len(sealed)),
	}
	for n, i := range order {
		it := &sealed[i]
		if n > 0 && sealed[order[n-1]].Server == it.Server {
			return nil, fmt.Errorf("%w: %s", ErrDuplicate, it.Server)
		}
		p.Servers = append(p.Servers, it.Server)
		p.Records = append(p.Records, it.Sealed)
		p.Leaves = append(p.Leaves, it.LeafHash)
	}
	p.Header = Header{
		PublicationID: meta.PublicationID,
		MethodVersion: meta.MethodVersion,
		WeightsSHA256: meta.WeightsSHA256,
		RecordCount:   len(sealed),
		MerkleRoot:    hex.EncodeToString(RootFromLeaves(p.Leaves)),
		ComputedAt:    meta.ComputedAt.UTC().Format(time.RFC3339),
	}
	msg, err := p.Header.SigningBytes()
	if err != nil {
		return nil, err
	}
	p.Signature = ed25519.Sign(key, msg)
	p.KeyID = KeyID(key.Public().(ed25519.PublicKey))
	return p, nil
}

// Proof returns the inclusion proof of the record of server.
func (p *Publication) Proof(server string) (index int, proof [][]byte, err error) {
	i := sort.SearchStrings(p.Servers, server)
	if i == len(p.Servers) || p.Servers[i] != server {
		return 0, nil, fmt.Errorf("%w: no record for %s", ErrProofIndex, server)
	}
	pr, err := InclusionProof(p.Leaves, i)
	return i, pr, err
}

// VerifyHeader checks the header's signature.
func VerifyHeader(h Header, sig []byte, pub ed25519.PublicKey) error {
	msg, err := h.SigningBytes()
	if err != nil {
		return err
	}
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, msg, sig) {
		return ErrBadSignature
	}
	return nil
}
