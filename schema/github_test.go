package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

var reasons = map[string]bool{ReasonMalformedJSON: true, ReasonTruncatedJSON: true, ReasonNotJSON: true, ReasonInvalidUTF8: true, ReasonMissingRepo: true, ReasonInvalidRepo: true, ReasonInvalidStatus: true,
	ReasonMissingObserved: true, ReasonImplausibleValue: true}

// Outside input: any bytes on provenance.obs either decode into an
// observation that validates (and survives a round trip unchanged) or are
// refused with one of the stable reason codes — never a panic.
func FuzzDecodeGitHubObservation(f *testing.F) {
	good, _ := json.Marshal(validObservation())
	for _, s := range []string{string(good), `{}`, `{not json`, `null`, `[]`, `{"repo":"github.com/o/r","status":"resolved","observed_at":"0001-01-01T00:00:00Z"}`,
		`{"repo":"github.com/o/r","status":"resolved","observed_at":"2026-11-01T00:00:00Z","stars":-1}`,
		`{"repo":"GitHub.com/O/R","status":"resolved","observed_at":"2026-11-01T00:00:00Z"}`,
		`{"repo":"github.com/o/r","status":"unresolved","observed_at":"2026-11-01T00:00:00Z","commits":{"count":1,"authors":5}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeGitHubObservation(b)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || !reasons[ie.Reason] || !errors.Is(err, ErrInvalid) {
				t.Fatalf("DecodeGitHubObservation(%q): %v is not a reasoned InvalidError", b, err)
			}
			return
		}
		again, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		o2, err := DecodeGitHubObservation(again)
		if err != nil {
			t.Fatalf("a valid observation does not survive a round trip: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(normalize(o), normalize(o2)) {
			t.Fatalf("round trip changed the observation:\n%+v\n%+v", o, o2)
		}
	})
}

// normalize drops monotonic/zone differences a JSON round trip may make.
func normalize(o GitHubObservation) GitHubObservation {
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

func validObservation() GitHubObservation {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return GitHubObservation{ID: GitHubObservationID("github.com/o/r", at), Repo: "github.com/o/r", ObservedAt: at, Status: StatusResolved, HTTPStatus: 200,
		OwnerLogin: "o", OwnerCreatedAt: at.Add(-800 * 24 * time.Hour), OwnerObservedAt: at, CreatedAt: at.Add(-400 * 24 * time.Hour),
		PushedAt: at.Add(-time.Hour), Stars: 12, LicenseSPDX: "MIT",
		Commits: &GitHubCommits{ObservedAt: at, Since: at.Add(-90 * 24 * time.Hour), Count: 10, Authors: 2, Verified: 1, Pages: 1}}
}

// What the validator refuses, and with which reason (the DLQ's reason code).
func TestValidateGitHubObservation(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		mod    func(*GitHubObservation)
		reason string // "" = valid
	}{
		{"valid", func(*GitHubObservation) {}, ""},
		{"valid 404", func(o *GitHubObservation) {
			*o = GitHubObservation{Repo: o.Repo, ObservedAt: at, Status: StatusUnresolved, HTTPStatus: 404}
		}, ""},
		{"valid 304", func(o *GitHubObservation) { o.HTTPStatus, o.NotModified = 304, true }, ""},
		{"owner age unknown", func(o *GitHubObservation) { o.OwnerCreatedAt, o.OwnerObservedAt = time.Time{}, time.Time{} }, ""},
		{"no repo", func(o *GitHubObservation) { o.Repo = "" }, ReasonMissingRepo},
		{"not normalized", func(o *GitHubObservation) { o.Repo = "github.com/O/R" }, ReasonInvalidRepo},
		{"not github", func(o *GitHubObservation) { o.Repo = "gitlab.com/o/r" }, ReasonInvalidRepo},
		{"no owner/name", func(o *GitHubObservation) { o.Repo = "github.com/o" }, ReasonInvalidRepo},
		{"empty status", func(o *GitHubObservation) { o.Status = "" }, ReasonInvalidStatus},
		{"bad status", func(o *GitHubObservation) { o.Status = "maybe" }, ReasonInvalidStatus},
		{"http 999", func(o *GitHubObservation) { o.HTTPStatus = 999 }, ReasonInvalidStatus},
		{"resolved by a 404", func(o *GitHubObservation) { o.HTTPStatus = 404 }, ReasonInvalidStatus},
		{"zero observed_at", func(o *GitHubObservation) { o.ObservedAt = time.Time{} }, ReasonMissingObserved},
		{"observed before GitHub", func(o *GitHubObservation) { o.ObservedAt = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC) }, ReasonImplausibleValue},
		{"created after observed", func(o *GitHubObservation) { o.CreatedAt = at.Add(48 * time.Hour) }, ReasonImplausibleValue},
		{"owner created after observed", func(o *GitHubObservation) { o.OwnerCreatedAt = at.Add(72 * time.Hour) }, ReasonImplausibleValue},
		{"owner created in 1970", func(o *GitHubObservation) { o.OwnerCreatedAt = time.Unix(0, 0) }, ReasonImplausibleValue},
		{"negative stars", func(o *GitHubObservation) { o.Stars = -1 }, ReasonImplausibleValue},
		{"a billion stars", func(o *GitHubObservation) { o.Stars = 1e9 }, ReasonImplausibleValue},
		{"negative commits", func(o *GitHubObservation) { o.Commits.Count = -3 }, ReasonImplausibleValue},
		{"more authors than commits", func(o *GitHubObservation) { o.Commits.Authors = 11 }, ReasonImplausibleValue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := validObservation()
			c.mod(&o)
			b, _ := json.Marshal(o)
			_, err := DecodeGitHubObservation(b)
			var ie *InvalidError
			switch {
			case c.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.reason != "" && (!errors.As(err, &ie) || ie.Reason != c.reason):
				t.Fatalf("got %v, want reason %s", err, c.reason)
			}
		})
	}
	if _, err := DecodeGitHubObservation([]byte("{not json")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("malformed: %v", err)
	}
}
