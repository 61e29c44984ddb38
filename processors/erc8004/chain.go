package erc8004

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/forum-mcp/forum/processors/erc8004/contracts"
)

// Backend is what the committer asks of a chain: an ethclient.Client, or
// the simulated backend's client in tests.
type Backend interface {
	ChainID(ctx context.Context) (*big.Int, error)
	BlockNumber(ctx context.Context) (uint64, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
	EstimateGas(ctx context.Context, call ethereum.CallMsg) (uint64, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	NonceAt(ctx context.Context, account common.Address, blockNumber *big.Int) (uint64, error)
}

// Event is one NewFeedback event as the committer records it and verify
// reads it.
type Event struct {
	ChainID       uint64 `json:"chain_id"`
	Registry      string `json:"registry"`
	AgentID       string `json:"agent_id"`
	Client        string `json:"client"`
	FeedbackIndex uint64 `json:"feedback_index"`
	Score         uint8  `json:"score"`
	Tag1          string `json:"tag1"`
	Tag2          string `json:"tag2"`
	Endpoint      string `json:"endpoint"`
	FeedbackURI   string `json:"feedback_uri"`
	FeedbackHash  string `json:"feedback_hash"` // 0x + 64 hex: a record's content_sha256
	Block         uint64 `json:"block"`
	Tx            string `json:"tx"`
	LogIndex      uint   `json:"log_index"`
}

// Feedback is one giveFeedback call.
type Feedback struct {
	AgentID      *big.Int
	Score        uint8
	Tag1         string
	Tag2         string
	Endpoint     string
	FeedbackURI  string
	FeedbackHash [32]byte
}

// String is the call as --dry-run prints it.
func (f Feedback) String() string {
	return fmt.Sprintf("giveFeedback(agentId=%s, score=%d, tag1=%q, tag2=%q, endpoint=%q, feedbackURI=%q, feedbackHash=0x%x)",
		f.AgentID, f.Score, f.Tag1, f.Tag2, f.Endpoint, f.FeedbackURI, f.FeedbackHash)
}

// ErrChainID is returned when the endpoint serves another chain than the
// one configured: nothing is signed for a chain nobody named.
var ErrChainID = errors.New("erc8004: chain id mismatch")

// Chain is the registries on one chain, seen from the committer's account.
type Chain struct {
	B          Backend
	ChainID    *big.Int
	Reputation common.Address
	Identity   common.Address
	Key        *ecdsa.PrivateKey // nil: read-only (verify, a dry run without a key)
	From       common.Address    // the key's address: the feedback's clientAddress
	FromBlock  uint64            // event scans start here
	ScanChunk  uint64            // blocks per eth_getLogs (default 5,000: public endpoints cap ranges)
	MaxFeeCap  *big.Int          // nil: none

	rep *contracts.ReputationRegistry
	id  *contracts.IdentityRegistry
}

// NewChain checks the endpoint's chain id and finds the Identity Registry
// (the Reputation Registry's getIdentityRegistry when identity is zero).
func NewChain(ctx context.Context, b Backend, chainID uint64, reputation, identity common.Address, key *ecdsa.PrivateKey, fromBlock uint64) (*Chain, error) {
	got, err := b.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("erc8004: chain id: %w", err)
	}
	if got.Uint64() != chainID || !got.IsUint64() {
		return nil, fmt.Errorf("%w: the endpoint serves chain %s, configured %d", ErrChainID, got, chainID)
	}
	c := &Chain{B: b, ChainID: got, Reputation: reputation, Identity: identity, Key: key, FromBlock: fromBlock,
		rep: contracts.NewReputationRegistry(), id: contracts.NewIdentityRegistry()}
	if key != nil {
		c.From = crypto.PubkeyToAddress(key.PublicKey)
	}
	if identity == (common.Address{}) {
		out, err := c.call(ctx, reputation, c.rep.PackGetIdentityRegistry())
		if err != nil {
			return nil, fmt.Errorf("erc8004: the Reputation Registry at %s names no Identity Registry: %w", reputation, err)
		}
		if c.Identity, err = c.rep.UnpackGetIdentityRegistry(out); err != nil {
			return nil, fmt.Errorf("erc8004: getIdentityRegistry: %w", err)
		}
	}
	return c, nil
}

// ReadKey reads a secp256k1 private key file: 64 hex digits (0x optional),
// surrounding whitespace ignored.
func ReadKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("erc8004: key file: %w", err)
	}
	k, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"))
	if err != nil {
		return nil, fmt.Errorf("erc8004: key file %s: %w", path, err)
	}
	return k, nil
}

func (c *Chain) call(ctx context.Context, to common.Address, data []byte) ([]byte, error) {
	return c.B.CallContract(ctx, ethereum.CallMsg{From: c.From, To: &to, Data: data}, nil)
}

