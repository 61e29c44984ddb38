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
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/processors/method"
)

// DefaultAPIBase is the public API feedbackURI points into.
const DefaultAPIBase = "https://api.forumtrust.ai"

func init() {
	component.Register(component.Spec{
		Name: Name, Role: component.RoleProcess, Group: Group, In: Topics,
		Doc: "ERC-8004: one giveFeedback per server with an agent whose published score or band changed (off unless --erc8004-rpc-url or --erc8004-dry-run)",
		New: New,
	})
}

// Enabled reports whether the settings turn the committer on.
func Enabled(s component.ERC8004Settings) bool { return s.RPCURL != "" || s.DryRun }

// ErrConfig is wrapped by every configuration the committer refuses.
var ErrConfig = errors.New("erc8004: configuration")

// Validate checks the settings of an enabled committer: a real run needs
// an RPC URL, a chain id, the Reputation Registry, a key file and agents
// (a file or discovery); a dry run needs agents only (and, to read the
// chain, its RPC URL, chain id and registry).
func Validate(s component.ERC8004Settings) error {
	var missing []string
	need := func(ok bool, flag string) {
		if !ok {
			missing = append(missing, flag)
		}
	}
	if !s.DryRun {
		need(s.RPCURL != "", "--erc8004-rpc-url")
		need(s.KeyFile != "", "--erc8004-key-file")
	}
	if s.RPCURL != "" || !s.DryRun {
		need(s.ChainID != 0, "--erc8004-chain-id")
		need(s.Reputation != "", "--erc8004-reputation-registry")
	}
	need(s.Agents != "" || s.Discover, "--erc8004-agents (or --erc8004-discover)")
	need(!s.Discover || s.RPCURL != "", "--erc8004-rpc-url (discovery reads the Identity Registry)")
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %s", ErrConfig, strings.Join(missing, ", "))
	}
	for _, a := range []struct{ flag, v string }{{"--erc8004-reputation-registry", s.Reputation}, {"--erc8004-identity-registry", s.Identity}} {
		if a.v != "" && !common.IsHexAddress(a.v) {
			return fmt.Errorf("%w: %s %q is not an address", ErrConfig, a.flag, a.v)
		}
	}
	if s.MaxFeeGwei < 0 || s.MinInterval < 0 || s.MaxAge < 0 {
		return fmt.Errorf("%w: negative --erc8004-max-fee-gwei, --erc8004-min-interval or --erc8004-max-age", ErrConfig)
	}
	return nil
}

// off is the component while it is not configured: it consumes nothing and
// has no backlog (Lag 0), so replay and run do not wait for it.
type off struct{}

func (off) Run(ctx context.Context) error      { <-ctx.Done(); return nil }
func (off) Lag(context.Context) (int64, error) { return 0, nil }
func (off) String() string                     { return "erc8004 (off)" }

// New builds the component from its settings (component.Spec.New). A bad
// configuration fails here; a chain that cannot be reached is retried in
// Run, with a capped back-off, and holds nothing but this stage.
func New(_ context.Context, d *component.Deps) (component.Runner, error) {
	if !Enabled(d.Settings.ERC8004) {
		return off{}, nil
	}
	su, err := NewSetup(d)
	if err != nil {
		return nil, err
	}
	return component.RunFunc(func(ctx context.Context) error {
		if err := su.Connect(ctx, true); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		sgt, err := stage.New(su.Stage.Config(d.Brokers, d.Stage))
		if err != nil {
			return err
		}
		return sgt.Run(ctx)
	}), nil
}

// Setup is the stage and committer built from settings, not yet connected
// to the chain.
type Setup struct {
	Stage    *Stage
	settings component.ERC8004Settings
	key      *ecdsa.PrivateKey
	log      *zap.Logger
}

