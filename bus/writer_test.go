package bus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
)

// TestWriterRidesOutABrokerOutage: a write issued while the broker is down
// does not fail; it lands once the broker is back (same port, same data),
// and a consumer then reads every message.
func TestWriterRidesOutABrokerOutage(t *testing.T) {
	log := zaptest.NewLogger(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	b, err := bus.StartEmbedded(dir, port, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.EnsureTopics(ctx, b.Addrs(), []bus.TopicSpec{{Name: "t", Partitions: 2}}, log); err != nil {
		t.Fatal(err)
	}
	addrs := b.Addrs()
	w := bus.NewWriter(addrs, log)
	w.MaxBackoff = 500 * time.Millisecond
	var retried atomic.Int64
	w.OnRetry = func(error) { retried.Add(1) }
	defer w.Close()
	if err := w.WriteMessages(ctx, kafka.Message{Topic: "t", Key: []byte("k"), Value: []byte("before")}); err != nil {
		t.Fatal(err)
	}
	b.Close()

	done := make(chan error, 1)
	go func() {
		var msgs []kafka.Message
		for i := range 50 {
			msgs = append(msgs, kafka.Message{Topic: "t", Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint("during-", i))})
		}
		done <- w.WriteMessages(ctx, msgs...)
	}()
	// Down for a while: the write neither returns nor gives up.
	time.Sleep(3 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("the write returned during the outage: %v", err)
	default:
	}
	if retried.Load() == 0 {
		t.Fatal("no retry during the outage")
	}
	b2, err := bus.StartEmbedded(dir, port, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the write failed after the broker came back: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the write never finished after the broker came back")
	}
	got := map[string]bool{}
	for p := range 2 {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "t", Partition: p, MaxWait: 100 * time.Millisecond})
		end, err := bus.EndOffset(ctx, addrs, "t", p)
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < end; i++ {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got[string(m.Value)] = true
		}
		r.Close()
	}
	if !got["before"] || len(got) != 51 {
		t.Fatalf("read %d distinct messages, want 51 (the one before and 50 during the outage)", len(got))
	}
	t.Logf("%d retries during the outage", retried.Load())
}

// TestWriterEndsOnlyOnPermanentErrorsOrTheContext: a write that cannot
// succeed (no topic, too large) returns at once; a write to a broker that
// never comes returns when the context ends, naming the last failure.
func TestWriterEndsOnlyOnPermanentErrorsOrTheContext(t *testing.T) {
	log := zaptest.NewLogger(t)
	w := bus.NewWriter([]string{"127.0.0.1:1"}, log)
	w.MaxBackoff = 100 * time.Millisecond
	defer w.Close()
	ctx := context.Background()
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte("x")}); err == nil || !strings.Contains(err.Error(), "names no topic") {
		t.Fatalf("no topic: %v", err)
	}
	big := make([]byte, 2<<20)
	start := time.Now()
	if err := w.WriteMessages(ctx, kafka.Message{Topic: "t", Value: big}); err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("a message over the batch size: %v after %s (want a prompt error)", err, time.Since(start))
	}
	cctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	err := w.WriteMessages(cctx, kafka.Message{Topic: "t", Value: []byte("x")})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last failure") {
		t.Fatalf("unreachable broker: %v (want the context's end with the last failure)", err)
	}
}

func TestPermanent(t *testing.T) {
	for _, c := range []struct {
		err       error
		permanent bool
	}{
		{nil, false},
		{kafka.LeaderNotAvailable, false},
		{kafka.NotLeaderForPartition, false},
		{kafka.RequestTimedOut, false},
		{kafka.BrokerNotAvailable, false},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, false},
		{io.ErrUnexpectedEOF, false},
		{kafka.WriteErrors{nil, kafka.LeaderNotAvailable}, false},
		{kafka.MessageSizeTooLarge, true},
		{kafka.TopicAuthorizationFailed, true},
		{kafka.InvalidTopic, true},
		{io.ErrClosedPipe, true},
		{kafka.WriteErrors{kafka.LeaderNotAvailable, kafka.MessageSizeTooLarge}, true},
		{fmt.Errorf("wrapped: %w", kafka.RecordListTooLarge), true},
	} {
		if got := bus.Permanent(c.err) != nil; got != c.permanent {
			t.Errorf("Permanent(%v) = %v, want %v", c.err, got, c.permanent)
		}
	}
}
