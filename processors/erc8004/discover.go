package erc8004

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/sql/store"
)

// Registration is the part of an agent's registration file (ERC-8004: the
// JSON its agentURI points at) that discovery reads: its services, of which
// the ones named "MCP" give the agent's MCP endpoints. Earlier drafts call
// the list "endpoints"; both are read.
type Registration struct {
	Type      string    `json:"type"`
	Name      string    `json:"name"`
	Services  []Service `json:"services"`
	Endpoints []Service `json:"endpoints"`
	// Registrations name the agent back: {agentId, agentRegistry:
	// "eip155:<chain id>:<identity registry>"}.
	Registrations []struct {
		AgentID       json.RawMessage `json:"agentId"`
		AgentRegistry string          `json:"agentRegistry"`
	} `json:"registrations"`
}

// Names reports whether the file may be the agent's: it lists no
// registrations, or one of them is this agent in this registry. A file
// naming only other agents (copied from another agent) maps nothing.
func (r Registration) Names(agentID *big.Int, chainID *big.Int, identity string) bool {
	if len(r.Registrations) == 0 {
		return true
	}
	want := fmt.Sprintf("eip155:%s:%s", chainID, strings.ToLower(identity))
	for _, x := range r.Registrations {
		id, err := parseAgentID(x.AgentID)
		if err == nil && id.Cmp(agentID) == 0 && strings.EqualFold(strings.TrimSpace(x.AgentRegistry), want) {
			return true
		}
	}
	return false
}

// Service is one entry of a registration file's services.
type Service struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	Version  string `json:"version,omitempty"`
}

// MCPEndpoints returns the registration's MCP service endpoints,
// normalized (normalizeEndpoint), without duplicates.
func (r Registration) MCPEndpoints() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]Service{}, r.Services...), r.Endpoints...) {
		if !strings.EqualFold(strings.TrimSpace(s.Name), "MCP") {
			continue
		}
		if n, ok := normalizeEndpoint(s.Endpoint); ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// MaxRegistrationBytes bounds a registration file.
const MaxRegistrationBytes = 1 << 20

// Fetcher reads registration files by agentURI: data: URIs in place,
// http(s) with a timeout and a size bound, ipfs:// through a gateway. An
// agentURI is anyone's input, so by default it never reaches a loopback,
// private, link-local or otherwise internal address (checked on the
// address actually dialled, so DNS cannot point around it).
type Fetcher struct {
	Client       *http.Client // nil: one with the guard below
	IPFSGateway  string       // default https://ipfs.io
	AllowPrivate bool         // tests: reach loopback servers
}

// ErrFetch is wrapped by every failure to read a registration file.
var ErrFetch = errors.New("erc8004: registration file")

// Fetch returns the registration file at uri.
func (f *Fetcher) Fetch(ctx context.Context, uri string) (Registration, error) {
	b, err := f.read(ctx, strings.TrimSpace(uri))
	if err != nil {
		return Registration{}, fmt.Errorf("%w %.200q: %w", ErrFetch, uri, err)
	}
	var r Registration
	if err := json.Unmarshal(b, &r); err != nil {
		return Registration{}, fmt.Errorf("%w %.200q: not JSON: %w", ErrFetch, uri, err)
	}
	return r, nil
}

func (f *Fetcher) read(ctx context.Context, uri string) ([]byte, error) {
	switch {
	case strings.HasPrefix(uri, "data:"):
		return readDataURI(uri)
	case strings.HasPrefix(uri, "ipfs://"):
		gw := f.IPFSGateway
		if gw == "" {
			gw = "https://ipfs.io"
		}
		return f.get(ctx, strings.TrimRight(gw, "/")+"/ipfs/"+strings.TrimPrefix(uri, "ipfs://"))
	case strings.HasPrefix(uri, "https://"), strings.HasPrefix(uri, "http://"):
		return f.get(ctx, uri)
	}
	return nil, errors.New("unsupported scheme (want data:, https:, http: or ipfs:)")
}

func readDataURI(uri string) ([]byte, error) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(uri, "data:"), ",")
	if !ok {
		return nil, errors.New("data: URI without a comma")
	}
	if strings.HasSuffix(meta, ";base64") {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("data: URI: %w", err)
		}
		return b, nil
	}
	s, err := url.PathUnescape(data)
	if err != nil {
		return nil, fmt.Errorf("data: URI: %w", err)
	}
	return []byte(s), nil
}

func (f *Fetcher) get(ctx context.Context, u string) ([]byte, error) {
	c := f.Client
	if c == nil {
		c = guardedClient(f.AllowPrivate)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxRegistrationBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxRegistrationBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxRegistrationBytes)
	}
	return b, nil
}

// guardedClient is an HTTP client whose dialer refuses internal addresses.
func guardedClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if !allowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: %w", address, err)
			}
			if a := ap.Addr().Unmap(); !a.IsGlobalUnicast() || a.IsPrivate() {
				return fmt.Errorf("dial %s: an internal address is not fetched", address)
			}
			return nil
		}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = d.DialContext
	t.Proxy = nil
	return &http.Client{Transport: t, Timeout: 20 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return nil
		}}
}

