package erc8004

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/processors/erc8004/testchain"
)

// env is a simulated chain with the test registries, a committer account
// (key 0) and agent owners (keys 1..3).
type env struct {
	tc    *testchain.Chain
	key   *ecdsa.PrivateKey
	dir   string
	ctx   context.Context
	flaky *flakyBackend // nil: the simulated client as it is
}

func newEnv(t *testing.T) *env {
	t.Helper()
	tc, err := testchain.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	return &env{tc: tc, key: tc.Key(0), dir: t.TempDir(), ctx: context.Background()}
}

func (e *env) chain(t *testing.T) *Chain {
	t.Helper()
	var b Backend = e.tc.Client
	if e.flaky != nil {
		e.flaky.Backend = e.tc.Client
		b = e.flaky
	}
	ch, err := NewChain(e.ctx, b, testchain.ChainID, e.tc.Reputation, common.Address{}, e.key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Identity != e.tc.Identity {
		t.Fatalf("identity registry %s, want %s (from getIdentityRegistry)", ch.Identity, e.tc.Identity)
	}
	return ch
}

// committer is a fresh committer over the env's log: a restart.
func (e *env) committer(t *testing.T) *Committer {
	return &Committer{Chain: e.chain(t), Log: &Log{Path: filepath.Join(e.dir, LogFile)}, Tag1: "forum-trust", APIBase: "https://api.test",
		Poll: 10 * time.Millisecond, Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Metrics: NewMetrics(nil), Logger: zaptest.NewLogger(t)}
}

func (e *env) register(t *testing.T, owner *ecdsa.PrivateKey, uri string) *big.Int {
	t.Helper()
	id, err := e.tc.Register(e.ctx, owner, uri)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *env) events(t *testing.T) []*testchain.ReputationRegistryNewFeedback {
	t.Helper()
	evs, err := e.tc.Feedback(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func (e *env) nonce(t *testing.T) uint64 {
	t.Helper()
	n, err := e.tc.Client.PendingNonceAt(e.ctx, testchain.Addr(e.key))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func candidate(server string, score float64, band string, at time.Time, hash string) Candidate {
	return Candidate{Server: server, PublicationID: "pub-" + at.Format("20060102T150405Z"), ComputedAt: at, Score: &score, Band: band,
		ContentSHA256: hash, MethodVersion: "0.1.0-draft5", Remotes: []string{"https://" + strings.ReplaceAll(server, "/", ".") + "/mcp"}}
}

func hashN(n int) string { return fmt.Sprintf("%064x", n+1) }

var t0 = time.Date(2025, 10, 1, 20, 0, 0, 0, time.UTC)

// One feedback, with every field as specified; the same record again, after
// a restart, and with the local log gone, sends nothing more.
func TestCommitSendsOnce(t *testing.T) {
	e := newEnv(t)
	e.tc.Mine(10 * time.Millisecond)
	id := e.register(t, e.tc.Key(1), "")
	a := Agent{Server: "com.example/weather", AgentID: id}
	cand := candidate(a.Server, 87.4, "B", t0, hashN(1))

	c := e.committer(t)
	if out, err := c.Commit(e.ctx, a, cand); err != nil || out != Sent {
		t.Fatalf("first commit: %s, %v", out, err)
	}
	if out, err := c.Commit(e.ctx, a, cand); err != nil || out != Already {
		t.Fatalf("same record again: %s, %v", out, err)
	}
	if out, err := e.committer(t).Commit(e.ctx, a, cand); err != nil || out != Already {
		t.Fatalf("after a restart: %s, %v", out, err)
	}
	if err := os.Remove(filepath.Join(e.dir, LogFile)); err != nil {
		t.Fatal(err)
	}
	if out, err := e.committer(t).Commit(e.ctx, a, cand); err != nil || out != Already {
		t.Fatalf("with the local log gone (found among the chain's events): %s, %v", out, err)
	}
	evs := e.events(t)
	if len(evs) != 1 {
		t.Fatalf("%d NewFeedback events, want 1", len(evs))
	}
	ev := evs[0]
	want, _ := HashOf(cand.ContentSHA256)
	if ev.AgentId.Cmp(id) != 0 || ev.ClientAddress != testchain.Addr(e.key) || ev.Score != 87 || ev.Tag1 != "forum-trust" || ev.Tag2 != "0.1.0-draft5" ||
		ev.Endpoint != "https://com.example.weather/mcp" || ev.FeedbackHash != want || ev.FeedbackIndex != 1 ||
		ev.FeedbackURI != "https://api.test/v1/servers/com.example%2Fweather/proof?publication=pub-20251001T200000Z" {
		t.Errorf("event %+v", ev)
	}
	// The registry's own read side agrees.
	rep := testchain.NewReputationRegistry()
	out, err := e.tc.Call(e.ctx, e.tc.Reputation, rep.PackReadFeedback(id, testchain.Addr(e.key), 1))
	if err != nil {
		t.Fatal(err)
	}
	if fb, err := rep.UnpackReadFeedback(out); err != nil || fb.Score != 87 || fb.Tag1 != "forum-trust" || fb.IsRevoked {
		t.Errorf("readFeedback: %+v, %v", fb, err)
	}
}

// The change rule end to end: unchanged records and changes within a day
// send nothing; a change a day later sends one.
func TestCommitChangeRule(t *testing.T) {
	e := newEnv(t)
	e.tc.Mine(10 * time.Millisecond)
	a := Agent{Server: "com.example/weather", AgentID: e.register(t, e.tc.Key(1), "")}
	c := e.committer(t)
	steps := []struct {
		score float64
		band  string
		at    time.Duration
		want  string
	}{
		{87, "B", 0, Sent},
		{87.2, "B", time.Hour, Unchanged},
		{70, "C", 2 * time.Hour, TooSoon},
		{70, "C", 25 * time.Hour, Sent},
		{70, "C", 30 * time.Hour, Unchanged},
		{70, "D", 40 * time.Hour, TooSoon},
		{70, "D", 49 * time.Hour, Sent},
	}
	for i, s := range steps {
		out, err := c.Commit(e.ctx, a, candidate(a.Server, s.score, s.band, t0.Add(s.at), hashN(i)))
		if err != nil || out != s.want {
			t.Errorf("step %d (%v %s at +%s): %s, %v; want %s", i, s.score, s.band, s.at, out, err, s.want)
		}
	}
	if n := len(e.events(t)); n != 3 {
		t.Errorf("%d events, want 3", n)
	}
}

// A score above 100 and a self-rating are refused before anything is
// signed: the account's nonce does not move and no event is emitted.
func TestCommitRefusesBeforeSending(t *testing.T) {
	e := newEnv(t)
	e.tc.Mine(10 * time.Millisecond)
	me := testchain.Addr(e.key)
	other := e.register(t, e.tc.Key(1), "")
	own := e.register(t, e.key, "")            // owned by the committer
	approved := e.register(t, e.tc.Key(2), "") // the committer is its approved address
	operated := e.register(t, e.tc.Key(3), "") // the committer operates its owner's agents
	if err := e.tc.Approve(e.ctx, e.tc.Key(2), me, approved); err != nil {
		t.Fatal(err)
	}
	if err := e.tc.SetApprovalForAll(e.ctx, e.tc.Key(3), me); err != nil {
		t.Fatal(err)
	}
	c := e.committer(t)
	before := e.nonce(t)
	for i, tc := range []struct {
		agent  *big.Int
		score  float64
		reason string
	}{
		{other, 150, ReasonScoreRange},
		{other, 100.6, ReasonScoreRange},
		{own, 80, ReasonSelfRating},
		{approved, 80, ReasonSelfRating},
		{operated, 80, ReasonSelfRating},
		{big.NewInt(999), 80, ReasonNoAgent},
	} {
		a := Agent{Server: fmt.Sprintf("com.example/s%d", i), AgentID: tc.agent}
		out, err := c.Commit(e.ctx, a, candidate(a.Server, tc.score, "B", t0, hashN(i)))
		var r *Refusal
		if out != Refused || !errors.As(err, &r) || r.Reason != tc.reason {
			t.Errorf("case %d: %s, %v; want refused %s", i, out, err, tc.reason)
		}
	}
	if n := e.nonce(t); n != before {
		t.Errorf("the committer's nonce moved from %d to %d: something was sent", before, n)
	}
	if n := len(e.events(t)); n != 0 {
		t.Errorf("%d events after refusals", n)
	}
	// The registry itself would refuse both, so the checks are the
	// registry's rules, applied before gas is spent.
	rep := testchain.NewReputationRegistry()
	var h [32]byte
	if _, err := e.tc.Transact(e.ctx, e.tc.Key(1), e.tc.Reputation, rep.PackGiveFeedback(other, 150, "", "", "", "", h)); err == nil {
		t.Error("the registry took a score of 150")
	}
	if _, err := e.tc.Transact(e.ctx, e.tc.Key(1), e.tc.Reputation, rep.PackGiveFeedback(other, 50, "", "", "", "", h)); err == nil {
		t.Error("the registry took a self-rating from the agent's owner")
	}
	// A refusal is logged, and a restart does not try the same record again.
	es, _ := (&Log{Path: filepath.Join(e.dir, LogFile)}).Entries()
	if len(es) != 6 || es[0].Kind != KindRefused {
		t.Errorf("log after refusals: %+v", es)
	}
	a := Agent{Server: "com.example/s2", AgentID: own}
	if out, err := e.committer(t).Commit(e.ctx, a, candidate(a.Server, 80, "B", t0, hashN(2))); out != Skipped || err != nil {
		t.Errorf("a refused record after a restart: %s, %v", out, err)
	}
}

// flakyBackend fails the first failSends broadcasts, like an RPC endpoint
// that drops connections.
type flakyBackend struct {
	Backend
	failSends atomic.Int32
	sends     atomic.Int32
}

func (f *flakyBackend) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	f.sends.Add(1)
	if f.failSends.Add(-1) >= 0 {
		return errors.New("dial tcp 127.0.0.1:8545: connect: connection refused")
	}
	return f.Backend.SendTransaction(ctx, tx)
}

// A failed broadcast is retried with back-off, with the same signed bytes:
// one transaction, one event.
func TestCommitRetriesAFailedBroadcast(t *testing.T) {
	e := newEnv(t)
	e.tc.Mine(10 * time.Millisecond)
	a := Agent{Server: "com.example/weather", AgentID: e.register(t, e.tc.Key(1), "")}
	e.flaky = &flakyBackend{}
	e.flaky.failSends.Store(3)
	c := e.committer(t)
	out, err := c.Commit(e.ctx, a, candidate(a.Server, 64, "C", t0, hashN(1)))
	if err != nil || out != Sent {
		t.Fatalf("commit through a flaky endpoint: %s, %v", out, err)
	}
	if n := len(e.events(t)); n != 1 {
		t.Errorf("%d events, want 1", n)
	}
	if n := e.nonce(t); n != 1 {
		t.Errorf("nonce %d: one transaction wanted", n)
	}
	if s := e.flaky.sends.Load(); s != 4 {
		t.Errorf("%d broadcasts, want 3 failed + 1", s)
	}
	es, _ := c.Log.Entries()
	sent := 0
	for _, x := range es {
		if x.Kind == KindSent {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("%d transactions signed, want 1 (a retry re-sends the same bytes)", sent)
	}
}

// A transaction that is not mined in time is replaced with higher fees
// (same nonce): whichever lands, one event.
func TestCommitBumpsAStuckTransaction(t *testing.T) {
	e := newEnv(t)
	a := Agent{Server: "com.example/weather", AgentID: e.register(t, e.tc.Key(1), "")}
	c := e.committer(t)
	c.ReceiptTimeout = 200 * time.Millisecond
	var logged atomic.Int32
	c.afterLog = func(*types.Transaction) {
		if logged.Add(1) == 2 { // the replacement is signed: let the chain move
			e.tc.Mine(10 * time.Millisecond)
		}
	}
	out, err := c.Commit(e.ctx, a, candidate(a.Server, 64, "C", t0, hashN(1)))
	if err != nil || out != Sent {
		t.Fatalf("commit: %s, %v", out, err)
	}
	es, _ := c.Log.Entries()
	var nonces []uint64
	for _, x := range es {
		if x.Kind == KindSent {
			nonces = append(nonces, x.Nonce)
		}
	}
	if len(nonces) != 2 || nonces[0] != nonces[1] {
		t.Errorf("sent entries with nonces %v, want two with one nonce", nonces)
	}
	if n := len(e.events(t)); n != 1 {
		t.Errorf("%d events, want 1", n)
	}
}

type crash struct{}

// A crash right after the signed transaction is logged (not broadcast) or
// right after it is broadcast (not known mined): the restart finishes that
// transaction and signs no other.
func TestCommitResumesAfterACrash(t *testing.T) {
	for _, at := range []string{"after-log", "after-send"} {
		t.Run(at, func(t *testing.T) {
			e := newEnv(t)
			e.tc.Mine(10 * time.Millisecond)
			a := Agent{Server: "com.example/weather", AgentID: e.register(t, e.tc.Key(1), "")}
			cand := candidate(a.Server, 64, "C", t0, hashN(1))
			c := e.committer(t)
			hook := func(*types.Transaction) { panic(crash{}) }
			if at == "after-log" {
				c.afterLog = hook
			} else {
				c.afterSend = hook
			}
			func() {
				defer func() {
					if r := recover(); r != (crash{}) {
						t.Fatalf("no crash: %v", r)
					}
				}()
				_, _ = c.Commit(e.ctx, a, cand)
			}()
			r := e.committer(t)
			if err := r.Open(e.ctx); err != nil {
				t.Fatal(err)
			}
			if out, err := r.Commit(e.ctx, a, cand); err != nil || out != Already {
				t.Fatalf("after the restart: %s, %v", out, err)
			}
			if n := len(e.events(t)); n != 1 {
				t.Errorf("%d events, want 1", n)
			}
			if n := e.nonce(t); n != 1 {
				t.Errorf("nonce %d, want 1", n)
			}
		})
	}
}

// A dry run prints the call and sends nothing.
func TestCommitDryRun(t *testing.T) {
	var out strings.Builder
	c := &Committer{DryRun: &out, Tag1: "forum-trust", APIBase: "https://api.forumtrust.ai"}
	a := Agent{Server: "com.example/weather", AgentID: big.NewInt(42), Endpoint: "https://weather.example/mcp"}
	if o, err := c.Commit(context.Background(), a, candidate(a.Server, 87, "B", t0, hashN(1))); err != nil || o != DryRun {
		t.Fatalf("dry run: %s, %v", o, err)
	}
	if o, _ := c.Commit(context.Background(), a, candidate(a.Server, 87, "B", t0.Add(time.Hour), hashN(2))); o != Unchanged {
		t.Errorf("the dry run keeps its state: %s", o)
	}
	want := `dry-run: giveFeedback(agentId=42, score=87, tag1="forum-trust", tag2="0.1.0-draft5", endpoint="https://weather.example/mcp", ` +
		`feedbackURI="https://api.forumtrust.ai/v1/servers/com.example%2Fweather/proof?publication=pub-20251001T200000Z", feedbackHash=0x` + hashN(1) + `)  # com.example/weather, band B, publication pub-20251001T200000Z` + "\n"
	if out.String() != want {
		t.Errorf("dry run printed\n%s\nwant\n%s", out.String(), want)
	}
}
