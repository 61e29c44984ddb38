package main

import (
	"context"
	"fmt"

	"github.com/forum-mcp/forum/processors/history"
)

// The provenance sink stage: provenance.obs in, the store's provenance table
// (and dead letters) out, under its own consumer group, so `forum export
// --table provenance`, GET /v1/export/provenance and analysts' SQL over
// provenance_v see every GitHub observation. Runs in 'run', 'replay' and
// 'process'.
func init() {
	registerStage(stageSpec{name: "provenance-sink", group: history.ProvenanceGroup, topics: history.ProvenanceTopics,
		start: func(ctx context.Context, a *app) (func(context.Context) error, error) {
			w, ok := a.store.(history.ProvenanceWriter)
			if !ok {
				return nil, fmt.Errorf("the store %T keeps no provenance observations", a.store)
			}
			// The topic may not exist yet (no crawler has run): the consumer
			// group needs it.
			if err := ensureProvenanceTopic(ctx, a); err != nil {
				return nil, err
			}
			sink := &history.ProvenanceSink{W: w, Log: a.log.Named("provenance-sink"), Metrics: history.NewProvenanceMetrics(a.reg)}
			return func(ctx context.Context) error { return sink.Run(ctx, a.brokers) }, nil
		}})
}
