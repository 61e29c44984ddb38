package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// IncidentOptions configure the incident routes (SPEC §1.5): the admin
// intake and the public history.
type IncidentOptions struct {
	// Tokens maps each accepted bearer token to its label, the "who" of the
	// audit log. Empty: the admin routes answer 503 (intake disabled).
	Tokens map[string]string
	// Lookup answers validation (server in the latest view, known incident).
	Lookup incidents.Lookup
	// Publish puts an accepted action on the incidents topic. Nil: the
	// admin routes answer 503 (no bus in this process).
	Publish func(ctx context.Context, m incidents.Msg) error
	// Store serves the history (incidents and their audit log).
	Store store.IncidentStore
	// Now is the intake clock (rejects future dates, stamps the audit).
	Now func() time.Time
	Log *zap.Logger
}

// ParseAdminTokens reads FORUM_ADMIN_TOKEN's format: comma-separated
// "label:token" pairs, or a bare token (label "admin").
func ParseAdminTokens(s string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		label, tok, ok := strings.Cut(part, ":")
		if !ok {
			label, tok = "admin", part
		}
		if tok = strings.TrimSpace(tok); tok != "" {
			out[tok] = strings.TrimSpace(label)
		}
	}
	return out
}

// Authorization is a field of each admin input (not an embedded struct:
// Huma binds parameters declared on the input struct itself).
type incidentInsertInput struct {
	Authorization string `header:"Authorization" doc:"Bearer <admin token> (FORUM_ADMIN_TOKEN)."`
	Body          incidents.Input
}

type incidentRetractInput struct {
	Authorization string `header:"Authorization" doc:"Bearer <admin token> (FORUM_ADMIN_TOKEN)."`
	ID            string `path:"id" minLength:"1" maxLength:"200" doc:"Incident id."`
	Body          struct {
		Reason string `json:"reason" doc:"Why it is retracted (kept in the audit log)."`
	}
}

type incidentActionOutput struct {
	Body struct {
		Incident incidents.Record `json:"incident"`
		Audit    incidents.Audit  `json:"audit"`
		Note     string           `json:"note"`
	}
}

// IncidentHistory is one incident of a server with its audit trail.
type IncidentHistory struct {
	incidents.Record
	Audit []IncidentAuditEntry `json:"audit"`
}