// NewSetup validates the settings, reads the agents file and the key, and
// builds the stage over d.Store (its local log under d.DataDir; a dry run
// prints to stdout).
func NewSetup(d *component.Deps) (*Setup, error) {
	s := d.Settings.ERC8004
	if err := Validate(s); err != nil {
		return nil, err
	}
	st, ok := d.Store.(Store)
	if !ok {
		return nil, fmt.Errorf("the store %T cannot feed the ERC-8004 committer", d.Store)
	}
	m, err := method.Load(d.Settings.MethodWeights)
	if err != nil {
		return nil, err
	}
	var agents map[string]Agent
	if s.Agents != "" {
		if agents, err = ReadAgents(s.Agents); err != nil {
			return nil, err
		}
	}
	var key *ecdsa.PrivateKey
	if s.KeyFile != "" {
		if key, err = ReadKey(s.KeyFile); err != nil {
			return nil, err
		}
	}
	log := d.Log
	if log == nil {
		log = zap.NewNop()
	}
	log = log.Named(Name)
	apiBase := s.APIBase
	if apiBase == "" {
		apiBase = DefaultAPIBase
	}
	c := &Committer{Tag1: m.Weights.Method, APIBase: apiBase, MinInterval: s.MinInterval, Metrics: NewMetrics(d.Registry), Logger: log}
	if s.DryRun {
		c.DryRun = os.Stdout
	} else {
		c.Log = &Log{Path: filepath.Join(d.DataDir, LogFile)}
	}
	return &Setup{Stage: &Stage{Store: st, Committer: c, Agents: agents, MaxAge: s.MaxAge, Log: log}, settings: s, key: key, log: log}, nil
}

// Connect dials the chain (when an RPC URL is configured) and sets up
// discovery; with retry, an unreachable chain is tried again (capped
// back-off) until ctx ends.
func (su *Setup) Connect(ctx context.Context, retry bool) error {
	s := su.settings
	if s.DryRun {
		su.log.Info("erc8004: dry run: the giveFeedback calls go to stdout, nothing is sent")
	}
	if s.RPCURL == "" {
		return nil
	}
	var ch *Chain
	var err error
	if retry {
		ch, err = connect(ctx, s, su.key, su.log)
	} else {
		ch, err = dial(ctx, s, su.key)
	}
	if err != nil {
		return err
	}
	su.Stage.Committer.Chain = ch
	if s.Discover {
		su.Stage.Discovery = &Discovery{Chain: ch, Log: su.log}
	}
	return nil
}

// connect dials the RPC endpoint until it answers (capped back-off): an
// unreachable chain waits; a wrong chain id is a configuration error.
func connect(ctx context.Context, s component.ERC8004Settings, key *ecdsa.PrivateKey, log *zap.Logger) (*Chain, error) {
	backoff := time.Second
	for {
		ch, err := dial(ctx, s, key)
		if err == nil {
			log.Info("erc8004: connected", zap.Uint64("chain_id", s.ChainID), zap.String("reputation_registry", ch.Reputation.Hex()),
				zap.String("identity_registry", ch.Identity.Hex()), zap.String("client", ch.From.Hex()))
			return ch, nil
		}
		if errors.Is(err, ErrChainID) {
			return nil, err
		}
		log.Warn("erc8004: chain not reachable; trying again", zap.Duration("in", backoff), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Minute)
	}
}

func dial(ctx context.Context, s component.ERC8004Settings, key *ecdsa.PrivateKey) (*Chain, error) {
	cl, err := ethclient.DialContext(ctx, s.RPCURL)
	if err != nil {
		return nil, fmt.Errorf("erc8004: dial: %w", err)
	}
	var identity common.Address
	if s.Identity != "" {
		identity = common.HexToAddress(s.Identity)
	}
	ch, err := NewChain(ctx, cl, s.ChainID, common.HexToAddress(s.Reputation), identity, key, s.FromBlock)
	if err != nil {
		cl.Close()
		return nil, err
	}
	if s.MaxFeeGwei > 0 {
		wei, _ := new(big.Float).Mul(big.NewFloat(s.MaxFeeGwei), big.NewFloat(1e9)).Int(nil)
		ch.MaxFeeCap = wei
	}
	return ch, nil
}
