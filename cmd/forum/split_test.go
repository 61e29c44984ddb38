package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/schema"
)

// TestIntegrationSplitRolesMatchEmbedded is the "results are data" test:
// the bundled snapshots go through split roles on a real Kafka broker and
// ClickHouse — a source process (forum ingest --role replay), forum
// process, and two forum serve replicas — and every GET route of the
// OpenAPI document, for a sample of servers, publications, evidence ids and
// queries, answers both replicas exactly as `forum replay --serve` on the
// embedded defaults (kfake + DuckDB) answers over the same input. Only the
// "$schema" links, which name the host asked, are left out of the
// comparison. A GET route of the document that the test does not ask fails
// it, so a new route cannot be forgotten.
func TestIntegrationSplitRolesMatchEmbedded(t *testing.T) {
	requireE2E(t)
	brokers := testenv.Service(t, "FORUM_TEST_KAFKA", "e.g. $(deploy/kafka.sh brokers)")
	dsn := testenv.Service(t, "FORUM_TEST_CLICKHOUSE", "e.g. $(deploy/clickhouse.sh dsn)")
	bin := forumBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	key := signingKey(t)
	env := []string{"FORUM_SIGNING_KEY=" + key, "FORUM_KAFKA_BROKERS=", "FORUM_CLICKHOUSE_DSN=", "FORUM_METHOD_WEIGHTS=", "FORUM_ADMIN_TOKEN="}

	// The reference: the whole pipeline in one process, embedded defaults.
	refAddr := freeAddr(t)
	ref := start(t, bin, env, "replay", "--snapshots", bundled, "--data-dir", t.TempDir(), "--serve", "--listen", refAddr, "--log-level", "warn")
	defer ref.stop()

	// Split roles on the real Kafka and ClickHouse, from an empty bus and
	// a database of their own.
	resetKafka(t, ctx, brokers)
	db := strings.TrimRight(dsn, "/") + fmt.Sprintf("/forum_split_%d", time.Now().UnixNano())
	t.Cleanup(func() { dropDatabase(dsn, db) })
	split := append(slices.Clone(env), "FORUM_KAFKA_BROKERS="+brokers, "FORUM_CLICKHOUSE_DSN="+db)
	if out, err := cmdWith(bin, split, "migrate").CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	procP := start(t, bin, split, "process", "--data-dir", t.TempDir(), "--log-level", "warn")
	defer procP.stop()
	a, b := freeAddr(t), freeAddr(t)
	serveA := start(t, bin, split, "serve", "--listen", a, "--data-dir", t.TempDir(), "--log-level", "warn")
	defer serveA.stop()
	serveB := start(t, bin, split, "serve", "--listen", b, "--data-dir", t.TempDir(), "--log-level", "warn")
	defer serveB.stop()
	if out, err := cmdWith(bin, split, "ingest", "--role", "replay", "--snapshots", bundled, "--data-dir", t.TempDir(), "--log-level", "warn").CombinedOutput(); err != nil {
		t.Fatalf("ingest --role replay: %v\n%s", err, out)
	}

	for _, s := range []struct {
		name, addr string
		p          *proc
	}{{"embedded", refAddr, ref}, {"replica A", a, serveA}, {"replica B", b, serveB}} {
		waitSettled(t, ctx, s.name, s.addr, 7, s.p, procP)
	}
	// The split pipeline has nothing left to do: every group of process
	// is caught up (upstream first).
	for _, spec := range component.List(component.RoleProcess) {
		if spec.Group == "" || len(spec.In) == 0 || !spec.On(component.Settings{}) {
			continue
		}
		if l, err := bus.Lag(ctx, strings.Split(brokers, ","), spec.Group, spec.In); err != nil || l != 0 {
			t.Fatalf("%s: lag %d (%v) after the API settled", spec.Name, l, err)
		}
	}

	urls, templates := routeSample(t, refAddr)
	asked := map[string]bool{}
	found := 0
	for _, u := range urls {
		asked[u.template] = true
		want := fetch(t, refAddr, u.path)
		if want.status == http.StatusOK {
			found++
		}
		for _, r := range []struct{ name, addr string }{{"replica A", a}, {"replica B", b}} {
			got := fetch(t, r.addr, u.path)
			if got.status != want.status || !bytes.Equal(got.body, want.body) {
				t.Errorf("%s GET %s: %d %s\nembedded: %d %s", r.name, u.path, got.status, clip(got.body), want.status, clip(want.body))
			}
		}
	}
	for _, tpl := range templates {
		if !asked[tpl] {
			t.Errorf("GET %s is in the OpenAPI document but the comparison never asks it", tpl)
		}
	}
	// Most of the sample must answer 200: a comparison of 404s proves little.
	if found < len(urls)*3/4 {
		t.Errorf("only %d of %d requests answered 200 on the embedded pipeline", found, len(urls))
	}
	t.Logf("compared %d GET requests (%d answered 200) over %d routes on two replicas", len(urls), found, len(templates))
}

