package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forum-mcp/forum/schema"
)

// runDiff runs `forum diff` as the root command would and returns stdout,
// stderr and the error main turns into the exit status.
func runDiff(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	c := newDiffCmd()
	c.SilenceUsage, c.SilenceErrors = true, true // as under the root command
	var out, errb bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&errb)
	c.SetArgs(args)
	err := c.Execute()
	return out.String(), errb.String(), err
}

// bundledJSON is a bundled capture, gunzipped.
func bundledJSON(t *testing.T, day string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(bundled, day+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func eventsOf(t *testing.T, stdout string) []schema.DriftEvent {
	t.Helper()
	var out []schema.DriftEvent
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var e schema.DriftEvent
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// TestDiffRefusesWhatItCannotRead: `forum diff` on input it cannot read
// whole exits non-zero, prints no event, and says which file and what is
// wrong with it; --allow-partial diffs what could be read, reporting nothing
// the input's fault could have made up.
func TestDiffRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	old, cur := filepath.Join(bundled, "2025-10-08.json.gz"), filepath.Join(bundled, "2025-10-09.json.gz")
	doc8 := bundledJSON(t, "2025-10-08")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	half := write("2025-10-08-half.json", doc8[:len(doc8)/2])
	raw8, _ := os.ReadFile(old)
	gzCut := write("2025-10-08-cut.json.gz", raw8[:len(raw8)/2])
	html := write("2025-10-09-html.json.gz", []byte("<!doctype html><html><body>502 Bad Gateway</body></html>"))
	empty := write("2025-10-09-empty.json", nil)
	notSnap := write("2025-10-09-error.json", []byte(`{"error":"`+strings.Repeat("x", 50<<10)+`"}`))
	// 2025-10-09 with the names of a real server's two entries removed: the
	// server is absent from what can be read.
	var entries []map[string]map[string]any
	if err := json.Unmarshal(bytes.TrimPrefix(bundledJSON(t, "2025-10-09"), []byte("\xef\xbb\xbf")), &entries); err != nil {
		t.Fatal(err)
	}
	victim := "com.apify/apify-mcp-server"
	for _, e := range entries {
		if e["server"]["name"] == victim {
			delete(e["server"], "name")
		}
	}
	noName, _ := json.Marshal(entries)
	nameless := write("2025-10-09.json", noName)

	whole, _, err := runDiff(t, old, cur)
	if err != nil {
		t.Fatal(err)
	}
	wholeIDs := map[string]bool{}
	for _, e := range eventsOf(t, whole) {
		wholeIDs[e.ID] = true
	}

	tests := []struct {
		name      string
		args      []string
		wantErr   bool
		says      []string // in the error (refused) or on stderr (allowed)
		check     func(t *testing.T, evs []schema.DriftEvent)
		newServer int // new_server events wanted when allowed
	}{
		{"truncated OLD", []string{half, cur}, true, []string{"OLD " + half, "truncated", "cut short at byte " + itoa(len(doc8)/2)}, nil, 0},
		{"gzip OLD cut short", []string{gzCut, cur}, true, []string{"OLD " + gzCut, "truncated", "the gzip stream itself is cut short"}, nil, 0},
		{"NEW not gzip, not JSON", []string{old, html}, true, []string{"NEW " + html, "not gzip", "not JSON"}, nil, 0},
		{"NEW empty", []string{old, empty}, true, []string{"NEW " + empty, "empty file"}, nil, 0},
		{"NEW not a snapshot", []string{old, notSnap}, true, []string{"NEW " + notSnap, "not a snapshot"}, nil, 0},
		{"both unreadable: both named", []string{empty, html}, true, []string{"OLD " + empty, "NEW " + html}, nil, 0},
		{"NEW with an entry that fails validation", []string{old, nameless}, true, []string{"NEW " + nameless, "2 entries fail validation", "missing_name 2"}, nil, 0},
		{"truncated OLD allowed: a partial baseline", []string{"--allow-partial", half, cur}, false, []string{"WARNING: OLD " + half, "new_server and version_added are not reported"},
			func(t *testing.T, evs []schema.DriftEvent) {
				for _, e := range evs {
					if !wholeIDs[e.ID] {
						t.Errorf("%s %s %q -> %q: not in the whole pair's diff", e.Kind, e.Server, e.Before, e.After)
					}
				}
			}, 0},
		{"NEW with a nameless entry allowed: no removal", []string{"--allow-partial", old, nameless}, false, []string{"WARNING: NEW " + nameless, "removals are not reported"},
			func(t *testing.T, evs []schema.DriftEvent) {
				for _, e := range evs {
					if e.Server == victim || e.Kind == schema.KindRemoved {
						t.Errorf("%s %s: made up by our unreadable entry", e.Kind, e.Server)
					}
				}
			}, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runDiff(t, tc.args...)
			if tc.wantErr {
				if err == nil || !errors.Is(err, errPartialInput) {
					t.Fatalf("err %v, want a refusal (exit 1)\nstderr: %s", err, stderr)
				}
				if stdout != "" {
					t.Errorf("a refused diff printed events:\n%.300s", stdout)
				}
				for _, s := range tc.says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("the error does not say %q:\n%s", s, err)
					}
				}
				if n := len(err.Error()); n > 2048 {
					t.Errorf("the error is %d bytes: bad input echoed", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("err %v\nstderr: %s", err, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			evs := eventsOf(t, stdout)
			n := 0
			for _, e := range evs {
				if e.Kind == schema.KindNewServer {
					n++
				}
			}
			if n != tc.newServer {
				t.Errorf("%d new_server events, want %d", n, tc.newServer)
			}
			tc.check(t, evs)
		})
	}
}

// TestDiffUsageErrors: bad usage is exit status 2, told apart from input
// that cannot be read (1).
func TestDiffUsageErrors(t *testing.T) {
	old := filepath.Join(bundled, "2025-10-08.json.gz")
	for _, args := range [][]string{{old}, {"--bogus", old, old}, {"--partial-ratio", "0", old, old}, {"--partial-ratio", "1.5", old, old}} {
		_, _, err := runDiff(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err %v, want a usage error (exit 2)", args, err)
		}
	}
	_, _, err := runDiff(t, old, filepath.Join(t.TempDir(), "missing.json"))
	var ue usageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "NEW") {
		t.Errorf("a missing file: err %v, want exit 1 naming NEW", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
