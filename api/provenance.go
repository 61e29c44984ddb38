package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// ProvenanceReader is what the provenance routes read: the provenance
// processor's conclusions and the GitHub observations, as the results and
// history sinks stored them.
type ProvenanceReader interface {
	LatestProvenanceSignal(ctx context.Context, server string) (store.ProvenanceSignalRow, error)
	LatestBaseRates(ctx context.Context) ([]store.BaseRateRow, store.GateRow, error)
	ProvenanceObservations(ctx context.Context, q store.ProvenanceQuery) ([]store.Provenance, error)
	GetServer(ctx context.Context, name string) (store.ServerRow, error)
}

// ProvenanceOptions configure the provenance routes.
type ProvenanceOptions struct {
	Store  ProvenanceReader // nil: 503
	Method *method.Method   // the method in force (default: the embedded one)
	Log    *zap.Logger
}

type baseRatesOutput struct {
	Body struct {
		At            time.Time             `json:"at" doc:"The event time the processor evaluated the rates at."`
		MethodVersion string                `json:"method_version"`
		WeightsSHA256 string                `json:"weights_sha256"`
		Note          string                `json:"note"`
		Gate          schema.ProvenanceGate `json:"gate"`
		Rates         []schema.BaseRate     `json:"rates"`
	}
}

type gateOutput struct {
	Body schema.ProvenanceGate
}

type serverProvenanceInput struct {
	Name string `path:"name" minLength:"3" maxLength:"200" doc:"Server name, URL-encoded (io.github.owner%2Frepo)."`
}

type serverProvenanceOutput struct {
	Body struct {
		schema.ProvenanceSignal
		Gate schema.ProvenanceGate `json:"gate"`
	}
}

type observationInput struct {
	Repo string `query:"repo" required:"true" maxLength:"300" doc:"normalized repository, e.g. github.com/owner/name"`
}

type observationOutput struct {
	Body schema.GitHubObservation
}

