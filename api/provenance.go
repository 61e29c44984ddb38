package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
)

// ProvenanceOptions configure the provenance routes. Snapshot returns the
// provenance processor's evaluation at now (nil: the processor is not
// running in this process → 503); Observation returns a repo's latest
// GitHub observation (the evidence behind github_repo pointers).
type ProvenanceOptions struct {
	Snapshot    func(now time.Time) *provenance.Snapshot
	Observation func(repo string) (github.Observation, bool)
	Now         func() time.Time
}

type baseRatesOutput struct {
	Body struct {
		At            time.Time            `json:"at"`
		MethodVersion string               `json:"method_version"`
		WeightsSHA256 string               `json:"weights_sha256"`
		Note          string               `json:"note"`
		Gate          provenance.GateState `json:"gate"`
		Rates         []provenance.Rate    `json:"rates"`
	}
}

type gateOutput struct {
	Body provenance.GateState
}

type serverProvenanceInput struct {
	Name string `path:"name" doc:"server name (URL-encoded)"`
}

type serverProvenanceOutput struct {
	Body struct {
		provenance.Server
		Gate provenance.GateState `json:"gate"`
	}
}

type observationInput struct {
	Repo string `query:"repo" required:"true" doc:"normalized repository, e.g. github.com/owner/name"`
}

type observationOutput struct {
	Body github.Observation
}

// ProvenanceRoutes returns GET /v1/method/base-rates, GET
// /v1/provenance/gate, GET /v1/servers/{name}/provenance and GET
// /v1/provenance/observation.
func ProvenanceRoutes(o ProvenanceOptions) func(huma.API) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	snap := func() (*provenance.Snapshot, error) {
		if o.Snapshot == nil {
			return nil, huma.Error503ServiceUnavailable("the provenance processor is not running in this process")
		}
		s := o.Snapshot(now())
		if s == nil {
			return nil, huma.Error503ServiceUnavailable("the provenance processor is not running in this process")
		}
		return s, nil
	}
	return func(api huma.API) {
		huma.Register(api, huma.Operation{OperationID: "get-base-rates", Method: http.MethodGet, Path: "/v1/method/base-rates",
			Summary: "Live and pinned provenance base rates", Tags: []string{"trust"},
			Description: "Every provenance flag's live registry-wide base rate (count / n over its denominator) next to the pinned rate of the method version. Scores use the pinned rates only; `forum calibrate --adopt` makes live rates a new method version."},
			func(ctx context.Context, _ *struct{}) (*baseRatesOutput, error) {
				s, err := snap()
				if err != nil {
					return nil, err
				}
				out := &baseRatesOutput{}
				out.Body.At, out.Body.Gate, out.Body.Rates = s.At, s.Gate, s.Rates
				out.Body.MethodVersion, out.Body.WeightsSHA256 = method.Version, method.WeightsSHA256()
				out.Body.Note = "scores use the pinned rates; live rates become effective only through forum calibrate --adopt (a new method version)"
				return out, nil
			})
		huma.Register(api, huma.Operation{OperationID: "get-provenance-gate", Method: http.MethodGet, Path: "/v1/provenance/gate",
			Summary: "GitHub coverage gate", Tags: []string{"trust"},
			Description: "Open while >= 99 % of the listed GitHub repositories have an observation younger than 48 h (SPEC §1.2)."},
			func(ctx context.Context, _ *struct{}) (*gateOutput, error) {
				s, err := snap()
				if err != nil {
					return nil, err
				}
				return &gateOutput{Body: s.Gate}, nil
			})
		huma.Register(api, huma.Operation{OperationID: "get-server-provenance", Method: http.MethodGet, Path: "/v1/servers/{name}/provenance",
			Summary: "Provenance signals of a server", Tags: []string{"trust"},
			Description: "The server's GitHub observation, its flags, and the provenance sub-score with every signal and its evidence, from the pinned calibration."},
			func(ctx context.Context, in *serverProvenanceInput) (*serverProvenanceOutput, error) {
				s, err := snap()
				if err != nil {
					return nil, err
				}
				sv, ok := s.Lookup(in.Name)
				if !ok {
					return nil, huma.Error404NotFound("no such server: " + in.Name)
				}
				out := &serverProvenanceOutput{}
				out.Body.Server, out.Body.Gate = sv, s.Gate
				return out, nil
			})
		huma.Register(api, huma.Operation{OperationID: "get-github-observation", Method: http.MethodGet, Path: "/v1/provenance/observation",
			Summary: "A repository's latest GitHub observation", Tags: []string{"trust"}},
			func(ctx context.Context, in *observationInput) (*observationOutput, error) {
				if o.Observation == nil {
					return nil, huma.Error503ServiceUnavailable("the provenance processor is not running in this process")
				}
				ob, ok := o.Observation(in.Repo)
				if !ok {
					return nil, huma.Error404NotFound("no observation of " + in.Repo)
				}
				return &observationOutput{Body: ob}, nil
			})
	}
}
