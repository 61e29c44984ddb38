// Package component is the one list every command picks its long-running
// pieces from. Each component registers itself from its own package's
// init() (Redpanda Connect's habit: a new processor touches its folder and
// one blank import in internal/component/all, not the wiring): its name,
// the role that runs it, its consumer group, the topics it reads and
// writes, and a constructor that takes every dependency explicitly (Deps).
// `forum run`, `process`, `serve`, `replay` and `ingest --role` select from
// List by role; nothing else wires stages.
//
// Registration happens only in init(); after main starts the list is read,
// never written. It lives in internal/ because it is cross-cutting
// plumbing, like internal/checkpoint, and it imports nothing of ingest/,
// processors/ or sql/: a component asserts the consumer-side interface it
// needs on Deps.Store.
package component

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
)

// Role says which commands run a component.
type Role string

// Roles.
const (
	// RoleSource components read the outside world (the registry, MCP
	// servers, GitHub) and publish on the bus: `forum ingest --role NAME`,
	// and `forum run` for the ones marked InRun.
	RoleSource Role = "source"
	// RoleProcess components turn topics into state, outputs and stored
	// rows: `forum process`, `run` and `replay`.
	RoleProcess Role = "process"
	// RoleServe components answer from the store: `forum serve`, `run`,
	// `replay --serve`.
	RoleServe Role = "serve"
)

// Runner is a running component: Run returns when ctx ends (nil), or with
// an error only for what a restart cannot fix (bad configuration).
type Runner interface {
	Run(ctx context.Context) error
}

// RunFunc adapts a function to Runner.
type RunFunc func(ctx context.Context) error

// Run implements Runner.
func (f RunFunc) Run(ctx context.Context) error { return f(ctx) }

// Lagger is implemented by runners that track their input position outside
// a consumer group (the differ): how many input messages are not yet done.
type Lagger interface {
	Lag(ctx context.Context) (int64, error)
}

// Spec describes a component.
type Spec struct {
	Name  string
	Role  Role
	Doc   string   // one line, for --help
	Group string   // its consumer group ("" when it has none)
	In    []string // topics its group reads (the lag of Group over In is its backlog)
	// Tables are topics it reads whole, without a group (stage.Table):
	// they order it after their writers but are not its backlog.
	Tables []string
	Out    []string // topics it writes
	// InRun: a source that `forum run` starts (the GitHub crawler needs a
	// token and is opt-in).
	InRun func(Settings) bool
	New   func(ctx context.Context, d *Deps) (Runner, error)
}

// Store is the store of the process, as every engine offers it; components
// assert the interface they need (nil when the role has no store).
type Store interface {
	Ping(ctx context.Context) error
}

// Deps are what a constructor may use: nothing else (no globals).
type Deps struct {
	Brokers    []string // empty when the role has no bus
	Partitions int      // for topics this process creates
	DataDir    string   // checkpoints and local files
	Store      Store
	Log        *zap.Logger
	Registry   prometheus.Registerer
	Gatherer   prometheus.Gatherer // what /metrics serves
	Stage      *stage.Metrics      // shared by every stage of the process
	Settings   Settings
	// Ready reports whether the process' dependencies (bus, store) answer
	// (internal/health); nil: always ready. The API's /readyz includes it.
	Ready func(ctx context.Context) error
}

// Settings are the knobs components read, filled once by cmd/forum from
// flags and FORUM_* variables (defaults live there, in one place).
type Settings struct {
	// MethodWeights is an adopted weights file put in force
	// (FORUM_METHOD_WEIGHTS); "" is the embedded method.
	MethodWeights string
	// SigningKey is the Ed25519 key file publications are signed with.
	SigningKey string
	// AdminTokens is FORUM_ADMIN_TOKEN ("label:token,…"); "" disables the
	// admin API.
	AdminTokens string
	// PublishInterval is the scorer's wall-clock publication interval
	// (besides one publication per applied snapshot); 0: none.
	PublishInterval time.Duration
	// Listen is the API's address.
	Listen string
	// Sponsors are the sponsorship campaign's server names, in order.
	Sponsors []string
	// FlightListen is the read-only Arrow Flight SQL address of the serve
	// role ("" or "off": none); FlightToken its bearer token ("": one
	// generated into the data dir).
	FlightListen string
	FlightToken  string

	Crawl   CrawlSettings
	Probe   ProbeSettings
	GitHub  GitHubSettings
	ERC8004 ERC8004Settings
}

// CrawlSettings configure the registry crawler.
type CrawlSettings struct {
	BaseURL   string
	Interval  time.Duration
	FullEvery time.Duration
}

