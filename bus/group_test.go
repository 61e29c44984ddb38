package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
)

// testDrainingRebalance: a second member joins while the first is inside
// a slow batch (the prober's case: probes in flight). The batch in hand is
// finished and committed before the partitions move, so every message is
// handled exactly once, by one of the two, and both get work. (bus.Consume
// fails this: its reader rejoins at once, and the new owner reads the
// uncommitted batch again.)
func testDrainingRebalance(t *testing.T, brokers []string) {
	log := zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id := uniqueID(t)
	topic, group := "forum-drain-"+id, "forum-drain-g-"+id
	if err := bus.EnsureTopics(ctx, brokers, []bus.TopicSpec{{Name: topic, Partitions: 3}}, log); err != nil {
		t.Fatal(err)
	}
	const total = 60
	var msgs []kafka.Message
	for i := range total {
		msgs = append(msgs, kafka.Message{Topic: topic, Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint(i))})
	}
	w := bus.NewWriter(brokers, log)
	defer w.Close()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	handled := map[string][]string{} // value → the members that handled it
	inBatch := make(chan struct{}, 1)
	member := func(name string) bus.Handler {
		return func(ctx context.Context, batch []kafka.Message) error {
			select {
			case inBatch <- struct{}{}:
			default:
			}
			// Slow work, cut short only by a shutdown.
			select {
			case <-time.After(1500 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
			mu.Lock()
			for _, m := range batch {
				handled[string(m.Value)] = append(handled[string(m.Value)], name)
			}
			mu.Unlock()
			return nil
		}
	}
	cfg := bus.DrainConfig{ConsumeConfig: bus.ConsumeConfig{Brokers: brokers, Group: group, Topics: []string{topic}, MaxBatch: 5, MaxWait: 20 * time.Millisecond, Log: log},
		Drain: 10 * time.Second}
	mctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = bus.ConsumeDraining(mctx, cfg, member("A")) })
	select {
	case <-inBatch: // A is inside its first batch: B joins now
	case <-ctx.Done():
		t.Fatal("member A never got a batch")
	}
	wg.Go(func() { _ = bus.ConsumeDraining(mctx, cfg, member("B")) })
	for {
		mu.Lock()
		n := len(handled)
		mu.Unlock()
		lag, err := bus.Lag(ctx, brokers, group, []string{topic})
		if n == total && err == nil && lag == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d handled, lag %d (%v)", n, total, lag, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	time.Sleep(2 * time.Second) // anything handled twice would show by now
	stop()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	by := map[string]int{}
	for v, who := range handled {
		if len(who) != 1 {
			t.Errorf("message %s handled %d times (%v)", v, len(who), who)
		}
		by[who[0]]++
	}
	if by["A"] == 0 || by["B"] == 0 {
		t.Errorf("the work was not split: %v", by)
	}
	t.Logf("handled once each: %v", by)
}
