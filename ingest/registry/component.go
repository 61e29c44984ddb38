package registry

import (
	"context"
	"path/filepath"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/schema"
)

// CrawlStateFile is the crawler's checkpoint (watermark, last full crawl)
// under the data dir.
const CrawlStateFile = "crawl-state.json"

func init() {
	component.Register(component.Spec{
		Name: "registry", Role: component.RoleSource,
		Out:   []string{schema.TopicRegistryRecords, schema.TopicDLQ},
		Doc:   "crawl the registry (a full listing, then updated_since) onto registry.records",
		InRun: func(component.Settings) bool { return true },
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			c := d.Settings.Crawl
			cr, err := NewCrawler(CrawlerOptions{BaseURL: c.BaseURL, Logger: d.Log.Named("crawler")})
			if err != nil {
				return nil, err
			}
			w := bus.NewWriter(d.Brokers, d.Log)
			loop := &Loop{Crawler: cr, Publisher: &Publisher{W: w, Log: d.Log}, StatePath: filepath.Join(d.DataDir, CrawlStateFile),
				Interval: c.Interval, FullEvery: c.FullEvery, Log: d.Log.Named("crawler")}
			return component.RunFunc(func(ctx context.Context) error {
				defer w.Close()
				return loop.Run(ctx)
			}), nil
		},
	})
}