// isRevert tells a call the contract refused from a failure to ask.
func isRevert(err error) bool {
	var de rpc.DataError
	if errors.As(err, &de) {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "execution reverted")
}

// CheckRater refuses a feedback the registry forbids: an agent that does
// not exist, or one whose owner, approved address or operator is the
// committer's own account (a self-rating). It returns a *Refusal, nil, or
// an error for a chain that could not be asked.
func (c *Chain) CheckRater(ctx context.Context, agentID *big.Int) error {
	out, err := c.call(ctx, c.Identity, c.id.PackOwnerOf(agentID))
	if isRevert(err) {
		return refuse(ReasonNoAgent, "agent %s does not exist in the Identity Registry %s", agentID, c.Identity)
	}
	if err != nil {
		return fmt.Errorf("erc8004: ownerOf(%s): %w", agentID, err)
	}
	owner, err := c.id.UnpackOwnerOf(out)
	if err != nil {
		return fmt.Errorf("erc8004: ownerOf(%s): %w", agentID, err)
	}
	if owner == (common.Address{}) {
		return refuse(ReasonNoAgent, "agent %s has no owner", agentID)
	}
	if owner == c.From {
		return refuse(ReasonSelfRating, "the committer %s owns agent %s", c.From, agentID)
	}
	out, err = c.call(ctx, c.Identity, c.id.PackGetApproved(agentID))
	if err != nil {
		return fmt.Errorf("erc8004: getApproved(%s): %w", agentID, err)
	}
	if approved, err := c.id.UnpackGetApproved(out); err != nil {
		return fmt.Errorf("erc8004: getApproved(%s): %w", agentID, err)
	} else if approved == c.From {
		return refuse(ReasonSelfRating, "the committer %s is the approved address of agent %s", c.From, agentID)
	}
	out, err = c.call(ctx, c.Identity, c.id.PackIsApprovedForAll(owner, c.From))
	if err != nil {
		return fmt.Errorf("erc8004: isApprovedForAll: %w", err)
	}
	if op, err := c.id.UnpackIsApprovedForAll(out); err != nil {
		return fmt.Errorf("erc8004: isApprovedForAll: %w", err)
	} else if op {
		return refuse(ReasonSelfRating, "the committer %s is an operator of agent %s's owner %s", c.From, agentID, owner)
	}
	return nil
}

// Pack is the calldata of a feedback.
func (c *Chain) Pack(f Feedback) []byte {
	return c.rep.PackGiveFeedback(f.AgentID, f.Score, f.Tag1, f.Tag2, f.Endpoint, f.FeedbackURI, f.FeedbackHash)
}

// Estimate is the gas of a call with a margin; a call the registry would
// revert is a *Refusal (it would revert again).
func (c *Chain) Estimate(ctx context.Context, data []byte) (uint64, error) {
	gas, err := c.B.EstimateGas(ctx, ethereum.CallMsg{From: c.From, To: &c.Reputation, Data: data})
	if isRevert(err) {
		return 0, refuse(ReasonWouldRevert, "giveFeedback would revert: %v", err)
	}
	if err != nil {
		return 0, fmt.Errorf("erc8004: estimate gas: %w", err)
	}
	return gas + gas/5, nil // storage writes vary with string lengths; unused gas is not paid
}

// ErrFeeCap is returned while the chain's fees are above MaxFeeCap: the
// feedback waits (retried) rather than overpay.
var ErrFeeCap = errors.New("erc8004: fees above the configured cap")

// Fees are an EIP-1559 tip and fee cap: the suggested tip, and twice the
// head's base fee plus the tip (room for six full blocks of base-fee rise).
func (c *Chain) Fees(ctx context.Context) (tip, feeCap *big.Int, err error) {
	if tip, err = c.B.SuggestGasTipCap(ctx); err != nil {
		return nil, nil, fmt.Errorf("erc8004: gas tip: %w", err)
	}
	head, err := c.B.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("erc8004: head: %w", err)
	}
	base := head.BaseFee
	if base == nil {
		base = new(big.Int)
	}
	feeCap = new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip)
	if c.MaxFeeCap != nil && feeCap.Cmp(c.MaxFeeCap) > 0 {
		if new(big.Int).Add(base, tip).Cmp(c.MaxFeeCap) > 0 {
			return nil, nil, fmt.Errorf("%w: base fee %s + tip %s wei", ErrFeeCap, base, tip)
		}
		feeCap = new(big.Int).Set(c.MaxFeeCap)
	}
	return tip, feeCap, nil
}

