package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/processors/erc8004"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// bindERC8004 binds the ERC-8004 committer's settings (off unless an RPC
// URL or a dry run is given), with defaults from FORUM_ERC8004_*.
func (c *config) bindERC8004(fs *pflag.FlagSet) {
	e := &c.erc8004
	chainID, _ := strconv.ParseUint(os.Getenv("FORUM_ERC8004_CHAIN_ID"), 10, 64)
	fs.StringVar(&e.RPCURL, "erc8004-rpc-url", os.Getenv("FORUM_ERC8004_RPC_URL"), "JSON-RPC endpoint of the chain the ERC-8004 registries live on; empty: the committer is off (env FORUM_ERC8004_RPC_URL)")
	fs.Uint64Var(&e.ChainID, "erc8004-chain-id", chainID, "the chain's id, checked against the endpoint before anything is signed (env FORUM_ERC8004_CHAIN_ID)")
	fs.StringVar(&e.Reputation, "erc8004-reputation-registry", os.Getenv("FORUM_ERC8004_REPUTATION_REGISTRY"), "address of the Reputation Registry (env FORUM_ERC8004_REPUTATION_REGISTRY)")
	fs.StringVar(&e.Identity, "erc8004-identity-registry", os.Getenv("FORUM_ERC8004_IDENTITY_REGISTRY"), "address of the Identity Registry (default: the one the Reputation Registry names) (env FORUM_ERC8004_IDENTITY_REGISTRY)")
	fs.StringVar(&e.KeyFile, "erc8004-key-file", os.Getenv("FORUM_ERC8004_KEY_FILE"), "file holding the committer's secp256k1 private key in hex: the feedback's clientAddress, which pays the gas (env FORUM_ERC8004_KEY_FILE)")
	fs.StringVar(&e.Agents, "erc8004-agents", os.Getenv("FORUM_ERC8004_AGENTS"), `JSON file mapping registry server names to agentIds: {"agents":[{"server":"…","agent_id":"42","endpoint":"https://…"}]} (env FORUM_ERC8004_AGENTS)`)
	fs.BoolVar(&e.Discover, "erc8004-discover", os.Getenv("FORUM_ERC8004_DISCOVER") == "1", "also map servers through the Identity Registry: an agent whose registration file lists an MCP endpoint equal to a server's remote (env FORUM_ERC8004_DISCOVER=1)")
	fs.Uint64Var(&e.FromBlock, "erc8004-from-block", 0, "first block of the registries' event scans (their deployment block)")
	fs.StringVar(&e.APIBase, "erc8004-api-base", envOr("FORUM_API_BASE", erc8004.DefaultAPIBase), "public API base URL of feedbackURI (env FORUM_API_BASE)")
	fs.BoolVar(&e.DryRun, "erc8004-dry-run", false, "print the giveFeedback calls the committer would make, send nothing")
	fs.DurationVar(&e.MinInterval, "erc8004-min-interval", 24*time.Hour, "least event time between two feedbacks for one server")
	fs.DurationVar(&e.MaxAge, "erc8004-max-age", 72*time.Hour, "skip publications computed longer ago than this (a replay of history spends no gas; 0: none)")
	fs.Float64Var(&e.MaxFeeGwei, "erc8004-max-fee-gwei", 0, "highest fee per gas a feedback transaction may offer, in gwei; above it the feedback waits (0: no cap)")
}

