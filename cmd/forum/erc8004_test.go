package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forum-mcp/forum/processors/erc8004"
	"github.com/forum-mcp/forum/processors/erc8004/testchain"
)

// TestERC8004CommitAndVerify runs `forum erc8004` against a simulated
// chain (JSON-RPC on loopback) over a stored publication, then checks a
// committed record with `forum verify`, from the committer's event log
// and from the chain, and refuses a record that is not on chain and one
// whose hash is not its content. The dry run prints the same call and
// sends nothing.
func TestERC8004CommitAndVerify(t *testing.T) {
	dir := t.TempDir()
	keyFile, sealed := storedPublication(t, dir)
	export := filepath.Join(dir, "pub.jsonl")
	exec := func(args ...string) (string, error) {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		return out.String(), err
	}
	if out, err := exec("export-publication", "--data-dir", dir, "--log-level", "error", "--id", "latest", "--out", export); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	// Two servers with a score: one gets an agent and a feedback, the
	// other an agent and none.
	var servers []string
	var records [][]byte
	for _, r := range sealed.Records {
		if r.Score != nil && len(servers) < 2 {
			servers = append(servers, r.Server)
			records = append(records, []byte(r.Record))
		}
	}
	if len(servers) < 2 {
		t.Fatal("the generated publication has no two scored records")
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	tc, err := testchain.New(testchain.WithHTTP(port))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tc.Mine(20 * time.Millisecond)
	ctx := context.Background()
	agent, err := tc.Register(ctx, tc.Key(1), "")
	if err != nil {
		t.Fatal(err)
	}
	committerKey := filepath.Join(dir, "committer.key")
	if err := os.WriteFile(committerKey, []byte(fmt.Sprintf("0x%x\n", crypto.FromECDSA(tc.Key(0)))), 0o600); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(dir, "agents.json")
	if err := os.WriteFile(agents, []byte(fmt.Sprintf(`{"agents":[{"server":%q,"agent_id":"%s","endpoint":"https://example.test/mcp"}]}`, servers[0], agent)), 0o644); err != nil {
		t.Fatal(err)
	}
	chainFlags := []string{"--erc8004-rpc-url", tc.HTTP, "--erc8004-chain-id", "1337", "--erc8004-reputation-registry", tc.Reputation.Hex()}

	out, err := exec("erc8004", "--dry-run", "--data-dir", dir, "--log-level", "error", "--erc8004-agents", agents)
	if err != nil || strings.Count(out, "dry-run: giveFeedback(agentId="+agent.String()+",") != 1 || !strings.Contains(out, servers[0]) {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if evs, _ := tc.Feedback(ctx); len(evs) != 0 {
		t.Fatalf("the dry run sent %d feedbacks", len(evs))
	}
	args := append([]string{"erc8004", "--data-dir", dir, "--log-level", "error", "--erc8004-agents", agents, "--erc8004-key-file", committerKey}, chainFlags...)
	if out, err := exec(args...); err != nil {
		t.Fatalf("erc8004: %v\n%s", err, out)
	}
	if out, err := exec(args...); err != nil { // again: nothing more
		t.Fatalf("erc8004 again: %v\n%s", err, out)
	}
	if evs, _ := tc.Feedback(ctx); len(evs) != 1 {
		t.Fatalf("%d feedbacks on chain, want 1", len(evs))
	}

	feedbackLog := filepath.Join(dir, erc8004.LogFile)
	if out, err := exec("verify", "--export", export, "--key", keyFile, "--server", servers[0], "--feedback-log", feedbackLog); err != nil ||
		!strings.Contains(out, "verifies") || !strings.Contains(out, "ok: the record of "+servers[0]) {
		t.Fatalf("verify from the event log: %v\n%s", err, out)
	}
	recFile := filepath.Join(dir, "record.json")
	if err := os.WriteFile(recFile, records[0], 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec(append([]string{"verify", "--record", recFile, "--erc8004-key-file", committerKey}, chainFlags...)...); err != nil ||
		!strings.Contains(out, "feedback #1 of "+testchain.Addr(tc.Key(0)).Hex()+" to agent "+agent.String()) {
		t.Fatalf("verify on chain: %v\n%s", err, out)
	}
	// Not committed: the other server.
	if out, err := exec("verify", "--export", export, "--key", keyFile, "--server", servers[1], "--feedback-log", feedbackLog); !errors.Is(err, erc8004.ErrNotOnChain) {
		t.Errorf("a record not on chain: %v\n%s", err, out)
	}
	// Tampered: the committed record with its score changed.
	bad := bytes.Replace(records[0], []byte(`"band":"`), []byte(`"band":"A`), 1)
	if err := os.WriteFile(recFile, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec(append([]string{"verify", "--record", recFile}, chainFlags...)...); !errors.Is(err, erc8004.ErrRecordHash) {
		t.Errorf("a tampered record: %v\n%s", err, out)
	}
	// Another client's feedback does not count when the client is named.
	if err := os.WriteFile(recFile, records[0], 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec(append([]string{"verify", "--record", recFile, "--erc8004-client", testchain.Addr(tc.Key(3)).Hex()}, chainFlags...)...); !errors.Is(err, erc8004.ErrNotOnChain) {
		t.Errorf("another client: %v\n%s", err, out)
	}
}
