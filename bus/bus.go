// Package bus is the Kafka transport every stage shares: the embedded
// Kafka-protocol broker (franz-go's kfake, persisted on disk) for `forum run`
// and tests, and the segmentio/kafka-go client code that talks to it or to any
// Kafka >= 3 the same way. It sits at the top level, beside ingest/ and
// processors/, because both sides of every topic use it.
//
// Delivery is at-least-once: producers wait for all in-sync replicas, and
// consumers commit an offset only after their sink has the batch (see
// Consume). Sinks are idempotent, so a redelivered batch changes nothing.
package bus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/forum-mcp/forum/schema"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap"
)

// TopicSpec names a topic, its partition count and its topic configs.
type TopicSpec struct {
	Name       string
	Partitions int
	Configs    map[string]string // e.g. cleanup.policy; nil for the broker's defaults
}

// CompactionLag is how long a value on a compacted topic is kept before
// compaction may drop it for a newer value of its key: a sink up to a week
// behind still reads every value.
const CompactionLag = 7 * 24 * time.Hour

// TopicSpecs returns the topic table (schema.Topics) as specs: fixed
// partition counts as the table says, defaultPartitions for the rest;
// compacted topics with cleanup.policy=compact and min.compaction.lag.ms,
// and topics the table keeps forever with retention.ms=-1.
func TopicSpecs(defaultPartitions int) []TopicSpec {
	out := make([]TopicSpec, 0, len(schema.Topics))
	for _, t := range schema.Topics {
		p := t.Partitions
		if p <= 0 {
			p = max(defaultPartitions, 1)
		}
		spec := TopicSpec{Name: t.Name, Partitions: p}
		switch {
		case t.Cleanup == schema.CleanupCompact:
			spec.Configs = map[string]string{"cleanup.policy": "compact", "min.compaction.lag.ms": strconv.FormatInt(CompactionLag.Milliseconds(), 10)}
		case t.Forever:
			spec.Configs = map[string]string{"cleanup.policy": "delete", "retention.ms": "-1"}
		}
		out = append(out, spec)
	}
	return out
}

// Embedded is the in-process broker.
type Embedded struct {
	cluster *kfake.Cluster
	addrs   []string
}

// StartEmbedded starts a kfake broker on loopback persisted under dataDir:
// messages and committed group offsets survive a SIGKILL (SyncWrites fsyncs
// every write). port 0 picks a free port.
func StartEmbedded(dataDir string, port int, log *zap.Logger) (*Embedded, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("embedded broker data dir: %w", err)
	}
	opts := []kfake.Opt{
		kfake.DataDir(dataDir),
		kfake.SyncWrites(),
		kfake.NumBrokers(1),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		}),
		kfake.WithLogger(kfakeLogger{log.Named("kfake")}),
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting embedded broker: %w", err)
	}
	e := &Embedded{cluster: c, addrs: c.ListenAddrs()}
	log.Info("embedded broker up", zap.Strings("addrs", e.addrs), zap.String("data_dir", dataDir))
	return e, nil
}

// Addrs returns the broker addresses for clients.
func (e *Embedded) Addrs() []string { return e.addrs }

// Close stops the broker.
func (e *Embedded) Close() { e.cluster.Close() }

type kfakeLogger struct{ l *zap.Logger }

func (k kfakeLogger) Logf(level kfake.LogLevel, msg string, args ...any) {
	if level <= kfake.LogLevelWarn {
		k.l.Sugar().Warnf(msg, args...)
	}
}

