package main

import (
	"bytes"
	"crypto/ed25519"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
)

// verify takes the publisher's key from --key or from a running
// instance's /v1/keys (--from), and an export from another data dir asks
// for that key instead of saying "does not verify".
func TestVerifyKeySources(t *testing.T) {
	dir := t.TempDir()
	_, sealed := storedPublication(t, dir)
	export := filepath.Join(dir, "pub.jsonl")
	var buf bytes.Buffer
	if err := publish.WriteExport(&buf, sealed.Pub); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(export, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := scorer.LoadOrCreateKey(filepath.Join(dir, scorer.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	serveKey := func(pub ed25519.PublicKey) string {
		h, _ := api.New(api.Options{Routes: []func(huma.API){api.TrustRoutes(api.TrustOptions{PublicKey: pub})}})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	verify := func(extra ...string) (string, error) {
		c := newVerifyCmd()
		var out bytes.Buffer
		c.SetOut(&out)
		c.SetErr(&out)
		c.SetArgs(append([]string{"--export", export}, extra...))
		err := c.Execute()
		return out.String(), err
	}
	t.Setenv(envSigningKey, "")

	publisher := serveKey(key.Public().(ed25519.PublicKey))
	out, err := verify("--from", publisher, "--data-dir", t.TempDir())
	if err != nil || !strings.Contains(out, "verifies") || !strings.Contains(out, "from "+publisher+"/v1/keys") {
		t.Fatalf("--from the publisher: %q %v", out, err)
	}

	// Another data dir with its own key: asked for the publisher's key.
	other := t.TempDir()
	if _, err := scorer.LoadOrCreateKey(filepath.Join(other, scorer.KeyFile)); err != nil {
		t.Fatal(err)
	}
	_, err = verify("--data-dir", other)
	if err == nil || strings.Contains(err.Error(), "does not verify") || !strings.Contains(err.Error(), "--key FILE, or --from URL") ||
		!strings.Contains(err.Error(), sealed.Pub.KeyID) {
		t.Errorf("another data dir's key: %v", err)
	}
	// No key at all: asked too.
	if _, err := verify("--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "--from URL") {
		t.Errorf("no key: %v", err)
	}
	// An instance serving another key says so.
	stranger := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))
	if _, err := verify("--from", serveKey(stranger.Public().(ed25519.PublicKey))); err == nil || !strings.Contains(err.Error(), "not that export's publisher") {
		t.Errorf("--from another instance: %v", err)
	}
	if _, err := verify("--from", serveKey(nil)); err == nil || !strings.Contains(err.Error(), "serves no key") {
		t.Errorf("--from an instance without a key: %v", err)
	}
}
