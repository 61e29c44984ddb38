// Package faults holds the at-scale fault tests: the split roles (forum
// ingest, forum process) on a real Apache Kafka broker and a real ClickHouse
// server that the test starts for itself (deploy/kafka.sh and
// deploy/clickhouse.sh on free ports and data dirs of its own), so it can
// kill and stop them without disturbing other tests.
//
// Every scenario ends with a comparison to an uninterrupted run on the same
// services: every stored row, counted by its id (the table's sorting key,
// with the trust records' content and leaf hashes and the publications'
// Merkle roots), must be there — 0 lost — and nothing else — 0 duplicated
// (a row done twice under another identity, such as a second publication).
// Redelivered rows with the same id are absorbed by the store (FINAL
// reads); their number is reported, not counted as duplicates.
//
// Gated by FORUM_TEST_FAULTS=1 (deploy/test.sh sets it). FORUM_FAULT_OUTAGE
// (default 60s) is how long the broker and ClickHouse stay down,
// FORUM_FAULT_KILLS (default 10) how many SIGKILLs land mid-stream, and
// FORUM_FAULT_REPORT a file the figures are also written to (docs/FAULTS.md
// holds a run's).
package faults

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/component"
	_ "github.com/forum-mcp/forum/internal/component/all" // the component list, for consumer-group lag
	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/schema"
)

// snapshots are the bundled real captures every scenario replays.
const snapshots = "../../ingest/registry/testdata/snapshots"

const latest = "*latest*"

// tables are the stored rows compared, each by its id: the sorting key of
// its ClickHouse table, plus what must be equal beside the key. servers_latest
// holds candidates whose set depends on how records were batched; what
// must be equal is its answer, the latest entry per name (latest, below).
var tables = []struct{ name, id string }{
	{"registry_records", "name, version, content_sha256"},
	{"servers_latest", latest},
	{"drift_events", "id, kind, server"},
	{"snapshots", "id, events, names, partial"},
	{"dlq", "id"},
	{"registry_loads", "snapshot_id"},
	{"drift_states", "server, as_of_ms"},
	{"incident_states", "server, as_of_ms"},
	{"owner_bursts", "day, namespace, as_of_ms, flagged"},
	{"provenance_signals", "server, as_of_ms"},
	{"base_rates", "as_of_ms, flag, flagged, n"},
	{"provenance_gate", "as_of_ms, resolvable"},
	{"trust_records", "server, publication_id, content_sha256, leaf_hash"},
	{"publications", "id, merkle_root"},
}

type env struct {
	repo, bin, key string
	svc            *services
	outage         time.Duration
	kills          int
	report         *report
}

func TestFaults(t *testing.T) {
	if os.Getenv("FORUM_TEST_FAULTS") == "" {
		testenv.Unavailable(t, "FORUM_TEST_FAULTS is not set (deploy/test.sh sets it; it starts its own Kafka and ClickHouse through deploy/*.sh)")
	}
	e := setup(t)
	ref := e.uninterrupted(t)
	t.Run("sigkill-process", func(t *testing.T) { e.sigkillProcess(t, ref) })
	t.Run("broker-down", func(t *testing.T) { e.brokerDown(t, ref) })
	t.Run("clickhouse-down", func(t *testing.T) { e.clickhouseDown(t, ref) })
	t.Run("prober-sigkill", func(t *testing.T) { e.proberSigkill(t) })
	e.report.print(t)
}

func setup(t *testing.T) *env {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{repo: repo, outage: 60 * time.Second, kills: 10, report: &report{outage: 60 * time.Second}}
	if v := os.Getenv("FORUM_FAULT_OUTAGE"); v != "" {
		if e.outage, err = time.ParseDuration(v); err != nil {
			t.Fatalf("FORUM_FAULT_OUTAGE: %v", err)
		}
		e.report.outage = e.outage
	}
	if v := os.Getenv("FORUM_FAULT_KILLS"); v != "" {
		if e.kills, err = strconv.Atoi(v); err != nil || e.kills < 1 {
			t.Fatalf("FORUM_FAULT_KILLS: want a positive number, got %q", v)
		}
	}
	e.bin = filepath.Join(t.TempDir(), "forum")
	build := exec.Command("go", "build", "-o", e.bin, "./cmd/forum")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building forum: %v\n%s", err, out)
	}
	e.key = signingKey(t)
	e.svc = startServices(t, repo)
	return e
}

