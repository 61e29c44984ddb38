package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"time"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/sql/store"
)

// The scorer stage: one signed publication per applied snapshot (event
// time) plus one an hour of wall-clock time; it also serves the trust API.
//
// Files under --data-dir: publication.key (the Ed25519 signing key, created
// 0600 on first use; FORUM_SIGNING_KEY names another file) and
// publications.log (the append-only root commitments, publish.FileCommitter).
// At scale, give every process that runs the scorer or serves the API the
// same key file through FORUM_SIGNING_KEY.
//
// TODO(lead): `forum serve` starts no stages, so it does not serve the trust
// routes yet. It needs, in newServeCmd after openStore:
//
//	key, err := scorer.LoadOrCreateKey(signingKeyPath(cfg.DataDir))
//	a.routes = append(a.routes, api.TrustRoutes(api.TrustOptions{Store: ts, PublicKey: key.Public().(ed25519.PublicKey)}))
//
// (or a registerRoutes hook beside registerStage), and `forum openapi`
// should pass api.TrustRoutes(api.TrustOptions{}) so the printed document
// and api/testdata/openapi.golden.json include the trust operations (their
// own golden file is api/testdata/openapi.trust.golden.json).

// envSigningKey names the signing key file (default DATA_DIR/publication.key).
const envSigningKey = "FORUM_SIGNING_KEY"

// commitLogFile is the local commitment log under --data-dir.
const commitLogFile = "publications.log"

// signingKeyPath is where the signing key lives for this data dir.
func signingKeyPath(dataDir string) string {
	return envOr(envSigningKey, filepath.Join(dataDir, scorer.KeyFile))
}

func init() {
	registerStage(stageSpec{name: "scorer", group: scorer.Group, topics: scorer.Topics,
		start: func(_ context.Context, a *app) (func(context.Context) error, error) {
			st, ok := a.store.(interface {
				scorer.StageStore
				store.TrustStore
			})
			if !ok {
				return nil, fmt.Errorf("the store %T keeps no trust records", a.store)
			}
			key, err := scorer.LoadOrCreateKey(signingKeyPath(a.cfg.DataDir))
			if err != nil {
				return nil, err
			}
			stage := &scorer.Stage{
				Store: st,
				// The other processors' states are set by their stages'
				// start (stages_drift.go); the adapters read them at call
				// time and report "not observed" while they are nil.
				Sources:   scorer.Sources{Drift: lazyDrift{}, Incidents: lazyIncidents{}, Burst: lazyBurst{}},
				Key:       key,
				Committer: publish.NewFileCommitter(filepath.Join(a.cfg.DataDir, commitLogFile)),
				Brokers:   a.brokers,
				Interval:  time.Hour,
				Log:       a.log.Named("scorer"),
			}
			a.routes = append(a.routes, api.TrustRoutes(api.TrustOptions{Store: st, PublicKey: key.Public().(ed25519.PublicKey),
				Incident: lookupIncident, Log: a.log.Named("trust-api")}))
			return stage.Run, nil
		}})
}

// lazyDrift is the drift processor's state, or "not observed" before it runs.
type lazyDrift struct{}

func (lazyDrift) DriftInput(server string) trust.DriftInput {
	if driftState == nil {
		return trust.DriftInput{}
	}
	return driftState.DriftInput(server)
}

func (lazyDrift) Watermark() time.Time {
	if driftState == nil {
		return time.Time{}
	}
	return driftState.Watermark()
}

// lazyIncidents is the incident processor's state, or "not checked".
type lazyIncidents struct{}

func (lazyIncidents) IncidentsInput(server string) trust.IncidentsInput {
	if incidentState == nil {
		return trust.IncidentsInput{}
	}
	return incidentState.IncidentsInput(server)
}

// lazyBurst is the owner-burst processor's state, or "no burst evidence".
type lazyBurst struct{}

func (lazyBurst) OwnerBurst(namespace string, now time.Time) (trust.OwnerBurst, bool) {
	if burstState == nil {
		return trust.OwnerBurst{}, false
	}
	return burstState.OwnerBurst(namespace, now)
}

func (lazyBurst) Watermark() time.Time {
	if burstState == nil {
		return time.Time{}
	}
	return burstState.Watermark()
}

// lookupIncident resolves incident evidence ids from the incident state.
func lookupIncident(_ context.Context, id string) (string, time.Time, any, bool) {
	if incidentState == nil {
		return "", time.Time{}, nil, false
	}
	r, ok := incidentState.Incident(id)
	return r.Server, r.Date, r, ok
}