// ProbeSettings configure the probe scheduler and probers.
type ProbeSettings struct {
	Interval    time.Duration
	Concurrency int
	PerHost     int
	Timeout     time.Duration
	Allow       []netip.Prefix // private/loopback ranges probes may reach (tests, labs)
}

// GitHubSettings configure the GitHub crawler.
type GitHubSettings struct {
	Enabled      bool // run it inside `forum run`
	Token        string
	BaseURL      string
	PageCap      int
	Refresh      time.Duration
	OwnerRefresh time.Duration
}

// ERC8004Settings configure the ERC-8004 committer (processors/erc8004):
// off unless RPCURL is set or DryRun asked for.
type ERC8004Settings struct {
	RPCURL     string // the chain's JSON-RPC endpoint
	ChainID    uint64 // checked against the endpoint's before anything is signed
	Reputation string // the Reputation Registry's address
	Identity   string // the Identity Registry's address ("": the one the Reputation Registry names)
	KeyFile    string // the committer's secp256k1 key (hex), the feedback's clientAddress
	Agents     string // a JSON file mapping registry server names to agentIds
	Discover   bool   // also map servers through the Identity Registry's registration files
	FromBlock  uint64 // where event scans start (the registries' deployment block)
	APIBase    string // the public API base of feedbackURI
	DryRun     bool   // print the giveFeedback calls instead of sending them
	// MinInterval is the least time between two feedbacks for one server
	// (event time); MaxAge skips publications older than this at the wall
	// clock (0: none), so a replay of history spends no gas.
	MinInterval time.Duration
	MaxAge      time.Duration
	MaxFeeGwei  float64 // the highest fee cap per gas a transaction may offer (0: no cap)
}

var registered []Spec

// Register adds a component; call it from init(). Names are unique.
func Register(s Spec) {
	if s.Name == "" || s.New == nil || s.Role == "" {
		panic("component: a component needs a name, a role and a constructor")
	}
	for _, r := range registered {
		if r.Name == s.Name {
			panic("component: " + s.Name + " registered twice")
		}
	}
	registered = append(registered, s)
}

// List returns the components of the given roles (all when none given), in
// dataflow order: a component comes after every component that writes a
// topic it reads (ties by name), so lags checked in this order are read
// upstream first.
func List(roles ...Role) []Spec {
	var out []Spec
	for _, s := range registered {
		if len(roles) == 0 || slices.Contains(roles, s.Role) {
			out = append(out, s)
		}
	}
	return dataflowOrder(out)
}

// Lookup returns the component named name.
func Lookup(name string) (Spec, bool) {
	for _, s := range registered {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Names returns the names of the components of a role, sorted.
func Names(role Role) []string {
	var out []string
	for _, s := range registered {
		if s.Role == role {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// dataflowOrder sorts specs topologically by topics (Kahn's algorithm with
// name order among the ready ones); a cycle falls back to name order for
// what is left.
func dataflowOrder(specs []Spec) []Spec {
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	writers := map[string][]int{}
	for i, s := range specs {
		for _, t := range s.Out {
			writers[t] = append(writers[t], i)
		}
	}
	indeg := make([]int, len(specs))
	next := make([][]int, len(specs))
	for j, s := range specs {
		seen := map[int]bool{}
		for _, t := range append(append([]string{}, s.In...), s.Tables...) {
			for _, i := range writers[t] {
				if i != j && !seen[i] {
					seen[i] = true
					next[i] = append(next[i], j)
					indeg[j]++
				}
			}
		}
	}
	var out []Spec
	done := make([]bool, len(specs))
	for len(out) < len(specs) {
		progressed := false
		for i := range specs {
			if done[i] || indeg[i] > 0 {
				continue
			}
			done[i], progressed = true, true
			out = append(out, specs[i])
			for _, j := range next[i] {
				indeg[j]--
			}
			break // restart: keep name order among the ready ones
		}
		if !progressed {
			for i := range specs {
				if !done[i] {
					done[i] = true
					out = append(out, specs[i])
				}
			}
		}
	}
	return out
}

// Describe is the component table for --help: name, role, group, in → out.
func Describe(roles ...Role) string {
	var b strings.Builder
	for _, s := range List(roles...) {
		fmt.Fprintf(&b, "  %-16s %-8s %s\n", s.Name, s.Role, s.Doc)
		if len(s.In)+len(s.Tables)+len(s.Out) > 0 {
			fmt.Fprintf(&b, "  %-16s %-8s   %s -> %s\n", "", "", orDash(append(append([]string{}, s.In...), s.Tables...)), orDash(s.Out))
		}
	}
	return b.String()
}

func orDash(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return strings.Join(xs, ", ")
}