// scenario is one run: its own database and data dirs on the shared
// services, from an empty bus.
type scenario struct {
	e       *env
	name    string
	db      string
	procDir string // forum process' data dir, kept across its restarts
	conn    driver.Conn
}

func (e *env) fresh(t *testing.T, name string) *scenario {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resetTopics(t, ctx, e.svc.brokers())
	s := &scenario{e: e, name: name, db: "forum_fault_" + strings.ReplaceAll(name, "-", "_"), procDir: t.TempDir()}
	c, err := ch.Open(&ch.Options{Addr: []string{e.svc.chAddr()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.conn = c
	if err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+s.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s
}

func (s *scenario) env() []string {
	return []string{"FORUM_KAFKA_BROKERS=" + s.e.svc.brokers(), "FORUM_CLICKHOUSE_DSN=clickhouse://" + s.e.svc.chAddr() + "/" + s.db,
		"FORUM_SIGNING_KEY=" + s.e.key, "FORUM_METHOD_WEIGHTS=", "FORUM_ADMIN_TOKEN=", "FORUM_GITHUB_CRAWL=", "FORUM_OPS_LISTEN="}
}

// process starts forum process; ops is its --ops-listen address.
func (s *scenario) process(t *testing.T, ops string) *proc {
	args := []string{"process", "--data-dir", s.procDir, "--publish-interval", "0", "--log-level", "warn"}
	if ops != "" {
		args = append(args, "--ops-listen", ops)
	}
	return startProc(t, s.e.bin, s.env(), args...)
}

// replay starts forum ingest --role replay (the source) on the bundled
// snapshots.
func (s *scenario) replay(t *testing.T, dataDir string) *proc {
	return startProc(t, s.e.bin, s.env(), "ingest", "--role", "replay", "--snapshots", snapshots, "--data-dir", dataDir, "--log-level", "info")
}

// rows lists every compared table's ids (FINAL: what readers see) and how
// many raw rows the store holds beyond them (redeliveries it absorbed).
func (s *scenario) rows(t *testing.T) (map[string][]string, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := map[string][]string{}
	var absorbed int64
	for _, tb := range tables {
		q := "SELECT concat(name, '|', version, '|', content_sha256) FROM (SELECT name, version, content_sha256 FROM " + s.db +
			".servers_latest FINAL ORDER BY name, observed_at_ms DESC, published_at_ms DESC, version DESC, content_sha256 DESC LIMIT 1 BY name)"
		if tb.id != latest {
			cols := strings.Split(tb.id, ",")
			for i, c := range cols {
				cols[i] = "toString(" + strings.TrimSpace(c) + ")"
			}
			expr := cols[0]
			if len(cols) > 1 {
				expr = "concat(" + strings.Join(cols, ", '|', ") + ")"
			}
			q = "SELECT " + expr + " FROM " + s.db + "." + tb.name + " FINAL"
		}
		rows, err := s.conn.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", tb.name, err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		slices.Sort(ids)
		out[tb.name] = ids
		if tb.id == latest {
			continue
		}
		var raw uint64
		if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.db+"."+tb.name).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		absorbed += int64(raw) - int64(len(ids))
	}
	return out, absorbed
}

func (s *scenario) count(ctx context.Context, table string) (int, error) {
	var n uint64
	err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.db+"."+table+" FINAL").Scan(&n)
	return int(n), err
}

// lag is what the consumer groups of forum process have not committed.
func (s *scenario) lag(ctx context.Context) (int64, error) {
	var total int64
	for _, c := range component.List(component.RoleProcess) {
		if c.Group == "" || len(c.In) == 0 {
			continue
		}
		l, err := bus.Lag(ctx, []string{s.e.svc.brokers()}, c.Group, c.In)
		if err != nil {
			return 0, err
		}
		total += l
	}
	return total, nil
}

// midStream reports whether the pipeline has work left: a publication or
// a snapshot load to come, or uncommitted input.
func (s *scenario) midStream(ref *reference) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n, err := s.count(ctx, "publications"); err != nil || n < ref.publications {
		return err == nil
	}
	if n, err := s.count(ctx, "registry_loads"); err != nil || n < ref.loads {
		return err == nil
	}
	l, err := s.lag(ctx)
	return err == nil && l > 0
}

