package storetest

import (
	"testing"
	"time"

	"github.com/forum-mcp/forum/sql/store"
)

// RunAdmin runs the conformance suite of store.AdminStore. open is as for
// Run; the store it returns must implement store.AdminStore.
func RunAdmin(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store, as store.AdminStore)
	}{
		{"RoundTrip", testAdminRoundTrip},
		{"AppendOnly", testAdminAppendOnly},
		{"Limit", testAdminLimit},
	}
	for _, tt := range tests {
		t.Run("Admin/"+tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			must(t, "Migrate", s.Migrate(ctx(t)))
			as, ok := s.(store.AdminStore)
			if !ok {
				t.Fatalf("%T does not implement store.AdminStore", s)
			}
			tt.f(t, s, as)
		})
	}
}

func adminRow(d time.Duration, route, outcome string, status int, remote, fp, who string, calls int) store.AdminAudit {
	a := store.AdminAudit{At: at(d), Route: route, Path: "/v1/admin/x", Outcome: outcome, Status: status, Remote: remote,
		Fingerprint: fp, Who: who, Calls: calls}
	a.ID = store.AdminAuditID(a)
	return a
}

func normAdmin(rows ...store.AdminAudit) []store.AdminAudit {
	out := make([]store.AdminAudit, len(rows))
	for i, a := range rows {
		a.At = store.Millis(a.At)
		out[i] = a
	}
	return out
}

// checkAdmin compares AdminAudit(limit) with want, before and after a
// merge (reads must not depend on merges).
func checkAdmin(t *testing.T, s store.Store, what string, limit int, want []store.AdminAudit) {
	t.Helper()
	as := s.(store.AdminStore)
	got, err := as.AdminAudit(ctx(t), limit)
	must(t, "AdminAudit", err)
	equal(t, what, got, want)
	optimize(t, s)
	got, err = as.AdminAudit(ctx(t), limit)
	must(t, "AdminAudit", err)
	equal(t, what+" (after a merge)", got, want)
}

func testAdminRoundTrip(t *testing.T, st store.Store, s store.AdminStore) {
	checkAdmin(t, st, "an empty audit", 0, []store.AdminAudit{})
	a := adminRow(0, "insert-incident", "accepted", 202, "192.0.2.1", "0123456789ab", "alice", 1)
	b := adminRow(time.Minute, "approve-review", "refused", 401, "2001:db8::1", "ba9876543210", "", 7)
	c := adminRow(2*time.Minute, "admin-audit", "disabled", 503, "192.0.2.2", "", "", 1)
	// Same time as c: ties are ordered by id, descending.
	d := adminRow(2*time.Minute, "admin-audit", "rejected", 422, "192.0.2.2", "0123456789ab", "alice", 1)
	must(t, "InsertAdminAudit", s.InsertAdminAudit(ctx(t), []store.AdminAudit{b, a}))
	must(t, "InsertAdminAudit", s.InsertAdminAudit(ctx(t), []store.AdminAudit{d, c}))
	want := normAdmin(c, d)
	if c.ID < d.ID {
		want = normAdmin(d, c)
	}
	want = append(want, normAdmin(b, a)...)
	checkAdmin(t, st, "newest first", 0, want)
}

func testAdminAppendOnly(t *testing.T, st store.Store, s store.AdminStore) {
	a := adminRow(0, "insert-incident", "accepted", 202, "192.0.2.1", "0123456789ab", "alice", 1)
	b := adminRow(time.Second, "insert-incident", "refused", 401, "192.0.2.9", "ffffffffffff", "", 1)
	// One batch holding a row twice, then the whole batch again (a retry).
	must(t, "InsertAdminAudit", s.InsertAdminAudit(ctx(t), []store.AdminAudit{a, b, a}))
	must(t, "InsertAdminAudit again", s.InsertAdminAudit(ctx(t), []store.AdminAudit{b, a}))
	checkAdmin(t, st, "after rewrites", 0, normAdmin(b, a))
	must(t, "InsertAdminAudit of nothing", s.InsertAdminAudit(ctx(t), nil))
	checkAdmin(t, st, "after an empty insert", 0, normAdmin(b, a))
}

func testAdminLimit(t *testing.T, st store.Store, s store.AdminStore) {
	var rows []store.AdminAudit
	for i := range 5 {
		rows = append(rows, adminRow(time.Duration(i)*time.Second, "insert-incident", "refused", 401, "192.0.2.1", "", "", 1))
	}
	must(t, "InsertAdminAudit", s.InsertAdminAudit(ctx(t), rows))
	checkAdmin(t, st, "limit 2", 2, normAdmin(rows[4], rows[3]))
	all := normAdmin(rows[4], rows[3], rows[2], rows[1], rows[0])
	checkAdmin(t, st, "limit 0 (the default)", 0, all)
	checkAdmin(t, st, "limit over the maximum", store.MaxAdminAuditLimit+1, all)
}
