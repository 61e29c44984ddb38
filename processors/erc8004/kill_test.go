package erc8004

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/processors/erc8004/testchain"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The child process of the SIGKILL test: this test binary, run with
// helperEnv naming a job file. It runs the stage over the job's
// publications against the parent's chain (JSON-RPC on loopback), keeping
// its consumer position in a file the way the consumer group commits an
// offset after each batch; a crash point makes it stop dead (print
// crashMarker, then hang until killed) right after its Nth transaction is
// logged or broadcast.
const (
	helperEnv   = "FORUM_ERC8004_HELPER"
	crashMarker = "CRASH-POINT"
)

type helperJob struct {
	RPC        string                  `json:"rpc"`
	Reputation string                  `json:"reputation"`
	Key        string                  `json:"key"`
	DataDir    string                  `json:"data_dir"`
	Agents     string                  `json:"agents"` // an agents file's content
	Headers    []schema.PublicationMsg `json:"headers"`
	Store      *memStore               `json:"store"`
	// Crash is "after-log:N" or "after-send:N" (N counts this run's
	// transactions from 1), or "".
	Crash string `json:"crash"`
}

// memStore is the part of the store the stage reads, dumped to a file for
// the child (DuckDB allows one process).
type memStore struct {
	Pubs    map[string]store.Publication `json:"pubs"`
	Records map[string]store.TrustRecord `json:"records"` // server + "|" + publication
	Vers    map[string][]store.Record    `json:"versions"`
}

func (m *memStore) GetPublication(_ context.Context, id string) (store.Publication, error) {
	if p, ok := m.Pubs[id]; ok {
		return p, nil
	}
	return store.Publication{}, store.ErrNotFound
}

func (m *memStore) TrustRecordIn(_ context.Context, server, pub string) (store.TrustRecord, error) {
	if r, ok := m.Records[server+"|"+pub]; ok {
		return r, nil
	}
	return store.TrustRecord{}, store.ErrNotFound
}

func (m *memStore) Versions(_ context.Context, name string, _ int) ([]store.Record, error) {
	return m.Vers[name], nil
}

func (m *memStore) ListServers(context.Context, store.ListQuery) ([]store.ServerRow, error) {
	return nil, nil
}

