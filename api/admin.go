package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/sql/store"
)

// authorizeAdmin checks an admin bearer token against tokens (label by
// token) and returns its label: 503 when no token is configured, 401 when
// the header is missing or the token unknown. Every token is compared in
// constant time.
func authorizeAdmin(tokens map[string]string, header, what string) (string, error) {
	if len(tokens) == 0 {
		return "", huma.Error503ServiceUnavailable(what + " is disabled: no admin token is configured (set FORUM_ADMIN_TOKEN to label:token pairs and restart)")
	}
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || tok == "" {
		return "", huma.Error401Unauthorized("an admin bearer token is required (Authorization: Bearer <token>)")
	}
	// Compare against every token in constant time, so timing says nothing
	// about which prefix matched.
	who := ""
	for k, label := range tokens {
		if subtle.ConstantTimeCompare([]byte(k), []byte(tok)) == 1 {
			who = label
		}
	}
	if who == "" {
		return "", huma.Error401Unauthorized("the admin token is not valid")
	}
	return who, nil
}

// AdminPathPrefix holds the admin operations. Every operation under it is
// gated and audited by the admin gate, which New installs: one registered
// without adminOperation has no tokens and answers 503 (it fails closed).
const AdminPathPrefix = "/v1/admin/"

// Outcomes of an admin call (the outcome label of
// forum_admin_requests_total and admin_audit.outcome).
const (
	AdminAccepted  = "accepted"  // authorized; answered 2xx or 3xx
	AdminRejected  = "rejected"  // authorized; answered 4xx (bad input, not found, conflict)
	AdminFailed    = "failed"    // authorized; answered 5xx
	AdminRefused   = "refused"   // 401: no bearer token, or an unknown one
	AdminDisabled  = "disabled"  // 503: no admin token is configured
	AdminMalformed = "malformed" // 400/414 before routing (withLimits): no token was checked
)

// Bounds of the rows that calls made without a valid token leave in
// admin_audit (refused, disabled, malformed: anyone can make them, as fast
// as they like). Such calls are counted per key (route, outcome, status,
// remote address, token fingerprint) and minute, and a key's row is written
// at its 1st, 2nd, 4th, 8th, … call of the minute, with at = the minute's
// start and calls = that count: n calls of one key leave floor(log2 n)+1
// rows, and the largest calls says how many there were. A remote address
// gets at most AdminFingerprintsPerRemote keys a minute (its further
// fingerprints share fingerprint "*", so guessing many tokens does not make
// many rows), and at most AdminRefusedKeysPerMinute keys are kept a minute
// (further addresses share remote "*"), so neither rows nor memory grow with
// the number of addresses either. Counts are per API process; replicas
// write the same ids for the same (key, count), so a row's calls is a lower
// bound. Every call still gets its log line and its counter increment.
const (
	AdminFingerprintsPerRemote = 4
	AdminRefusedKeysPerMinute  = 100
)

// adminMetadataKey is the Operation.Metadata key of an admin operation's gate.
const adminMetadataKey = "forum.admin-gate"

// adminGate is what an admin operation declares (adminOperation): the
// tokens it accepts and what it is, for the refusal's message.
type adminGate struct {
	tokens map[string]string
	what   string
	fpKey  []byte // keys the fingerprints of presented tokens
}

// adminOperation marks op as an admin operation accepting tokens: the admin
// gate authorizes each call before its input is read (so a caller without
// a valid token learns nothing from validation errors), and audits it.
func adminOperation(op huma.Operation, tokens map[string]string, what string) huma.Operation {
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[adminMetadataKey] = adminGate{tokens: tokens, what: what, fpKey: fingerprintKey(tokens)}
	return op
}

// gateOf returns the gate of an admin operation; ok is false for others.
func gateOf(op *huma.Operation) (adminGate, bool) {
	if op == nil {
		return adminGate{}, false
	}
	if g, ok := op.Metadata[adminMetadataKey].(adminGate); ok {
		return g, true
	}
	if strings.HasPrefix(op.Path, AdminPathPrefix) {
		return adminGate{what: "this admin operation (" + op.OperationID + ")", fpKey: fingerprintKey(nil)}, true
	}
	return adminGate{}, false
}

