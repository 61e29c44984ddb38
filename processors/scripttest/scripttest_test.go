package scripttest

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScripts runs every processors/testdata/*.test file.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no script tests in processors/testdata")
	}
	for _, f := range files {
		RunFile(t, f)
	}
}

// TestRunnerReportsFailures: a wrong expectation fails with its line.
func TestRunnerReportsFailures(t *testing.T) {
	s, err := Parse("x.test", strings.NewReader("event 0 io.github.a/x endpoints_changed after=https://a.example\neval at 0 io.github.a/x\n  drift 99\n"))
	if err != nil {
		t.Fatal(err)
	}
	errs := NewRunner().Run(s)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "x.test:3: drift of io.github.a/x: got 85, want 99") {
		t.Errorf("errors = %v", errs)
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{"  drift 1\n", "bogus 0\n", "event\n", "event zz io.github.a/x new_server\n", "event 0 a/b no_such_kind\n"} {
		s, err := Parse("bad.test", strings.NewReader(src))
		if err == nil {
			if errs := NewRunner().Run(s); len(errs) == 0 {
				t.Errorf("%q: no error", src)
			}
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]string{"0": "2025-01-01T00:00:00Z", "30d": "2025-01-31T00:00:00Z", "29d23h": "2025-01-30T23:00:00Z",
		"-1h": "2024-12-31T23:00:00Z", "2025-03-01T00:00:00Z": "2025-03-01T00:00:00Z", "90m": "2025-01-01T01:30:00Z"} {
		got, err := ParseTime(in)
		if err != nil || got.Format("2006-01-02T15:04:05Z07:00") != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
}

// FuzzParse: the script parser and runner never panic on any input.
func FuzzParse(f *testing.F) {
	f.Add("event 0 io.github.a/x endpoints_changed after=https://a.ngrok.io\neval at 1d io.github.a/x\n  drift 50\n")
	f.Add("incident 0 a/b i1 rug_pull high confirmed\nretract 1d i1\neval at 2d a/b\n  incidents 100\n")
	f.Add("snapshot 0 s\neval burst at 0 ns\n  per_window 0,0\neval flagged at 0\n  none\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("fuzz.test", strings.NewReader(src))
		if err != nil {
			return
		}
		_ = NewRunner().Run(s)
	})
}
