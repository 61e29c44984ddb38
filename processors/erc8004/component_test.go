package erc8004

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/internal/component"
)

func TestValidate(t *testing.T) {
	full := component.ERC8004Settings{RPCURL: "http://127.0.0.1:8545", ChainID: 8453, Reputation: "0x8004B663056A597Dffe9eCcC1965A193B7388713",
		KeyFile: "k", Agents: "a.json"}
	for name, s := range map[string]component.ERC8004Settings{
		"a real run":                    full,
		"a dry run with only agents":    {DryRun: true, Agents: "a.json"},
		"discovery instead of a file":   func() component.ERC8004Settings { x := full; x.Agents, x.Discover = "", true; return x }(),
		"a dry run reading the chain":   {DryRun: true, Agents: "a.json", RPCURL: "http://x", ChainID: 1, Reputation: full.Reputation},
		"an identity registry as given": func() component.ERC8004Settings { x := full; x.Identity = full.Reputation; return x }(),
	} {
		if err := Validate(s); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, s := range map[string]component.ERC8004Settings{
		"no key":                    func() component.ERC8004Settings { x := full; x.KeyFile = ""; return x }(),
		"no chain id":               func() component.ERC8004Settings { x := full; x.ChainID = 0; return x }(),
		"no registry":               func() component.ERC8004Settings { x := full; x.Reputation = ""; return x }(),
		"no agents":                 func() component.ERC8004Settings { x := full; x.Agents = ""; return x }(),
		"a bad address":             func() component.ERC8004Settings { x := full; x.Reputation = "0x12"; return x }(),
		"a negative fee cap":        func() component.ERC8004Settings { x := full; x.MaxFeeGwei = -1; return x }(),
		"a dry run without agents":  {DryRun: true},
		"discovery without a chain": {DryRun: true, Discover: true},
		"a dry run, half a chain":   {DryRun: true, Agents: "a.json", RPCURL: "http://x"},
	} {
		if err := Validate(s); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: want ErrConfig, got %v", name, err)
		}
	}
}

func deps(t *testing.T, s component.ERC8004Settings) *component.Deps {
	st, _ := published(t)
	return &component.Deps{DataDir: t.TempDir(), Store: st, Log: zaptest.NewLogger(t), Settings: component.Settings{ERC8004: s}}
}

// Off unless configured: no consumer, no backlog (replay and run do not
// wait for it).
func TestComponentIsOffUnlessConfigured(t *testing.T) {
	spec, ok := component.Lookup(Name)
	if !ok || spec.Group != Group || spec.Role != component.RoleProcess {
		t.Fatalf("component %+v", spec)
	}
	r, err := spec.New(context.Background(), &component.Deps{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := r.(component.Lagger)
	if !ok {
		t.Fatal("the off component must report its (zero) backlog")
	}
	if n, err := l.Lag(context.Background()); n != 0 || err != nil {
		t.Errorf("lag %d, %v", n, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.Run(ctx); err != nil {
		t.Errorf("run: %v", err)
	}
}

// A configuration the committer refuses fails at construction; a chain
// that does not answer does not: the stage waits for it, alone.
func TestComponentFromSettings(t *testing.T) {
	spec, _ := component.Lookup(Name)
	dir := t.TempDir()
	agents := filepath.Join(dir, "agents.json")
	if err := os.WriteFile(agents, []byte(`{"agents":[{"server":"app.zenable/zenable","agent_id":"1"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.New(context.Background(), deps(t, component.ERC8004Settings{RPCURL: "http://127.0.0.1:1", Agents: agents})); !errors.Is(err, ErrConfig) {
		t.Errorf("half a configuration: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"agents":[{"server":"x/y","agent_id":"-3"}]}`), 0o644)
	if _, err := spec.New(context.Background(), deps(t, component.ERC8004Settings{DryRun: true, Agents: bad})); !errors.Is(err, ErrBadAgents) {
		t.Errorf("a bad agents file: %v", err)
	}

	// Nothing listens on this port: the chain is unreachable.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	r, err := spec.New(context.Background(), deps(t, component.ERC8004Settings{RPCURL: "http://" + addr, ChainID: 1337,
		Reputation: "0x8004B663056A597Dffe9eCcC1965A193B7388713", KeyFile: key, Agents: agents}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := r.Run(ctx); err != nil {
		t.Errorf("an unreachable chain stopped the component: %v", err)
	}
	if time.Since(start) < time.Second {
		t.Error("the component returned before its context ended")
	}
}