// Sign builds and signs the giveFeedback transaction.
func (c *Chain) Sign(data []byte, nonce, gas uint64, tip, feeCap *big.Int) (*types.Transaction, error) {
	if c.Key == nil {
		return nil, errors.New("erc8004: no key to sign with")
	}
	to := c.Reputation
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: c.ChainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: &to, Data: data})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(c.ChainID), c.Key)
	if err != nil {
		return nil, fmt.Errorf("erc8004: sign: %w", err)
	}
	return signed, nil
}

// Events returns the NewFeedback events of the Reputation Registry given by
// client (any client when zero) in blocks [from, to], in chain order,
// asking ScanChunk blocks at a time.
func (c *Chain) Events(ctx context.Context, client common.Address, from, to uint64) ([]Event, error) {
	chunk := c.ScanChunk
	if chunk == 0 {
		chunk = 5000
	}
	topics := [][]common.Hash{{c.rep.GetABI().Events["NewFeedback"].ID}, nil}
	if client != (common.Address{}) {
		topics = append(topics, []common.Hash{common.BytesToHash(client.Bytes())})
	}
	var out []Event
	for lo := from; lo <= to; lo += chunk {
		hi := min(lo+chunk-1, to)
		logs, err := c.B.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(lo), ToBlock: new(big.Int).SetUint64(hi),
			Addresses: []common.Address{c.Reputation}, Topics: topics})
		if err != nil {
			return nil, fmt.Errorf("erc8004: NewFeedback events in blocks %d-%d: %w", lo, hi, err)
		}
		for i := range logs {
			if ev, ok := c.event(&logs[i]); ok {
				out = append(out, ev)
			}
		}
		if hi == to {
			break
		}
	}
	return out, nil
}

// ReceiptEvents returns the NewFeedback events a receipt holds.
func (c *Chain) ReceiptEvents(r *types.Receipt) []Event {
	var out []Event
	for _, l := range r.Logs {
		if ev, ok := c.event(l); ok {
			out = append(out, ev)
		}
	}
	return out
}

func (c *Chain) event(l *types.Log) (Event, bool) {
	if l.Address != c.Reputation || l.Removed {
		return Event{}, false
	}
	e, err := c.rep.UnpackNewFeedbackEvent(l)
	if err != nil {
		return Event{}, false
	}
	return Event{ChainID: c.ChainID.Uint64(), Registry: c.Reputation.Hex(), AgentID: e.AgentId.String(), Client: e.ClientAddress.Hex(),
		FeedbackIndex: e.FeedbackIndex, Score: e.Score, Tag1: e.Tag1, Tag2: e.Tag2, Endpoint: e.Endpoint, FeedbackURI: e.FeedbackURI,
		FeedbackHash: "0x" + hex.EncodeToString(e.FeedbackHash[:]), Block: l.BlockNumber, Tx: l.TxHash.Hex(), LogIndex: l.Index}, true
}

// AgentURIs returns the latest agentURI of every agent registered (or
// re-pointed) in blocks [from, to] of the Identity Registry.
func (c *Chain) AgentURIs(ctx context.Context, from, to uint64) (map[string]string, error) {
	chunk := c.ScanChunk
	if chunk == 0 {
		chunk = 5000
	}
	ev := c.id.GetABI().Events
	topics := [][]common.Hash{{ev["Registered"].ID, ev["URIUpdated"].ID}}
	out := map[string]string{}
	for lo := from; lo <= to; lo += chunk {
		hi := min(lo+chunk-1, to)
		logs, err := c.B.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(lo), ToBlock: new(big.Int).SetUint64(hi),
			Addresses: []common.Address{c.Identity}, Topics: topics})
		if err != nil {
			return nil, fmt.Errorf("erc8004: Identity Registry events in blocks %d-%d: %w", lo, hi, err)
		}
		for i := range logs {
			l := &logs[i]
			if l.Removed {
				continue
			}
			if r, err := c.id.UnpackRegisteredEvent(l); err == nil {
				out[r.AgentId.String()] = r.AgentURI
			} else if u, err := c.id.UnpackURIUpdatedEvent(l); err == nil {
				out[u.AgentId.String()] = u.NewURI
			}
		}
		if hi == to {
			break
		}
	}
	return out, nil
}

// HashOf parses a content_sha256 (64 hex digits, 0x optional) into a
// feedbackHash.
func HashOf(s string) ([32]byte, error) {
	var h [32]byte
	b, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(s), "0x"))
	if err != nil || len(b) != 32 {
		return h, fmt.Errorf("erc8004: %q is not a SHA-256 in hex", s)
	}
	copy(h[:], b)
	return h, nil
}

// SameHash compares a content_sha256 with a feedbackHash, either written
// with or without 0x.
func SameHash(a, b string) bool {
	return strings.EqualFold(strings.TrimPrefix(strings.ToLower(a), "0x"), strings.TrimPrefix(strings.ToLower(b), "0x"))
}
