package registry

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
)

var t0 = time.Date(2025, 10, 7, 20, 29, 20, 0, time.UTC)

func readAll(t *testing.T, doc []byte) ([]schema.Entry, []schema.DLQMessage, SnapshotStats) {
	t.Helper()
	var es []schema.Entry
	var dl []schema.DLQMessage
	st, err := ReadSnapshot(bytes.NewReader(doc), "test.json", t0,
		func(e schema.Entry) error { es = append(es, e); return nil },
		func(d schema.DLQMessage) error { dl = append(dl, d); return nil })
	if err != nil {
		t.Fatalf("ReadSnapshot returned an error for bad input (it must go to the DLQ): %v", err)
	}
	return es, dl, st
}

const good1 = `{"server":{"name":"io.example/one","description":"first","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://one.example/mcp"}]},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","publishedAt":"2025-09-08T23:47:09.452138Z","updatedAt":"2025-09-09T00:16:49.16262Z","isLatest":true}}}`
const good2 = `{"server":{"name":"io.example/two","description":"second","version":"0.1.0"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"deprecated","isLatest":true}}}`
const legacy = `{"$schema":"x","name":"io.example/legacy","description":"old shape","status":"active","repository":{"url":"","source":""},"version":"1.0.0","_meta":{"io.modelcontextprotocol.registry/official":{"id":"04f25b17","published_at":"2025-09-08T23:47:09.452137971Z","updated_at":"2025-09-09T00:16:49.162620072Z","is_latest":true}}}`

func TestParseEntryShapes(t *testing.T) {
	tests := []struct {
		name, raw            string
		wantName, wantStatus string
		wantLatest           bool
		wantPublished        time.Time
	}{
		{"v0.1", good1, "io.example/one", "active", true, time.Date(2025, 9, 8, 23, 47, 9, 452138000, time.UTC)},
		{"v0.1 deprecated", good2, "io.example/two", "deprecated", true, time.Time{}},
		{"legacy snake_case meta", legacy, "io.example/legacy", "active", true, time.Date(2025, 9, 8, 23, 47, 9, 452137971, time.UTC)},
		{"legacy odd status read as active", strings.Replace(legacy, `"status":"active"`, `"status":"beta"`, 1), "io.example/legacy", "active", true, time.Date(2025, 9, 8, 23, 47, 9, 452137971, time.UTC)},
		{"name with a further slash (real 2025 data)", strings.Replace(good2, "io.example/two", "io.github.joelverhagen/Knapcode.SampleMcpServer/aot", 1), "io.github.joelverhagen/Knapcode.SampleMcpServer/aot", "deprecated", true, time.Time{}},
		{"oddly typed optional field keeps the server", strings.Replace(good2, `"version":"0.1.0"`, `"version":"0.1.0","remotes":"not-a-list"`, 1), "io.example/two", "deprecated", true, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseEntry([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if e.Server.Name != tc.wantName || e.Status() != tc.wantStatus || e.Meta.IsLatest != tc.wantLatest || !e.Meta.PublishedAt.Equal(tc.wantPublished) {
				t.Errorf("got name %q status %q latest %v published %v", e.Server.Name, e.Status(), e.Meta.IsLatest, e.Meta.PublishedAt)
			}
			if len(e.ContentSHA256) != 64 || !json.Valid(e.Raw) {
				t.Errorf("bad hash %q or raw %q", e.ContentSHA256, e.Raw)
			}
			if bytes.Contains(e.Raw, []byte(`"_meta":{"io.model`)) || bytes.Contains(e.Raw, []byte(`"status"`)) {
				t.Errorf("raw server object still carries registry metadata: %s", e.Raw)
			}
		})
	}
}

func TestContentHashSeesMetadataFlips(t *testing.T) {
	a, _ := ParseEntry([]byte(good1))
	b, _ := ParseEntry([]byte(strings.Replace(good1, `"isLatest":true`, `"isLatest":false`, 1)))
	c, _ := ParseEntry([]byte(strings.Replace(good1, `{"name"`, `{"$schema":"https://new","name"`, 1)))
	d, _ := ParseEntry([]byte(strings.Replace(good1, "\n", "", -1)))
	if a.ContentSHA256 == b.ContentSHA256 || a.ContentSHA256 == c.ContentSHA256 {
		t.Error("an isLatest flip or a $schema change must be new content")
	}
	if a.ContentSHA256 != d.ContentSHA256 {
		t.Error("the same content must hash the same")
	}
}

// TestBadInputGoesToTheDLQ: each kind of bad input gets its reason, and every
// good entry around it is still read.
func TestBadInputGoesToTheDLQ(t *testing.T) {
	bigDesc := strings.Replace(good2, `"second"`, `"`+strings.Repeat("x", 10<<20)+`"`, 1)
	tests := []struct {
		name       string
		doc        string
		wantGood   int
		wantReason []string
		incomplete bool
	}{
		{"truncated document", "[" + good1 + "," + good2[:40], 1, []string{schema.ReasonTruncatedJSON}, true},
		{"invalid UTF-8 in one entry", "[" + good1 + "," + strings.Replace(good2, "second", "sec\xff\xfeond", 1) + "]", 1, []string{schema.ReasonInvalidUTF8}, false},
		{"10 MB description", "[" + good1 + "," + bigDesc + "," + legacy + "]", 2, []string{schema.ReasonEntryTooLarge}, false},
		{"missing name", "[" + good1 + `,{"server":{"description":"no name","version":"1"}}` + "," + good2 + "]", 2, []string{schema.ReasonMissingName}, false},
		{"invalid name", "[" + strings.Replace(good1, "io.example/one", "no slash here", 1) + "," + good2 + "]", 1, []string{schema.ReasonInvalidName}, false},
		{"duplicate entry", "[" + good1 + "," + good2 + "," + good1 + "]", 2, []string{schema.ReasonDuplicateEntry}, false},
		{"HTML instead of JSON", "<!doctype html><html><body>502 Bad Gateway</body></html>", 0, []string{schema.ReasonNotJSON}, true},
		{"not an array", `{"error":"nope"}`, 0, []string{schema.ReasonMalformedJSON}, true},
		{"an entry that is not an object", "[" + good1 + `,42,` + good2 + "]", 2, []string{schema.ReasonMalformedJSON}, false},
		{"garbage between entries", "[" + good1 + ` ]]] ` + good2 + "]", 1, []string{schema.ReasonMalformedJSON}, true},
		{"envelope with next_cursor", `{"servers":[` + good1 + `],"metadata":{"next_cursor":"x"}}`, 1, nil, false},
		{"BOM", "\ufeff[" + good1 + "]", 1, nil, false},
		{"empty array", "[]", 0, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, dl, st := readAll(t, []byte(tc.doc))
			if len(es) != tc.wantGood {
				t.Errorf("good entries = %d, want %d", len(es), tc.wantGood)
			}
			var reasons []string
			for _, d := range dl {
				reasons = append(reasons, d.Reason)
				if d.ID == "" || d.Detail == "" || len(d.Payload) > schema.MaxDLQPayload || d.PayloadSHA256 == "" {
					t.Errorf("dead letter lacks id/detail or is unbounded: %+v", d.Detail)
				}
			}
			if strings.Join(reasons, ",") != strings.Join(tc.wantReason, ",") {
				t.Errorf("reasons = %v, want %v", reasons, tc.wantReason)
			}
			if st.Incomplete != tc.incomplete {
				t.Errorf("incomplete = %v, want %v", st.Incomplete, tc.incomplete)
			}
		})
	}
}