// fingerprintKey keys token fingerprints with the configured tokens: whoever
// holds the tokens can tell which one a fingerprint is, but a leaked log or
// audit table does not allow a dictionary attack on a weak token.
func fingerprintKey(tokens map[string]string) []byte {
	ks := make([]string, 0, len(tokens))
	for k := range tokens {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	h := sha256.New()
	h.Write([]byte("forum admin token fingerprint v1"))
	for _, k := range ks {
		h.Write([]byte{0})
		h.Write([]byte(k))
	}
	return h.Sum(nil)
}

// AdminTokenFingerprint is the fingerprint that logs and admin_audit carry
// for a call presenting token, when tokens are the configured ones: 12 hex
// digits of an HMAC-SHA-256, never the token.
func AdminTokenFingerprint(tokens map[string]string, token string) string {
	return adminGate{fpKey: fingerprintKey(tokens)}.fingerprint("Bearer " + token)
}

// fingerprint of the credential in an Authorization header ("" when none
// was presented; a header without "Bearer " is fingerprinted whole).
func (g adminGate) fingerprint(header string) string {
	if header == "" {
		return ""
	}
	cred, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		cred = header
	}
	m := hmac.New(sha256.New, g.fpKey)
	m.Write([]byte(cred))
	return hex.EncodeToString(m.Sum(nil)[:6])
}

// adminAuditor is the admin gate: a Huma middleware that authorizes every
// admin operation's call before its input is read, and records every call,
// refused or accepted, three ways: a log line (route, outcome, status,
// remote address, token fingerprint; never the token), a row in admin_audit
// (when a store is given; bounded for calls without a valid token, see
// AdminRefusedKeysPerMinute) and forum_admin_requests_total{route,outcome}.
// The route label and column are the operation id. The remote address is
// the connection's: a forwarded-for header is the caller's to forge.
type adminAuditor struct {
	store    store.AdminStore
	log      *zap.Logger
	now      func() time.Time
	requests *prometheus.CounterVec

	mu       sync.Mutex
	ops      map[string]*huma.Operation // "METHOD /path" of every admin operation
	refusals refusalCounts
	last     time.Time // the last call's time: each call's is later (tick)
}

// tick is the time of a call: now, or a nanosecond after the previous
// call's when the clock has not moved, so two calls never share the time
// (and the content hash) that keys their row.
func (a *adminAuditor) tick() time.Time {
	t := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if !t.After(a.last) {
		t = a.last.Add(time.Nanosecond)
	}
	a.last = t
	return t
}

func newAdminAuditor(o Options) *adminAuditor {
	a := &adminAuditor{store: o.AdminAudit, log: o.Log, now: o.Now, ops: map[string]*huma.Operation{}}
	if a.now == nil {
		a.now = time.Now
	}
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_admin_requests_total",
		Help: "Admin API calls by route (operation id) and outcome (accepted, rejected, failed, refused, disabled, malformed)."},
		[]string{"route", "outcome"})
	reg := o.Registerer
	if reg == nil && o.Registry != nil {
		reg = o.Registry
	}
	if reg != nil {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				a.log.Warn("forum_admin_requests_total not registered; admin calls are still logged and audited", zap.Error(err))
			} else if ex, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				c = ex // another API on the same registry (tests, benchmarks): share its counter
			}
		}
	}
	a.requests = c
	return a
}

// addOperation remembers admin operations by mux pattern, for malformed.
func (a *adminAuditor) addOperation(_ *huma.OpenAPI, op *huma.Operation) {
	if _, ok := gateOf(op); ok {
		a.mu.Lock()
		a.ops[strings.ToUpper(op.Method)+" "+op.Path] = op
		a.mu.Unlock()
	}
}

// adminCall is what is recorded of one call.
type adminCall struct {
	at          time.Time
	op          *huma.Operation
	path        string
	remote      string
	fingerprint string
	who         string
	status      int
	outcome     string
}

// middleware authorizes and records admin calls; others pass through.
func (a *adminAuditor) middleware(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		g, ok := gateOf(op)
		if !ok {
			next(ctx)
			return
		}
		u := ctx.URL()
		header := ctx.Header("Authorization")
		c := adminCall{at: a.tick(), op: op, path: u.EscapedPath(), remote: remoteHost(ctx.RemoteAddr()), fingerprint: g.fingerprint(header)}
		who, err := authorizeAdmin(g.tokens, header, g.what)
		if err != nil {
			c.status, c.outcome = http.StatusUnauthorized, AdminRefused
			var se huma.StatusError
			if errors.As(err, &se) {
				c.status = se.GetStatus()
			}
			if c.status == http.StatusServiceUnavailable {
				c.outcome = AdminDisabled
			} else {
				ctx.SetHeader("WWW-Authenticate", `Bearer realm="forum admin"`)
			}
			_ = huma.WriteErr(api, ctx, c.status, err.Error())
			a.record(ctx.Context(), c)
			return
		}
		c.who = who
		defer func() {
			// A panicking handler is a failed call too; net/http logs the panic.
			if p := recover(); p != nil {
				c.status, c.outcome = http.StatusInternalServerError, AdminFailed
				a.record(ctx.Context(), c)
				panic(p)
			}
		}()
		next(ctx)
		c.status = ctx.Status()
		switch {
		case c.status == 0 || c.status < 400:
			c.outcome = AdminAccepted
		case c.status < 500:
			c.outcome = AdminRejected
		default:
			c.outcome = AdminFailed
		}
		a.record(ctx.Context(), c)
	}
}

