package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/schema"
)

// Publisher puts snapshots on registry.records: every entry keyed by server
// name, then one snapshot_end marker; bad entries go to the dlq topic.
type Publisher struct {
	W     Writer
	Log   *zap.Logger
	Batch int // messages per write, default 500
}

// SnapshotID is the id of a snapshot observed at t (deterministic, so a
// re-published snapshot is recognised downstream).
func SnapshotID(t time.Time) string { return "snap-" + t.UTC().Format("20060102T150405.000Z") }

// Publish reads one snapshot through read and publishes it.
func (p *Publisher) Publish(ctx context.Context, mode, source string, observedAt time.Time,
	read func(emit func(schema.Entry) error, rej func(schema.DLQMessage) error) (SnapshotStats, error)) (SnapshotStats, error) {
	n := p.Batch
	if n <= 0 {
		n = 500
	}
	id := SnapshotID(observedAt)
	var buf []kafka.Message
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		if err := p.W.WriteMessages(ctx, buf...); err != nil {
			return fmt.Errorf("publishing snapshot %s: %w", id, bus.SummarizeWriteError(err))
		}
		buf = buf[:0]
		return nil
	}
	add := func(topic, key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf = append(buf, kafka.Message{Topic: topic, Key: []byte(key), Value: b})
		if len(buf) >= n {
			return flush()
		}
		return nil
	}
	st, err := read(
		func(e schema.Entry) error {
			return add(schema.TopicRegistryRecords, e.Server.Name, schema.RecordMsg{Type: schema.MsgRecord, SnapshotID: id, Mode: mode, ObservedAt: observedAt.UTC(), Entry: &e})
		},
		func(d schema.DLQMessage) error { return add(schema.TopicDLQ, d.Key, d) },
	)
	if err != nil {
		// What was read is kept (records and dead letters are true
		// observations), but without a snapshot_end the differ never
		// applies it as a listing.
		if ferr := flush(); ferr != nil {
			return st, errors.Join(err, ferr)
		}
		return st, err
	}
	// A listing that lost an entry it could not read is marked incomplete:
	// the lost entry may be any server's, so the differ must not read its
	// absence as a removal.
	end := schema.RecordMsg{Type: schema.MsgSnapshotEnd, SnapshotID: id, Mode: mode, ObservedAt: observedAt.UTC(),
		End: &schema.SnapshotEnd{Source: source, Entries: st.Entries, Names: st.Names, Rejects: st.Rejects, Incomplete: !st.Whole()}}
	if err := add(schema.TopicRegistryRecords, "", end); err != nil {
		return st, err
	}
	return st, flush()
}

// ReplayProgress remembers which snapshot files were published completely,
// so a restarted replay resumes after the last one instead of re-sending all.
type ReplayProgress struct {
	path string
	Done time.Time `json:"done"` // capture time of the last fully published file
}

// LoadReplayProgress reads the progress file (missing = nothing done).
func LoadReplayProgress(path string) (*ReplayProgress, error) {
	p := &ReplayProgress{path: path}
	if _, err := checkpoint.Load(path, p); err != nil {
		return nil, fmt.Errorf("replay progress: %w", err)
	}
	return p, nil
}

// MarkDone records t as published (atomic write).
func (p *ReplayProgress) MarkDone(t time.Time) error {
	p.Done = t.UTC()
	return checkpoint.Save(p.path, p)
}

// Replay publishes the snapshot files in capture order, skipping those a
// previous run finished. onFile reports progress.
func Replay(ctx context.Context, pub *Publisher, files []SnapshotFile, prog *ReplayProgress, onFile func(f SnapshotFile, st SnapshotStats, skipped bool)) error {
	for _, f := range files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if prog != nil && !f.CapturedAt.After(prog.Done) {
			if onFile != nil {
				onFile(f, SnapshotStats{}, true)
			}
			continue
		}
		st, err := pub.Publish(ctx, schema.ModeFull, filepath.Base(f.Path), f.CapturedAt, func(emit func(schema.Entry) error, rej func(schema.DLQMessage) error) (SnapshotStats, error) {
			return ReadSnapshotFile(f, emit, rej)
		})
		if err != nil {
			return fmt.Errorf("replaying %s: %w", f.Path, err)
		}
		if prog != nil {
			if err := prog.MarkDone(f.CapturedAt); err != nil {
				return err
			}
		}
		if onFile != nil {
			onFile(f, st, false)
		}
	}
	return nil
}

// IsSnapshotName reports whether a file name looks like a snapshot file.
func IsSnapshotName(n string) bool {
	return strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz")
}

// Writer writes messages: a *bus.Writer, which rides out broker outages.
type Writer interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
}
