package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// AdminAudit is one row of admin_audit: an admin API call (or, for calls
// refused before authentication, a bounded aggregate of them; see
// api.AdminAuditor), whatever its outcome. The table is append-only: rows
// are keyed by ID, which is a hash of the row's content (AdminAuditID), so
// an ID always carries the same content and rewriting it changes nothing.
type AdminAudit struct {
	ID          string    // AdminAuditID of the other fields
	At          time.Time // the call's time; for an aggregate, the start of its minute
	Route       string    // the operation id (insert-incident, approve-review, …)
	Path        string    // the request path as sent (bounded); for an aggregate, the route's template
	Outcome     string    // accepted|rejected|failed|refused|disabled
	Status      int       // the HTTP status answered
	Remote      string    // the caller's address (the connection's, not a forwarded header)
	Fingerprint string    // a short keyed hash of the presented credential; "" when none was presented
	Who         string    // the admin token's label when the token was accepted, else ""
	Calls       int       // 1 for one call; for an aggregate, at least this many calls of its key in its minute
}

// AdminAuditID is the content hash that keys an admin_audit row: every
// field but ID, At at nanosecond precision (two calls in one millisecond are
// two rows; a retried insert of one row is one).
func AdminAuditID(a AdminAudit) string {
	h := sha256.New()
	for _, f := range []string{strconv.FormatInt(a.At.UnixNano(), 10), a.Route, a.Path, a.Outcome, strconv.Itoa(a.Status), a.Remote,
		a.Fingerprint, a.Who, strconv.Itoa(a.Calls)} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return "adm-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// MaxAdminAuditLimit bounds one AdminAudit read.
const MaxAdminAuditLimit = MaxEventLimit

// AdminStore keeps the admin audit (SPEC §1.5: every admin action is kept
// with who and why; this table also keeps the calls that were refused).
// Every engine implements it (sql/duckdb, sql/clickhouse); the conformance
// suite is storetest.RunAdmin.
type AdminStore interface {
	// InsertAdminAudit appends rows; an ID already stored is kept as is.
	InsertAdminAudit(ctx context.Context, rows []AdminAudit) error
	// AdminAudit returns the newest rows first (ties: ID descending), at
	// most limit (ClampLimit with MaxAdminAuditLimit).
	AdminAudit(ctx context.Context, limit int) ([]AdminAudit, error)
}
