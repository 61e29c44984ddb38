package search

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Source is what the index reads from the store.
type Source interface {
	Publications(ctx context.Context, limit int) ([]store.Publication, error)
	PublicationRecords(ctx context.Context, id string) ([]store.TrustRecord, error)
	ListServers(ctx context.Context, q store.ListQuery) ([]store.ServerRow, error)
	LatestHealth(ctx context.Context, server string) ([]store.HealthCheck, error)
}

// outcomeOfCoverage maps a record's static-scan coverage (which follows the
// check it was scored on) to that check's outcome.
var outcomeOfCoverage = map[string]string{
	"scanned": "ok", "auth_required": "auth_required", "unreachable": "unreachable", "handshake_failed": "handshake_failed",
}

// DocFromRecord builds a Doc from a published record and the registry text.
// title and description come from the registry entry; tools from the latest
// checks (names and descriptions). The record's FORUM side decides the
// safety hold (SafetyHoldOf); its Toolfinder score is taken as sealed.
func DocFromRecord(r schema.Record, title, description string, tools []string) Doc {
	parts := make([]Part, 0, len(r.Toolfinder.Components))
	for _, c := range r.Toolfinder.Components {
		pt := Part{Name: c.Name, Score: c.Score, Max: c.Max}
		for _, f := range c.Findings {
			if f.Outcome != "positive" {
				pt.Note = f.Message
				break
			}
		}
		parts = append(parts, pt)
	}
	return Doc{Name: r.Server, Title: title, Description: description, Tools: tools, Categories: r.Categories.Categories,
		Score: r.Toolfinder.Score, Flags: r.Toolfinder.Flags, LastOutcome: outcomeOfCoverage[r.StaticScan.Coverage],
		Band: r.Band, TrustScore: r.Score, Hold: SafetyHoldOf(r), Parts: parts}
}

// LoadDocs reads one publication's records with their registry text and
// tools.
func LoadDocs(ctx context.Context, src Source, publicationID string) ([]Doc, error) {
	recs, err := src.PublicationRecords(ctx, publicationID)
	if err != nil {
		return nil, fmt.Errorf("records of %s: %w", publicationID, err)
	}
	text := map[string][2]string{}
	cursor := ""
	for {
		page, err := src.ListServers(ctx, store.ListQuery{Cursor: cursor, Limit: store.MaxListLimit})
		if err != nil {
			return nil, fmt.Errorf("listing servers: %w", err)
		}
		for _, s := range page {
			text[s.Name] = [2]string{s.Title, s.Description}
		}
		if len(page) < store.MaxListLimit {
			break
		}
		cursor = page[len(page)-1].Name
	}
	// One bulk health read when the store offers it: per-server reads cost
	// ~10 ms each on DuckDB and ~80 ms on ClickHouse, minutes at 50k.
	var bulk map[string][]store.HealthCheck
	if b, ok := src.(store.BulkHealthReader); ok {
		all, err := b.LatestHealthAll(ctx)
		if err != nil {
			return nil, fmt.Errorf("latest health: %w", err)
		}
		bulk = make(map[string][]store.HealthCheck)
		for _, hc := range all {
			bulk[hc.Server] = append(bulk[hc.Server], hc)
		}
	}
	docs := make([]Doc, 0, len(recs))
	for _, tr := range recs {
		var r schema.Record
		if err := json.Unmarshal([]byte(tr.Record), &r); err != nil {
			return nil, fmt.Errorf("record of %s: %w", tr.Server, err)
		}
		var tools []string
		if len(r.Health) > 0 {
			checks := bulk[r.Server]
			if bulk == nil {
				var err error
				if checks, err = src.LatestHealth(ctx, r.Server); err != nil {
					return nil, fmt.Errorf("health of %s: %w", r.Server, err)
				}
			}
			for _, hc := range checks {
				var c schema.HealthCheck
				if json.Unmarshal([]byte(hc.Check), &c) != nil {
					continue
				}
				for _, t := range c.Tools {
					tools = append(tools, t.Name, t.Description)
				}
			}
		}
		t := text[r.Server]
		docs = append(docs, DocFromRecord(r, t[0], t[1], tools))
	}
	return docs, nil
}

// Refresher keeps an Index on the newest publication: it polls the store,
// and when a new publication appears builds its snapshot beside the current
// one and swaps it in. Queries never wait for a build.
type Refresher struct {
	Index    *Index
	Source   Source
	Interval time.Duration // default 30 s
	Log      *zap.Logger
}

// Refresh builds the newest publication's index if it is not current; it
// reports whether it swapped.
func (r *Refresher) Refresh(ctx context.Context) (bool, error) {
	pubs, err := r.Source.Publications(ctx, 1)
	if err != nil {
		return false, err
	}
	if len(pubs) == 0 {
		return false, nil
	}
	id := pubs[0].ID
	if cur := r.Index.Current(); cur != nil && cur.PublicationID == id {
		return false, nil
	}
	docs, err := LoadDocs(ctx, r.Source, id)
	if err != nil {
		return false, err
	}
	snap, err := Build(ctx, id, docs)
	if err != nil {
		return false, err
	}
	r.Index.Swap(snap)
	return true, nil
}

// Run refreshes until ctx ends; errors are logged and retried.
func (r *Refresher) Run(ctx context.Context) error {
	log := r.Log
	if log == nil {
		log = zap.NewNop()
	}
	iv := r.Interval
	if iv <= 0 {
		iv = 30 * time.Second
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		start := time.Now()
		swapped, err := r.Refresh(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("search index refresh failed; serving the previous index", zap.Error(err))
		case swapped:
			cur := r.Index.Current()
			log.Info("search index built", zap.String("publication", cur.PublicationID), zap.Int("servers", cur.Len()), zap.Duration("took", time.Since(start)))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
