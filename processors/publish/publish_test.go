package publish

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))

func pub() ed25519.PublicKey { return testKey.Public().(ed25519.PublicKey) }

type rec struct {
	Server string             `json:"server"`
	Score  *float64           `json:"score"`
	Band   string             `json:"band"`
	Subs   map[string]float64 `json:"subs"`
	Note   string             `json:"note,omitempty"`
}

func records(n int) []any {
	out := make([]any, n)
	for i := 0; i < n; i++ {
		s := 32.5 + float64(i)
		// inserted in reverse order: Build must sort by server name
		out[n-1-i] = rec{Server: fmt.Sprintf("io.github.s%03d/srv", i), Score: &s, Band: "C",
			Subs: map[string]float64{"static": 32.5, "drift": 1e-7, "provenance": 100}, Note: "é ✓ \u2028"}
	}
	return out
}

func meta() Meta {
	return Meta{PublicationID: "pub-2026-11-30T12", MethodVersion: "0.1.0-draft5", WeightsSHA256: strings.Repeat("ab", 32),
		ComputedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
}

func TestContentSHA256(t *testing.T) {
	// RFC 8785: keys sorted, no whitespace, numbers in shortest ES6 form; the
	// hash field itself is excluded.
	a := []byte(`{"server":"x","b":1.50,"a":[1e2,"\u00e9"],"content_sha256":"zzz"}`)
	b := []byte(`{ "a" : [100, "é"], "b":1.5, "server":"x" }`)
	ha, err := ContentSHA256(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := ContentSHA256(b)
	want := sha256.Sum256([]byte(`{"a":[100,"é"],"b":1.5,"server":"x"}`))
	if ha != hb || ha != hex.EncodeToString(want[:]) {
		t.Fatalf("hashes %s %s, want %x", ha, hb, want)
	}
	if _, err := ContentSHA256([]byte(`[1]`)); !errors.Is(err, ErrNotObject) {
		t.Errorf("array: %v", err)
	}
	if _, err := ContentSHA256([]byte(`{"a":1}`)); !errors.Is(err, ErrNoServer) {
		t.Errorf("no server: %v", err)
	}
	// A struct and its JSON agree.
	s := 1.0
	h1, _ := ContentSHA256(rec{Server: "x", Score: &s, Band: "A"})
	h2, _ := ContentSHA256([]byte(`{"band":"A","score":1,"server":"x","subs":null}`))
	if h1 != h2 {
		t.Errorf("struct %s vs json %s", h1, h2)
	}
}

func TestSealRoundTrip(t *testing.T) {
	sealed, server, leaf, err := Seal(records(1)[0])
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ContentSHA256(sealed)
	sum := sha256.Sum256(leaf)
	if server != "io.github.s000/srv" || h != hex.EncodeToString(sum[:]) || !bytes.Contains(sealed, []byte(`"content_sha256":"`+h+`"`)) {
		t.Fatalf("seal: %s %s %s", server, h, sealed)
	}
}

// Known answers for the RFC 6962 hashing.
func TestMerkleKnownAnswers(t *testing.T) {
	if got := hex.EncodeToString(RootFromLeaves(nil)); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("empty root %s", got)
	}
	// RFC 6962 test vector: leaf hash of the empty string.
	if got := hex.EncodeToString(LeafHash(nil)); got != "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d" {
		t.Errorf("empty leaf %s", got)
	}
	l := [][]byte{LeafHash([]byte("a")), LeafHash([]byte("b")), LeafHash([]byte("c"))}
	node := func(a, b []byte) []byte {
		h := sha256.New()
		h.Write([]byte{1})
		h.Write(a)
		h.Write(b)
		return h.Sum(nil)
	}
	// n=3 splits at k=2: H(H(a,b), c)
	want := node(node(l[0], l[1]), l[2])
	if !bytes.Equal(RootFromLeaves(l), want) {
		t.Error("3-leaf root does not follow the RFC 6962 split")
	}
	lh := sha256.Sum256(append([]byte{0}, 'a'))
	if !bytes.Equal(l[0], lh[:]) {
		t.Error("leaf hash is not SHA-256(0x00||data)")
	}
}

func TestInclusionProofsAllSizes(t *testing.T) {
	for n := 1; n <= 33; n++ {
		var leaves [][]byte
		for i := 0; i < n; i++ {
			leaves = append(leaves, LeafHash([]byte(fmt.Sprintf("leaf-%d", i))))
		}
		root := RootFromLeaves(leaves)
		for m := 0; m < n; m++ {
			p, err := InclusionProof(leaves, m)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyInclusion(m, n, leaves[m], p, root); err != nil {
				t.Fatalf("n=%d m=%d: %v", n, m, err)
			}
			// wrong leaf, wrong index, wrong root must fail
			if VerifyInclusion(m, n, LeafHash([]byte("x")), p, root) == nil {
				t.Fatalf("n=%d m=%d: wrong leaf verified", n, m)
			}
			if n > 1 && VerifyInclusion((m+1)%n, n, leaves[m], p, root) == nil {
				t.Fatalf("n=%d m=%d: wrong index verified", n, m)
			}
			bad := append([]byte(nil), root...)
			bad[0] ^= 1
			if VerifyInclusion(m, n, leaves[m], p, bad) == nil {
				t.Fatalf("n=%d m=%d: wrong root verified", n, m)
			}
		}
	}
	if _, err := InclusionProof(nil, 0); !errors.Is(err, ErrProofIndex) {
		t.Errorf("empty tree proof: %v", err)
	}
}

func build(t *testing.T, n int) (*Publication, []byte) {
	t.Helper()
	p, err := Build(records(n), meta(), testKey)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteExport(&buf, p); err != nil {
		t.Fatal(err)
	}
	return p, buf.Bytes()
}

func TestBuildAndProofs(t *testing.T) {
	p, _ := build(t, 12)
	if p.Header.RecordCount != 12 || len(p.Servers) != 12 || p.Servers[0] != "io.github.s000/srv" {
		t.Fatalf("header %+v servers %v", p.Header, p.Servers[:2])
	}
	if err := VerifyHeader(p.Header, p.Signature, pub()); err != nil {
		t.Fatal(err)
	}
	for i, s := range p.Servers {
		idx, proof, err := p.Proof(s)
		if err != nil || idx != i {
			t.Fatalf("%s: %d %v", s, idx, err)
		}
		if err := VerifyRecordInclusion(p.Records[i], idx, len(p.Servers), proof, p.Header.MerkleRoot); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if _, _, err := p.Proof("nope"); !errors.Is(err, ErrProofIndex) {
		t.Error("unknown server proof")
	}
	if _, err := Build([]any{rec{Server: "a"}, rec{Server: "a"}}, meta(), testKey); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	// The root depends only on content, not on input order.
	q, _ := Build(append(records(12)[6:], records(12)[:6]...), meta(), testKey)
	if q.Header.MerkleRoot != p.Header.MerkleRoot {
		t.Error("root depends on input order")
	}
}

func TestVerifyUntouched(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 33} {
		_, exp := build(t, n)
		if err := Verify(bytes.NewReader(exp), pub()); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
	}
}

func TestVerifyTamperEveryRecordByte(t *testing.T) {
	p, exp := build(t, 5)
	lines := bytes.SplitAfter(exp, []byte("\n"))
	// Flip each byte of record 3 (line 4) in turn: every change must fail,
	// and when the server name survives, the error must name it.
	start := len(lines[0]) + len(lines[1]) + len(lines[2]) + len(lines[3])
	rec := lines[4]
	target := p.Servers[3]
	for i := 0; i < len(rec)-1; i++ {
		bad := append([]byte(nil), exp...)
		bad[start+i] ^= 0x01
		err := Verify(bytes.NewReader(bad), pub())
		if err == nil {
			t.Fatalf("byte %d (%q) of %s tampered: verified", i, rec[i], target)
		}
		if !strings.Contains(err.Error(), "line 5") {
			t.Fatalf("byte %d: error does not name the line: %v", i, err)
		}
		if strings.Contains(string(bad[start:start+len(rec)]), `"server":"`+target+`"`) && !strings.Contains(err.Error(), target) {
			t.Fatalf("byte %d: error does not name %s: %v", i, target, err)
		}
	}
	// A one-byte change inside a value keeps the JSON valid: hash mismatch.
	bad := bytes.Replace(exp, []byte(`"band":"C"`), []byte(`"band":"A"`), 1)
	if err := Verify(bytes.NewReader(bad), pub()); !errors.Is(err, ErrHashMismatch) || !strings.Contains(err.Error(), p.Servers[0]) {
		t.Fatalf("band tamper: %v", err)
	}
}

func TestVerifyTamperRootAndHeader(t *testing.T) {
	p, exp := build(t, 9)
	root := p.Header.MerkleRoot
	flipped := []byte(root)
	if flipped[0] == '0' {
		flipped[0] = '1'
	} else {
		flipped[0] = '0'
	}
	bad := bytes.Replace(exp, []byte(root), flipped, 1)
	if err := Verify(bytes.NewReader(bad), pub()); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("root tamper: %v", err)
	}
	// A re-signed header with a wrong root fails on the root.
	p.Header.MerkleRoot = string(flipped)
	msg, _ := p.Header.SigningBytes()
	p.Signature = ed25519.Sign(testKey, msg)
	var buf bytes.Buffer
	WriteExport(&buf, p)
	if err := Verify(&buf, pub()); !errors.Is(err, ErrRootMismatch) {
		t.Fatalf("re-signed wrong root: %v", err)
	}
	// Wrong key.
	_, exp = build(t, 3)
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)).Public().(ed25519.PublicKey)
	if err := Verify(bytes.NewReader(exp), other); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("wrong key: %v", err)
	}
	// Dropped record → count mismatch; swapped records → order error.
	lines := bytes.SplitAfter(exp, []byte("\n"))
	dropped := bytes.Join([][]byte{lines[0], lines[1], lines[2]}, nil)
	if err := Verify(bytes.NewReader(dropped), pub()); !errors.Is(err, ErrCountMismatch) {
		t.Fatalf("dropped: %v", err)
	}
	swapped := bytes.Join([][]byte{lines[0], lines[2], lines[1], lines[3]}, nil)
	if err := Verify(bytes.NewReader(swapped), pub()); !errors.Is(err, ErrOrder) {
		t.Fatalf("swapped: %v", err)
	}
	if err := Verify(strings.NewReader(""), pub()); !errors.Is(err, ErrBadExport) {
		t.Fatalf("empty: %v", err)
	}
}