func TestGzipAndRealSnapshots(t *testing.T) {
	files, err := ListSnapshots("testdata/snapshots")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("want the bundled snapshots, got %d", len(files))
	}
	for _, f := range files {
		es, dl, st, err := LoadSnapshotFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(dl) != 0 || st.Incomplete || len(es) == 0 {
			t.Errorf("%s: %d entries, %d dead letters, incomplete %v", f.Path, len(es), len(dl), st.Incomplete)
		}
	}
	if !files[0].CapturedAt.Equal(time.Date(2025, 9, 28, 20, 27, 13, 0, time.UTC)) {
		t.Errorf("capture time from the manifest: %v", files[0].CapturedAt)
	}
}

func TestListSnapshotsNeedsATime(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("[" + good1 + "]"))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "2025-10-01T12-30-00.json.gz"), buf.Bytes(), 0o644)
	files, err := ListSnapshots(dir)
	if err != nil || len(files) != 1 || !files[0].CapturedAt.Equal(time.Date(2025, 10, 1, 12, 30, 0, 0, time.UTC)) {
		t.Fatalf("files %v err %v", files, err)
	}
	os.WriteFile(filepath.Join(dir, "capture.json"), []byte("[]"), 0o644)
	if _, err := ListSnapshots(dir); err == nil || !strings.Contains(err.Error(), "no capture time") {
		t.Errorf("a file without a capture time must be refused, got %v", err)
	}
}

// FuzzReadSnapshot: no input makes the reader panic, return an error for the
// document's own faults, or emit an entry that breaks the entry contract.
func FuzzReadSnapshot(f *testing.F) {
	for _, s := range []string{"[" + good1 + "," + good2 + "]", "[" + legacy + "]", `{"servers":[` + good1 + `]}`, "[", "<html>", "\ufeff[]", "", " "} {
		f.Add([]byte(s))
	}
	z := gz([]byte("[" + good1 + "," + good1 + "]")) // a duplicate, in a gzip stream
	f.Add(z)
	f.Add(z[:len(z)-3])
	// Seed with real entries from the bundled snapshots.
	if files, err := ListSnapshots("testdata/snapshots"); err == nil {
		for _, file := range files[len(files)-2:] {
			es, _, _, _ := LoadSnapshotFile(file)
			for i := 0; i < len(es) && i < 20; i++ {
				f.Add(append(append([]byte("["), es[i].Raw...), ']'))
			}
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		seen := map[string]bool{}
		_, err := ReadSnapshot(bytes.NewReader(doc), "fuzz", t0,
			func(e schema.Entry) error {
				k := e.Server.Name + "@" + e.Server.Version
				if seen[k] {
					t.Fatalf("duplicate emitted: %s", k)
				}
				seen[k] = true
				if !nameRE.MatchString(e.Server.Name) || len(e.ContentSHA256) != 64 || len(e.Raw) > MaxEntryBytes {
					t.Fatalf("emitted entry breaks the contract: %q", e.Server.Name)
				}
				return nil
			},
			func(d schema.DLQMessage) error {
				if d.Reason == "" || len(d.Payload) > schema.MaxDLQPayload {
					t.Fatalf("bad dead letter %+v", d)
				}
				return nil
			})
		if err != nil {
			t.Fatalf("document faults must go to the DLQ, got error %v", err)
		}
	})
}

func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{good1, good2, legacy, `{}`, `{"server":{}}`, `{"name":"a/b","_meta":5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := ParseEntry(raw)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatal("error without a reason")
			}
			return
		}
		if e.Server.Name == "" || !json.Valid(e.Raw) {
			t.Fatalf("accepted entry without name or with invalid raw JSON")
		}
	})
}