// ProvenanceRoutes returns GET /v1/method/base-rates, GET
// /v1/provenance/gate, GET /v1/servers/{name}/provenance and GET
// /v1/provenance/observation, answered from the store: the provenance
// processor's newest conclusions (provenance_signals, base_rates,
// provenance_gate) and the stored observations.
func ProvenanceRoutes(o ProvenanceOptions) func(huma.API) {
	if o.Method == nil {
		o.Method = method.Embedded()
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	internal := func(what string, err error) error {
		o.Log.Error("api: provenance read failed", zap.String("what", what), zap.Error(err))
		return huma.Error500InternalServerError(what + " failed; see the server log")
	}
	noStore := func() error {
		return huma.Error503ServiceUnavailable("no store with provenance results is configured in this process")
	}
	rates := func(ctx context.Context) ([]schema.BaseRate, schema.ProvenanceGate, time.Time, error) {
		rows, g, err := o.Store.LatestBaseRates(ctx)
		if err != nil {
			return nil, schema.ProvenanceGate{}, time.Time{}, internal("base rates", err)
		}
		if len(rows) == 0 && g.AsOf.IsZero() {
			return nil, schema.ProvenanceGate{}, time.Time{}, huma.Error503ServiceUnavailable("the provenance processor has not concluded yet: it does at every applied snapshot")
		}
		out := make([]schema.BaseRate, 0, len(rows))
		for _, r := range rows {
			var b schema.BaseRate
			if err := json.Unmarshal([]byte(r.State), &b); err != nil {
				return nil, schema.ProvenanceGate{}, time.Time{}, internal("decode base rate", err)
			}
			out = append(out, b)
		}
		var gate schema.ProvenanceGate
		if g.State != "" {
			if err := json.Unmarshal([]byte(g.State), &gate); err != nil {
				return nil, schema.ProvenanceGate{}, time.Time{}, internal("decode gate", err)
			}
		}
		at := g.AsOf
		if len(rows) > 0 {
			at = rows[0].AsOf
		}
		return out, gate, at.UTC(), nil
	}
	return func(api huma.API) {
		huma.Register(api, huma.Operation{OperationID: "get-base-rates", Method: http.MethodGet, Path: "/v1/method/base-rates",
			Summary: "Live and pinned provenance base rates", Tags: []string{"trust"},
			Description: "Every provenance flag's live registry-wide base rate (count / n over its denominator) next to the pinned rate of the method version, as the provenance processor last concluded them. Scores use the pinned rates only; `forum calibrate --adopt` makes live rates a new method version."},
			func(ctx context.Context, _ *struct{}) (*baseRatesOutput, error) {
				if o.Store == nil {
					return nil, noStore()
				}
				rs, gate, at, err := rates(ctx)
				if err != nil {
					return nil, err
				}
				out := &baseRatesOutput{}
				out.Body.At, out.Body.Gate, out.Body.Rates = at, gate, rs
				out.Body.MethodVersion, out.Body.WeightsSHA256 = o.Method.Version(), o.Method.SHA256
				out.Body.Note = "scores use the pinned rates; live rates become effective only through forum calibrate --adopt (a new method version)"
				return out, nil
			})
		huma.Register(api, huma.Operation{OperationID: "get-provenance-gate", Method: http.MethodGet, Path: "/v1/provenance/gate",
			Summary: "GitHub coverage gate", Tags: []string{"trust"},
			Description: "Open while >= 99 % of the listed GitHub repositories have an observation younger than 48 h (SPEC §1.2), as the provenance processor last concluded it."},
			func(ctx context.Context, _ *struct{}) (*gateOutput, error) {
				if o.Store == nil {
					return nil, noStore()
				}
				_, gate, _, err := rates(ctx)
				if err != nil {
					return nil, err
				}
				return &gateOutput{Body: gate}, nil
			})
		huma.Register(api, huma.Operation{OperationID: "get-server-provenance", Method: http.MethodGet, Path: "/v1/servers/{name}/provenance",
			Summary: "Provenance signals of a server", Tags: []string{"trust"},
			Description: "The server's GitHub observation, its flags, and the provenance sub-score with every signal and its evidence, from the pinned calibration, as the provenance processor last concluded them. A listed server without a GitHub observation has a conclusion too (repo_not_observed or repo_unresolved)."},
			func(ctx context.Context, in *serverProvenanceInput) (*serverProvenanceOutput, error) {
				if o.Store == nil {
					return nil, noStore()
				}
				row, err := o.Store.LatestProvenanceSignal(ctx, in.Name)
				if errors.Is(err, store.ErrNotFound) {
					if _, err := o.Store.GetServer(ctx, in.Name); errors.Is(err, store.ErrNotFound) {
						return nil, huma.Error404NotFound("no server named " + in.Name + " (names are URL-encoded: io.github.owner%2Frepo)")
					} else if err != nil {
						return nil, internal("server", err)
					}
					return nil, huma.Error404NotFound("no provenance concluded for " + in.Name + " yet: the provenance processor concludes at every applied snapshot")
				}
				if err != nil {
					return nil, internal("provenance signal", err)
				}
				out := &serverProvenanceOutput{}
				if err := json.Unmarshal([]byte(row.State), &out.Body.ProvenanceSignal); err != nil {
					return nil, internal("decode provenance signal", err)
				}
				if _, gate, _, err := rates(ctx); err == nil {
					out.Body.Gate = gate
				}
				return out, nil
			})
		huma.Register(api, huma.Operation{OperationID: "get-github-observation", Method: http.MethodGet, Path: "/v1/provenance/observation",
			Summary: "A repository's latest GitHub observation", Tags: []string{"trust"}},
			func(ctx context.Context, in *observationInput) (*observationOutput, error) {
				if o.Store == nil {
					return nil, noStore()
				}
				rows, err := o.Store.ProvenanceObservations(ctx, store.ProvenanceQuery{Repo: in.Repo, Limit: store.MaxEventLimit})
				if err != nil {
					return nil, internal("provenance", err)
				}
				if len(rows) == 0 {
					return nil, huma.Error404NotFound("no observation of " + in.Repo)
				}
				return &observationOutput{Body: ObservationOf(rows[len(rows)-1])}, nil
			})
	}
}

// ObservationOf is the GitHub observation a provenance row stores.
func ObservationOf(p store.Provenance) schema.GitHubObservation {
	o := schema.GitHubObservation{ID: p.ID, Repo: p.Repo, ObservedAt: p.ObservedAt, Status: p.Status, HTTPStatus: p.HTTPStatus,
		NotModified: p.NotModified, FullName: p.FullName, RenamedTo: p.RenamedTo, OwnerLogin: p.OwnerLogin, OwnerType: p.OwnerType,
		OwnerCreatedAt: p.OwnerCreatedAt, OwnerObservedAt: p.OwnerObservedAt, CreatedAt: p.CreatedAt, PushedAt: p.PushedAt, Stars: p.Stars,
		Fork: p.Fork, Archived: p.Archived, Disabled: p.Disabled, LicenseSPDX: p.LicenseSPDX}
	if p.CommitsFetched {
		o.Commits = &schema.GitHubCommits{ObservedAt: p.CommitsObservedAt, Empty: p.Empty, Count: p.CommitsCount, Authors: p.Authors,
			Verified: p.Verified, CapHit: p.CapHit, Last: p.LastCommitAt}
	}
	return o
}
