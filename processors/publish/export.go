package publish

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// ExportFormat names the export's first line.
const (
	ExportFormat        = "forum-publication-export"
	ExportFormatVersion = 1
)

// ExportHeader is the first line of an export.
type ExportHeader struct {
	Format        string `json:"format"`
	FormatVersion int    `json:"format_version"`
	Header        Header `json:"header"`
	Signature     string `json:"signature"` // base64 (standard, padded)
	KeyID         string `json:"key_id"`
}

// MaxExportLine bounds one line of an export (a record) when reading.
const MaxExportLine = 16 << 20

// WriteExport writes the publication as JSON lines: the header line, then
// one sealed record per line in leaf order.
func WriteExport(w io.Writer, p *Publication) error {
	bw := bufio.NewWriter(w)
	h, err := json.Marshal(ExportHeader{
		Format: ExportFormat, FormatVersion: ExportFormatVersion,
		Header: p.Header, Signature: base64.StdEncoding.EncodeToString(p.Signature), KeyID: p.KeyID,
	})
	if err != nil {
		return err
	}
	bw.Write(h)
	bw.WriteByte('\n')
	for _, r := range p.Records {
		bw.Write(r)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Verify reads an export and re-derives everything: the header signature
// with pub, each record's content_sha256, the order and uniqueness of server
// names, the record count and the Merkle root. The error names the first
// offending record (line number and server) and wraps a sentinel.
func Verify(r io.Reader, pub ed25519.PublicKey) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxExportLine)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%w: read header: %v", ErrBadExport, err)
		}
		return fmt.Errorf("%w: empty export", ErrBadExport)
	}
	var eh ExportHeader
	if err := json.Unmarshal(sc.Bytes(), &eh); err != nil {
		return fmt.Errorf("%w: line 1 (header): %v", ErrBadExport, err)
	}
	if eh.Format != ExportFormat || eh.FormatVersion != ExportFormatVersion {
		return fmt.Errorf("%w: line 1: format %q version %d", ErrBadExport, eh.Format, eh.FormatVersion)
	}
	sig, err := base64.StdEncoding.DecodeString(eh.Signature)
	if err != nil {
		return fmt.Errorf("%w: line 1: signature is not base64", ErrBadExport)
	}
	if err := VerifyHeader(eh.Header, sig, pub); err != nil {
		return fmt.Errorf("line 1 (header of %s): %w", eh.Header.PublicationID, err)
	}
	var leaves [][]byte
	prev := ""
	line := 1
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			return fmt.Errorf("%w: line %d: empty line", ErrBadExport, line)
		}
		name := bestEffortServer(b)
		c, server, err := Canonical(b)
		if err != nil {
			return fmt.Errorf("line %d (record %q): %w", line, name, err)
		}
		var claimed struct {
			Hash string `json:"content_sha256"`
		}
		_ = json.Unmarshal(b, &claimed)
		sum := sha256.Sum256(c)
		if got := hex.EncodeToString(sum[:]); got != claimed.Hash {
			return fmt.Errorf("line %d (record %q): %w: stored %s, computed %s", line, server, ErrHashMismatch, claimed.Hash, got)
		}
		if len(leaves) > 0 {
			switch {
			case server == prev:
				return fmt.Errorf("line %d (record %q): %w", line, server, ErrDuplicate)
			case server < prev:
				return fmt.Errorf("line %d (record %q): %w (after %q)", line, server, ErrOrder, prev)
			}
		}
		prev = server
		leaves = append(leaves, LeafHash(c))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: line %d: %v", ErrBadExport, line+1, err)
	}
	if len(leaves) != eh.Header.RecordCount {
		return fmt.Errorf("%w: header says %d, export holds %d", ErrCountMismatch, eh.Header.RecordCount, len(leaves))
	}
	root := hex.EncodeToString(RootFromLeaves(leaves))
	if root != eh.Header.MerkleRoot {
		return fmt.Errorf("%w: header %s, records give %s", ErrRootMismatch, eh.Header.MerkleRoot, root)
	}
	return nil
}

// bestEffortServer pulls a server name out of a possibly broken line, for
// error messages only.
func bestEffortServer(b []byte) string {
	var m struct {
		Server string `json:"server"`
	}
	if json.Unmarshal(b, &m) == nil && m.Server != "" {
		return m.Server
	}
	const key = `"server":"`
	if i := bytes.Index(b, []byte(key)); i >= 0 {
		rest := b[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 && j < 200 {
			return string(rest[:j])
		}
	}
	return "?"
}