// EnsureTopics creates the topics that do not exist yet. Existing topics are
// left as they are (a partition-count mismatch is logged, not fixed).
//
// It waits for the broker as long as ctx lasts — a role started before its
// broker (or during a restart) comes up with it — logging every failure
// after the first few; a refusal no retry can fix (an invalid topic config,
// no authorization) returns at once.
func EnsureTopics(ctx context.Context, brokers []string, topics []TopicSpec, log *zap.Logger) error {
	if log == nil {
		log = zap.NewNop()
	}
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	req := &kafka.CreateTopicsRequest{}
	for _, t := range topics {
		tc := kafka.TopicConfig{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: 1}
		for k, v := range t.Configs {
			tc.ConfigEntries = append(tc.ConfigEntries, kafka.ConfigEntry{ConfigName: k, ConfigValue: v})
		}
		req.Topics = append(req.Topics, tc)
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = 250*time.Millisecond, 5*time.Second
	attempts := 0
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		attempts++
		resp, err := cl.CreateTopics(ctx, req)
		if err != nil {
			return struct{}{}, err
		}
		for name, terr := range resp.Errors {
			if terr == nil || errors.Is(terr, kafka.TopicAlreadyExists) {
				continue
			}
			err := fmt.Errorf("creating topic %s: %w", name, terr)
			if Permanent(terr) != nil || isConfigError(terr) {
				return struct{}{}, backoff.Permanent(err)
			}
			return struct{}{}, err
		}
		return struct{}{}, nil
	}, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(0), backoff.WithNotify(func(err error, next time.Duration) {
		if attempts <= 3 {
			log.Debug("broker not ready for topic creation", zap.Error(err))
			return
		}
		log.Warn("waiting for the broker to create topics", zap.Strings("brokers", brokers), zap.Int("attempt", attempts), zap.Duration("next_in", next.Round(time.Millisecond)), zap.Error(err))
	}))
	if err != nil {
		return fmt.Errorf("creating topics on %s: %w", strings.Join(brokers, ","), err)
	}
	return nil
}

// isConfigError reports a topic creation refused for its settings.
func isConfigError(err error) bool {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		return false
	}
	switch ke {
	// Not InvalidReplicationFactor: a KRaft cluster answers it while its
	// brokers are still registering.
	case kafka.InvalidPartitionNumber, kafka.InvalidReplicaAssignment, kafka.InvalidTopic:
		return true
	}
	return false
}

// PartitionHeader pins a message to one partition: its value is the
// partition number in decimal. Progress markers use it (one per partition
// of an output topic); everything else is placed by its key's hash.
const PartitionHeader = "forum-partition"

// Balancer places a message by its key's hash (kafka-go's Hash, as Kafka's
// own clients do for keyed messages), or on the partition its
// PartitionHeader names.
type Balancer struct{ hash kafka.Hash }

// Balance implements kafka.Balancer.
func (b *Balancer) Balance(msg kafka.Message, partitions ...int) int {
	for _, h := range msg.Headers {
		if h.Key != PartitionHeader {
			continue
		}
		if p, err := strconv.Atoi(string(h.Value)); err == nil && slices.Contains(partitions, p) {
			return p
		}
	}
	return b.hash.Balance(msg, partitions...)
}

// Partitions returns the number of partitions of a topic.
func Partitions(ctx context.Context, brokers []string, topic string) (int, error) {
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	meta, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	for _, t := range meta.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return 0, fmt.Errorf("topic %s: %w", topic, t.Error)
		}
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("topic %s: not found", topic)
}

// NewReader returns a group consumer on topics that starts at the oldest
// offset when the group has none. Offsets are committed only explicitly.
//
// A fetch asks for at most 4 MiB per partition: the broker builds each
// response in memory, and with the embedded broker (`forum run`) that is
// this process' heap, once per partition per group; 4 MiB is four of the
// largest record batch NewWriter makes (Kafka returns an over-sized first
// batch anyway, so no message is too big to fetch).
func NewReader(brokers []string, group string, topics []string, log *zap.Logger) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers:               brokers,
		GroupID:               group,
		GroupTopics:           topics,
		StartOffset:           kafka.FirstOffset,
		MinBytes:              1,
		MaxBytes:              4 << 20, // see the doc comment
		MaxWait:               200 * time.Millisecond,
		ReadBatchTimeout:      2 * time.Second,
		CommitInterval:        0, // synchronous commits: we commit after the sink
		HeartbeatInterval:     time.Second,
		SessionTimeout:        10 * time.Second,
		RebalanceTimeout:      10 * time.Second,
		JoinGroupBackoff:      500 * time.Millisecond,
		WatchPartitionChanges: false,
		// kafka-go logs fetch timeouts on idle partitions as errors; they are
		// routine here, and real failures surface through FetchMessage.
		ErrorLogger:            kafka.LoggerFunc(zapf(log, false)),
		PartitionWatchInterval: 5 * time.Second,
	})
}

