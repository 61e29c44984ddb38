package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
)

// TestEmbeddedRoundTripSurvivesRestart: messages and committed offsets
// persist in the data dir, so a restarted broker resumes where the group was.
func TestEmbeddedRoundTripSurvivesRestart(t *testing.T) {
	log := zaptest.NewLogger(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	b, err := bus.StartEmbedded(dir, 0, log)
	if err != nil {
		t.Fatal(err)
	}
	topics := []bus.TopicSpec{{Name: "t1", Partitions: 3}}
	if err := bus.EnsureTopics(ctx, b.Addrs(), topics, log); err != nil {
		t.Fatal(err)
	}
	if err := bus.EnsureTopics(ctx, b.Addrs(), topics, log); err != nil {
		t.Fatalf("second EnsureTopics must be a no-op: %v", err)
	}
	w := bus.NewWriter(b.Addrs(), log)
	var msgs []kafka.Message
	for i := range 100 {
		msgs = append(msgs, kafka.Message{Topic: "t1", Key: []byte(fmt.Sprintf("k%d", i%7)), Value: []byte(fmt.Sprint(i))})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	w.Close()

	consume := func(addrs []string, want int) map[string]int {
		got := map[string]int{}
		var mu sync.Mutex
		cctx, ccancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = bus.Consume(cctx, bus.ConsumeConfig{Brokers: addrs, Group: "g", Topics: []string{"t1"}, Log: log}, func(_ context.Context, ms []kafka.Message) error {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range ms {
					got[string(m.Value)]++
				}
				if n := len(got); n >= want {
					go ccancel()
				}
				return nil
			})
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			ccancel()
			<-done
		}
		return got
	}
	got := consume(b.Addrs(), 100)
	if len(got) != 100 {
		t.Fatalf("consumed %d distinct, want 100", len(got))
	}
	waitLag(t, ctx, b.Addrs(), 0)
	b.Close()

	b2, err := bus.StartEmbedded(dir, 0, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	waitLag(t, ctx, b2.Addrs(), 0)
	w2 := bus.NewWriter(b2.Addrs(), log)
	if err := w2.WriteMessages(ctx, kafka.Message{Topic: "t1", Key: []byte("k"), Value: []byte("after-restart")}); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	waitLag(t, ctx, b2.Addrs(), 1)
	got = consume(b2.Addrs(), 1)
	if len(got) != 1 || got["after-restart"] != 1 {
		t.Fatalf("after restart consumed %v, want only the new message", got)
	}
}

func waitLag(t *testing.T, ctx context.Context, addrs []string, want int64) {
	t.Helper()
	var lag int64
	var err error
	for range 50 {
		lag, err = bus.Lag(ctx, addrs, "g", []string{"t1"})
		if err == nil && lag == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("lag = %d (err %v), want %d", lag, err, want)
}

// TestConsumeRedeliversAfterHandlerError: a batch whose handler fails is not
// committed, and neither is the batch read ahead while it ran: both come
// again from the last commit, so every message is stored once the handler
// succeeds, and the group's lag ends at 0.
func TestConsumeRedeliversAfterHandlerError(t *testing.T) {
	log := zaptest.NewLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := bus.StartEmbedded(t.TempDir(), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := bus.EnsureTopics(ctx, b.Addrs(), []bus.TopicSpec{{Name: "t1", Partitions: 3}}, log); err != nil {
		t.Fatal(err)
	}
	w := bus.NewWriter(b.Addrs(), log)
	var msgs []kafka.Message
	for i := range 500 {
		msgs = append(msgs, kafka.Message{Topic: "t1", Key: []byte(fmt.Sprintf("k%d", i%7)), Value: []byte(fmt.Sprint(i))})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	w.Close()

	var mu sync.Mutex
	calls, unprepared := 0, 0
	failed := map[string]bool{}
	stored := map[string]int{}
	prepared := map[*kafka.Message]int{} // batch (its first element) → length, as Prepare saw it
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = bus.Consume(cctx, bus.ConsumeConfig{Brokers: b.Addrs(), Group: "g", Topics: []string{"t1"}, MaxBatch: 50, MaxWait: 20 * time.Millisecond, Log: log,
			Prepare: func(ms []kafka.Message) {
				mu.Lock()
				defer mu.Unlock()
				prepared[&ms[0]] = len(ms)
			}},
			func(_ context.Context, ms []kafka.Message) error {
				mu.Lock()
				defer mu.Unlock()
				if n, ok := prepared[&ms[0]]; !ok || n != len(ms) {
					unprepared++
				}
				calls++
				if calls <= 2 {
					for _, m := range ms {
						failed[string(m.Value)] = true
					}
					return fmt.Errorf("store unavailable (call %d)", calls)
				}
				for _, m := range ms {
					stored[string(m.Value)]++
				}
				if len(stored) == 500 {
					go ccancel()
				}
				return nil
			})
	}()
	select {
	case <-done:
	case <-time.After(45 * time.Second):
		ccancel()
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stored) != 500 {
		t.Fatalf("stored %d distinct messages, want 500", len(stored))
	}
	if len(failed) == 0 {
		t.Fatal("the handler never failed")
	}
	if unprepared > 0 {
		t.Errorf("%d of %d batches reached the handler without Prepare seeing that very batch first", unprepared, calls)
	}
	for v := range failed {
		if stored[v] == 0 {
			t.Errorf("message %s of a failed batch was never stored again", v)
		}
	}
	var lag int64
	for range 50 {
		if lag, err = bus.Lag(ctx, b.Addrs(), "g", []string{"t1"}); err == nil && lag == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("lag = %d (err %v), want 0", lag, err)
}