// malformed records a call refused by withLimits before routing, when the
// mux pattern it would have been routed to is an admin operation's.
func (a *adminAuditor) malformed(r *http.Request, pattern string, status int) {
	a.mu.Lock()
	op := a.ops[pattern]
	a.mu.Unlock()
	g, ok := gateOf(op)
	if !ok {
		return
	}
	a.record(r.Context(), adminCall{at: a.tick(), op: op, path: r.URL.EscapedPath(), remote: remoteHost(r.RemoteAddr),
		fingerprint: g.fingerprint(r.Header.Get("Authorization")), status: status, outcome: AdminMalformed})
}

// unauthenticated outcomes are those anyone can cause at any rate.
func unauthenticated(outcome string) bool {
	return outcome == AdminRefused || outcome == AdminDisabled || outcome == AdminMalformed
}

// record logs, counts and stores one call.
func (a *adminAuditor) record(ctx context.Context, c adminCall) {
	a.requests.WithLabelValues(c.op.OperationID, c.outcome).Inc()
	row, write := a.row(c)
	fp := c.fingerprint
	if fp == "" {
		fp = "none"
	}
	fields := []zap.Field{zap.String("route", c.op.OperationID), zap.String("outcome", c.outcome), zap.Int("status", c.status),
		zap.String("remote", c.remote), zap.String("token_fingerprint", fp), zap.String("path", cutNoted(c.path, MaxQuotedBytes))}
	if c.who != "" {
		fields = append(fields, zap.String("who", c.who))
	}
	if unauthenticated(c.outcome) {
		fields = append(fields, zap.Int("calls_this_minute", row.Calls))
	}
	if write {
		fields = append(fields, zap.String("audit_id", row.ID))
	}
	switch {
	case unauthenticated(c.outcome):
		a.log.Warn("admin call refused", fields...)
	case c.outcome == AdminFailed:
		a.log.Warn("admin call failed", fields...)
	default:
		a.log.Info("admin call", fields...)
	}
	if !write || a.store == nil {
		return
	}
	// The answer is written; a client gone must not lose the row.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.store.InsertAdminAudit(wctx, []store.AdminAudit{row}); err != nil {
		a.log.Warn("admin audit row not stored; the log line above is the record", zap.String("audit_id", row.ID), zap.Error(err))
	}
}

// row is the admin_audit row of a call, and whether to write it: always
// for an authorized call; for one without a valid token, the aggregate row
// of its key when its count is a power of two (AdminRefusedKeysPerMinute).
func (a *adminAuditor) row(c adminCall) (store.AdminAudit, bool) {
	r := store.AdminAudit{At: c.at, Route: c.op.OperationID, Path: cutUTF8(c.path, MaxQuotedBytes), Outcome: c.outcome, Status: c.status,
		Remote: c.remote, Fingerprint: c.fingerprint, Who: c.who, Calls: 1}
	write := true
	if unauthenticated(c.outcome) {
		minute := c.at.UTC().Truncate(time.Minute)
		a.mu.Lock()
		k, n := a.refusals.add(minute, refusalKey{route: r.Route, outcome: r.Outcome, status: r.Status, remote: r.Remote, fingerprint: r.Fingerprint})
		a.mu.Unlock()
		r.At, r.Path, r.Remote, r.Fingerprint, r.Calls = minute, c.op.Path, k.remote, k.fingerprint, n
		write = n&(n-1) == 0
	}
	r.ID = store.AdminAuditID(r)
	return r, write
}

type refusalKey struct {
	route, outcome string
	status         int
	remote         string
	fingerprint    string
}

// refusalCounts counts unauthenticated calls per key in the current minute.
type refusalCounts struct {
	minute   time.Time
	calls    map[refusalKey]int
	perAddr  map[string]int // keys per remote address
	overflow bool
}

// add counts one call of k in minute and returns the key it was counted
// under (k, or k with fingerprint and remote "*" past the bounds) and its
// count so far.
func (l *refusalCounts) add(minute time.Time, k refusalKey) (refusalKey, int) {
	if !minute.Equal(l.minute) || l.calls == nil {
		l.minute, l.calls, l.perAddr = minute, map[refusalKey]int{}, map[string]int{}
	}
	if _, ok := l.calls[k]; !ok {
		switch {
		case len(l.calls) >= AdminRefusedKeysPerMinute:
			k.remote, k.fingerprint = "*", "*"
		case l.perAddr[k.remote] >= AdminFingerprintsPerRemote:
			k.fingerprint = "*"
		default:
			l.perAddr[k.remote]++
		}
	}
	l.calls[k]++
	return k, l.calls[k]
}