func zapf(log *zap.Logger, isErr bool) func(string, ...any) {
	if log == nil {
		return func(string, ...any) {}
	}
	s := log.Named("kafka").Sugar()
	if isErr {
		return s.Warnf
	}
	return s.Debugf
}

// Handler receives a batch of messages. It must be idempotent: after a crash
// the same batch may come again. Returning an error leaves the batch
// uncommitted; Consume then re-reads from the last commit.
type Handler func(ctx context.Context, msgs []kafka.Message) error

// ConsumeConfig tunes Consume.
type ConsumeConfig struct {
	Brokers  []string
	Group    string
	Topics   []string
	MaxBatch int           // default 1000
	MaxWait  time.Duration // how long to fill a batch, default 100 ms
	Log      *zap.Logger
	// Prepare, when set, is called on the fetching goroutine with each
	// batch as soon as it is fetched — while the handler may still be
	// working on the batch before — and before the handler gets it (the
	// same slice). A stage decodes there, so decoding batch n+1 overlaps
	// storing batch n. It must not modify the batch, and it must not count
	// on the handler seeing it: after a failure the read-ahead batch is
	// dropped and fetched again.
	Prepare func(batch []kafka.Message)
}

// Consume reads batches and hands them to h, committing after h succeeds,
// until ctx ends. On a handler or commit error the reader is closed and
// reopened after a back-off, so the batch is delivered again.
func Consume(ctx context.Context, cfg ConsumeConfig, h Handler) error {
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 1000
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 100 * time.Millisecond
	}
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	restarting(ctx, cfg.Group, log, func() (bool, error) { return consumeOnce(ctx, cfg, h, log) })
	return nil
}

// restarting runs once until ctx ends, again after each failure, with a
// capped back-off that starts over after a run that made progress (so a
// fault after good batches is retried quickly).
func restarting(ctx context.Context, group string, log *zap.Logger, once func() (progressed bool, err error)) {
	const minBackoff = 200 * time.Millisecond
	backoff := minBackoff
	for ctx.Err() == nil {
		progressed, err := once()
		if ctx.Err() != nil {
			return
		}
		if progressed {
			backoff = minBackoff
		}
		log.Warn("consumer restarting from the last commit", zap.String("group", group), zap.Error(err), zap.Duration("backoff", backoff))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// consumeOnce reads one batch ahead: while h stores batch n, a goroutine
// already fetches batch n+1, so the fetch and fill time overlaps the sink's
// work instead of adding to it. Delivery is unchanged: offsets are committed
// in order, each only after h returned nil for its batch, and on any error
// the read-ahead batch is dropped uncommitted with the reader, so it is
// delivered again from the last commit.
func consumeOnce(ctx context.Context, cfg ConsumeConfig, h Handler, log *zap.Logger) (progressed bool, err error) {
	r := NewReader(cfg.Brokers, cfg.Group, cfg.Topics, log)
	defer r.Close()
	fctx, cancel := context.WithCancel(ctx)
	type fetched struct {
		batch []kafka.Message
		err   error
	}
	next := make(chan fetched, 1) // one batch ahead, not more: bounded memory
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			b, err := fetchBatch(fctx, r, cfg.MaxBatch, cfg.MaxWait)
			if err == nil && cfg.Prepare != nil {
				cfg.Prepare(b)
			}
			select {
			case next <- fetched{b, err}:
			case <-fctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// The fetcher must be gone before the reader closes.
	defer func() { cancel(); <-done }()
	for {
		var f fetched
		select {
		case f = <-next:
		case <-ctx.Done():
			return progressed, fmt.Errorf("fetch: %w", ctx.Err())
		}
		if f.err != nil {
			return progressed, fmt.Errorf("fetch: %w", f.err)
		}
		if err := h(ctx, f.batch); err != nil {
			return progressed, fmt.Errorf("handler: %w", err)
		}
		if err := r.CommitMessages(ctx, f.batch...); err != nil {
			return progressed, fmt.Errorf("commit: %w", err)
		}
		progressed = true
	}
}

// fetchBatch blocks for one message, then takes what else arrives within
// maxWait, up to maxBatch messages.
func fetchBatch(ctx context.Context, r *kafka.Reader, maxBatch int, maxWait time.Duration) ([]kafka.Message, error) {
	first, err := r.FetchMessage(ctx)
	if err != nil {
		return nil, err
	}
	batch := make([]kafka.Message, 1, min(maxBatch, 1024))
	batch[0] = first
	fill, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	for len(batch) < maxBatch {
		m, err := r.FetchMessage(fill)
		if err != nil {
			break
		}
		batch = append(batch, m)
	}
	return batch, nil
}

// Lag returns, for group on topics, the number of messages not yet committed
// (end offset minus committed offset, summed over partitions).
func Lag(ctx context.Context, brokers []string, group string, topics []string) (int64, error) {
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	meta, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		return 0, fmt.Errorf("metadata: %w", err)
	}
	list := map[string][]kafka.OffsetRequest{}
	fetch := map[string][]int{}
	for _, t := range meta.Topics {
		if t.Error != nil {
			return 0, fmt.Errorf("topic %s: %w", t.Name, t.Error)
		}
		for _, p := range t.Partitions {
			list[t.Name] = append(list[t.Name], kafka.LastOffsetOf(p.ID))
			fetch[t.Name] = append(fetch[t.Name], p.ID)
		}
	}
	ends, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: list})
	if err != nil {
		return 0, fmt.Errorf("list offsets: %w", err)
	}
	committed, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: fetch})
	if err != nil {
		return 0, fmt.Errorf("offset fetch: %w", err)
	}
	var lag int64
	for topic, parts := range ends.Topics {
		done := map[int]int64{}
		for _, p := range committed.Topics[topic] {
			done[p.Partition] = p.CommittedOffset
		}
		for _, p := range parts {
			if p.Error != nil {
				return 0, fmt.Errorf("offsets of %s/%d: %w", topic, p.Partition, p.Error)
			}
			c := done[p.Partition]
			if c < 0 {
				c = 0
			}
			if p.LastOffset > c {
				lag += p.LastOffset - c
			}
		}
	}
	return lag, nil
}

