package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/schema"
)

// errNothingRead stops a crawl that read nothing from becoming a snapshot.
var errNothingRead = errors.New("crawl read nothing")

// CrawlState is what the crawl loop remembers between runs.
type CrawlState struct {
	Watermark time.Time `json:"watermark"` // updated_since for the next incremental crawl
	LastFull  time.Time `json:"last_full"` // when the last complete full crawl started
}

// Loop crawls the registry every Interval and publishes each crawl as a
// snapshot: a full listing every FullEvery (removals need one), incremental
// (updated_since the stored watermark) in between. When the registry cannot
// be reached it says so, keeps what is known, and retries with back-off.
type Loop struct {
	Crawler   *Crawler
	Publisher *Publisher
	StatePath string
	Interval  time.Duration // default 6 h
	FullEvery time.Duration // default 24 h
	Log       *zap.Logger
	Now       func() time.Time
}

func (l *Loop) load() (CrawlState, error) {
	var st CrawlState
	if _, err := checkpoint.Load(l.StatePath, &st); err != nil {
		return st, fmt.Errorf("crawl state (delete it for a full crawl): %w", err)
	}
	return st, nil
}

func (l *Loop) save(st CrawlState) error { return checkpoint.Save(l.StatePath, st) }

// Once runs one crawl and publishes it.
func (l *Loop) Once(ctx context.Context) (CrawlResult, error) {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	full := l.FullEvery
	if full <= 0 {
		full = 24 * time.Hour
	}
	st, err := l.load()
	if err != nil {
		return CrawlResult{}, err
	}
	started := now().UTC()
	since := st.Watermark
	mode := schema.ModeIncremental
	if since.IsZero() || started.Sub(st.LastFull) >= full {
		since, mode = time.Time{}, schema.ModeFull
	}
	var res CrawlResult
	var crawlErr error
	_, pubErr := l.Publisher.Publish(ctx, mode, l.Crawler.opts.BaseURL, started, func(emit func(schema.Entry) error, rej func(schema.DLQMessage) error) (SnapshotStats, error) {
		res, crawlErr = l.Crawler.Crawl(ctx, since, emit, rej)
		st := SnapshotStats{Entries: res.Entries, Names: res.Names, Rejects: res.Rejects, Unreadable: res.Unreadable, Incomplete: res.Incomplete || crawlErr != nil}
		if crawlErr != nil && res.Entries == 0 {
			// An outage is not a listing: publish no snapshot at all.
			return st, errNothingRead
		}
		return st, nil
	})
	if errors.Is(pubErr, errNothingRead) {
		return res, crawlErr
	}
	if pubErr != nil {
		return res, pubErr
	}
	if crawlErr != nil {
		return res, crawlErr
	}
	if !res.Watermark.IsZero() {
		st.Watermark = res.Watermark
	}
	if mode == schema.ModeFull {
		st.LastFull = started
	}
	return res, l.save(st)
}

// Run crawls until ctx ends.
func (l *Loop) Run(ctx context.Context) error {
	interval := l.Interval
	if interval <= 0 {
		interval = 6 * time.Hour
	}
	log := l.Log
	if log == nil {
		log = zap.NewNop()
	}
	backoff := time.Minute
	for {
		res, err := l.Once(ctx)
		wait := interval
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			log.Error("registry crawl failed; keeping the known state and serving what is stored",
				zap.Error(err), zap.Int("entries_kept", res.Entries), zap.Duration("retry_in", backoff))
			wait = backoff
			backoff = min(backoff*2, interval)
		} else {
			backoff = time.Minute
			log.Info("registry crawl published", zap.String("mode", res.Mode), zap.Int("pages", res.Pages), zap.Int("entries", res.Entries),
				zap.Int("rejects", res.Rejects), zap.Duration("took", res.Duration), zap.Duration("next_in", interval))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}
