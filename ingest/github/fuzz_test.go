package github

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Outside input: Location headers, Link headers and repository URLs never
// panic, and what they yield is well-formed.
func FuzzOutsideInput(f *testing.F) {
	for _, s := range []string{"https://api.github.com/repositories/123", "https://api.github.com/repos/a/b", "/repos/a/b/c",
		`<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=9>; rel="last"`, "git@github.com:o/r.git", "%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, ok := redirectPath(s); ok && !strings.HasPrefix(p, "/repos/") && !strings.HasPrefix(p, "/repositories/") {
			t.Fatalf("redirectPath(%q) = %q", s, p)
		}
		if k, o, n, ok := RepoKey(s); ok && (k != "github.com/"+o+"/"+n || o == "" || n == "") {
			t.Fatalf("RepoKey(%q) = %q %q %q", s, k, o, n)
		}
		_ = linkNext.FindStringSubmatch(s)
	})
}

func TestRedirectPath(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com/repositories/42":         "/repositories/42",
		"https://api.github.com/repos/new/name":          "/repos/new/name",
		"https://api.github.com/repositories/42/commits": "",
		"https://example.com/":                           "",
	} {
		got, _ := redirectPath(in)
		if got != want {
			t.Errorf("redirectPath(%q) = %q, want %q", in, got, want)
		}
	}
}

var reasons = map[string]bool{ReasonMalformed: true, ReasonMissingRepo: true, ReasonInvalidRepo: true, ReasonInvalidStatus: true,
	ReasonMissingObserved: true, ReasonImplausibleValue: true}

// Outside input: any bytes on provenance.obs either decode into an
// observation that validates (and survives a round trip unchanged) or are
// refused with one of the stable reason codes — never a panic.
func FuzzDecodeObservation(f *testing.F) {
	good, _ := json.Marshal(validObservation())
	for _, s := range []string{string(good), `{}`, `{not json`, `null`, `[]`, `{"repo":"github.com/o/r","status":"resolved","observed_at":"0001-01-01T00:00:00Z"}`,
		`{"repo":"github.com/o/r","status":"resolved","observed_at":"2026-11-01T00:00:00Z","stars":-1}`,
		`{"repo":"GitHub.com/O/R","status":"resolved","observed_at":"2026-11-01T00:00:00Z"}`,
		`{"repo":"github.com/o/r","status":"unresolved","observed_at":"2026-11-01T00:00:00Z","commits":{"count":1,"authors":5}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeObservation(b)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || !reasons[ie.Reason] || !errors.Is(err, ErrInvalidObservation) {
				t.Fatalf("DecodeObservation(%q): %v is not a reasoned InvalidError", b, err)
			}
			return
		}
		again, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		o2, err := DecodeObservation(again)
		if err != nil {
			t.Fatalf("a valid observation does not survive a round trip: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(normalize(o), normalize(o2)) {
			t.Fatalf("round trip changed the observation:\n%+v\n%+v", o, o2)
		}
	})
}

// normalize drops monotonic/zone differences a JSON round trip may make.
func normalize(o Observation) Observation {
	for _, p := range []*time.Time{&o.ObservedAt, &o.OwnerCreatedAt, &o.OwnerObservedAt, &o.CreatedAt, &o.PushedAt} {
		*p = p.UTC()
	}
	if o.Commits != nil {
		c := *o.Commits
		c.ObservedAt, c.Since, c.Last = c.ObservedAt.UTC(), c.Since.UTC(), c.Last.UTC()
		o.Commits = &c
	}
	return o
}

func validObservation() Observation {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return Observation{ID: ObservationID("github.com/o/r", at), Repo: "github.com/o/r", ObservedAt: at, Status: StatusResolved, HTTPStatus: 200,
		OwnerLogin: "o", OwnerCreatedAt: at.Add(-800 * 24 * time.Hour), OwnerObservedAt: at, CreatedAt: at.Add(-400 * 24 * time.Hour),
		PushedAt: at.Add(-time.Hour), Stars: 12, LicenseSPDX: "MIT",
		Commits: &CommitStats{ObservedAt: at, Since: at.Add(-90 * 24 * time.Hour), Count: 10, Authors: 2, Verified: 1, Pages: 1}}
}

// What the validator refuses, and with which reason (the DLQ's reason code).
func TestValidateObservation(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		mod    func(*Observation)
		reason string // "" = valid
	}{
		{"valid", func(*Observation) {}, ""},
		{"valid 404", func(o *Observation) {
			*o = Observation{Repo: o.Repo, ObservedAt: at, Status: StatusUnresolved, HTTPStatus: 404}
		}, ""},
		{"valid 304", func(o *Observation) { o.HTTPStatus, o.NotModified = 304, true }, ""},
		{"owner age unknown", func(o *Observation) { o.OwnerCreatedAt, o.OwnerObservedAt = time.Time{}, time.Time{} }, ""},
		{"no repo", func(o *Observation) { o.Repo = "" }, ReasonMissingRepo},
		{"not normalized", func(o *Observation) { o.Repo = "github.com/O/R" }, ReasonInvalidRepo},
		{"not github", func(o *Observation) { o.Repo = "gitlab.com/o/r" }, ReasonInvalidRepo},
		{"no owner/name", func(o *Observation) { o.Repo = "github.com/o" }, ReasonInvalidRepo},
		{"empty status", func(o *Observation) { o.Status = "" }, ReasonInvalidStatus},
		{"bad status", func(o *Observation) { o.Status = "maybe" }, ReasonInvalidStatus},
		{"http 999", func(o *Observation) { o.HTTPStatus = 999 }, ReasonInvalidStatus},
		{"resolved by a 404", func(o *Observation) { o.HTTPStatus = 404 }, ReasonInvalidStatus},
		{"zero observed_at", func(o *Observation) { o.ObservedAt = time.Time{} }, ReasonMissingObserved},
		{"observed before GitHub", func(o *Observation) { o.ObservedAt = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC) }, ReasonImplausibleValue},
		{"created after observed", func(o *Observation) { o.CreatedAt = at.Add(48 * time.Hour) }, ReasonImplausibleValue},
		{"owner created after observed", func(o *Observation) { o.OwnerCreatedAt = at.Add(72 * time.Hour) }, ReasonImplausibleValue},
		{"owner created in 1970", func(o *Observation) { o.OwnerCreatedAt = time.Unix(0, 0) }, ReasonImplausibleValue},
		{"negative stars", func(o *Observation) { o.Stars = -1 }, ReasonImplausibleValue},
		{"a billion stars", func(o *Observation) { o.Stars = 1e9 }, ReasonImplausibleValue},
		{"negative commits", func(o *Observation) { o.Commits.Count = -3 }, ReasonImplausibleValue},
		{"more authors than commits", func(o *Observation) { o.Commits.Authors = 11 }, ReasonImplausibleValue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := validObservation()
			c.mod(&o)
			b, _ := json.Marshal(o)
			_, err := DecodeObservation(b)
			var ie *InvalidError
			switch {
			case c.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.reason != "" && (!errors.As(err, &ie) || ie.Reason != c.reason):
				t.Fatalf("got %v, want reason %s", err, c.reason)
			}
		})
	}
	if _, err := DecodeObservation([]byte("{not json")); !errors.Is(err, ErrInvalidObservation) {
		t.Fatalf("malformed: %v", err)
	}
}
