package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

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
// 'forum serve' runs no stages; addStoreRoutes gives it the trust routes,
// which read only the store and the public key.

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
				Sources:   scorer.Sources{Drift: lazyDrift{}, Incidents: lazyIncidents{}, Burst: lazyBurst{}, Provenance: lazyProvenance{}},
				Key:       key,
				Committer: publish.NewFileCommitter(filepath.Join(a.cfg.DataDir, commitLogFile)),
				Brokers:   a.brokers,
				Interval:  time.Hour,
				Log:       a.log.Named("scorer"),
				Metrics:   scorer.NewMetrics(a.reg),
			}
			reviews := reviewStore(a)
			if reviews != nil {
				stage.Reviews = reviews // an approved review hold is over for the next publication too
			}
			a.routes = append(a.routes, api.TrustRoutes(api.TrustOptions{Store: st, PublicKey: key.Public().(ed25519.PublicKey),
				Incident: lookupIncident, Reviews: reviews, Tokens: adminTokens(a, "review approval"), Log: a.log.Named("trust-api")}))
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

// addStoreRoutes adds the routes that need only the store: the trust API,
// for 'forum serve' (the scorer stage adds them itself in run/replay).
func (a *app) addStoreRoutes() error {
	st, ok := a.store.(store.TrustStore)
	if !ok {
		return fmt.Errorf("the store %T keeps no trust records", a.store)
	}
	var pub ed25519.PublicKey
	path := signingKeyPath(a.cfg.DataDir)
	if b, err := os.ReadFile(path); err == nil {
		if pub, err = scorer.ParsePublicKey(b); err != nil {
			return fmt.Errorf("signing key %s: %w", path, err)
		}
	} else {
		// Never create a key here: records are signed by the scorer's key.
		a.log.Warn("no signing key; /v1/keys will not answer (set FORUM_SIGNING_KEY to the scorer's key file)", zap.String("path", path))
	}
	inc, _ := a.store.(store.IncidentStore)
	a.routes = append(a.routes, api.TrustRoutes(api.TrustOptions{Store: st, PublicKey: pub, Reviews: reviewStore(a),
		Tokens: adminTokens(a, "review approval"), Log: a.log.Named("trust-api")}))
	if inc != nil {
		// No bus here: intake answers 503 saying so; history is served.
		a.routes = append(a.routes, api.IncidentRoutes(api.IncidentOptions{Store: inc, Tokens: adminTokens(a, "incident intake"), Log: a.log.Named("incidents-api")}))
	}
	return nil
}

// reviewStore is the store's approvals of popular-server review holds, or
// nil when the engine keeps none (holds then last their 24 h).
func reviewStore(a *app) store.ReviewStore {
	rs, ok := a.store.(store.ReviewStore)
	if !ok {
		a.log.Warn("the store keeps no review approvals; popular-server review holds cannot be approved", zap.String("store", fmt.Sprintf("%T", a.store)))
		return nil
	}
	return rs
}

// adminTokens reads the admin API's bearer tokens (FORUM_ADMIN_TOKEN, as
// the incident intake in stages_drift.go).
func adminTokens(a *app, what string) map[string]string {
	tokens := api.ParseAdminTokens(os.Getenv(envAdminToken))
	if len(tokens) == 0 {
		a.log.Info(what + " disabled: " + envAdminToken + " is not set")
	}
	return tokens
}
