package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
)

// Writer is the producer every source and stage uses: kafka-go's Writer
// (key-hashed partitions, acks from every in-sync replica) whose
// WriteMessages rides out a broker outage. A transient failure — the broker
// restarting or down, a leader moving, a timeout — is retried with capped
// exponential back-off for as long as the caller's context lasts; only a
// permanent one (a message too large, an unknown or forbidden topic
// config, a closed writer) or the context's end returns an error. So a
// source keeps its place and a stage keeps its uncommitted batch through
// the outage instead of exiting.
//
// A retry resends every message of the call, not only those reported
// failed: kafka-go may split one call into several batches per partition,
// and resending a failed earlier batch alone would land it after a later
// one that succeeded, reordering the partition. Resent duplicates are what
// at-least-once delivery already allows — every consumer is idempotent by
// message id — while order per partition (compacted values, markers after
// outputs) is kept for the last copy of each message.
type Writer struct {
	kw  *kafka.Writer
	log *zap.Logger

	// MinBackoff and MaxBackoff bound the wait between attempts
	// (defaults 250 ms and 10 s).
	MinBackoff, MaxBackoff time.Duration
	// OnRetry, if set, is called with each failed attempt's error before
	// the back-off (metrics, dependency state).
	OnRetry func(err error)
	// OnSuccess, if set, is called after every write that went through.
	OnSuccess func()

	mu      sync.Mutex
	retries int64
}

// NewWriter returns a producer that hashes keys onto partitions (or honors
// PartitionHeader) and waits for every in-sync replica, so a returned write
// is on the broker.
func NewWriter(brokers []string, log *zap.Logger) *Writer {
	if log == nil {
		log = zap.NewNop()
	}
	return &Writer{
		kw: &kafka.Writer{
			Addr:         kafka.TCP(brokers...),
			Balancer:     &Balancer{},
			RequiredAcks: kafka.RequireAll,
			// Batches are bounded by BatchBytes: a count of 10,000 lets small
			// messages (drift events, health checks) fill a request instead of
			// paying one broker round trip (and, embedded, one fsync) per 1,000.
			BatchSize: 10_000,
			// One record batch must fit the broker's message.max.bytes (1 MiB by
			// default in Kafka and kfake); entries are bounded at 256 KiB.
			BatchBytes:   1 << 20,
			BatchTimeout: 5 * time.Millisecond,
			// kafka-go's own attempts cover a leader moving within a call;
			// an outage is ridden out by WriteMessages' loop, with back-off.
			MaxAttempts: 3,
			ErrorLogger: kafka.LoggerFunc(zapf(log, false)),
		},
		log:        log.Named("bus-writer"),
		MinBackoff: 250 * time.Millisecond,
		MaxBackoff: 10 * time.Second,
	}
}

// Retries is how many attempts failed and were retried so far.
func (w *Writer) Retries() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.retries
}

// Close flushes and closes the writer.
func (w *Writer) Close() error { return w.kw.Close() }

// WriteMessages writes msgs, retrying transient failures until ctx ends
// (see Writer). The error, if any, is permanent or ctx's; for WriteErrors
// it is summarised (SummarizeWriteError).
func (w *Writer) WriteMessages(ctx context.Context, msgs ...kafka.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	for i := range msgs {
		if msgs[i].Topic == "" { // a bug, not an outage: no retry can fix it
			return fmt.Errorf("writing %d messages: message %d names no topic", len(msgs), i)
		}
	}
	var down, lastLog time.Time
	attempts := 0
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		attempts++
		err := w.kw.WriteMessages(ctx, msgs...)
		if err == nil {
			return struct{}{}, nil
		}
		permanent := ctx.Err() != nil || Permanent(err) != nil
		err = SummarizeWriteError(err)
		if permanent {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(w.backoff()), backoff.WithMaxElapsedTime(0), backoff.WithNotify(func(err error, next time.Duration) {
		w.mu.Lock()
		w.retries++
		w.mu.Unlock()
		if w.OnRetry != nil {
			w.OnRetry(err)
		}
		if down.IsZero() {
			down = time.Now()
		}
		// Loud once, then a line every 30 s while it lasts.
		if lastLog.IsZero() || time.Since(lastLog) >= 30*time.Second {
			w.log.Warn("broker write failed; retrying until it is back", zap.Int("messages", len(msgs)), zap.Int("attempt", attempts),
				zap.Duration("down_for", time.Since(down).Round(time.Millisecond)), zap.Duration("next_in", next.Round(time.Millisecond)), zap.Error(err))
			lastLog = time.Now()
		}
	}))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("writing %d messages: %w (last failure: %w)", len(msgs), ctx.Err(), err)
		}
		return fmt.Errorf("writing %d messages: %w", len(msgs), err)
	}
	if !down.IsZero() {
		w.log.Info("broker writes resumed", zap.Int("attempts", attempts), zap.Duration("after", time.Since(down).Round(time.Millisecond)))
	}
	if w.OnSuccess != nil {
		w.OnSuccess()
	}
	return nil
}

func (w *Writer) backoff() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = max(w.MinBackoff, time.Millisecond)
	b.MaxInterval = max(w.MaxBackoff, b.InitialInterval)
	return b
}

// permanentKafka are the broker error codes no retry can fix: the message
// or the request is wrong, or this client may not write there.
var permanentKafka = map[kafka.Error]bool{
	kafka.MessageSizeTooLarge:                true,
	kafka.RecordListTooLarge:                 true,
	kafka.InvalidTopic:                       true,
	kafka.InvalidRequiredAcks:                true,
	kafka.TopicAuthorizationFailed:           true,
	kafka.ClusterAuthorizationFailed:         true,
	kafka.TransactionalIDAuthorizationFailed: true,
	kafka.SASLAuthenticationFailed:           true,
	kafka.UnsupportedVersion:                 true,
	kafka.UnsupportedForMessageFormat:        true,
	kafka.InvalidRecord:                      true,
	kafka.PolicyViolation:                    true,
	kafka.InvalidConfiguration:               true,
}

// Permanent returns the part of a write error that no retry can fix, or nil
// when every failure in it is transient. Unknown errors count as transient:
// a role must not exit on a network error kafka-go did not classify, and a
// permanent fault shows up in the log line every 30 s.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if p := Permanent(e); p != nil {
				return p
			}
		}
		return nil
	}
	var tooLarge kafka.MessageTooLargeError
	if errors.As(err, &tooLarge) {
		return err
	}
	if errors.Is(err, io.ErrClosedPipe) { // the writer was closed
		return err
	}
	var ke kafka.Error
	if errors.As(err, &ke) && permanentKafka[ke] {
		return err
	}
	return nil
}
