package api

import (
	"context"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/api/pages"
	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// PagesStore is what the pages read beside the read models.
type PagesStore interface {
	pages.Store
	TrustReader
	Reader
}

// PagesOptions are the pages (api/pages) over the store, the search index
// and the read models of the JSON routes (either model may be nil): a
// server page then reads its record, registry entry and drift events from
// memory, as GET /v1/servers/{name} and /trust do, and only its health
// checks and incidents from the store.
func PagesOptions(st PagesStore, idx *search.Index, servers *ServerModel, trust *TrustModel, sponsors []string, m *method.Method, log *zap.Logger) pages.Options {
	o := pages.Options{Store: st, Index: idx, Sponsors: sponsors, Method: m, Log: log}
	if trust != nil {
		o.Record = func(ctx context.Context, name string) (store.TrustRecord, error) {
			if e := trust.lookup(name); e != nil {
				return e.rec, nil
			}
			return st.LatestTrustRecord(ctx, name)
		}
	}
	if servers != nil {
		o.Server = func(ctx context.Context, name string) (store.ServerRow, []schema.DriftEvent, error) {
			if e := servers.lookup(name); e != nil {
				return store.ServerRow{Record: e.latest}, e.events, nil
			}
			return pages.StoreServer(ctx, st, name)
		}
	}
	return o
}
