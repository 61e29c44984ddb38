package scorer

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/sql/store"
)

// PublicationID is the deterministic id of the publication computed at t:
// a replay of the same snapshot gets the same id, so its commitment and its
// rows are rewritten, never doubled.
func PublicationID(t time.Time) string { return "pub-" + t.UTC().Format("20060102T150405Z") }

// Sealed is one publication ready to store: the publish.Publication and the
// rows of trust_records and publications.
type Sealed struct {
	Pub     *publish.Publication
	Records []store.TrustRecord
	Row     store.Publication
}

// Seal hashes, orders, roots and signs records (processors/publish). Each
// record's canonical JSON is written once and sealed in the same pass
// (publish.AppendSealed: the canonical encoder, jcs as the fallback) on
// GOMAXPROCS goroutines; sets each record's ContentSHA256.
func Seal(recs []Record, meta Meta, key ed25519.PrivateKey) (*Sealed, error) {
	if meta.Weights == nil {
		meta.Weights = method.Embedded().Weights
	}
	sealed := make([]publish.SealedRecord, len(recs))
	err := publish.ForEach(len(recs), func(i int) error {
		buf := canonBufs.Get().(*[]byte)
		defer canonBufs.Put(buf)
		c, r, err := publish.AppendSealed((*buf)[:0], &recs[i])
		if c != nil {
			*buf = c
		}
		sealed[i] = r
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		return nil
	})
	var p *publish.Publication
	if err == nil {
		p, err = publish.Assemble(sealed, publish.Meta{PublicationID: meta.PublicationID, MethodVersion: meta.Weights.MethodVersion,
			WeightsSHA256: meta.Weights.SHA256(), ComputedAt: meta.ComputedAt}, key)
	}
	if err != nil {
		return nil, fmt.Errorf("scorer: build publication %s: %w", meta.PublicationID, err)
	}
	// p.Servers is sorted; Compute's records already are, so the map is
	// only needed for records sealed in another order.
	idx := func(n int) int { return n }
	if !sort.SliceIsSorted(recs, func(i, j int) bool { return recs[i].Server < recs[j].Server }) {
		byName := make(map[string]int, len(recs))
		for i := range recs {
			byName[recs[i].Server] = i
		}
		idx = func(n int) int { return byName[p.Servers[n]] }
	}
	// Each row's Record shares the sealed bytes of p.Records (no 6 KB copy
	// per record): sealed records are never written to after Assemble, and
	// nothing may write to p.Records' bytes.
	s := &Sealed{Pub: p, Records: make([]store.TrustRecord, len(p.Servers))}
	for n, srv := range p.Servers {
		i := idx(n)
		r, h := &recs[i], sealed[i].ContentSHA256
		r.ContentSHA256 = h
		s.Records[n] = store.TrustRecord{Server: srv, PublicationID: meta.PublicationID, ComputedAt: meta.ComputedAt,
			Score: r.Score, Band: r.Band, ToolfinderScore: r.Toolfinder.Score, ContentSHA256: h, Record: unsafe.String(unsafe.SliceData(p.Records[n]), len(p.Records[n]))}
	}
	s.Row = store.Publication{ID: p.Header.PublicationID, MethodVersion: p.Header.MethodVersion, WeightsSHA256: p.Header.WeightsSHA256,
		RecordCount: p.Header.RecordCount, MerkleRoot: p.Header.MerkleRoot, Signature: base64.StdEncoding.EncodeToString(p.Signature),
		KeyID: p.KeyID, ComputedAt: meta.ComputedAt}
	return s, nil
}

var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// FromStore rebuilds a publish.Publication (for export and proofs) from the
// stored header and records; the records must be in server order.
func FromStore(row store.Publication, recs []store.TrustRecord) (*publish.Publication, error) {
	sig, err := base64.StdEncoding.DecodeString(row.Signature)
	if err != nil {
		return nil, fmt.Errorf("scorer: publication %s: signature is not base64: %w", row.ID, err)
	}
	p := &publish.Publication{
		Header: publish.Header{PublicationID: row.ID, MethodVersion: row.MethodVersion, WeightsSHA256: row.WeightsSHA256,
			RecordCount: row.RecordCount, MerkleRoot: row.MerkleRoot, ComputedAt: row.ComputedAt.UTC().Format(time.RFC3339)},
		Signature: sig, KeyID: row.KeyID,
	}
	for _, r := range recs {
		c, srv, err := publish.Canonical([]byte(r.Record))
		if err != nil {
			return nil, fmt.Errorf("scorer: publication %s, record %s: %w", row.ID, r.Server, err)
		}
		p.Servers = append(p.Servers, srv)
		p.Records = append(p.Records, []byte(r.Record))
		p.Leaves = append(p.Leaves, publish.LeafHash(c))
	}
	return p, nil
}

// KeyFile is the signing key's file name under the data dir.
const KeyFile = "publication.key"

// LoadOrCreateKey reads an Ed25519 private key (PKCS #8 PEM) from path,
// creating one (mode 0600) when the file does not exist. A key readable by
// others is refused: whoever reads it can sign publications.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		_, priv, gerr := ed25519.GenerateKey(rand.Reader)
		if gerr != nil {
			return nil, fmt.Errorf("scorer: generate signing key: %w", gerr)
		}
		der, merr := x509.MarshalPKCS8PrivateKey(priv)
		if merr != nil {
			return nil, fmt.Errorf("scorer: encode signing key: %w", merr)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("scorer: key dir: %w", err)
		}
		f, oerr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(oerr, fs.ErrExist) {
			return LoadOrCreateKey(path) // another process created it first
		}
		if oerr != nil {
			return nil, fmt.Errorf("scorer: create signing key %s: %w", path, oerr)
		}
		if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
			f.Close()
			return nil, fmt.Errorf("scorer: write signing key %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("scorer: write signing key %s: %w", path, err)
		}
		return priv, f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("scorer: read signing key %s: %w", path, err)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("scorer: signing key %s is readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("scorer: %s is not a PKCS #8 PEM private key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("scorer: parse signing key %s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("scorer: %s holds a %T, not an Ed25519 key", path, k)
	}
	return priv, nil
}

// PublicKeyPEM encodes a public key as PKIX PEM (publish.PublicKeyPEM).
func PublicKeyPEM(pub ed25519.PublicKey) string { return publish.PublicKeyPEM(pub) }

// ParsePublicKey reads a public key (publish.ParsePublicKey).
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) { return publish.ParsePublicKey(b) }

// Writer is what publishing needs of the store.
type Writer interface {
	InsertTrustRecords(ctx context.Context, recs []store.TrustRecord) error
	InsertPublication(ctx context.Context, p store.Publication) error
}