// proc is a child forum process with its output kept for failures.
type proc struct {
	cmd *exec.Cmd
	out *bytes.Buffer
	t   *testing.T
}

func start(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: cmdWith(bin, env, args...), out: &bytes.Buffer{}, t: t}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *proc) stop() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	}
}

func (p *proc) exited() bool {
	return p.cmd.ProcessState != nil
}

func cmdWith(bin string, env []string, args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), env...)
	return c
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

// signingKey writes one Ed25519 key (mode 0600) both pipelines sign with,
// so their publications, signatures and /v1/keys can be compared.
func signingKey(t *testing.T) string {
	t.Helper()
	seed := sha256.Sum256([]byte("forum split-roles test"))
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

// resetKafka deletes the pipeline's topics so the run starts from an empty
// bus also on a broker that served an earlier test.
func resetKafka(t *testing.T, ctx context.Context, brokers string) {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(strings.Split(brokers, ",")...), Timeout: 10 * time.Second}
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
		if i > 150 {
			t.Fatal("old topics are not going away")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func dropDatabase(dsn, db string) {
	opts, err := ch.ParseDSN(dsn)
	if err != nil {
		return
	}
	c, err := ch.Open(opts)
	if err != nil {
		return
	}
	defer c.Close()
	_ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db[strings.LastIndex(db, "/")+1:])
}

// waitSettled waits until the API at addr is ready, lists n publications,
// and its search index serves the newest.
func waitSettled(t *testing.T, ctx context.Context, name, addr string, n int, procs ...*proc) {
	t.Helper()
	deadline := time.Now().Add(6 * time.Minute)
	for {
		for _, p := range procs {
			if p.exited() {
				t.Fatalf("%s: a process exited on its own:\n%s", name, p.out.String())
			}
		}
		var pubs struct {
			Publications []struct {
				ID string `json:"publication_id"`
			} `json:"publications"`
		}
		var lb struct {
			PublicationID string `json:"publication_id"`
		}
		r := fetch(t, addr, "/v1/publications")
		if r.status == 200 && json.Unmarshal(r.body, &pubs) == nil && len(pubs.Publications) == n {
			l := fetch(t, addr, "/v1/leaderboard")
			if l.status == 200 && json.Unmarshal(l.body, &lb) == nil && lb.PublicationID == pubs.Publications[0].ID &&
				fetch(t, addr, "/readyz").status == 200 {
				return
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			var logs []string
			for _, p := range procs {
				logs = append(logs, p.out.String())
			}
			t.Fatalf("%s never settled (%d %s):\n%s", name, r.status, clip(r.body), strings.Join(logs, "\n----\n"))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

type response struct {
	status int
	body   []byte
}

var schemaLink = regexp.MustCompile(`"\$schema":"[^"]*",?`)

// fetch GETs a path; JSON bodies lose their "$schema" link (it names the
// host asked) and are compared as sent otherwise.
func fetch(t *testing.T, addr, path string) response {
	t.Helper()
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		return response{status: -1, body: []byte(err.Error())}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if strings.Contains(res.Header.Get("Content-Type"), "json") {
		b = schemaLink.ReplaceAll(b, nil)
	}
	return response{status: res.StatusCode, body: b}
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

type sampled struct{ template, path string }

// routeSample reads the OpenAPI document and builds concrete requests for
// every GET route: a sample of servers (the first ones, the flagged burst
// namespace's, servers with drift), every publication, evidence ids of the
// records, every export table, a few searches.
func routeSample(t *testing.T, addr string) ([]sampled, []string) {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	r := fetch(t, addr, "/openapi.json")
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("openapi: %v", err)
	}
	var templates []string
	for p, ops := range doc.Paths {
		if _, ok := ops["get"]; ok {
			templates = append(templates, p)
		}
	}
	sort.Strings(templates)

	var list struct {
		Servers []struct {
			Name string `json:"name"`
		} `json:"servers"`
	}
	_ = json.Unmarshal(fetch(t, addr, "/v1/servers?limit=1000").body, &list)
	var names []string
	for i, s := range list.Servers {
		if i < 6 || i%97 == 0 || strings.HasPrefix(s.Name, "ai.smithery/") && len(names) < 20 {
			names = append(names, s.Name)
		}
	}
	var evs struct {
		Events []struct {
			ID     string `json:"id"`
			Server string `json:"server"`
			Kind   string `json:"kind"`
		} `json:"events"`
	}
	_ = json.Unmarshal(fetch(t, addr, "/v1/events?limit=10000").body, &evs)
	for _, e := range evs.Events {
		if e.Kind != schema.KindNewServer && e.Kind != schema.KindVersionAdded && !slices.Contains(names, e.Server) {
			names = append(names, e.Server)
		}
	}
	var pubs struct {
		Publications []struct {
			ID string `json:"publication_id"`
		} `json:"publications"`
	}
	_ = json.Unmarshal(fetch(t, addr, "/v1/publications").body, &pubs)
	// Evidence ids from the records of the sample.
	evidence := map[string]bool{}
	idRe := regexp.MustCompile(`"uri":"/v1/evidence/([^"]+)"`)
	for _, n := range names {
		for _, m := range idRe.FindAllSubmatch(fetch(t, addr, "/v1/servers/"+url.PathEscape(n)+"/trust").body, -1) {
			if len(evidence) < 40 {
				evidence[string(m[1])] = true
			}
		}
	}
	var out []sampled
	add := func(tpl, path string) { out = append(out, sampled{tpl, path}) }
	for _, tpl := range templates {
		switch {
		case strings.Contains(tpl, "{name}"):
			for _, n := range append(slices.Clone(names), "no.such/server") {
				p := strings.ReplaceAll(tpl, "{name}", url.PathEscape(n))
				add(tpl, p)
				if strings.HasSuffix(tpl, "/proof") {
					for _, pub := range pubs.Publications {
						add(tpl, p+"?publication="+url.QueryEscape(pub.ID))
					}
				}
			}
		case strings.Contains(tpl, "{id}") && strings.HasPrefix(tpl, "/v1/publications"):
			for _, pub := range append(pubs.Publications, struct {
				ID string `json:"publication_id"`
			}{"latest"}, struct {
				ID string `json:"publication_id"`
			}{"pub-none"}) {
				add(tpl, strings.ReplaceAll(tpl, "{id}", url.PathEscape(pub.ID)))
			}
		case strings.Contains(tpl, "{id}") && strings.HasPrefix(tpl, "/v1/evidence"):
			ids := []string{"nope"}
			for id := range evidence {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				add(tpl, strings.ReplaceAll(tpl, "{id}", id)) // already escaped as the record has it
			}
		case strings.Contains(tpl, "{table}"):
			for _, tb := range []string{"trust_records", "health_checks", "drift_events", "provenance"} {
				add(tpl, strings.ReplaceAll(tpl, "{table}", tb))
			}
		case tpl == "/v1/search":
			for _, q := range []string{"github", "database postgres", "weather", "stripe payments", "zzzzqqq"} {
				add(tpl, tpl+"?q="+url.QueryEscape(q)+"&limit=25")
			}
		case tpl == "/v1/servers":
			add(tpl, tpl+"?limit=1000")
			add(tpl, tpl+"?limit=7&cursor="+url.QueryEscape(names[0]))
			add(tpl, tpl+"?namespace=ai.smithery")
		case tpl == "/v1/provenance/observation":
			add(tpl, tpl+"?repo=github.com/nobody/none")
		case tpl == "/v1/owner-bursts":
			add(tpl, tpl)
			add(tpl, tpl+"?day=2025-10-07")
		case tpl == "/v1/events":
			add(tpl, tpl+"?limit=10000")
			add(tpl, tpl+"?kind=removed")
		case tpl == "/v1/leaderboard":
			add(tpl, tpl+"?limit=100")
			add(tpl, tpl+"?category=databases")
		default:
			add(tpl, tpl)
		}
	}
	return out, templates
}
