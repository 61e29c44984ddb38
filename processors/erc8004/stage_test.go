package erc8004

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/processors/erc8004/testchain"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The servers of the bundled snapshots the tests map to agents: two whose
// score changes (one of them within a day of its last feedback, so the
// daily allowance defers it), one that never changes.
const (
	changing      = "app.zenable/zenable"     // config file
	discovered    = "com.supabase/mcp"        // its agent's registration file names its remote
	unchanged     = "ai.waystation/teams"     // config file
	ambiguous     = "com.docfork/docfork-mcp" // two agents claim its remote: mapped to neither
	methodVersion = "0.1.0-draft5"
)

func registration(endpoints ...string) string { return registrationOf(nil, "", endpoints...) }

// registrationOf is a registration file naming agent id of registry (none
// when id is nil) with MCP endpoints, as a data: URI.
func registrationOf(id *big.Int, registry string, endpoints ...string) string {
	var svc []Service
	for _, e := range endpoints {
		svc = append(svc, Service{Name: "MCP", Endpoint: e, Version: "2025-06-18"})
	}
	reg := map[string]any{"type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1", "name": "test agent", "services": svc}
	if id != nil {
		reg["registrations"] = []map[string]any{{"agentId": id, "agentRegistry": fmt.Sprintf("eip155:%d:%s", testchain.ChainID, registry)}}
	}
	b, _ := json.Marshal(reg)
	return "data:application/json;base64," + base64.StdEncoding.EncodeToString(b)
}