// EndpointIndex maps normalized MCP endpoints to the agents whose
// registration files claim them.
type EndpointIndex map[string][]*big.Int

// Resolve returns the one agent claiming one of the remotes, with the
// remote it matched. A remote claimed by two agents or more is ambiguous
// (anyone can register an agent naming any endpoint) and maps nothing:
// the config file settles it.
func (ix EndpointIndex) Resolve(remotes []string) (*big.Int, string, bool) {
	var id *big.Int
	var ep string
	for _, r := range remotes {
		n, ok := normalizeEndpoint(r)
		if !ok {
			continue
		}
		ids := ix[n]
		switch {
		case len(ids) == 0:
			continue
		case len(ids) > 1:
			return nil, "", false
		case id != nil && id.Cmp(ids[0]) != 0:
			return nil, "", false // two remotes, two agents
		}
		if id == nil {
			id, ep = ids[0], r
		}
	}
	return id, ep, id != nil
}

// Discovery maps servers to agents through the Identity Registry: every
// agent's latest agentURI (from its Registered and URIUpdated events), its
// registration file, the MCP endpoints listed there, and the servers whose
// remotes are those endpoints. It refreshes at most every Every (default 1
// h); a registration file that cannot be read maps nothing until a later
// refresh reads it.
type Discovery struct {
	Chain   *Chain
	Fetcher *Fetcher
	Every   time.Duration
	Now     func() time.Time
	Log     *zap.Logger

	mu      sync.Mutex
	at      time.Time
	scanned uint64            // Identity Registry events read through this block
	uris    map[string]string // agent id -> agentURI
	agents  map[string]Agent  // server -> agent
}

// Agents returns the servers mapped to agents, refreshing when due.
func (d *Discovery) Agents(ctx context.Context, st Store) (map[string]Agent, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	every := d.Every
	if every <= 0 {
		every = time.Hour
	}
	if d.agents != nil && now().Sub(d.at) < every {
		return d.agents, nil
	}
	agents, err := d.refresh(ctx, st)
	if err != nil {
		if d.agents != nil {
			// Keep what the last refresh found: a chain or a file server
			// that is down does not unmap anyone.
			d.log().Warn("erc8004: agent discovery failed; keeping the last mapping", zap.Error(err))
			return d.agents, nil
		}
		return nil, err
	}
	d.agents, d.at = agents, now()
	return agents, nil
}

func (d *Discovery) log() *zap.Logger {
	if d.Log == nil {
		return zap.NewNop()
	}
	return d.Log
}

func (d *Discovery) refresh(ctx context.Context, st Store) (map[string]Agent, error) {
	head, err := d.Chain.B.BlockNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("erc8004: head: %w", err)
	}
	if d.uris == nil {
		d.uris = map[string]string{}
	}
	from := d.Chain.FromBlock
	if d.scanned > 0 {
		from = d.scanned + 1
	}
	if from <= head {
		uris, err := d.Chain.AgentURIs(ctx, from, head)
		if err != nil {
			return nil, err
		}
		for id, u := range uris {
			d.uris[id] = u
		}
		d.scanned = head
	}
	f := d.Fetcher
	if f == nil {
		f = &Fetcher{}
	}
	ix := EndpointIndex{}
	ids := make([]string, 0, len(d.uris))
	for id := range d.uris {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		uri := d.uris[id]
		if uri == "" {
			continue
		}
		reg, err := f.Fetch(ctx, uri)
		if err != nil {
			d.log().Info("erc8004: registration file not read", zap.String("agent_id", id), zap.Error(err))
			continue
		}
		n, _ := new(big.Int).SetString(id, 10)
		if !reg.Names(n, d.Chain.ChainID, d.Chain.Identity.Hex()) {
			d.log().Info("erc8004: a registration file that names other agents, not this one; ignored", zap.String("agent_id", id))
			continue
		}
		for _, ep := range reg.MCPEndpoints() {
			ix[ep] = append(ix[ep], n)
		}
	}
	out := map[string]Agent{}
	if len(ix) == 0 {
		return out, nil
	}
	cursor := ""
	for {
		rows, err := st.ListServers(ctx, store.ListQuery{Cursor: cursor, Limit: store.MaxListLimit})
		if err != nil {
			return nil, fmt.Errorf("erc8004: servers: %w", err)
		}
		for _, r := range rows {
			if id, ep, ok := ix.Resolve(remotesOf(r.Server)); ok {
				out[r.Name] = Agent{Server: r.Name, AgentID: id, Endpoint: ep, Source: SourceIdentity}
			}
		}
		if len(rows) < store.MaxListLimit {
			break
		}
		cursor = rows[len(rows)-1].Name
	}
	d.log().Info("erc8004: agents discovered", zap.Int("agents", len(d.uris)), zap.Int("endpoints", len(ix)), zap.Int("servers", len(out)))
	return out, nil
}