// remoteHost is the host of a RemoteAddr, bounded.
func remoteHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		addr = h
	}
	return cutUTF8(addr, 64)
}

// AdminOptions configure the admin audit route.
type AdminOptions struct {
	// Tokens are the admin bearer tokens (label by token), as
	// IncidentOptions.Tokens. Empty: the route answers 503.
	Tokens map[string]string
	Store  store.AdminStore // nil: 503
	Log    *zap.Logger
}

// AdminAuditEntry is one row of the admin audit.
type AdminAuditEntry struct {
	ID          string    `json:"id" doc:"A hash of the row's content."`
	At          time.Time `json:"at" doc:"When the call was made; for a row of calls without a valid token, the start of their minute."`
	Route       string    `json:"route" doc:"The operation id (insert-incident, retract-incident, approve-review, admin-audit)."`
	Path        string    `json:"path" doc:"The request path as sent (at most 256 bytes); for a row of calls without a valid token, the route's template."`
	Outcome     string    `json:"outcome" enum:"accepted,rejected,failed,refused,disabled,malformed" doc:"accepted/rejected/failed: authorized, answered 2xx/4xx/5xx; refused: no or an unknown token (401); disabled: no admin token configured (503); malformed: refused before routing (400/414)."`
	Status      int       `json:"status" doc:"The HTTP status answered."`
	Remote      string    `json:"remote" doc:"The caller's address (the connection's); * when past the per-minute bound of addresses."`
	Fingerprint string    `json:"fingerprint" doc:"12 hex digits of an HMAC-SHA-256 of the presented token, keyed with the configured tokens (never the token); empty when none was presented; * when past the per-address bound."`
	Who         string    `json:"who,omitempty" doc:"The label of the admin token, when it was accepted."`
	Calls       int       `json:"calls" doc:"1 for an authorized call. Calls without a valid token are aggregated per (route, outcome, status, remote, fingerprint, minute): a row is written at the 1st, 2nd, 4th, 8th, … such call, with calls = that count."`
}

type adminAuditInput struct {
	Authorization string `header:"Authorization" doc:"Bearer <admin token> (FORUM_ADMIN_TOKEN)."`
	Limit         int    `query:"limit" minimum:"1" maximum:"10000" default:"100" doc:"Rows, newest first."`
}

type adminAuditOutput struct {
	Body struct {
		Entries []AdminAuditEntry `json:"entries" doc:"Newest first."`
	}
}

// AdminRoutes returns GET /v1/admin/audit: the admin audit, newest first
// (admin token required; its own calls are audited too).
func AdminRoutes(o AdminOptions) func(huma.API) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	return func(api huma.API) {
		huma.Register(api, adminOperation(huma.Operation{OperationID: "admin-audit", Method: http.MethodGet, Path: AdminPathPrefix + "audit",
			Summary: "Admin audit (admin)", Tags: []string{"admin"},
			Description: "Every admin API call, refused or accepted, newest first: route, outcome, status, remote address, a fingerprint of the presented token (never the token) and, when accepted, the token's label. " +
				"Calls without a valid token (refused, disabled, malformed) are aggregated per (route, outcome, status, remote, fingerprint, minute) so a burst of them leaves a bounded number of rows: " +
				"a row at the 1st, 2nd, 4th, 8th, … call of a key in a minute (calls = that count), at most 4 fingerprints per address and 100 keys per minute, past which they share '*'. " +
				"Every call is also logged and counted in forum_admin_requests_total{route,outcome}."},
			o.Tokens, "the admin audit"),
			func(ctx context.Context, in *adminAuditInput) (*adminAuditOutput, error) {
				if _, err := authorizeAdmin(o.Tokens, in.Authorization, "the admin audit"); err != nil {
					return nil, err
				}
				if o.Store == nil {
					return nil, huma.Error503ServiceUnavailable("the admin audit is not available in this process (no admin audit store)")
				}
				rows, err := o.Store.AdminAudit(ctx, in.Limit)
				if err != nil {
					o.Log.Error("admin audit read failed", zap.Error(err))
					return nil, huma.Error500InternalServerError("admin audit failed; see the server log")
				}
				out := &adminAuditOutput{}
				out.Body.Entries = make([]AdminAuditEntry, 0, len(rows))
				for _, r := range rows {
					out.Body.Entries = append(out.Body.Entries, AdminAuditEntry{ID: r.ID, At: r.At.UTC(), Route: r.Route, Path: r.Path, Outcome: r.Outcome,
						Status: r.Status, Remote: r.Remote, Fingerprint: r.Fingerprint, Who: r.Who, Calls: r.Calls})
				}
				return out, nil
			})
	}
}
