package erc8004

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"sort"
	"strings"
)

// Agent maps one registry server to its ERC-8004 agent.
type Agent struct {
	Server  string
	AgentID *big.Int
	// Endpoint is the remote named in the feedback: the one the agent's
	// registration file lists, or the one a config file gives; "" takes the
	// scored registry entry's first remote.
	Endpoint string
	Source   string // SourceConfig or SourceIdentity
}

// Where a mapping came from.
const (
	SourceConfig   = "config"
	SourceIdentity = "identity-registry"
)

// agentsFile is the config file of agents:
//
//	{"agents": [{"server": "io.github.acme/weather", "agent_id": "42",
//	             "endpoint": "https://weather.acme.dev/mcp"}]}
//
// agent_id is a decimal uint256 (a JSON string or number); endpoint is
// optional.
type agentsFile struct {
	Agents []struct {
		Server   string          `json:"server"`
		AgentID  json.RawMessage `json:"agent_id"`
		Endpoint string          `json:"endpoint"`
	} `json:"agents"`
}

// ErrBadAgents is returned for an agents file that does not parse.
var ErrBadAgents = errors.New("erc8004: bad agents file")

// maxUint256 bounds agent ids.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// ReadAgents reads an agents file: one agent per server, each server once.
func ReadAgents(path string) (map[string]Agent, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("erc8004: agents file: %w", err)
	}
	return ParseAgents(b)
}

// ParseAgents parses the content of an agents file.
func ParseAgents(b []byte) (map[string]Agent, error) {
	var f agentsFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadAgents, err)
	}
	out := make(map[string]Agent, len(f.Agents))
	for i, a := range f.Agents {
		if a.Server == "" {
			return nil, fmt.Errorf("%w: agents[%d] has no server", ErrBadAgents, i)
		}
		if _, dup := out[a.Server]; dup {
			return nil, fmt.Errorf("%w: %s is mapped twice", ErrBadAgents, a.Server)
		}
		id, err := parseAgentID(a.AgentID)
		if err != nil {
			return nil, fmt.Errorf("%w: agents[%d] (%s): %v", ErrBadAgents, i, a.Server, err)
		}
		if a.Endpoint != "" {
			if _, ok := normalizeEndpoint(a.Endpoint); !ok {
				return nil, fmt.Errorf("%w: agents[%d] (%s): endpoint %q is not an http(s) URL", ErrBadAgents, i, a.Server, a.Endpoint)
			}
		}
		out[a.Server] = Agent{Server: a.Server, AgentID: id, Endpoint: a.Endpoint, Source: SourceConfig}
	}
	return out, nil
}

func parseAgentID(raw json.RawMessage) (*big.Int, error) {
	s := strings.TrimSpace(string(raw))
	if uq, err := unquote(raw); err == nil {
		s = uq
	}
	if s == "" || s == "null" {
		return nil, errors.New("no agent_id")
	}
	id, ok := new(big.Int).SetString(s, 10)
	if !ok || id.Sign() < 0 || id.Cmp(maxUint256) > 0 {
		return nil, fmt.Errorf("agent_id %q is not a decimal uint256", s)
	}
	return id, nil
}

func unquote(raw json.RawMessage) (string, error) {
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// normalizeEndpoint is the form endpoints are matched in: scheme and host
// lower-cased, default ports and a trailing slash dropped, no fragment. A
// registration file's MCP endpoint matches a server's remote when both
// normalize alike.
func normalizeEndpoint(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	u.Host = host
	if port != "" {
		u.Host = host + ":" + port
	}
	u.Fragment, u.RawFragment, u.User = "", "", nil
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), true
}

// sortedAgents lists agents by server name (deterministic logs and scans).
func sortedAgents(m map[string]Agent) []Agent {
	out := make([]Agent, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}