// IncidentAuditEntry is one audit-log row.
type IncidentAuditEntry struct {
	ID     string    `json:"id"`
	Action string    `json:"action"`
	Who    string    `json:"who"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

type incidentHistoryOutput struct {
	Body struct {
		Server    string            `json:"server"`
		Incidents []IncidentHistory `json:"incidents"`
	}
}

// IncidentRoutes returns the incident operations for Options.Routes:
// POST /v1/admin/incidents, POST /v1/admin/incidents/{id}/retract (bearer
// token; every call audited with who and why) and
// GET /v1/servers/{name}/incidents (history, retracted ones included).
//
// An accepted action is published on the incidents topic and answered 202:
// the incidents processor stores it, so it shows in the history a moment
// later. Rejected input is answered 4xx with a reason code and nothing is
// published.
func IncidentRoutes(o IncidentOptions) func(huma.API) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	return func(api huma.API) {
		huma.Register(api, adminOperation(huma.Operation{OperationID: "insert-incident", Method: http.MethodPost, Path: "/v1/admin/incidents",
			Summary: "Enter an incident (admin)", DefaultStatus: http.StatusAccepted, Tags: []string{"incidents", "admin"},
			Description: "Validates a curated incident (server in the registry's latest view, date not in the future, source URI, known class, severity and status, a reason) and publishes it with its audit entry. Nothing is written when anything is wrong."},
			o.Tokens, "incident intake"),
			func(ctx context.Context, in *incidentInsertInput) (*incidentActionOutput, error) {
				who, err := o.authorize(in.Authorization)
				if err != nil {
					return nil, err
				}
				m, err := incidents.ValidateInsert(ctx, in.Body, who, o.Now(), o.Lookup)
				if err != nil {
					return nil, o.reject(err)
				}
				return o.publish(ctx, m)
			})
		huma.Register(api, adminOperation(huma.Operation{OperationID: "retract-incident", Method: http.MethodPost, Path: "/v1/admin/incidents/{id}/retract",
			Summary: "Retract an incident (admin)", DefaultStatus: http.StatusAccepted, Tags: []string{"incidents", "admin"},
			Description: "Marks an incident retracted: it then counts 0 but stays in the history and the evidence. A reason is required."},
			o.Tokens, "incident intake"),
			func(ctx context.Context, in *incidentRetractInput) (*incidentActionOutput, error) {
				who, err := o.authorize(in.Authorization)
				if err != nil {
					return nil, err
				}
				m, err := incidents.ValidateRetract(ctx, in.ID, in.Body.Reason, who, o.Now(), o.Lookup)
				if err != nil {
					return nil, o.reject(err)
				}
				return o.publish(ctx, m)
			})
		huma.Register(api, huma.Operation{OperationID: "server-incidents", Method: http.MethodGet, Path: "/v1/servers/{name}/incidents",
			Summary: "Incident history of a server", Tags: []string{"incidents"},
			Description: "Every curated incident of the server, retracted ones included, oldest first, each with its audit trail (who entered or retracted it, and why)."},
			func(ctx context.Context, in *nameInput) (*incidentHistoryOutput, error) {
				if o.Store == nil {
					return nil, huma.Error503ServiceUnavailable("incident history is not available in this process (no incident store)")
				}
				rows, err := o.Store.Incidents(ctx, in.Name)
				if err != nil {
					o.Log.Error("incident history", zap.Error(err))
					return nil, huma.Error500InternalServerError("incident history failed")
				}
				aud, err := o.Store.IncidentAuditLog(ctx, store.AuditQuery{Server: in.Name, Limit: store.MaxEventLimit})
				if err != nil {
					o.Log.Error("incident audit", zap.Error(err))
					return nil, huma.Error500InternalServerError("incident audit failed")
				}
				byInc := map[string][]IncidentAuditEntry{}
				for _, a := range aud {
					byInc[a.IncidentID] = append(byInc[a.IncidentID], IncidentAuditEntry{ID: a.ID, Action: a.Action, Who: a.Who, Reason: a.Reason, At: a.At})
				}
				out := &incidentHistoryOutput{}
				out.Body.Server = in.Name
				out.Body.Incidents = []IncidentHistory{}
				for _, r := range rows {
					h := IncidentHistory{Record: incidents.FromRow(r), Audit: byInc[r.ID]}
					if h.Audit == nil {
						h.Audit = []IncidentAuditEntry{}
					}
					out.Body.Incidents = append(out.Body.Incidents, h)
				}
				return out, nil
			})
	}
}

// authorize checks the bearer token and returns its label.
func (o IncidentOptions) authorize(header string) (string, error) {
	return authorizeAdmin(o.Tokens, header, "incident intake")
}

// reject maps a validation error to its status: 404 for an unknown
// incident, 409 for a conflict with stored state, 422 for bad input.
func (o IncidentOptions) reject(err error) error {
	var ie *incidents.InvalidError
	if !errors.As(err, &ie) {
		o.Log.Error("incident validation", zap.Error(err))
		return huma.Error500InternalServerError("incident validation failed")
	}
	detail := &huma.ErrorDetail{Location: "body." + ie.Field, Message: ie.Reason + ": " + ie.Detail}
	switch {
	case ie.NotFound():
		detail.Location = "path.id"
		return huma.Error404NotFound(ie.Error(), detail)
	case ie.Conflict():
		return huma.Error409Conflict(ie.Error(), detail)
	}
	return huma.Error422UnprocessableEntity(ie.Error(), detail)
}

func (o IncidentOptions) publish(ctx context.Context, m incidents.Msg) (*incidentActionOutput, error) {
	if o.Publish == nil {
		return nil, huma.Error503ServiceUnavailable("incident intake is not available in this process (no bus); use 'forum run' or 'forum process'")
	}
	if err := o.Publish(ctx, m); err != nil {
		o.Log.Error("publishing incident", zap.Error(err))
		return nil, huma.Error503ServiceUnavailable("the incident could not be published on the bus; nothing was recorded, retry later")
	}
	o.Log.Info("incident action accepted", zap.String("action", m.Audit.Action), zap.String("id", m.Incident.ID),
		zap.String("server", m.Incident.Server), zap.String("who", m.Audit.Who))
	out := &incidentActionOutput{}
	out.Body.Incident, out.Body.Audit = m.Incident, m.Audit
	out.Body.Note = "accepted: published on the incidents topic; the history shows it once the incidents processor has stored it"
	return out, nil
}

// BurstReader is what the owner-burst route reads: the detector's
// windows as the results sink stored them.
type BurstReader interface {
	OwnerBursts(ctx context.Context, q store.OwnerBurstQuery) ([]store.OwnerBurstRow, error)
	LatestOwnerBurstDay(ctx context.Context) (string, error)
}

// BurstOptions configure the owner-burst route.
type BurstOptions struct {
	Store BurstReader // nil: 503
	Log   *zap.Logger
}

type burstsInput struct {
	Day string `query:"day" pattern:"^([0-9]{4}-[0-9]{2}-[0-9]{2})?$" doc:"The UTC day (YYYY-MM-DD); default: the newest day the detector concluded."`
}

// NamespaceBurst is one flagged namespace on a day: the detector's last
// evaluation of that day.
type NamespaceBurst struct {
	Namespace string    `json:"namespace"`
	At        time.Time `json:"at" doc:"The event time of the evaluation (the 7 windows end here)."`
	schema.OwnerBurst
}

type burstsOutput struct {
	Body struct {
		Day        string           `json:"day"`
		Namespaces []NamespaceBurst `json:"namespaces"`
	}
}

// BurstRoutes returns GET /v1/owner-bursts: the namespaces the owner-burst
// detector flagged on a day (SPEC §4 Owner burst; evidence only, no score
// impact), from its stored windows.
func BurstRoutes(o BurstOptions) func(huma.API) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	return func(api huma.API) {
		huma.Register(api, huma.Operation{OperationID: "owner-bursts", Method: http.MethodGet, Path: "/v1/owner-bursts",
			Summary: "Namespaces flagged by the owner-burst detector", Tags: []string{"trust"},
			Description: "Per namespace flagged on the day, new_server events in each of the 7 24-hour windows ending at `at` (the detector's last evaluation that day): recurring_burst when >= 10 in >= 2 windows, first_window_burst when >= 20 in the current one. Evidence only; it never changes a score. Every day's flags stay queryable (owner_bursts_v in SQL)."},
			func(ctx context.Context, in *burstsInput) (*burstsOutput, error) {
				if o.Store == nil {
					return nil, huma.Error503ServiceUnavailable("no store with owner-burst results is configured in this process")
				}
				day := in.Day
				if day == "" {
					var err error
					if day, err = o.Store.LatestOwnerBurstDay(ctx); err != nil {
						o.Log.Error("owner-burst day", zap.Error(err))
						return nil, huma.Error500InternalServerError("owner bursts failed; see the server log")
					}
				}
				out := &burstsOutput{}
				out.Body.Day, out.Body.Namespaces = day, []NamespaceBurst{}
				if day == "" {
					return out, nil
				}
				rows, err := o.Store.OwnerBursts(ctx, store.OwnerBurstQuery{From: day, To: day, FlaggedOnly: true, Limit: store.MaxEventLimit})
				if err != nil {
					o.Log.Error("owner bursts", zap.Error(err))
					return nil, huma.Error500InternalServerError("owner bursts failed; see the server log")
				}
				for _, r := range rows {
					var w schema.OwnerBurstWindow
					if err := json.Unmarshal([]byte(r.State), &w); err != nil {
						o.Log.Error("owner burst row", zap.Error(err))
						return nil, huma.Error500InternalServerError("owner bursts failed; see the server log")
					}
					out.Body.Namespaces = append(out.Body.Namespaces, NamespaceBurst{Namespace: r.Namespace, At: r.AsOf.UTC(), OwnerBurst: w.OwnerBurst})
				}
				return out, nil
			})
	}
}
