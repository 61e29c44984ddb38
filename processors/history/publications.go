package history

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The publications sink's name and group.
const (
	PublicationsName  = "publications"
	PublicationsGroup = "forum-publications"
)

// PublicationsTopics is what the publications sink reads.
var PublicationsTopics = []string{schema.TopicTrustPublications}

// PublicationsWriter is what the publications sink needs of the store.
type PublicationsWriter interface {
	PublicationLeaves(ctx context.Context, publicationID string) (servers, leaves []string, err error)
	InsertPublication(ctx context.Context, p store.Publication) error
}

// PublicationsSink stores publication headers, each once all its records
// are stored (the results sink writes them): a publication is visible only
// whole.
type PublicationsSink struct {
	W PublicationsWriter
	// Wait bounds how long a header waits for its records before the batch
	// fails and comes again (default 2 min).
	Wait  time.Duration
	Log   *zap.Logger
	Times *WriteTimes // nil: not measured
}

// DecodePublication reads a trust.publications message.
func DecodePublication(m kafka.Message) (schema.PublicationMsg, error) {
	return schema.Decode[schema.PublicationMsg](m.Value)
}

// Apply stores each header once its publication's records are all stored.
func (s *PublicationsSink) Apply(ctx context.Context, batch []stage.Item[schema.PublicationMsg]) error {
	wait := s.Wait
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	for _, it := range batch {
		p := it.Value
		deadline := time.Now().Add(wait)
		for {
			servers, _, err := s.W.PublicationLeaves(ctx, p.ID)
			if err != nil {
				return fmt.Errorf("publication %s: its stored records: %w", p.ID, err)
			}
			if len(servers) >= p.RecordCount {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("publication %s: %d of its %d records stored after %s", p.ID, len(servers), p.RecordCount, wait)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		row := store.Publication{ID: p.ID, MethodVersion: p.MethodVersion, WeightsSHA256: p.WeightsSHA256, RecordCount: p.RecordCount,
			MerkleRoot: p.MerkleRoot, Signature: p.Signature, KeyID: p.KeyID, ComputedAt: p.ComputedAt.UTC()}
		if err := s.Times.timed("publications", func() error { return s.W.InsertPublication(ctx, row) }); err != nil {
			return fmt.Errorf("storing publication %s: %w", p.ID, err)
		}
	}
	return nil
}

// Config returns the sink's shape for bus/stage.
func (s *PublicationsSink) Config(brokers []string, metrics *stage.Metrics) stage.Config[schema.PublicationMsg] {
	return stage.Config[schema.PublicationMsg]{Name: PublicationsName, Group: PublicationsGroup, Topics: PublicationsTopics, Brokers: brokers,
		Decode: DecodePublication, Apply: s.Apply, MaxBatch: 10, MaxWait: 50 * time.Millisecond, Metrics: metrics, Log: s.Log}
}
