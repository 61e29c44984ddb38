package incidents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

type fakeLookup struct {
	servers   map[string]bool
	incidents map[string]Record
}

func (f fakeLookup) ServerExists(_ context.Context, s string) (bool, error) { return f.servers[s], nil }
func (f fakeLookup) Incident(_ context.Context, id string) (Record, bool, error) {
	r, ok := f.incidents[id]
	return r, ok, nil
}

var now = time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC)

func good() Input {
	return Input{Server: "io.github.acme/tool", Date: now.Add(-48 * time.Hour), Class: "rug_pull", Severity: "high", Status: "confirmed",
		SourceURI: "https://example.org/advisory/1", Reason: "advisory published"}
}

func TestValidateInsert(t *testing.T) {
	lk := fakeLookup{servers: map[string]bool{"io.github.acme/tool": true}, incidents: map[string]Record{"inc-taken": {ID: "inc-taken"}}}
	tests := []struct {
		name   string
		edit   func(*Input)
		reason string
	}{
		{"unknown server", func(in *Input) { in.Server = "io.github.nobody/none" }, ReasonUnknownServer},
		{"missing server", func(in *Input) { in.Server = " " }, ReasonMissingServer},
		{"future date", func(in *Input) { in.Date = now.Add(time.Minute) }, ReasonFutureDate},
		{"missing date", func(in *Input) { in.Date = time.Time{} }, ReasonMissingDate},
		{"missing source", func(in *Input) { in.SourceURI = "" }, ReasonMissingSource},
		{"source not a URL", func(in *Input) { in.SourceURI = "see the blog" }, ReasonBadSource},
		{"source not http", func(in *Input) { in.SourceURI = "ftp://example.org/x" }, ReasonBadSource},
		{"unknown class", func(in *Input) { in.Class = "spam" }, ReasonUnknownClass},
		{"unknown severity", func(in *Input) { in.Severity = "severe" }, ReasonUnknownSeverity},
		{"unknown status", func(in *Input) { in.Status = "rumoured" }, ReasonUnknownStatus},
		{"retracted on insert", func(in *Input) { in.Status = "retracted" }, ReasonUnknownStatus},
		{"missing reason", func(in *Input) { in.Reason = "" }, ReasonMissingReason},
		{"duplicate id", func(in *Input) { in.ID = "inc-taken" }, ReasonDuplicateID},
		{"bad id", func(in *Input) { in.ID = "a/b" }, ReasonBadID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := good()
			tt.edit(&in)
			m, err := ValidateInsert(context.Background(), in, "alice", now, lk)
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Reason != tt.reason || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want reason %s", err, tt.reason)
			}
			if m.Incident.ID != "" {
				t.Errorf("a message was built for bad input: %+v", m)
			}
		})
	}
	m, err := ValidateInsert(context.Background(), good(), "alice", now, lk)
	if err != nil {
		t.Fatal(err)
	}
	if m.Incident.ID == "" || m.Incident.Curator != "alice" || m.Audit.Who != "alice" || m.Audit.Action != ActionInsert || !m.Audit.At.Equal(now) {
		t.Errorf("message = %+v", m)
	}
	again, _ := ValidateInsert(context.Background(), good(), "alice", now, lk)
	if again.Incident.ID != m.Incident.ID || again.Audit.ID != m.Audit.ID {
		t.Error("ids are not deterministic")
	}
}

func TestValidateRetract(t *testing.T) {
	rec := Record{ID: "inc-1", Server: "io.github.acme/tool", Status: "confirmed", UpdatedAt: now}
	lk := fakeLookup{incidents: map[string]Record{"inc-1": rec, "inc-2": {ID: "inc-2", Status: "retracted"}}}
	for _, tc := range []struct {
		id, reason, want string
	}{{"inc-none", "x", ReasonUnknownIncident}, {"inc-1", "", ReasonMissingReason}, {"inc-2", "x", ReasonAlreadyRetract}} {
		_, err := ValidateRetract(context.Background(), tc.id, tc.reason, "bob", now.Add(time.Hour), lk)
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Reason != tc.want {
			t.Errorf("retract %s %q: %v, want %s", tc.id, tc.reason, err, tc.want)
		}
	}
	// A retraction at the same instant as the insert still orders after it.
	m, err := ValidateRetract(context.Background(), "inc-1", "wrong server", "bob", now, lk)
	if err != nil {
		t.Fatal(err)
	}
	if m.Incident.Status != "retracted" || !m.Incident.UpdatedAt.After(rec.UpdatedAt) || m.Audit.Reason != "wrong server" {
		t.Errorf("retraction = %+v", m)
	}
}

// TestStateOrderInsensitive: a retraction delivered before its insert (or
// an insert redelivered after it) leaves the incident retracted.
func TestStateOrderInsensitive(t *testing.T) {
	lk := fakeLookup{servers: map[string]bool{"io.github.acme/tool": true}, incidents: map[string]Record{}}
	ins, err := ValidateInsert(context.Background(), good(), "alice", now, lk)
	if err != nil {
		t.Fatal(err)
	}
	lk.incidents[ins.Incident.ID] = ins.Incident
	ret, err := ValidateRetract(context.Background(), ins.Incident.ID, "mistake", "bob", now.Add(time.Hour), lk)
	if err != nil {
		t.Fatal(err)
	}
	a, b := NewState(), NewState()
	a.Apply(ins, ret)
	b.Apply(ret, ins, ret, ins)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("states differ:\n%s\n%s", ja, jb)
	}
	h := a.History("io.github.acme/tool")
	if len(h) != 1 || h[0].Status != "retracted" || len(h[0].Audit) != 2 || h[0].Audit[0].Action != ActionInsert {
		t.Fatalf("history = %+v", h)
	}
	in := a.IncidentsInput("io.github.acme/tool")
	if in.Checked {
		t.Error("Checked before the feed is loaded")
	}
	a.MarkLoaded()
	in = a.IncidentsInput("io.github.acme/tool")
	if !in.Checked || len(in.Items) != 1 || in.Items[0].Status != "retracted" {
		t.Errorf("IncidentsInput = %+v", in)
	}
	// Checkpoint round trip.
	path := filepath.Join(t.TempDir(), "inc.json")
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	jback, _ := json.Marshal(back)
	if !bytes.Equal(ja, jback) {
		t.Error("checkpoint round trip changed the state")
	}
}

// FuzzValidateInsert: outside input (API bodies, loader lines) never
// panics validation, and whatever it accepts is a complete record.
func FuzzValidateInsert(f *testing.F) {
	b, _ := json.Marshal(good())
	f.Add(b)
	f.Add([]byte(`{"server":"io.github.acme/tool","date":"0001-01-01T00:00:00Z","source_uri":"http://"}`))
	f.Add([]byte(`{"id":"x/y","server":"io.github.acme/tool","class":"other"}`))
	lk := fakeLookup{servers: map[string]bool{"io.github.acme/tool": true}, incidents: map[string]Record{}}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in Input
		if json.Unmarshal(data, &in) != nil {
			return
		}
		m, err := ValidateInsert(context.Background(), in, "fuzz", now, lk)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("non-validation error: %v", err)
			}
			return
		}
		r := m.Incident
		if r.ID == "" || r.Server == "" || r.SourceURI == "" || r.Date.After(now) || m.Audit.Reason == "" || m.Audit.ID == "" {
			t.Fatalf("accepted an incomplete record: %+v", m)
		}
	})
}