// SummarizeWriteError shortens kafka-go's WriteErrors (one error per message,
// often thousands of the same) to a count and the first distinct causes.
func SummarizeWriteError(err error) error {
	var we kafka.WriteErrors
	if !errors.As(err, &we) {
		return err
	}
	seen := map[string]int{}
	var order []string
	failed := 0
	for _, e := range we {
		if e == nil {
			continue
		}
		failed++
		if seen[e.Error()] == 0 {
			order = append(order, e.Error())
		}
		seen[e.Error()]++
	}
	parts := make([]string, 0, len(order))
	for i, m := range order {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more kinds", len(order)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%dx %s", seen[m], m))
	}
	return fmt.Errorf("%d of %d messages not written: %s: %w", failed, len(we), strings.Join(parts, "; "), errors.Join(firstErr(we)))
}

func firstErr(we kafka.WriteErrors) error {
	for _, e := range we {
		if e != nil {
			return e
		}
	}
	return nil
}

// EndOffset returns the offset the next message on topic/partition will get.
func EndOffset(ctx context.Context, brokers []string, topic string, partition int) (int64, error) {
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	res, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: {kafka.LastOffsetOf(partition)}}})
	if err != nil {
		return 0, fmt.Errorf("list offsets: %w", err)
	}
	for _, p := range res.Topics[topic] {
		if p.Partition == partition {
			if p.Error != nil {
				return 0, fmt.Errorf("offsets of %s/%d: %w", topic, partition, p.Error)
			}
			return p.LastOffset, nil
		}
	}
	return 0, fmt.Errorf("no offsets for %s/%d", topic, partition)
}

// Ping reports whether a broker answers: a fresh connection to each
// bootstrap address in turn and an ApiVersions round trip, nil at the first
// that answers. (kafka.Client's metadata calls can be answered from the
// transport's cache, so they would call a stopped broker up.)
func Ping(ctx context.Context, brokers []string) error {
	var errs []error
	for _, b := range brokers {
		c, err := (&kafka.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d, ok := ctx.Deadline(); ok {
			_ = c.SetDeadline(d)
		}
		_, err = c.ApiVersions()
		c.Close()
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", b, err))
	}
	if len(errs) == 0 {
		return errors.New("no brokers configured")
	}
	return errors.Join(errs...)
}