func newERC8004Cmd() *cobra.Command {
	cfg := &config{}
	var dryRun bool
	var pubID string
	cmd := &cobra.Command{
		Use:   "erc8004 [--dry-run] [--publication ID|latest|all]",
		Short: "Commit stored publications into the ERC-8004 Reputation Registry now (or, with --dry-run, print the calls)",
		Long: `erc8004 runs the ERC-8004 committer once over publications in the store, oldest
first: for each server with an agent (--erc8004-agents, --erc8004-discover)
whose score or band changed since its last feedback (at most once per
--erc8004-min-interval), one giveFeedback(agentId, score, tag1 = the method,
tag2 = its version, endpoint = the server's remote, feedbackURI = the record's
API URL, feedbackHash = its content_sha256). The running pipeline does the
same continuously (the erc8004 component of run and process); --erc8004-max-age
does not apply here.

With --dry-run nothing is signed or sent: the calls are printed, one per line,
and state lasts for this run only. A dry run needs only the agents file; with
--erc8004-rpc-url (and --erc8004-key-file) it also skips records already on
chain and refuses self-ratings as a real run would.

Examples:
  forum erc8004 --dry-run --erc8004-agents agents.json
  forum erc8004 --publication latest --erc8004-agents agents.json \
    --erc8004-rpc-url https://rpc.example --erc8004-chain-id 8453 \
    --erc8004-reputation-registry 0x… --erc8004-key-file committer.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if dryRun {
				cfg.erc8004.DryRun = true
			}
			cfg.erc8004.MaxAge = 0
			if !erc8004.Enabled(cfg.erc8004) {
				return usageError{errors.New("give --erc8004-rpc-url (and the rest of the chain's settings) or --dry-run")}
			}
			a, err := openApp(ctx, cfg, withStore)
			if err != nil {
				return err
			}
			defer a.close()
			d, err := a.deps()
			if err != nil {
				return err
			}
			su, err := erc8004.NewSetup(d)
			if errors.Is(err, erc8004.ErrConfig) || errors.Is(err, erc8004.ErrBadAgents) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			if cfg.erc8004.DryRun {
				su.Stage.Committer.DryRun = cmd.OutOrStdout()
			}
			if err := su.Connect(ctx, false); err != nil {
				return err
			}
			ts, ok := a.store.(store.TrustStore)
			if !ok {
				return fmt.Errorf("the store %T keeps no publications", a.store)
			}
			pubs, err := ts.Publications(ctx, store.MaxEventLimit)
			if err != nil {
				return err
			}
			switch pubID {
			case "all":
			case "latest":
				if len(pubs) > 0 {
					pubs = pubs[:1]
				}
			default:
				p, err := ts.GetPublication(ctx, pubID)
				if errors.Is(err, store.ErrNotFound) {
					return usageError{fmt.Errorf("no publication %q", pubID)}
				} else if err != nil {
					return err
				}
				pubs = []store.Publication{p}
			}
			if len(pubs) == 0 {
				return errors.New("the store holds no publication yet")
			}
			for i := len(pubs) - 1; i >= 0; i-- { // oldest first
				p := pubs[i]
				if err := su.Stage.Publication(ctx, schema.PublicationMsg{ID: p.ID, MethodVersion: p.MethodVersion, WeightsSHA256: p.WeightsSHA256,
					RecordCount: p.RecordCount, MerkleRoot: p.MerkleRoot, Signature: p.Signature, KeyID: p.KeyID, ComputedAt: p.ComputedAt}); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindERC8004(cmd.Flags())
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the giveFeedback calls, send nothing (same as --erc8004-dry-run)")
	cmd.Flags().StringVar(&pubID, "publication", "all", "a publication id, latest, or all (oldest first)")
	return cmd
}

// feedbackVerify is forum verify's on-chain check of one record.
type feedbackVerify struct {
	record   string // a record file
	server   string // or this server's record in --export
	eventLog string // a recorded event log (the committer's erc8004.log, or event JSON lines)
	client   string
	chain    component.ERC8004Settings
}

func (f *feedbackVerify) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.record, "record", "", "a sealed record to check on chain: the record JSON, or a GET /v1/servers/{name}/trust or /proof response")
	fs.StringVar(&f.server, "server", "", "with --export: check this server's record of the export on chain")
	fs.StringVar(&f.eventLog, "feedback-log", "", "a recorded NewFeedback event log: the committer's DATA_DIR/erc8004.log, or JSON lines of events (instead of asking the chain)")
	fs.StringVar(&f.client, "erc8004-client", "", "only feedback given by this address counts (default: the address of --erc8004-key-file, else any)")
	var all config
	all.bindERC8004(pflag.NewFlagSet("erc8004", pflag.ContinueOnError))
	// The chain's settings only, with the committer's flag names and env.
	e := &f.chain
	*e = all.erc8004
	fs.StringVar(&e.RPCURL, "erc8004-rpc-url", e.RPCURL, "JSON-RPC endpoint to read NewFeedback events from (env FORUM_ERC8004_RPC_URL)")
	fs.Uint64Var(&e.ChainID, "erc8004-chain-id", e.ChainID, "the chain's id (env FORUM_ERC8004_CHAIN_ID)")
	fs.StringVar(&e.Reputation, "erc8004-reputation-registry", e.Reputation, "address of the Reputation Registry (env FORUM_ERC8004_REPUTATION_REGISTRY)")
	fs.StringVar(&e.Identity, "erc8004-identity-registry", e.Identity, "address of the Identity Registry (default: the one the Reputation Registry names)")
	fs.StringVar(&e.KeyFile, "erc8004-key-file", e.KeyFile, "the committer's key file: only its feedback counts (see --erc8004-client) (env FORUM_ERC8004_KEY_FILE)")
	fs.Uint64Var(&e.FromBlock, "erc8004-from-block", 0, "first block to read events from")
}

func (f *feedbackVerify) active() bool { return f.record != "" || f.server != "" }

// run checks the record against the recorded events or the chain's.
func (f *feedbackVerify) run(ctx context.Context, w io.Writer, export string) error {
	rec, err := f.readRecord(export)
	if err != nil {
		return err
	}
	client := f.client
	if client == "" && f.chain.KeyFile != "" {
		k, err := erc8004.ReadKey(f.chain.KeyFile)
		if err != nil {
			return usageError{err}
		}
		client = crypto.PubkeyToAddress(k.PublicKey).Hex()
	}
	var events []erc8004.Event
	var source string
	switch {
	case f.eventLog != "" && f.chain.RPCURL != "":
		return usageError{errors.New("give either --feedback-log or --erc8004-rpc-url")}
	case f.eventLog != "":
		fh, err := os.Open(f.eventLog)
		if err != nil {
			return usageError{fmt.Errorf("--feedback-log: %w", err)}
		}
		events, err = erc8004.ReadEvents(fh)
		fh.Close()
		if err != nil {
			return err
		}
		source = f.eventLog
	case f.chain.RPCURL != "":
		s := f.chain
		if s.ChainID == 0 || !common.IsHexAddress(s.Reputation) {
			return usageError{errors.New("--erc8004-rpc-url needs --erc8004-chain-id and --erc8004-reputation-registry")}
		}
		cl, err := ethclient.DialContext(ctx, s.RPCURL)
		if err != nil {
			return fmt.Errorf("--erc8004-rpc-url: %w", err)
		}
		defer cl.Close()
		var identity common.Address
		if s.Identity != "" {
			identity = common.HexToAddress(s.Identity)
		}
		ch, err := erc8004.NewChain(ctx, cl, s.ChainID, common.HexToAddress(s.Reputation), identity, nil, s.FromBlock)
		if err != nil {
			return err
		}
		head, err := cl.BlockNumber(ctx)
		if err != nil {
			return err
		}
		var from common.Address
		if client != "" {
			from = common.HexToAddress(client)
		}
		if events, err = ch.Events(ctx, from, s.FromBlock, head); err != nil {
			return err
		}
		source = fmt.Sprintf("chain %d, blocks %d-%d", s.ChainID, s.FromBlock, head)
	default:
		return usageError{errors.New("give --feedback-log FILE or --erc8004-rpc-url (with --erc8004-chain-id and --erc8004-reputation-registry)")}
	}
	m, err := erc8004.VerifyRecord(rec, events, client)
	if err != nil {
		return fmt.Errorf("on-chain check (%s): %w", source, err)
	}
	ev := m.Event
	fmt.Fprintf(w, "ok: the record of %s in %s (content_sha256 %s) is feedback #%d of %s to agent %s in the Reputation Registry %s on chain %d: score %d, tx %s, block %d\n",
		m.Server, m.PublicationID, m.ContentSHA256, ev.FeedbackIndex, ev.Client, ev.AgentID, ev.Registry, ev.ChainID, ev.Score, ev.Tx, ev.Block)
	return nil
}

// readRecord reads --record (a record, or an API response holding one) or
// --server's record from the export.
func (f *feedbackVerify) readRecord(export string) ([]byte, error) {
	if f.record != "" {
		b, err := os.ReadFile(f.record)
		if err != nil {
			return nil, usageError{fmt.Errorf("--record: %w", err)}
		}
		var wrapped struct {
			Record json.RawMessage `json:"record"`
		}
		if json.Unmarshal(b, &wrapped) == nil && len(wrapped.Record) > 0 && wrapped.Record[0] == '{' {
			return wrapped.Record, nil
		}
		return b, nil
	}
	if export == "" {
		return nil, usageError{errors.New("--server needs --export")}
	}
	data, err := os.ReadFile(export)
	if err != nil {
		return nil, usageError{fmt.Errorf("--export: %w", err)}
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i == 0 || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if _, server, err := publish.Canonical(line); err == nil && server == f.server {
			return line, nil
		}
	}
	return nil, usageError{fmt.Errorf("the export holds no record of %q", f.server)}
}
