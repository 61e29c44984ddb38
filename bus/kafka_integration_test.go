package bus_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/testenv"
)

// The bus suite: one set of checks that runs against the embedded kfake
// broker (TestBusSuiteEmbedded, always) and against a real Apache Kafka
// (TestIntegrationKafka, when FORUM_TEST_KAFKA names one), so the two stay
// interchangeable behind the same kafka-go client code.
//
// A local real broker:
//
//	deploy/kafka.sh start
//	FORUM_TEST_KAFKA=$(deploy/kafka.sh brokers) go test ./bus/ -run Integration -count=1 -v
//	deploy/kafka.sh stop

// kafkaEnv names the real brokers, comma-separated (host:port,...).
const kafkaEnv = "FORUM_TEST_KAFKA"

// TestIntegrationKafka runs the bus suite against the Kafka named by
// FORUM_TEST_KAFKA. Unset: skipped. Set: it must run, and an unreachable
// broker is a failure, not a skip.
func TestIntegrationKafka(t *testing.T) {
	brokers := kafkaBrokersFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	requireReachable(t, ctx, brokers)
	runBusSuite(t, brokers)
	t.Run("ConsumeDraining", func(t *testing.T) { testDrainingRebalance(t, brokers) })
}

// TestBusSuiteEmbedded runs the same suite against the embedded broker, so the
// suite itself is exercised on every `go test` run.
func TestBusSuiteEmbedded(t *testing.T) {
	b, err := bus.StartEmbedded(t.TempDir(), 0, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	runBusSuite(t, b.Addrs())
	t.Run("ConsumeDraining", func(t *testing.T) { testDrainingRebalance(t, b.Addrs()) })
}

func kafkaBrokersFromEnv(t *testing.T) []string {
	t.Helper()
	raw := os.Getenv(kafkaEnv)
	var brokers []string
	for _, b := range strings.Split(raw, ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	if len(brokers) == 0 {
		if raw != "" {
			t.Fatalf("%s=%q names no broker", kafkaEnv, raw)
		}
		testenv.Unavailable(t, "%s not set: no real Kafka to test against (deploy/kafka.sh start; %s=$(deploy/kafka.sh brokers))", kafkaEnv, kafkaEnv)
	}
	return brokers
}

// requireReachable fails the test when no broker answers, and logs the
// broker's range for the APIs kafka-go's consumer group pins to one version
// (conn.go in v0.4.51), which is where Kafka 4's removal of old protocol
// versions (KIP-896) would bite.
func requireReachable(t *testing.T, ctx context.Context, brokers []string) {
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	resp, err := cl.ApiVersions(ctx, &kafka.ApiVersionsRequest{Addr: kafka.TCP(brokers...)})
	if err == nil && resp.Error != nil {
		err = resp.Error
	}
	if err != nil {
		t.Fatalf("%s=%s: broker unreachable: %v", kafkaEnv, strings.Join(brokers, ","), err)
	}
	// API key -> versions kafka-go v0.4.51 sends from its Conn (the reader
	// and consumer-group path); the producer and admin calls negotiate.
	pinned := map[int][]int{
		1:  {2, 5, 10}, // Fetch (negotiated among these)
		8:  {2},        // OffsetCommit
		9:  {1},        // OffsetFetch
		10: {0},        // FindCoordinator
		11: {1, 2},     // JoinGroup (negotiated among these)
		12: {0},        // Heartbeat
		13: {0},        // LeaveGroup
		14: {0},        // SyncGroup
	}
	for _, k := range resp.ApiKeys {
		vs, ok := pinned[k.ApiKey]
		if !ok {
			continue
		}
		usable := false
		for _, v := range vs {
			usable = usable || (v >= k.MinVersion && v <= k.MaxVersion)
		}
		note := "ok"
		if !usable {
			note = fmt.Sprintf("NO version kafka-go sends (%v) is served", vs)
		}
		t.Logf("broker %s (key %d): v%d..v%d; kafka-go sends %v: %s", k.ApiName, k.ApiKey, k.MinVersion, k.MaxVersion, vs, note)
	}
}

// runBusSuite checks the bus contract on the brokers: EnsureTopics is
// idempotent; keyed writes land one key per partition in order; a group
// consumer gets every message once, commits, and its lag drops to 0; a new
// reader in the same group resumes after the commit and sees only what came
// later. Topic and group names are unique per run, so reruns against a
// long-lived broker do not collide.
func runBusSuite(t *testing.T, brokers []string) {
	log := zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	id := uniqueID(t)
	topic := "forum-it-" + id
	group := "forum-it-g-" + id
	const partitions = 3
	t.Logf("brokers %v, topic %s, group %s", brokers, topic, group)

	// EnsureTopics creates, then is a no-op.
	topics := []bus.TopicSpec{{Name: topic, Partitions: partitions}}
	if err := bus.EnsureTopics(ctx, brokers, topics, log); err != nil {
		t.Fatalf("EnsureTopics: %v", err)
	}
	if err := bus.EnsureTopics(ctx, brokers, topics, log); err != nil {
		t.Fatalf("second EnsureTopics must be a no-op: %v", err)
	}
	if n := partitionCount(t, ctx, brokers, topic); n != partitions {
		t.Fatalf("topic %s has %d partitions, want %d", topic, n, partitions)
	}

	// 100 keyed messages over 7 keys.
	const total = 100
	w := bus.NewWriter(brokers, log)
	var msgs []kafka.Message
	for i := range total {
		msgs = append(msgs, kafka.Message{Topic: topic, Key: []byte(fmt.Sprintf("k%d", i%7)), Value: []byte(fmt.Sprint(i))})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("writing %d messages: %v", total, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("closing writer: %v", err)
	}
	waitGroupLag(t, ctx, brokers, group, topic, total) // nothing committed yet

	// A group consumer gets all of them, commits, and lag reaches 0.
	got := consumeUntil(t, ctx, brokers, group, topic, total, log)
	if len(got) < total {
		t.Fatalf("consumed %d messages, want %d", len(got), total)
	}
	partOf := map[string]int{}
	last := map[string]int{}
	for _, m := range got {
		k := string(m.Key)
		if p, ok := partOf[k]; ok && p != m.Partition {
			t.Errorf("key %s on partitions %d and %d: one key must stay on one partition", k, p, m.Partition)
		}
		partOf[k] = m.Partition
		var v int
		if _, err := fmt.Sscan(string(m.Value), &v); err != nil {
			t.Fatalf("value %q: %v", m.Value, err)
		}
		if prev, ok := last[k]; ok && v <= prev {
			t.Errorf("key %s: %d after %d: per-key order lost", k, v, prev)
		}
		last[k] = v
	}
	seen := map[string]int{}
	for _, m := range got {
		seen[string(m.Value)]++
	}
	for i := range total {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Errorf("message %d delivered %d times, want once", i, n)
		}
	}

	// A restarted reader in the same group resumes after the commit: it
	// gets the one new message and none of the old ones.
	w2 := bus.NewWriter(brokers, log)
	if err := w2.WriteMessages(ctx, kafka.Message{Topic: topic, Key: []byte("k"), Value: []byte("after-restart")}); err != nil {
		t.Fatalf("writing after restart: %v", err)
	}
	if err := w2.Close(); err != nil {
		t.Fatalf("closing writer: %v", err)
	}
	waitGroupLag(t, ctx, brokers, group, topic, 1)
	got = consumeUntil(t, ctx, brokers, group, topic, 1, log)
	if len(got) != 1 || string(got[0].Value) != "after-restart" {
		var vs []string
		for _, m := range got {
			vs = append(vs, string(m.Value))
		}
		t.Fatalf("restarted reader consumed %q, want only [after-restart]", vs)
	}
}

// consumeUntil runs bus.Consume for group until want messages arrived and
// the group's lag is 0 (so the commit landed before the consumer stops), then
// stops it and returns everything it was handed, duplicates included.
func consumeUntil(t *testing.T, ctx context.Context, brokers []string, group, topic string, want int, log *zap.Logger) []kafka.Message {
	t.Helper()
	var (
		mu  sync.Mutex
		got []kafka.Message
	)
	reached := make(chan struct{})
	var once sync.Once
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	done := make(chan error, 1)
	go func() {
		done <- bus.Consume(cctx, bus.ConsumeConfig{Brokers: brokers, Group: group, Topics: []string{topic}, Log: log},
			func(_ context.Context, ms []kafka.Message) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, ms...)
				if len(got) >= want {
					once.Do(func() { close(reached) })
				}
				return nil
			})
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	// stop ends the consumer and waits for it, also when a Fatal below
	// unwinds, so nothing logs through t after the test returns.
	var stopErr error
	stopped := false
	stop := func() error {
		if !stopped {
			stopped = true
			ccancel()
			stopErr = <-done
		}
		return stopErr
	}
	defer stop()
	select {
	case <-reached:
		waitGroupLag(t, ctx, brokers, group, topic, 0)
	case <-time.After(60 * time.Second):
		n := count()
		stop()
		t.Fatalf("group %s consumed %d of %d messages in 60s", group, n, want)
	}
	if err := stop(); err != nil {
		t.Fatalf("Consume: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]kafka.Message(nil), got...)
}

// waitGroupLag waits up to 15 s for group's lag on topic to equal want.
func waitGroupLag(t *testing.T, ctx context.Context, brokers []string, group, topic string, want int64) {
	t.Helper()
	var (
		lag int64
		err error
	)
	for range 150 {
		lag, err = bus.Lag(ctx, brokers, group, []string{topic})
		if err == nil && lag == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("group %s lag on %s = %d (err %v), want %d", group, topic, lag, err, want)
}

func partitionCount(t *testing.T, ctx context.Context, brokers []string, topic string) int {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	meta, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatalf("metadata of %s: %v", topic, err)
	}
	for _, tp := range meta.Topics {
		if tp.Name == topic {
			if tp.Error != nil {
				t.Fatalf("metadata of %s: %v", topic, tp.Error)
			}
			return len(tp.Partitions)
		}
	}
	t.Fatalf("metadata has no topic %s", topic)
	return 0
}

// uniqueID is a per-run suffix for topic and group names: time plus random
// bytes, so parallel and repeated runs on one broker never share names.
func uniqueID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d-%s", time.Now().UnixMilli(), hex.EncodeToString(b))
}
