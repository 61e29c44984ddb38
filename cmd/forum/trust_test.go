package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/sql/duckdb"
)

var trustTestAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// storedPublication scores a generated population, stores the publication
// in a DuckDB store under dir (as the scorer stage does) and writes the
// signer's public key to dir/forum.pub.
func storedPublication(t *testing.T, dir string) (keyFile string, sealed *scorer.Sealed) {
	t.Helper()
	ctx := context.Background()
	key, err := scorer.LoadOrCreateKey(filepath.Join(dir, scorer.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	g := scorer.Generate(60, 3, trustTestAt)
	meta := scorer.Meta{PublicationID: scorer.PublicationID(trustTestAt), ComputedAt: trustTestAt}
	sealed, err = scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, key)
	if err != nil {
		t.Fatal(err)
	}
	s, err := duckdb.Open(ctx, filepath.Join(dir, "forum.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := scorer.Publish(ctx, scorer.StoreOutput{W: s}, publish.NewFileCommitter(filepath.Join(dir, scorer.CommitLogFile)), sealed); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(dir, "forum.pub")
	if err := os.WriteFile(keyFile, []byte(scorer.PublicKeyPEM(key.Public().(ed25519.PublicKey))), 0o644); err != nil {
		t.Fatal(err)
	}
	return keyFile, sealed
}

func TestExportAndVerify(t *testing.T) {
	dir := t.TempDir()
	keyFile, sealed := storedPublication(t, dir)
	export := filepath.Join(dir, "pub.jsonl")

	exp := newExportPublicationCmd()
	exp.SetArgs([]string{"--data-dir", dir, "--log-level", "error", "--id", "latest", "--out", export})
	var errb bytes.Buffer
	exp.SetErr(&errb)
	if err := exp.Execute(); err != nil {
		t.Fatalf("export-publication: %v", err)
	}
	data, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := publish.WriteExport(&want, sealed.Pub); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want.Bytes()) {
		t.Fatal("the export from the store differs from the publication the scorer sealed")
	}

	verify := func(path string, extra ...string) (string, error) {
		c := newVerifyCmd()
		var out bytes.Buffer
		c.SetOut(&out)
		c.SetErr(&out)
		c.SetArgs(append([]string{"--export", path}, extra...))
		err := c.Execute()
		return out.String(), err
	}
	if out, err := verify(export, "--key", keyFile); err != nil || !strings.Contains(out, "ok: "+sealed.Row.ID+" verifies") {
		t.Fatalf("untouched export: %q, %v", out, err)
	}
	// Without --key the data dir's signing key is used.
	if _, err := verify(export, "--data-dir", dir); err != nil {
		t.Fatalf("untouched export with the data dir's key: %v", err)
	}

	lines := strings.SplitAfter(string(data), "\n")
	tamper := func(name string, mutate func() string) {
		t.Helper()
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, []byte(mutate()), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := verify(p, "--key", keyFile)
		if err == nil {
			t.Errorf("%s: a tampered export verifies", name)
			return
		}
		t.Logf("%s: %v", name, err)
		if name == "root" {
			if !strings.Contains(err.Error(), "merkle_root") {
				t.Errorf("%s: the error must say the root was altered: %v", name, err)
			}
			return
		}
		server := sealed.Pub.Servers[3]
		if !strings.Contains(err.Error(), `"`+server+`"`) || !strings.Contains(err.Error(), "line 5") {
			t.Errorf("%s: the error must name record %s on line 5: %v", name, server, err)
		}
	}
	// One byte of a record: a digit of its score, a letter of its band, a
	// byte of its content hash, a structural byte.
	rec := lines[4]
	for i, pos := range []int{strings.Index(rec, `"band":"`) + 8, strings.Index(rec, `"content_sha256":"`) + 20, strings.Index(rec, `"server"`) + 3, 0} {
		b := []byte(rec)
		b[pos] ^= 0x01
		mutated := strings.Join(append(append(append([]string{}, lines[:4]...), string(b)), lines[5:]...), "")
		tamper("record-byte-"+string(rune('a'+i)), func() string { return mutated })
	}
	// One byte of the header's merkle root.
	hdr := []byte(lines[0])
	pos := bytes.Index(hdr, []byte(`"merkle_root":"`)) + len(`"merkle_root":"`)
	if hdr[pos] == 'a' {
		hdr[pos] = 'b'
	} else {
		hdr[pos] = 'a'
	}
	tamper("root", func() string { return string(hdr) + strings.Join(lines[1:], "") })

	// Another key does not verify the export.
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32))
	otherFile := filepath.Join(dir, "other.pub")
	if err := os.WriteFile(otherFile, []byte(scorer.PublicKeyPEM(other.Public().(ed25519.PublicKey))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := verify(export, "--key", otherFile); err == nil || !strings.Contains(err.Error(), "signing key") {
		t.Errorf("a foreign key must not verify, and the error must say so: %v", err)
	}
}

// TestVerifyNamesTheRecordForEveryByte flips bytes of one record in turn: each tampered export fails, and the error names the record (or, when
// its name itself is unreadable, its neighbours in server order).
func TestVerifyNamesTheRecordForEveryByte(t *testing.T) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, 32))
	g := scorer.Generate(8, 11, trustTestAt)
	meta := scorer.Meta{PublicationID: scorer.PublicationID(trustTestAt), ComputedAt: trustTestAt}
	sealed, err := scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, key)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := publish.WriteExport(&buf, sealed.Pub); err != nil {
		t.Fatal(err)
	}
	pub := sealed.Pub
	data := buf.Bytes()
	lines := bytes.SplitAfter(data, []byte("\n"))
	const target = 5 // line 6: record index 4
	start := 0
	for _, l := range lines[:target] {
		start += len(l)
	}
	end := start + len(lines[target]) - 1 // not the newline
	name, prev, next := pub.Servers[target-1], pub.Servers[target-2], pub.Servers[target]
	// Every 5th byte (publish's own test flips them all, in-process), and
	// every byte of the "server" key and value, where naming is hardest.
	srv := start + bytes.Index(lines[target], []byte(`"server":"`))
	for i := start; i < end; i++ {
		if (i-start)%5 != 0 && (i < srv || i > srv+len(`"server":"`)+len(name)) {
			continue
		}
		b := bytes.Clone(data)
		b[i] ^= 0x01
		err := verifyExport(b, key.Public().(ed25519.PublicKey))
		if err == nil {
			t.Errorf("byte %d flipped: verifies", i-start)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, `"`+name+`"`) && !(strings.Contains(msg, `"`+prev+`"`) && strings.Contains(msg, `"`+next+`"`)) {
			t.Errorf("byte %d flipped: the error does not name the record: %v", i-start, err)
		}
	}
}
