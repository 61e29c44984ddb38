package erc8004

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAgents(t *testing.T) {
	good := `{"agents": [
	  {"server": "app.zenable/zenable", "agent_id": "7"},
	  {"server": "ai.waystation/teams", "agent_id": 12, "endpoint": "https://waystation.ai/teams/mcp"},
	  {"server": "big/one", "agent_id": "115792089237316195423570985008687907853269984665640564039457584007913129639935"}]}`
	m, err := ParseAgents([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["app.zenable/zenable"].AgentID.Int64() != 7 || m["ai.waystation/teams"].AgentID.Int64() != 12 ||
		m["ai.waystation/teams"].Endpoint != "https://waystation.ai/teams/mcp" || m["big/one"].AgentID.Cmp(maxUint256) != 0 {
		t.Errorf("parsed %+v", m)
	}
	for _, bad := range []string{
		`{"agents": [{"server": "a/b"}]}`,
		`{"agents": [{"server": "a/b", "agent_id": "-1"}]}`,
		`{"agents": [{"server": "a/b", "agent_id": "0x10"}]}`,
		`{"agents": [{"server": "a/b", "agent_id": "115792089237316195423570985008687907853269984665640564039457584007913129639936"}]}`,
		`{"agents": [{"server": "a/b", "agent_id": 1}, {"server": "a/b", "agent_id": 2}]}`,
		`{"agents": [{"agent_id": 1}]}`,
		`{"agents": [{"server": "a/b", "agent_id": 1, "endpoint": "ftp://x"}]}`,
		`{"agnts": []}`,
		`not json`,
	} {
		if _, err := ParseAgents([]byte(bad)); !errors.Is(err, ErrBadAgents) {
			t.Errorf("%s: want ErrBadAgents, got %v", bad, err)
		}
	}
}

func TestNormalizeEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"https://MCP.Example.com/mcp/":     "https://mcp.example.com/mcp",
		"https://mcp.example.com:443/mcp":  "https://mcp.example.com/mcp",
		"http://mcp.example.com:80":        "http://mcp.example.com",
		"https://mcp.example.com:8443/x#f": "https://mcp.example.com:8443/x",
		"https://u:p@mcp.example.com/mcp":  "https://mcp.example.com/mcp",
	} {
		if got, ok := normalizeEndpoint(in); !ok || got != want {
			t.Errorf("normalize(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "mcp.example.com", "ftp://x/y", "https://"} {
		if _, ok := normalizeEndpoint(bad); ok {
			t.Errorf("normalize(%q) accepted", bad)
		}
	}
}

func TestRegistrationAndIndex(t *testing.T) {
	reg := `{"type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1", "name": "weather",
	  "services": [{"name": "A2A", "endpoint": "https://a2a.example/card.json"}, {"name": "MCP", "endpoint": "https://Weather.example/mcp/", "version": "2025-06-18"}],
	  "endpoints": [{"name": "mcp", "endpoint": "https://weather.example/mcp"}, {"name": "MCP", "endpoint": "https://weather.example/sse"}]}`
	f := &Fetcher{}
	uri := "data:application/json;base64," + base64.StdEncoding.EncodeToString([]byte(reg))
	r, err := f.Fetch(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	eps := r.MCPEndpoints()
	if strings.Join(eps, " ") != "https://weather.example/mcp https://weather.example/sse" {
		t.Errorf("MCP endpoints %v", eps)
	}
	plain, err := f.Fetch(context.Background(), `data:application/json,{"services":[{"name":"MCP","endpoint":"https://x.example/mcp"}]}`)
	if err != nil || len(plain.MCPEndpoints()) != 1 {
		t.Errorf("a plain data: URI: %+v, %v", plain, err)
	}

	id, chain, registry := big.NewInt(22), big.NewInt(8453), "0x8004A169FB4a3325136EB29fA0ceB6D2e539a432"
	named := Registration{}
	if !named.Names(id, chain, registry) {
		t.Error("a file without registrations may be anyone's")
	}
	_ = json.Unmarshal([]byte(`{"registrations":[{"agentId":22,"agentRegistry":"eip155:8453:0x8004a169fb4a3325136eb29fa0ceb6d2e539a432"}]}`), &named)
	if !named.Names(id, chain, registry) || named.Names(big.NewInt(23), chain, registry) || named.Names(id, big.NewInt(1), registry) {
		t.Errorf("registrations %+v", named.Registrations)
	}

	ix := EndpointIndex{
		"https://weather.example/mcp": {big.NewInt(1)},
		"https://weather.example/sse": {big.NewInt(1)},
		"https://shared.example/mcp":  {big.NewInt(2), big.NewInt(3)},
		"https://other.example/mcp":   {big.NewInt(4)},
	}
	if id, ep, ok := ix.Resolve([]string{"https://nothing.example", "https://WEATHER.example/mcp/"}); !ok || id.Int64() != 1 || ep != "https://WEATHER.example/mcp/" {
		t.Errorf("resolve: %v %q %v", id, ep, ok)
	}
	if _, _, ok := ix.Resolve([]string{"https://weather.example/mcp", "https://weather.example/sse"}); !ok {
		t.Error("two remotes of one agent must resolve")
	}
	if _, _, ok := ix.Resolve([]string{"https://shared.example/mcp"}); ok {
		t.Error("an endpoint claimed by two agents must map nothing")
	}
	if _, _, ok := ix.Resolve([]string{"https://weather.example/mcp", "https://other.example/mcp"}); ok {
		t.Error("remotes claimed by two different agents must map nothing")
	}
	if _, _, ok := ix.Resolve(nil); ok {
		t.Error("no remotes, no agent")
	}
}

// An agentURI is anyone's input: by default it never reaches a loopback
// address; a test opts in.
func TestFetcherRefusesInternalAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"services":[{"name":"MCP","endpoint":"https://x.example/mcp"}]}`))
	}))
	defer srv.Close()
	if _, err := (&Fetcher{}).Fetch(context.Background(), srv.URL); err == nil || !strings.Contains(err.Error(), "internal address") {
		t.Errorf("fetching %s: want refused, got %v", srv.URL, err)
	}
	r, err := (&Fetcher{AllowPrivate: true}).Fetch(context.Background(), srv.URL)
	if err != nil || len(r.MCPEndpoints()) != 1 {
		t.Errorf("allowed fetch: %+v, %v", r, err)
	}
	if _, err := (&Fetcher{}).Fetch(context.Background(), "file:///etc/passwd"); !errors.Is(err, ErrFetch) {
		t.Errorf("file: URI: %v", err)
	}
}

func TestLogSkipsATornLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), LogFile)
	l := &Log{Path: p}
	if err := l.Append(Entry{Kind: KindRefused, Hash: "aa", Reason: "x"}); err != nil {
		t.Fatal(err)
	}
	// A crash mid-append: half a line, no newline.
	fh, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = fh.WriteString(`{"kind":"sent","content_sha256":"bb","ra`)
	fh.Close()
	if err := l.Append(Entry{Kind: KindMined, Hash: "cc"}); err != nil {
		t.Fatal(err)
	}
	es, err := l.Entries()
	if err != nil || len(es) != 2 || es[0].Hash != "aa" || es[1].Hash != "cc" {
		t.Fatalf("entries after a torn line: %+v, %v", es, err)
	}
	if err := os.WriteFile(p, []byte("{\"kind\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Entries(); err == nil {
		t.Error("a damaged (not torn) line must fail")
	}
}
