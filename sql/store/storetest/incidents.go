package storetest

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/sql/store"
)

// TempFile adapts a file-backed engine's Open (DuckDB) to the suites' open
// argument: a fresh database file named name in t.TempDir() for each call.
func TempFile[S store.Store](open func(ctx context.Context, path string, log *zap.Logger) (S, error), name string) func(t *testing.T) store.Store {
	return func(t *testing.T) store.Store {
		path := filepath.Join(t.TempDir(), name)
		s, err := open(context.Background(), path, zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("Open(%s): %v", path, err)
		}
		return s
	}
}

// RunIncidents runs the conformance suite of store.IncidentStore. open is
// as for Run; the store it returns must implement store.IncidentStore.
func RunIncidents(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.IncidentStore)
	}{
		{"RoundTrip", testIncidentRoundTrip},
		{"RetractionWins", testIncidentRetractionWins},
		{"AuditAppendOnly", testIncidentAudit},
	}
	for _, tt := range tests {
		t.Run("Incidents/"+tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			if err := s.Migrate(ctx(t)); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			is, ok := s.(store.IncidentStore)
			if !ok {
				t.Fatalf("%T does not implement store.IncidentStore", s)
			}
			tt.f(t, is)
			if o, ok := s.(Optimizer); ok {
				// Reads must not depend on merges: run the checks again after one.
				must(t, "Optimize", o.Optimize(ctx(t)))
				tt.f(t, is)
			}
		})
	}
}

func incident(id, server string, date, updated time.Time, status string) store.Incident {
	return store.Incident{ID: id, Server: server, Date: date, Class: "rug_pull", Severity: "high", Status: status,
		SourceURI: "https://example.org/advisory/" + id, Curator: "alice", Note: "note " + id, UpdatedAt: updated}
}

func normIncident(r store.Incident) store.Incident {
	r.Date, r.UpdatedAt = store.Millis(r.Date), store.Millis(r.UpdatedAt)
	return r
}

func testIncidentRoundTrip(t *testing.T, s store.IncidentStore) {
	a := incident("inc-a", "io.github.x/a", at(0), at(time.Hour), "confirmed")
	b := incident("inc-b", "io.github.x/a", at(-time.Hour), at(time.Hour), "suspected")
	c := incident("inc-c", "io.github.y/c", at(time.Minute), at(time.Hour), "confirmed")
	must(t, "InsertIncidents", s.InsertIncidents(ctx(t), []store.Incident{a, b, c}))
	must(t, "InsertIncidents again", s.InsertIncidents(ctx(t), []store.Incident{a, b, c}))
	got, err := s.Incidents(ctx(t), "io.github.x/a")
	must(t, "Incidents", err)
	equal(t, "Incidents(x/a)", got, []store.Incident{normIncident(b), normIncident(a)})
	all, err := s.Incidents(ctx(t), "")
	must(t, "Incidents(all)", err)
	equal(t, "len(Incidents(all))", len(all), 3)
	one, err := s.GetIncident(ctx(t), "inc-c")
	must(t, "GetIncident", err)
	equal(t, "GetIncident", one, normIncident(c))
	if _, err := s.GetIncident(ctx(t), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetIncident(nope) = %v, want ErrNotFound", err)
	}
	none, err := s.Incidents(ctx(t), "io.github.z/none")
	must(t, "Incidents(none)", err)
	equal(t, "Incidents(none)", len(none), 0)
}

func testIncidentRetractionWins(t *testing.T, s store.IncidentStore) {
	ins := incident("inc-r", "io.github.x/r", at(0), at(time.Hour), "confirmed")
	ret := ins
	ret.Status, ret.UpdatedAt = "retracted", at(2*time.Hour)
	// The retraction first, the (redelivered) insert after: the retraction stays.
	must(t, "insert retraction", s.InsertIncidents(ctx(t), []store.Incident{ret}))
	must(t, "insert redelivered insert", s.InsertIncidents(ctx(t), []store.Incident{ins}))
	got, err := s.GetIncident(ctx(t), "inc-r")
	must(t, "GetIncident", err)
	equal(t, "after out-of-order writes", got, normIncident(ret))
	// Same updated_at: the retraction wins over a non-retraction, in one batch or two.
	tie := ins
	tie.ID, tie.UpdatedAt = "inc-tie", at(3*time.Hour)
	tieRet := tie
	tieRet.Status = "retracted"
	must(t, "insert tie retraction", s.InsertIncidents(ctx(t), []store.Incident{tieRet}))
	must(t, "insert tie insert", s.InsertIncidents(ctx(t), []store.Incident{tie}))
	got, err = s.GetIncident(ctx(t), "inc-tie")
	must(t, "GetIncident(tie)", err)
	equal(t, "tie", got, normIncident(tieRet))
}

func testIncidentAudit(t *testing.T, s store.IncidentStore) {
	a1 := store.IncidentAudit{ID: "aud-1", IncidentID: "inc-a", Server: "io.github.x/a", Action: "insert", Who: "alice", Reason: "advisory published", At: at(time.Minute), Record: `{"id":"inc-a"}`}
	a2 := store.IncidentAudit{ID: "aud-2", IncidentID: "inc-a", Server: "io.github.x/a", Action: "retract", Who: "bob", Reason: "wrong server", At: at(2 * time.Minute), Record: `{"id":"inc-a","status":"retracted"}`}
	a3 := store.IncidentAudit{ID: "aud-3", IncidentID: "inc-b", Server: "io.github.y/b", Action: "insert", Who: "alice", Reason: "r", At: at(0), Record: `{}`}
	must(t, "InsertIncidentAudit", s.InsertIncidentAudit(ctx(t), []store.IncidentAudit{a2, a1, a3}))
	must(t, "InsertIncidentAudit again", s.InsertIncidentAudit(ctx(t), []store.IncidentAudit{a1, a2}))
	norm := func(a store.IncidentAudit) store.IncidentAudit { a.At = store.Millis(a.At); return a }
	got, err := s.IncidentAuditLog(ctx(t), store.AuditQuery{Server: "io.github.x/a"})
	must(t, "IncidentAuditLog", err)
	equal(t, "audit of x/a", got, []store.IncidentAudit{norm(a1), norm(a2)})
	all, err := s.IncidentAuditLog(ctx(t), store.AuditQuery{})
	must(t, "IncidentAuditLog(all)", err)
	equal(t, "audit of all", all, []store.IncidentAudit{norm(a3), norm(a1), norm(a2)})
	byID, err := s.IncidentAuditLog(ctx(t), store.AuditQuery{IncidentID: "inc-b"})
	must(t, "IncidentAuditLog(inc-b)", err)
	equal(t, "audit of inc-b", byID, []store.IncidentAudit{norm(a3)})
}