func dump(t *testing.T, st Store, headers []schema.PublicationMsg, servers []string) *memStore {
	t.Helper()
	ctx := context.Background()
	m := &memStore{Pubs: map[string]store.Publication{}, Records: map[string]store.TrustRecord{}, Vers: map[string][]store.Record{}}
	for _, h := range headers {
		p, err := st.GetPublication(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		m.Pubs[h.ID] = p
		for _, s := range servers {
			if r, err := st.TrustRecordIn(ctx, s, h.ID); err == nil {
				m.Records[s+"|"+h.ID] = r
			}
		}
	}
	for _, s := range servers {
		v, err := st.Versions(ctx, s, store.MaxEventLimit)
		if err != nil {
			t.Fatal(err)
		}
		m.Vers[s] = v
	}
	return m
}

func helperMain() int {
	if err := helper(os.Getenv(helperEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

func helper(jobFile string) error {
	b, err := os.ReadFile(jobFile)
	if err != nil {
		return err
	}
	var job helperJob
	if err := json.Unmarshal(b, &job); err != nil {
		return err
	}
	ctx := context.Background()
	cl, err := ethclient.DialContext(ctx, job.RPC)
	if err != nil {
		return err
	}
	key, err := crypto.HexToECDSA(job.Key)
	if err != nil {
		return err
	}
	ch, err := NewChain(ctx, cl, testchain.ChainID, common.HexToAddress(job.Reputation), common.Address{}, key, 0)
	if err != nil {
		return err
	}
	agents, err := ParseAgents([]byte(job.Agents))
	if err != nil {
		return err
	}
	log, _ := zap.NewDevelopment()
	c := &Committer{Chain: ch, Log: &Log{Path: filepath.Join(job.DataDir, LogFile)}, Tag1: "forum-trust", APIBase: "https://api.test",
		Poll: 10 * time.Millisecond, Backoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: log}
	if kind, n, ok := strings.Cut(job.Crash, ":"); ok {
		want, _ := strconv.Atoi(n)
		var count atomic.Int32
		hook := func(*types.Transaction) {
			if int(count.Add(1)) == want {
				fmt.Println(crashMarker)
				select {} // dead until killed
			}
		}
		if kind == "after-log" {
			c.afterLog = hook
		} else {
			c.afterSend = hook
		}
	}
	s := &Stage{Store: job.Store, Committer: c, Agents: agents, Log: log}
	cfg := s.Config(nil, nil)
	cfg.DLQ = nopDLQ{}
	sg, err := stage.New(cfg)
	if err != nil {
		return err
	}
	posFile := filepath.Join(job.DataDir, "position")
	pos := 0
	if b, err := os.ReadFile(posFile); err == nil {
		pos, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	for i := pos; i < len(job.Headers); i++ {
		hb, _ := json.Marshal(job.Headers[i])
		if err := sg.Handle(ctx, []kafka.Message{{Topic: schema.TopicTrustPublications, Offset: int64(i), Value: hb}}); err != nil {
			return err
		}
		// The offset commit: after the batch is applied.
		if err := os.WriteFile(posFile, []byte(strconv.Itoa(i+1)), 0o644); err != nil {
			return err
		}
	}
	fmt.Println("DONE")
	return nil
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// child runs the helper; with kill, it is SIGKILLed once it prints the
// crash marker, or after killAfter (when > 0) if it is still running.
func child(t *testing.T, jobFile string, killAfter time.Duration) (killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+jobFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	marker := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == crashMarker {
				marker <- struct{}{}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var timer <-chan time.Time
	if killAfter > 0 {
		timer = time.After(killAfter)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("helper failed: %v\n%s", err, stderr.String())
		}
		return false
	case <-marker:
	case <-timer:
	case <-time.After(3 * time.Minute):
		t.Fatalf("helper hung\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	<-exited
	if os.Getenv("FORUM_ERC8004_HELPER_LOG") != "" {
		t.Logf("killed; its log:\n%s", stderr.String())
	}
	return true
}

// TestSIGKILLAndRestartSendNothingTwice kills a child process running the
// stage at the two points where a crash could send a feedback twice —
// right after the signed transaction is logged, right after it is
// broadcast — and at a random moment, restarts it each time, then reruns
// every publication: every mapped server's feedbacks are exactly those of
// an uninterrupted run, each record on chain once.
func TestSIGKILLAndRestartSendNothingTwice(t *testing.T) {
	testenv.Long(t, "runs child processes")
	st, headers := published(t)
	port := freePort(t)
	tc, err := testchain.New(testchain.WithHTTP(port))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tc.Mine(20 * time.Millisecond)
	e := &env{tc: tc, key: tc.Key(0), dir: t.TempDir(), ctx: context.Background()}
	agents, ids := mapped(t, e, st)
	// All three by the config file here: the child has no registry listing
	// to discover from.
	agents[discovered] = Agent{Server: discovered, AgentID: ids[discovered], Source: SourceConfig}
	var af strings.Builder
	af.WriteString(`{"agents": [`)
	i := 0
	for _, a := range sortedAgents(agents) {
		if i > 0 {
			af.WriteString(",")
		}
		fmt.Fprintf(&af, `{"server": %q, "agent_id": "%s"}`, a.Server, a.AgentID)
		i++
	}
	af.WriteString("]}")

	job := helperJob{RPC: tc.HTTP, Reputation: tc.Reputation.Hex(), Key: fmt.Sprintf("%x", crypto.FromECDSA(e.key)), DataDir: e.dir,
		Agents: af.String(), Headers: headers, Store: dump(t, st, headers, []string{changing, discovered, unchanged})}
	write := func(crash string) string {
		job.Crash = crash
		b, _ := json.Marshal(job)
		p := filepath.Join(t.TempDir(), "job.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := 0
	for _, s := range []string{changing, discovered, unchanged} {
		for _, r := range expect(t, st, headers, s).sends {
			if r != nil {
				want++
			}
		}
	}

	if !child(t, write("after-send:2"), 0) {
		t.Fatal("the child finished before its second transaction")
	}
	if !child(t, write("after-log:1"), 0) {
		t.Fatal("the child finished before its next transaction")
	}
	child(t, write(""), time.Duration(100+rand.IntN(700))*time.Millisecond) // a random moment (or none: it may finish)
	if child(t, write(""), 0) {
		t.Fatal("the last run was killed")
	}
	if err := os.Remove(filepath.Join(e.dir, "position")); err != nil {
		t.Fatal(err)
	}
	child(t, write(""), 0) // a rerun of every publication

	evs := e.events(t)
	byHash := map[[32]byte]int{}
	for _, ev := range evs {
		byHash[ev.FeedbackHash]++
	}
	for h, n := range byHash {
		if n != 1 {
			t.Errorf("record %x committed %d times", h, n)
		}
	}
	if len(evs) != want {
		t.Errorf("%d events after kills and restarts, want %d (an uninterrupted run's)", len(evs), want)
	}
	for _, s := range []string{changing, discovered, unchanged} {
		var wantScores, gotScores []string
		for _, r := range expect(t, st, headers, s).sends {
			if r != nil {
				wantScores = append(wantScores, fmt.Sprintf("%d/%s", int(math.Round(*r.Score)), r.ContentSHA256[:8]))
			}
		}
		for _, ev := range evs {
			if ev.AgentId.Cmp(ids[s]) == 0 {
				gotScores = append(gotScores, fmt.Sprintf("%d/%x", ev.Score, ev.FeedbackHash[:4]))
			}
		}
		if strings.Join(gotScores, " ") != strings.Join(wantScores, " ") {
			t.Errorf("%s: feedback %v, want %v", s, gotScores, wantScores)
		}
	}
}