func TestFileCommitter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "commitments.jsonl")
	var c Committer = NewFileCommitter(path)
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	one := Commitment{"p1", "aa", "0.1.0-draft5", at}
	if err := c.Commit(ctx, one); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, one); err != nil {
		t.Fatalf("idempotent re-commit: %v", err)
	}
	if err := c.Commit(ctx, Commitment{"p1", "bb", "0.1.0-draft5", at}); !errors.Is(err, ErrAlreadyCommits) {
		t.Fatalf("conflicting root: %v", err)
	}
	// simulate a torn append, then a new commit must still land on its own line
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"publication_id":"p-torn","merk`)
	f.Close()
	if err := c.Commit(ctx, Commitment{"p2", "cc", "0.1.0-draft5", at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	fc := c.(*FileCommitter)
	es, err := fc.Entries()
	if err != nil || len(es) != 2 || es[1].PublicationID != "p2" {
		t.Fatalf("torn line skipped, both commitments kept: %+v %v", es, err)
	}
	// A complete but corrupt line is damage, not a torn append.
	path3 := filepath.Join(t.TempDir(), "d.jsonl")
	os.WriteFile(path3, []byte("{\"publication_id\": 12}\n"), 0o644)
	if _, err := NewFileCommitter(path3).Entries(); err == nil {
		t.Fatal("corrupt line accepted")
	}
	// A torn *last* line is tolerated.
	path2 := filepath.Join(t.TempDir(), "c.jsonl")
	os.WriteFile(path2, []byte(`{"publication_id":"p1","merkle_root":"aa","method_version":"v","time":"2026-11-30T12:00:00Z"}`+"\n"+`{"publi`), 0o644)
	es, err = NewFileCommitter(path2).Entries()
	if err != nil || len(es) != 1 || es[0].Root != "aa" {
		t.Fatalf("torn tail: %+v %v", es, err)
	}
}
