package api

import (
	"context"
	"fmt"
	"net"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/api/flightsql"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/sql/store"
)

// flightRunner builds the serve role's read-only Flight SQL server
// (api/flightsql) from the settings; nil when --flight-listen is off. The
// token is --flight-token (FORUM_FLIGHT_TOKEN) or, when unset, one kept in
// the data dir (created 0600 on first use), so `forum sql` on the same
// machine can read it; the address actually bound is recorded there too
// (the default port is a free one, so replicas and tests never collide).
func flightRunner(d *component.Deps) (func(ctx context.Context) error, error) {
	addr := d.Settings.FlightListen
	if addr == "" || addr == "off" {
		return nil, nil
	}
	q, ok := d.Store.(store.Querier)
	if !ok {
		d.Log.Info("Flight SQL off: the store does not answer ad-hoc SQL", zap.String("store", fmt.Sprintf("%T", d.Store)))
		return nil, nil
	}
	tok, from := d.Settings.FlightToken, "--flight-token"
	if tok == "" {
		var err error
		if tok, err = flightsql.LoadOrCreateToken(d.DataDir); err != nil {
			return nil, err
		}
		from = d.DataDir + "/" + flightsql.TokenFile
	}
	srv, err := flightsql.New(flightsql.Options{Querier: q, Token: tok, Log: d.Log.Named("flightsql")})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("flight sql listen on %s: %w", addr, err)
		}
		bound := ln.Addr().String()
		// The address file only helps forum sql find this process: a data
		// dir that cannot hold it does not stop the server.
		remove, err := flightsql.WriteAddr(d.DataDir, bound)
		if err != nil {
			d.Log.Warn("Flight SQL address not recorded", zap.Error(err))
		}
		defer remove()
		d.Log.Info("Flight SQL listening (read-only)", zap.String("addr", bound), zap.String("token_from", from),
			zap.String("address_file", d.DataDir+"/"+flightsql.AddrFile))
		return srv.Serve(ctx, ln)
	}, nil
}