// mapped sets the agents up on a chain: config-file agents for changing and
// unchanged, a registration file for discovered (and a copy of it under
// another agent), two claims on ambiguous's remote, and one agent whose
// endpoint no server has.
func mapped(t *testing.T, e *env, st Store) (map[string]Agent, map[string]*big.Int) {
	t.Helper()
	ids := map[string]*big.Int{
		changing:   e.register(t, e.tc.Key(1), ""),
		unchanged:  e.register(t, e.tc.Key(2), ""),
		discovered: e.register(t, e.tc.Key(3), ""),
	}
	// The discovered agent's file names it back (set after registering, as
	// an agent learns its id: a URIUpdated event); a copy of that file
	// under another agent names the first, so it maps nothing.
	own := registrationOf(ids[discovered], e.tc.Identity.Hex(), remotesIn(t, st, discovered)[0])
	if err := e.tc.SetAgentURI(e.ctx, e.tc.Key(3), ids[discovered], own); err != nil {
		t.Fatal(err)
	}
	e.register(t, e.tc.Key(2), own)
	e.register(t, e.tc.Key(1), registration(remotesIn(t, st, ambiguous)[0]))
	e.register(t, e.tc.Key(2), registration(remotesIn(t, st, ambiguous)[0], "https://also.example/mcp"))
	e.register(t, e.tc.Key(3), registration("https://nobody.example/mcp"))
	cfg := fmt.Sprintf(`{"agents": [{"server": %q, "agent_id": "%s"}, {"server": %q, "agent_id": %s}]}`, changing, ids[changing], unchanged, ids[unchanged])
	agents, err := ParseAgents([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return agents, ids
}

func newStage(t *testing.T, e *env, st Store, agents map[string]Agent) *Stage {
	c := e.committer(t)
	return &Stage{Store: st, Committer: c, Agents: agents, Discovery: &Discovery{Chain: c.Chain, Fetcher: &Fetcher{}}, Log: zaptest.NewLogger(t)}
}

type nopDLQ struct{}

func (nopDLQ) WriteMessages(context.Context, ...kafka.Message) error { return nil }

// run feeds publication headers through the stage's bus shape, one batch
// per header, as its consumer group would.
func run(t *testing.T, s *Stage, headers []schema.PublicationMsg) {
	t.Helper()
	cfg := s.Config(nil, nil)
	cfg.DLQ = nopDLQ{}
	sg, err := stage.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range headers {
		b, _ := json.Marshal(h)
		if err := sg.Handle(context.Background(), []kafka.Message{{Topic: schema.TopicTrustPublications, Offset: int64(i), Key: []byte(h.ID), Value: b}}); err != nil {
			t.Fatalf("publication %s: %v", h.ID, err)
		}
	}
}

// TestStageCommitsBundledSnapshots is the acceptance test: the
// bundled snapshots' publications, three servers mapped to agents (two by
// the config file, one through the Identity Registry): after each
// publication, one NewFeedback per mapped server whose score or band
// changed (at most once a day; a server's first feedback counts as a
// change), with the record's rounded score and content_sha256, and none
// for the others; nothing for unmapped servers. A rerun — with the local
// log, and with it gone — sends nothing.
func TestStageCommitsBundledSnapshots(t *testing.T) {
	st, headers := published(t)
	if len(headers) != 7 {
		t.Fatalf("%d publications of the bundled snapshots, want 7", len(headers))
	}
	e := newEnv(t)
	e.tc.Mine(10 * time.Millisecond)
	agents, ids := mapped(t, e, st)
	ex := map[string]expectation{}
	for _, s := range []string{changing, discovered, unchanged} {
		ex[s] = expect(t, st, headers, s)
	}
	if ex[unchanged].changes != 0 || ex[changing].changes == 0 || ex[discovered].changes == 0 || ex[changing].deferred+ex[discovered].deferred == 0 {
		t.Fatalf("the fixture no longer has a changing, a deferred and an unchanged server: %+v", ex)
	}
	// The endpoint: for a config-file agent, the first remote of the entry
	// the record scored (zenable moved its endpoint between snapshots); for
	// a discovered one, the remote its registration file names.
	endpoint := func(server string, rec *store.TrustRecord) string {
		if server == discovered {
			return remotesIn(t, st, discovered)[0]
		}
		var r struct {
			Registry struct {
				ContentSHA256 string `json:"content_sha256"`
			} `json:"registry"`
		}
		if err := json.Unmarshal([]byte(rec.Record), &r); err != nil {
			t.Fatal(err)
		}
		vers, _ := st.Versions(context.Background(), server, store.MaxEventLimit)
		for _, v := range vers {
			if v.ContentSHA256 == r.Registry.ContentSHA256 {
				return remotesOf(v.Server)[0]
			}
		}
		t.Fatalf("%s: no stored entry %s", server, r.Registry.ContentSHA256)
		return ""
	}

	s := newStage(t, e, st, agents)
	seen := 0
	for i, h := range headers {
		run(t, s, headers[i:i+1])
		evs := e.events(t)[seen:]
		seen += len(evs)
		got := map[string]*testchain.ReputationRegistryNewFeedback{}
		for _, ev := range evs {
			server := ""
			for name, id := range ids {
				if id.Cmp(ev.AgentId) == 0 {
					server = name
				}
			}
			if server == "" {
				t.Errorf("%s: feedback for agent %s, which maps no server", h.ID, ev.AgentId)
				continue
			}
			if got[server] != nil {
				t.Errorf("%s: two feedbacks for %s", h.ID, server)
			}
			got[server] = ev
		}
		for server, x := range ex {
			want, ev := x.sends[i], got[server]
			switch {
			case want == nil && ev != nil:
				t.Errorf("%s: feedback for %s (score %d), whose score and band did not change (or changed within a day)", h.ID, server, ev.Score)
			case want != nil && ev == nil:
				t.Errorf("%s: no feedback for %s, whose score or band changed (%v %s)", h.ID, server, *want.Score, want.Band)
			case want != nil:
				hash, _ := HashOf(want.ContentSHA256)
				if ev.Score != uint8(math.Round(*want.Score)) || ev.FeedbackHash != hash || ev.Tag1 != "forum-trust" || ev.Tag2 != methodVersion ||
					ev.Endpoint != endpoint(server, want) || ev.FeedbackURI != FeedbackURI("https://api.test", server, h.ID) {
					t.Errorf("%s: feedback for %s: %+v; want score %v, hash %s, endpoint %s", h.ID, server, ev, *want.Score, want.ContentSHA256, endpoint(server, want))
				}
			}
		}
	}
	total := 0
	for _, x := range ex {
		for _, r := range x.sends {
			if r != nil {
				total++
			}
		}
	}
	if seen != total || total < 5 {
		t.Errorf("%d events, want %d", seen, total)
	}
	if n := countFor(e.events(t), ids[unchanged]); n != 1 {
		t.Errorf("the unchanged server got %d feedbacks, want its first only", n)
	}

	// A rerun of every publication: a restarted committer over the same log.
	run(t, newStage(t, e, st, agents), headers)
	// And with the local log gone: the chain's events say what is there.
	if err := os.Remove(filepath.Join(e.dir, LogFile)); err != nil {
		t.Fatal(err)
	}
	run(t, newStage(t, e, st, agents), headers)
	if n := len(e.events(t)); n != total {
		t.Errorf("after two reruns: %d events, want still %d", n, total)
	}
}

func countFor(evs []*testchain.ReputationRegistryNewFeedback, id *big.Int) int {
	n := 0
	for _, ev := range evs {
		if ev.AgentId.Cmp(id) == 0 {
			n++
		}
	}
	return n
}

// A record whose content_sha256 is not its content is never committed.
func TestStageSkipsATamperedRecord(t *testing.T) {
	st, headers := published(t)
	e := newEnv(t)
	e.tc.Mine(10 * time.Millisecond)
	agents, _ := mapped(t, e, st)
	s := newStage(t, e, tampered{Store: st, server: changing}, agents)
	run(t, s, headers[:1])
	for _, ev := range e.events(t) {
		if ev.AgentId.Cmp(agents[changing].AgentID) == 0 {
			t.Errorf("a tampered record was committed: %+v", ev)
		}
	}
	if len(e.events(t)) != 2 {
		t.Errorf("%d events, want 2 (the other two servers)", len(e.events(t)))
	}
}

type tampered struct {
	Store
	server string
}

func (s tampered) TrustRecordIn(ctx context.Context, server, pub string) (rec store.TrustRecord, err error) {
	rec, err = s.Store.TrustRecordIn(ctx, server, pub)
	if err == nil && server == s.server {
		rec.Record = strings.Replace(rec.Record, `"band":"`, `"band":"A`, 1)
	}
	return rec, err
}
