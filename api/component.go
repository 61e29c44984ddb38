package api

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/schema"
)

// KeyFile is the signing key's file name under the data dir (the scorer
// creates it; the API only reads its public half).
const KeyFile = "publication.key"

func init() {
	component.Register(component.Spec{
		Name: "api", Role: component.RoleServe,
		Out: []string{schema.TopicIncidents},
		Doc: "the HTTP API (OpenAPI 3.1 at /openapi.json, docs at /docs, pages at /) and read-only Arrow Flight SQL (--flight-listen) from the store; stateless, run as many as needed",
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			st, ok := d.Store.(Store)
			if !ok {
				return nil, fmt.Errorf("the store %T cannot serve the API", d.Store)
			}
			m, err := method.Load(d.Settings.MethodWeights)
			if err != nil {
				return nil, err
			}
			pub, err := publicKey(d)
			if err != nil {
				return nil, err
			}
			tokens := ParseAdminTokens(d.Settings.AdminTokens)
			if len(tokens) == 0 {
				d.Log.Info("admin API disabled (incident intake, review approval): FORUM_ADMIN_TOKEN is not set")
			}
			c := Config{Store: st, Method: m, PublicKey: pub, Tokens: tokens, Sponsors: d.Settings.Sponsors, Registry: d.Gatherer,
				Registerer: d.Registry, Log: d.Log.Named("api")}
			c.Ready = d.Ready
			var closeW func()
			if len(d.Brokers) > 0 {
				w := bus.NewWriter(d.Brokers, d.Log)
				closeW = func() { w.Close() }
				p := &incidents.Publisher{W: w}
				c.Publish = func(ctx context.Context, msg incidents.Msg) error { return p.Publish(ctx, msg) }
				brokers, deps := d.Brokers, d.Ready
				c.Ready = func(ctx context.Context) error {
					if deps != nil {
						if err := deps(ctx); err != nil {
							return err
						}
					}
					if _, err := bus.Partitions(ctx, brokers, schema.TopicIncidents); err != nil {
						return fmt.Errorf("bus: %w", err)
					}
					return nil
				}
			}
			srv := NewServer(c)
			flight, err := flightRunner(d)
			if err != nil {
				return nil, err
			}
			return component.RunFunc(func(ctx context.Context) error {
				if closeW != nil {
					defer closeW()
				}
				if flight == nil {
					return srv.ListenAndServe(ctx, d.Settings.Listen)
				}
				g, gctx := errgroup.WithContext(ctx)
				g.Go(func() error { return srv.ListenAndServe(gctx, d.Settings.Listen) })
				g.Go(func() error { return flight(gctx) })
				return g.Wait()
			}), nil
		},
	})
}

// publicKey reads the public half of the signing key; a missing key is not
// an error (/v1/keys then lists none until the scorer has made one).
func publicKey(d *component.Deps) (ed25519.PublicKey, error) {
	path := d.Settings.SigningKey
	if path == "" {
		path = filepath.Join(d.DataDir, KeyFile)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		d.Log.Warn("no signing key yet; /v1/keys lists none (set FORUM_SIGNING_KEY to the scorer's key file)", zap.String("path", path))
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	pub, err := publish.ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return pub, nil
}
