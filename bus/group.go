package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
)

// DrainConfig tunes ConsumeDraining.
type DrainConfig struct {
	ConsumeConfig
	// Drain bounds how long the batch in hand may take to finish once a
	// rebalance begins (the group's rebalance timeout is set a little
	// above it: the coordinator waits that long for this member to
	// rejoin). Default 30 s.
	Drain time.Duration
}

// ConsumeDraining is Consume for work that must not be done twice even
// across a rebalance: the prober, where a redelivered request is a remote
// probed twice in an hour. Consume's kafka.Reader rejoins the group as soon
// as a rebalance begins, so the batch in hand is still being worked on, and
// not yet committed, when the partition's next owner reads it again.
// Here each generation of kafka-go's ConsumerGroup is driven directly:
// when it ends, fetching stops, the batch in hand finishes (h runs under
// ctx, not the generation's) and its offsets are committed under the
// generation that fetched it, and only then does the member rejoin, so the
// next owner starts after it.
//
// Delivery is otherwise Consume's: one batch at a time, offsets committed
// after h returns nil; a handler or commit error ends the generation and
// the batch comes again from the last commit. A member killed with a batch
// in hand commits nothing, so the batch's next owner does it.
func ConsumeDraining(ctx context.Context, cfg DrainConfig, h Handler) error {
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 1000
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 100 * time.Millisecond
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 30 * time.Second
	}
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	restarting(ctx, cfg.Group, log, func() (bool, error) { return drainGroup(ctx, cfg, h, log) })
	return nil
}

// drainGroup is one membership: generations until ctx ends or one fails.
func drainGroup(ctx context.Context, cfg DrainConfig, h Handler, log *zap.Logger) (progressed bool, err error) {
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: cfg.Group, Brokers: cfg.Brokers, Topics: cfg.Topics,
		StartOffset:       kafka.FirstOffset,
		HeartbeatInterval: time.Second,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  cfg.Drain + 5*time.Second,
		JoinGroupBackoff:  500 * time.Millisecond,
		ErrorLogger:       kafka.LoggerFunc(zapf(log, false)),
		Logger:            kafka.LoggerFunc(zapf(log, false)),
	})
	if err != nil {
		return false, fmt.Errorf("consumer group: %w", err)
	}
	defer cg.Close()
	for {
		gen, err := cg.Next(ctx)
		if err != nil {
			return progressed, fmt.Errorf("joining %s: %w", cfg.Group, err)
		}
		res := make(chan genResult, 1)
		runGeneration(ctx, gen, cfg, h, log, res)
		// The generation ends when a rebalance begins, the session is
		// lost, or a function below returns; Next waits for all of them.
		var r genResult
		select {
		case r = <-res:
		case <-ctx.Done():
			// A shutdown: closing the group ends the generation, whose
			// functions then return (a batch in hand is cut short by ctx
			// and left uncommitted).
			cg.Close()
			r = <-res
			return progressed || r.progressed, ctx.Err()
		}
		progressed = progressed || r.progressed
		if r.err != nil {
			return progressed, r.err
		}
	}
}

type genResult struct {
	progressed bool
	err        error
}

// runGeneration starts a fetcher per assigned partition and the handler
// loop in gen; the loop reports on res when it returns.
func runGeneration(ctx context.Context, gen *kafka.Generation, cfg DrainConfig, h Handler, log *zap.Logger, res chan<- genResult) {
	msgs := make(chan kafka.Message, cfg.MaxBatch)
	for topic, parts := range gen.Assignments {
		for _, p := range parts {
			log.Debug("assigned", zap.String("group", cfg.Group), zap.Int32("generation", gen.ID), zap.String("topic", topic), zap.Int("partition", p.ID), zap.Int64("offset", p.Offset))
			gen.Start(func(gctx context.Context) {
				r := kafka.NewReader(kafka.ReaderConfig{
					Brokers: cfg.Brokers, Topic: topic, Partition: p.ID,
					MinBytes: 1, MaxBytes: 4 << 20, MaxWait: 200 * time.Millisecond, ReadBatchTimeout: 2 * time.Second,
					ErrorLogger: kafka.LoggerFunc(zapf(log, false)),
				})
				defer r.Close()
				if err := r.SetOffset(p.Offset); err != nil {
					log.Warn("seeking a partition", zap.String("topic", topic), zap.Int("partition", p.ID), zap.Error(err))
					return
				}
				for {
					m, err := r.FetchMessage(gctx)
					if err != nil {
						return // the generation ended (or the fetch failed: it ends it)
					}
					select {
					case msgs <- m:
					case <-gctx.Done():
						return
					}
				}
			})
		}
	}
	gen.Start(func(gctx context.Context) {
		var out genResult
		defer func() { res <- out }()
		for {
			batch := collect(gctx, msgs, cfg.MaxBatch, cfg.MaxWait)
			if len(batch) == 0 {
				return // the generation ended with nothing in hand
			}
			// The batch in hand finishes under ctx, not gctx: a rebalance
			// waits for it (up to the rebalance timeout) instead of handing
			// it to the next owner half done.
			dctx, cancel := context.WithTimeout(ctx, cfg.Drain)
			err := h(dctx, batch)
			cancel()
			if err != nil {
				out.err = fmt.Errorf("handler: %w", err)
				return
			}
			if err := gen.CommitOffsets(nextOffsets(batch)); err != nil {
				out.err = fmt.Errorf("commit: %w", err)
				return
			}
			out.progressed = true
			if gctx.Err() != nil {
				return
			}
		}
	})
}

// collect blocks for one message (or the end of gctx), then takes what
// else is ready within maxWait, up to max.
func collect(gctx context.Context, msgs <-chan kafka.Message, max int, maxWait time.Duration) []kafka.Message {
	if gctx.Err() != nil {
		return nil // no new batch once the generation ends
	}
	var batch []kafka.Message
	select {
	case m := <-msgs:
		batch = append(batch, m)
	case <-gctx.Done():
		return nil
	}
	t := time.NewTimer(maxWait)
	defer t.Stop()
	for len(batch) < max {
		select {
		case m := <-msgs:
			batch = append(batch, m)
		case <-t.C:
			return batch
		case <-gctx.Done():
			return batch
		}
	}
	return batch
}

// nextOffsets are the offsets to commit after batch: per partition, one
// past its greatest message.
func nextOffsets(batch []kafka.Message) map[string]map[int]int64 {
	out := map[string]map[int]int64{}
	for _, m := range batch {
		ps := out[m.Topic]
		if ps == nil {
			ps = map[int]int64{}
			out[m.Topic] = ps
		}
		if o, ok := ps[m.Partition]; !ok || m.Offset+1 > o {
			ps[m.Partition] = m.Offset + 1
		}
	}
	return out
}