// waitCaughtUp waits until the pipeline has stored every snapshot load and
// publication of the reference and no group has uncommitted input, twice in
// a row a second apart; it fails if a watched process exits on its own.
func (s *scenario) waitCaughtUp(t *testing.T, ref *reference, limit time.Duration, watch ...*proc) {
	t.Helper()
	deadline := time.Now().Add(limit)
	settled := 0
	for {
		for _, p := range watch {
			if p.exited() {
				t.Fatalf("%s exited on its own (%v):\n%s", p.name(), p.cmd.ProcessState, p.tail())
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		pubs, err1 := s.count(ctx, "publications")
		loads, err2 := s.count(ctx, "registry_loads")
		lag, err3 := s.lag(ctx)
		cancel()
		if err1 == nil && err2 == nil && err3 == nil && pubs >= ref.publications && loads >= ref.loads && lag == 0 {
			settled++
			if settled == 2 {
				return
			}
		} else {
			settled = 0
		}
		if time.Now().After(deadline) {
			var logs []string
			for _, p := range watch {
				logs = append(logs, p.name()+":\n"+p.tail())
			}
			t.Fatalf("not caught up after %s (publications %d/%d %v, loads %d/%d %v, lag %d %v):\n%s", limit,
				pubs, ref.publications, err1, loads, ref.loads, err2, lag, err3, strings.Join(logs, "\n"))
		}
		time.Sleep(time.Second)
	}
}

// reference is the uninterrupted run.
type reference struct {
	rows                map[string][]string
	publications, loads int
	took                time.Duration // process start to caught up
	messages            int64
}

func (e *env) uninterrupted(t *testing.T) *reference {
	t.Helper()
	s := e.fresh(t, "reference")
	// The reference's own targets are not known yet: wait for the source,
	// then for the process to drain the bus and leave its tables still.
	began := time.Now()
	p := s.process(t, "")
	defer p.stop()
	r := s.replay(t, t.TempDir())
	if err := r.wait(3 * time.Minute); err != nil {
		t.Fatalf("replay: %v\n%s", err, r.tail())
	}
	var last string
	stable := 0
	deadline := time.Now().Add(10 * time.Minute)
	for stable < 5 {
		if p.exited() {
			t.Fatalf("forum process exited:\n%s", p.tail())
		}
		if time.Now().After(deadline) {
			t.Fatalf("the uninterrupted run never settled (last: publications, loads, trust records %s):\n%s", last, p.tail())
		}
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		lag, err := s.lag(ctx)
		pubs, _ := s.count(ctx, "publications")
		loads, _ := s.count(ctx, "registry_loads")
		recs, _ := s.count(ctx, "trust_records")
		cancel()
		cur := fmt.Sprint(pubs, loads, recs, " lag ", lag, err)
		if err == nil && lag == 0 && pubs > 0 && cur == last {
			stable++
		} else {
			stable = 0
		}
		last = cur
	}
	ref := &reference{took: time.Since(began) - 4*time.Second}
	ref.rows, _ = s.rows(t)
	ref.publications, ref.loads = len(ref.rows["publications"]), len(ref.rows["registry_loads"])
	ref.messages = messages(t, e.svc.brokers())
	for _, tb := range tables {
		if len(ref.rows[tb.name]) == 0 && tb.name != "incident_states" && tb.name != "dlq" {
			t.Fatalf("the uninterrupted run stored no %s: the comparison would prove nothing", tb.name)
		}
	}
	t.Logf("uninterrupted: %d publications, %d loads, %d messages on the bus, caught up in %s", ref.publications, ref.loads, ref.messages, ref.took.Round(time.Millisecond))
	e.report.add(row{scenario: "uninterrupted (reference)", faults: "none", messages: ref.messages, recover: "—", rows: total(ref.rows)})
	return ref
}

// compare counts got's rows against the reference by id and records the
// scenario's figures.
func (s *scenario) compare(t *testing.T, ref *reference, r row) {
	t.Helper()
	got, absorbed := s.rows(t)
	for _, tb := range tables {
		lost, extra := diffSorted(ref.rows[tb.name], got[tb.name])
		r.lost += len(lost)
		r.duplicated += len(extra)
		if len(lost)+len(extra) > 0 {
			t.Errorf("%s: %d rows, want %d: %d lost %v, %d duplicated %v", tb.name, len(got[tb.name]), len(ref.rows[tb.name]), len(lost), head(lost), len(extra), head(extra))
		}
	}
	r.rows = total(got)
	r.absorbed = absorbed
	r.messages = messages(t, s.e.svc.brokers())
	s.e.report.add(r)
}

func (e *env) sigkillProcess(t *testing.T, ref *reference) {
	s := e.fresh(t, "sigkill")
	r := s.replay(t, t.TempDir())
	if err := r.wait(3 * time.Minute); err != nil {
		t.Fatalf("replay: %v\n%s", err, r.tail())
	}
	rng := rand.New(rand.NewPCG(13, uint64(time.Now().UnixNano())))
	// Kill points spread over a run's length: the process is killed at a
	// random instant of its first quarter-run after each restart, until
	// enough kills have landed with work left.
	span := max(2*time.Second, ref.took/4)
	mid, attempts := 0, 0
	var points []string
	for mid < e.kills && attempts < 4*e.kills {
		attempts++
		p := s.process(t, "")
		at := time.Duration(float64(500*time.Millisecond) + rng.Float64()*float64(span))
		time.Sleep(at)
		if p.exited() {
			t.Fatalf("forum process exited on its own:\n%s", p.tail())
		}
		work := s.midStream(ref)
		p.kill()
		if work {
			mid++
			points = append(points, at.Round(10*time.Millisecond).String())
		}
	}
	if mid < e.kills {
		t.Fatalf("only %d of %d SIGKILLs landed with work left (%d tries)", mid, e.kills, attempts)
	}
	began := time.Now()
	p := s.process(t, "")
	defer p.stop()
	s.waitCaughtUp(t, ref, 5*time.Minute, p)
	t.Logf("%d SIGKILLs mid-stream (of %d), at %s after each start", mid, attempts, strings.Join(points, ", "))
	s.compare(t, ref, row{scenario: "SIGKILL of forum process", faults: fmt.Sprintf("%d SIGKILLs mid-stream (%d in all)", mid, attempts),
		recover: time.Since(began).Round(100 * time.Millisecond).String()})
}

func (e *env) brokerDown(t *testing.T, ref *reference) {
	s := e.fresh(t, "broker")
	ops := freeAddr(t)
	p := s.process(t, ops)
	defer p.stop()
	r := s.replay(t, t.TempDir())
	// 1. While the source publishes: pause it after its first snapshot,
	// take the broker down, let it go on into the outage.
	if !r.waitOutput("[1/", time.Minute) {
		t.Fatalf("the replay never published its first snapshot:\n%s", r.tail())
	}
	r.signal(syscall.SIGSTOP)
	published := strings.Count(r.output(), "] ")
	s.e.svc.kafka(t, "stop")
	r.signal(syscall.SIGCONT)
	s.outage(t, "bus", ops, p, r)
	s.e.svc.kafka(t, "start")
	if err := r.wait(5 * time.Minute); err != nil {
		t.Fatalf("the replay did not finish after the broker came back: %v\n%s", err, r.tail())
	}
	if !strings.Contains(r.output(), "broker write failed; retrying") {
		t.Errorf("the source never met the outage (published %d snapshot lines before it):\n%s", published, r.tail())
	}
	// 2. While the processors consume: the broker is killed (no clean
	// shutdown, the partition leader is gone) with work left.
	if !s.midStream(ref) {
		t.Fatalf("the processors were done before the second outage; nothing was tested")
	}
	s.e.svc.killKafka(t)
	s.outage(t, "bus", ops, p)
	s.e.svc.kafka(t, "start")
	back := time.Now()
	s.waitCaughtUp(t, ref, 5*time.Minute, p)
	s.compare(t, ref, row{scenario: "broker down while publishing, then while consuming", faults: fmt.Sprintf("2 outages of %s (stop after %d of 7 snapshots; SIGKILL mid-consume)", e.outage, published),
		recover: time.Since(back).Round(100 * time.Millisecond).String()})
}

func (e *env) clickhouseDown(t *testing.T, ref *reference) {
	s := e.fresh(t, "clickhouse")
	ops := freeAddr(t)
	p := s.process(t, ops)
	defer p.stop()
	r := s.replay(t, t.TempDir())
	if err := r.wait(3 * time.Minute); err != nil {
		t.Fatalf("replay: %v\n%s", err, r.tail())
	}
	// Mid-stream: at least one publication stored, not all.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		n, err := s.count(ctx, "publications")
		cancel()
		if err == nil && n >= 1 {
			if n >= ref.publications {
				t.Fatalf("all %d publications were stored before ClickHouse went down; nothing was tested", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no publication stored:\n%s", p.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.e.svc.clickhouse(t, "stop")
	s.outage(t, "store", ops, p)
	s.e.svc.clickhouse(t, "start")
	back := time.Now()
	s.waitCaughtUp(t, ref, 5*time.Minute, p)
	s.compare(t, ref, row{scenario: "ClickHouse down mid-stream", faults: fmt.Sprintf("1 outage of %s", e.outage),
		recover: time.Since(back).Round(100 * time.Millisecond).String()})
}

// outage waits out the fault's length, checking every second that no
// process exited and that the role reports the dependency: /readyz 503 and
// forum_dependency_up{dependency=dep} 0 on its operations endpoints.
func (s *scenario) outage(t *testing.T, dep, ops string, procs ...*proc) {
	t.Helper()
	end := time.Now().Add(s.e.outage)
	sawNotReady, sawGauge := false, false
	for time.Now().Before(end) {
		for _, p := range procs {
			if p.exited() {
				t.Fatalf("%s exited during the %s outage (%v):\n%s", p.name(), dep, p.cmd.ProcessState, p.tail())
			}
		}
		if code, body := get(ops, "/readyz"); code == http.StatusServiceUnavailable && strings.Contains(body, dep) {
			sawNotReady = true
		}
		if _, body := get(ops, "/metrics"); strings.Contains(body, `forum_dependency_up{dependency="`+dep+`"} 0`) {
			sawGauge = true
		}
		time.Sleep(time.Second)
	}
	if !sawNotReady || !sawGauge {
		t.Errorf("during the %s outage: /readyz said not ready: %v; forum_dependency_up was 0: %v", dep, sawNotReady, sawGauge)
	}
}

func get(addr, path string) (int, string) {
	c := http.Client{Timeout: 3 * time.Second}
	res, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(b)
}

// messages is the number of messages on every pipeline topic.
func messages(t *testing.T, brokers string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int64
	for _, topic := range schema.TopicNames() {
		parts, err := bus.Partitions(ctx, []string{brokers}, topic)
		if err != nil {
			continue // a topic no role has created in this scenario
		}
		for p := range parts {
			end, err := bus.EndOffset(ctx, []string{brokers}, topic, p)
			if err != nil {
				t.Fatalf("end offset of %s/%d: %v", topic, p, err)
			}
			n += end
		}
	}
	return n
}

func total(rows map[string][]string) int {
	n := 0
	for _, r := range rows {
		n += len(r)
	}
	return n
}

// diffSorted returns what of want is missing from got, and what got has
// beyond want (both sorted).
func diffSorted(want, got []string) (lost, extra []string) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || (i < len(want) && want[i] < got[j]):
			lost = append(lost, want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			extra = append(extra, got[j])
			j++
		default:
			i++
			j++
		}
	}
	return lost, extra
}

func head(xs []string) []string {
	if len(xs) > 3 {
		return xs[:3]
	}
	return xs
}

// resetTopics deletes the pipeline's topics so a scenario starts from an
// empty bus (the roles create them again).
func resetTopics(t *testing.T, ctx context.Context, brokers string) {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(brokers), Timeout: 10 * time.Second}
	if _, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: schema.TopicNames()}); err != nil {
		t.Fatalf("deleting old topics: %v", err)
	}
	for i := 0; ; i++ {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: schema.TopicNames()})
		gone := err == nil
		if err == nil {
			for _, tp := range md.Topics {
				if tp.Error == nil {
					gone = false
				}
			}
		}
		if gone {
			return
		}
		if i > 300 {
			t.Fatal("old topics are not going away")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func signingKey(t *testing.T) string {
	t.Helper()
	seed := sha256.Sum256([]byte("forum fault tests"))
	der, err := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "publication.key")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// proc is a child forum process; its output is kept (bounded) for failures
// and for waiting on progress lines.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

func startProc(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), env...)
	p := &proc{cmd: c, out: &syncBuffer{}, done: make(chan struct{})}
	c.Stdout, c.Stderr = p.out, p.out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = c.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	return p
}

