package scorer

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
// record's canonical JSON is written once (publish.AppendCanonical: the
// canonical encoder, jcs as the fallback) and sealed on GOMAXPROCS
// goroutines; sets each record's ContentSHA256.
func Seal(recs []Record, meta Meta, key ed25519.PrivateKey) (*Sealed, error) {
	sealed := make([]publish.SealedRecord, len(recs))
	err := publish.ForEach(len(recs), func(i int) error {
		buf := canonBufs.Get().(*[]byte)
		defer canonBufs.Put(buf)
		c, srv, err := publish.AppendCanonical((*buf)[:0], &recs[i])
		if err == nil {
			*buf = c
			sealed[i], err = publish.SealCanonical(c, srv)
		}
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		return nil
	})
	var p *publish.Publication
	if err == nil {
		p, err = publish.Assemble(sealed, publish.Meta{PublicationID: meta.PublicationID, MethodVersion: method.Version,
			WeightsSHA256: method.WeightsSHA256(), ComputedAt: meta.ComputedAt}, key)
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

// PublicKeyPEM encodes a public key as PKIX PEM.
func PublicKeyPEM(pub ed25519.PublicKey) string {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// ParsePublicKey accepts a PKIX PEM public key, a PKCS #8 PEM private key
// (its public half), or the raw 32 bytes as hex or base64.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	if blk, _ := pem.Decode(b); blk != nil {
		switch blk.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("scorer: public key: %w", err)
			}
			if pub, ok := k.(ed25519.PublicKey); ok {
				return pub, nil
			}
			return nil, fmt.Errorf("scorer: public key is a %T, not Ed25519", k)
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("scorer: private key: %w", err)
			}
			if priv, ok := k.(ed25519.PrivateKey); ok {
				return priv.Public().(ed25519.PublicKey), nil
			}
			return nil, fmt.Errorf("scorer: private key is a %T, not Ed25519", k)
		}
		return nil, fmt.Errorf("scorer: PEM block %q is not a key", blk.Type)
	}
	s := strings.TrimSpace(string(b))
	if raw, err := hex.DecodeString(s); err == nil && len(raw) == ed25519.PublicKeySize {
		return ed25519.PublicKey(raw), nil
	}
	if raw, err := base64.StdEncoding.DecodeString(s); err == nil && len(raw) == ed25519.PublicKeySize {
		return ed25519.PublicKey(raw), nil
	}
	return nil, errors.New("scorer: not an Ed25519 public key (PEM, or 32 bytes as hex or base64)")
}

// Writer is what publishing needs of the store.
type Writer interface {
	InsertTrustRecords(ctx context.Context, recs []store.TrustRecord) error
	InsertPublication(ctx context.Context, p store.Publication) error
}

// Store writes a sealed publication: the records (in batches), then the
// commitment of its root, then the publication row. The row comes last so a
// reader never sees half a publication, and after the commitment so a
// stored publication is always committed. A crash before the row leaves
// invisible records that the recomputation overwrites; if the recomputed
// root differs from a root already committed under the id, Commit fails
// with publish.ErrAlreadyCommits and the caller publishes under a new id
// (see Stage.PublishAt) rather than contradict the log.
func Store(ctx context.Context, w Writer, c publish.Committer, s *Sealed) error {
	const chunk = 2000
	for i := 0; i < len(s.Records); i += chunk {
		if err := w.InsertTrustRecords(ctx, s.Records[i:min(i+chunk, len(s.Records))]); err != nil {
			return fmt.Errorf("scorer: store records of %s: %w", s.Row.ID, err)
		}
	}
	if c != nil {
		if err := c.Commit(ctx, publish.Commitment{PublicationID: s.Row.ID, Root: s.Row.MerkleRoot,
			MethodVersion: s.Row.MethodVersion, Time: s.Row.ComputedAt}); err != nil {
			return fmt.Errorf("scorer: commit root of %s: %w", s.Row.ID, err)
		}
	}
	if err := w.InsertPublication(ctx, s.Row); err != nil {
		return fmt.Errorf("scorer: store publication %s: %w", s.Row.ID, err)
	}
	return nil
}