func (p *proc) name() string { return strings.Join(p.cmd.Args[1:min(3, len(p.cmd.Args))], " ") }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) wait(limit time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(limit):
		return fmt.Errorf("still running after %s", limit)
	}
}

func (p *proc) signal(s os.Signal) { _ = p.cmd.Process.Signal(s) }

func (p *proc) kill() {
	p.signal(syscall.SIGKILL)
	<-p.done
}

func (p *proc) stop() {
	if p.exited() {
		return
	}
	p.signal(syscall.SIGCONT) // a paused process cannot shut down
	p.signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.kill()
	}
}

func (p *proc) output() string { return p.out.String() }

func (p *proc) tail() string {
	s := p.out.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

func (p *proc) waitOutput(sub string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if strings.Contains(p.out.String(), sub) {
			return true
		}
		if p.exited() {
			return strings.Contains(p.out.String(), sub)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// syncBuffer is a bytes.Buffer safe for the child's writers and the
// test's readers, keeping the last 1 MiB.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 {
		rest := s.b.Bytes()[s.b.Len()-(512<<10):]
		s.b = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// report collects every scenario's figures.
type report struct {
	mu     sync.Mutex
	outage time.Duration
	rows   []row
}

type row struct {
	scenario, faults, recover string
	messages                  int64
	rows, lost, duplicated    int
	absorbed                  int64
}

func (r *report) add(x row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, x)
}

func (r *report) print(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "| scenario | faults injected | messages on the bus | rows compared by id | lost | duplicated | redelivered rows absorbed | time to recover |\n|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, x := range r.rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %s |\n", x.scenario, x.faults, x.messages, x.rows, x.lost, x.duplicated, x.absorbed, x.recover)
	}
	t.Logf("fault figures (outage %s):\n%s", r.outage, b.String())
	if path := os.Getenv("FORUM_FAULT_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Errorf("FORUM_FAULT_REPORT: %v", err)
		}
	}
}
