package erc8004

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Outcomes of Commit (besides the decisions Unchanged, TooSoon, NoScore).
const (
	Sent    = "sent"    // a NewFeedback is on chain, from this call
	Already = "already" // the record is on chain already (the local log or the chain's events)
	Refused = "refused" // refused before anything was sent (a *Refusal says why)
	DryRun  = "dry_run" // printed, not sent
	Skipped = "refused_before"
)

// Committer gives feedback for records, once each: the core of the stage,
// callable alone (tests, a dry run).
//
// Idempotence: a record is identified by its content_sha256, the
// feedbackHash. Before a transaction is broadcast its signed bytes are in
// the local log (fsynced); a restart finds them, looks their receipts up,
// and re-broadcasts the same bytes (same nonce: the chain takes it at most
// once) when none is mined. Records on chain but not in the log (a lost
// log, a second data dir) are found among the committer's own NewFeedback
// events, scanned at start and before every send. Feedback is sent one
// transaction at a time, so the account's nonce is never ahead of what the
// log knows.
type Committer struct {
	Chain *Chain // nil only for a dry run without an RPC endpoint
	Log   *Log   // nil: memory only (a dry run)
	// DryRun, when set, receives each call that would be made, one per
	// line; nothing is signed or sent and the local log is not written.
	DryRun io.Writer
	// Tag1 names the method (tag1), APIBase the API feedbackURI points into.
	Tag1        string
	APIBase     string
	MinInterval time.Duration // between two feedbacks of one server, in event time (default 24 h)
	// ReceiptTimeout is how long a transaction may stay unmined before its
	// fees are bumped (default 3 min), at most MaxBumps times (default 3).
	ReceiptTimeout time.Duration
	MaxBumps       int
	Poll           time.Duration // receipt polling (default 1 s)
	// MaxAttempts bounds the tries of one feedback within a call (default
	// 5), with a capped back-off between them (Backoff doubling up to
	// MaxBackoff: 1 s and 1 min by default); then Commit returns the error
	// and the stage's batch comes again later.
	MaxAttempts int
	Backoff     time.Duration
	MaxBackoff  time.Duration
	Metrics     *Metrics
	Logger      *zap.Logger

	mu       sync.Mutex
	opened   bool
	last     map[string]Last      // per server: the last feedback given
	refused  map[string]time.Time // per server: the event time of the last refusal
	mined    map[string]Event     // content hash -> its event
	refusals map[string]string    // content hash -> reason
	pending  map[string]*pending  // content hash -> signed, not known mined
	order    []string             // pending hashes in log order
	chainBy  map[string]Event     // agent id -> the latest of our events (state when the log has none)
	scanned  uint64               // events scanned through this block (0: none)

	// Test hooks: called after a transaction is logged and after it is
	// broadcast (a test kills the process there).
	afterLog  func(tx *types.Transaction)
	afterSend func(tx *types.Transaction)
}

// pending is a feedback signed (perhaps broadcast) and not known mined:
// every attempt has the same nonce, later ones with higher fees.
type pending struct {
	entry    Entry // the first sent entry (server, score, band, …)
	attempts []*types.Transaction
}

// Metrics count the committer's work.
type Metrics struct {
	Feedback *prometheus.CounterVec // {outcome}
	Retries  prometheus.Counter
}

// NewMetrics registers the committer's metrics on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Feedback: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_erc8004_feedback_total",
			Help: "Records the ERC-8004 committer considered, by outcome (sent, already, refused, unchanged, too_soon, no_score, dry_run)."}, []string{"outcome"}),
		Retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_erc8004_retries_total",
			Help: "Chain calls or transactions the ERC-8004 committer tried again after a failure."}),
	}
	if reg != nil {
		reg.MustRegister(m.Feedback, m.Retries)
	}
	return m
}

func (c *Committer) log() *zap.Logger {
	if c.Logger == nil {
		return zap.NewNop()
	}
	return c.Logger
}

func (c *Committer) count(outcome string) {
	if c.Metrics != nil {
		c.Metrics.Feedback.WithLabelValues(outcome).Inc()
	}
}

func (c *Committer) defaults() {
	if c.MinInterval <= 0 {
		c.MinInterval = 24 * time.Hour
	}
	if c.ReceiptTimeout <= 0 {
		c.ReceiptTimeout = 3 * time.Minute
	}
	if c.MaxBumps <= 0 {
		c.MaxBumps = 3
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = time.Minute
	}
}

// FeedbackURI is the API URL of a record in one publication: its proof
// route, which serves that exact record with its inclusion proof and the
// signed publication header.
func FeedbackURI(apiBase, server, publicationID string) string {
	return strings.TrimRight(apiBase, "/") + "/v1/servers/" + url.PathEscape(server) + "/proof?publication=" + url.QueryEscape(publicationID)
}

// Open reads the local log, settles every transaction it left pending
// (mined, or sent again with the same bytes, or abandoned when its nonce
// went to another transaction) and scans the chain for the committer's
// own feedback. Commit opens on first use; call Open to do it up front.
func (c *Committer) Open(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open(ctx)
}

func (c *Committer) open(ctx context.Context) error {
	if c.opened {
		return nil
	}
	c.defaults()
	c.last, c.refused = map[string]Last{}, map[string]time.Time{}
	c.mined, c.refusals, c.pending, c.chainBy = map[string]Event{}, map[string]string{}, map[string]*pending{}, map[string]Event{}
	c.order = nil
	if c.Log != nil && c.DryRun == nil {
		es, err := c.Log.Entries()
		if err != nil {
			return err
		}
		for _, e := range es {
			c.replay(e)
		}
	}
	// Without a key there is no clientAddress to find our own feedback by
	// (a dry run without --erc8004-key-file).
	if c.Chain != nil && c.Chain.Key != nil {
		if err := c.settle(ctx); err != nil {
			return err
		}
		if err := c.scan(ctx); err != nil {
			return err
		}
	}
	c.opened = true
	return nil
}

// replay folds one log entry into the state.
func (c *Committer) replay(e Entry) {
	h := strings.ToLower(e.Hash)
	switch e.Kind {
	case KindSent:
		raw, err := hexutil.Decode(e.Raw)
		tx := new(types.Transaction)
		if err != nil || tx.UnmarshalBinary(raw) != nil {
			c.log().Warn("erc8004 log: a sent entry without a readable transaction", zap.String("content_sha256", h), zap.String("tx", e.Tx))
			return
		}
		if _, done := c.mined[h]; done {
			return
		}
		p := c.pending[h]
		if p == nil {
			p = &pending{entry: e}
			c.pending[h] = p
			c.order = append(c.order, h)
		}
		p.attempts = append(p.attempts, tx)
	case KindMined:
		ev := Event{}
		if e.Event != nil {
			ev = *e.Event
		}
		c.mined[h] = ev
		c.dropPending(h)
		c.remember(e.Server, Last{Score: e.Score, Band: e.Band, At: e.ComputedAt, Hash: h})
	case KindRefused:
		c.refusals[h] = e.Reason
		c.dropPending(h)
		if e.Server != "" && e.ComputedAt.After(c.refused[e.Server]) {
			c.refused[e.Server] = e.ComputedAt
		}
	case KindAbandoned:
		c.dropPending(h)
	}
}

func (c *Committer) dropPending(h string) {
	if _, ok := c.pending[h]; !ok {
		return
	}
	delete(c.pending, h)
	for i, x := range c.order {
		if x == h {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// remember keeps the newest feedback of a server (in event time).
func (c *Committer) remember(server string, l Last) {
	if server == "" {
		return
	}
	if cur, ok := c.last[server]; ok && cur.At.After(l.At) {
		return
	}
	c.last[server] = l
}

// settle resolves what the log left pending.
func (c *Committer) settle(ctx context.Context) error {
	for _, h := range append([]string(nil), c.order...) {
		p := c.pending[h]
		if _, err := c.deliver(ctx, h, p); err != nil && !errors.Is(err, errAbandoned) {
			return fmt.Errorf("erc8004: settling the feedback of %s (content_sha256 %s) left by the last run: %w", p.entry.Server, h, err)
		}
	}
	return nil
}

// scan reads the committer's own NewFeedback events from where it last
// stopped (the first time: FromBlock) to the head: records already on
// chain, even when the local log does not know them.
func (c *Committer) scan(ctx context.Context) error {
	head, err := c.Chain.B.BlockNumber(ctx)
	if err != nil {
		return fmt.Errorf("erc8004: head: %w", err)
	}
	from := c.Chain.FromBlock
	if c.scanned > 0 {
		from = c.scanned + 1
	}
	if from > head {
		return nil
	}
	evs, err := c.Chain.Events(ctx, c.Chain.From, from, head)
	if err != nil {
		return err
	}
	var found []Entry
	for _, ev := range evs {
		h := strings.ToLower(strings.TrimPrefix(ev.FeedbackHash, "0x"))
		c.chainBy[ev.AgentID] = ev
		if _, ok := c.mined[h]; ok {
			continue
		}
		c.mined[h] = ev
		c.dropPending(h)
		e := ev
		found = append(found, Entry{Kind: KindMined, Hash: h, AgentID: ev.AgentID, Score: ev.Score, Tx: ev.Tx, Reason: "found_on_chain", Event: &e})
	}
	if len(found) > 0 && c.Log != nil && c.DryRun == nil {
		if err := c.Log.Append(found...); err != nil {
			return err
		}
	}
	c.scanned = head
	return nil
}

// Commit gives feedback for one record of a server with an agent, when the
// change rule says so and it was never given before; it returns the
// outcome. A refusal is an outcome with a *Refusal error (nothing was
// sent, and the record is not tried again); any other error means the
// chain could not be reached or the transaction not settled within
// MaxAttempts: calling again later is safe.
func (c *Committer) Commit(ctx context.Context, a Agent, cand Candidate) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.open(ctx); err != nil {
		return "", err
	}
	out, err := c.commit(ctx, a, cand)
	if out != "" {
		c.count(out)
	}
	return out, err
}

func (c *Committer) commit(ctx context.Context, a Agent, cand Candidate) (string, error) {
	h := strings.ToLower(strings.TrimPrefix(cand.ContentSHA256, "0x"))
	hash, err := HashOf(h)
	if err != nil {
		return "", err
	}
	if p, ok := c.pending[h]; ok {
		// Signed by an earlier call that could not settle it: finish that
		// transaction, never sign a second one while it may still land.
		out, err := c.deliver(ctx, h, p)
		if !errors.Is(err, errAbandoned) {
			return out, err
		}
	}
	if _, ok := c.mined[h]; ok {
		c.advance(cand, h)
		return Already, nil
	}
	if _, ok := c.refusals[h]; ok {
		return Skipped, nil
	}
	prev, ok := c.last[cand.Server]
	var pp *Last
	if ok {
		pp = &prev
	} else if ev, ok := c.chainBy[a.AgentID.String()]; ok {
		// No feedback of this server in the log, but ours on chain: compare
		// with its score (the band is not on chain).
		pp = &Last{Score: ev.Score}
	}
	decision, score, err := Decide(pp, cand, c.MinInterval)
	if err != nil {
		return c.refuse(a, cand, h, score, err)
	}
	if decision != Send {
		return decision, nil
	}
	if t, ok := c.refused[cand.Server]; ok && cand.ComputedAt.Sub(t) < c.MinInterval {
		return TooSoon, nil // a refusal counts against the daily allowance too
	}
	endpoint := a.Endpoint
	if endpoint == "" && len(cand.Remotes) > 0 {
		endpoint = cand.Remotes[0]
	}
	f := Feedback{AgentID: a.AgentID, Score: score, Tag1: c.Tag1, Tag2: cand.MethodVersion, Endpoint: endpoint,
		FeedbackURI: FeedbackURI(c.APIBase, cand.Server, cand.PublicationID), FeedbackHash: hash}
	if c.DryRun != nil {
		return c.dryRun(ctx, a, cand, h, f)
	}
	if c.Chain == nil {
		return c.refuse(a, cand, h, score, refuse(ReasonChainMissing, "no chain configured"))
	}
	var last error
	for attempt := 1; attempt <= c.MaxAttempts; attempt++ {
		if attempt > 1 {
			if err := c.sleep(ctx, attempt); err != nil {
				return "", err
			}
		}
		out, err := c.send(ctx, a, cand, h, f)
		var r *Refusal
		switch {
		case errors.As(err, &r):
			return c.refuse(a, cand, h, score, err)
		case err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			return out, err
		}
		last = err
		c.log().Warn("erc8004: feedback not settled; trying again", zap.String("server", cand.Server), zap.Int("attempt", attempt), zap.Error(err))
		if c.Metrics != nil {
			c.Metrics.Retries.Inc()
		}
	}
	return "", fmt.Errorf("erc8004: feedback for %s after %d attempts: %w", cand.Server, c.MaxAttempts, last)
}

// sleep is the capped, doubling back-off before attempt n (n ≥ 2).
func (c *Committer) sleep(ctx context.Context, n int) error {
	d := c.Backoff << (n - 2)
	if d > c.MaxBackoff || d <= 0 {
		d = c.MaxBackoff
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// advance makes a record on chain the server's last feedback.
func (c *Committer) advance(cand Candidate, h string) {
	if cand.Score == nil {
		return
	}
	if s, err := OnChainScore(*cand.Score); err == nil {
		c.remember(cand.Server, Last{Score: s, Band: cand.Band, At: cand.ComputedAt, Hash: h})
	}
}

func (c *Committer) refuse(a Agent, cand Candidate, h string, score uint8, err error) (string, error) {
	var r *Refusal
	if !errors.As(err, &r) {
		return "", err
	}
	c.log().Warn("erc8004: feedback refused, nothing sent", zap.String("server", cand.Server), zap.String("agent_id", a.AgentID.String()),
		zap.String("reason", r.Reason), zap.String("detail", r.Detail))
	c.refusals[h] = r.Reason
	if cand.ComputedAt.After(c.refused[cand.Server]) {
		c.refused[cand.Server] = cand.ComputedAt
	}
	if c.Log != nil && c.DryRun == nil {
		if lerr := c.Log.Append(Entry{Kind: KindRefused, Hash: h, Server: cand.Server, PublicationID: cand.PublicationID, ComputedAt: cand.ComputedAt,
			AgentID: a.AgentID.String(), Score: score, Band: cand.Band, Reason: r.Reason + ": " + r.Detail}); lerr != nil {
			return "", lerr
		}
	}
	return Refused, err
}

func (c *Committer) dryRun(ctx context.Context, a Agent, cand Candidate, h string, f Feedback) (string, error) {
	note := ""
	if c.Chain != nil {
		if c.Chain.Key != nil {
			if err := c.Chain.CheckRater(ctx, a.AgentID); err != nil {
				var r *Refusal
				if !errors.As(err, &r) {
					return "", err
				}
				return c.refuse(a, cand, h, f.Score, err)
			}
		}
		note = fmt.Sprintf(" to %s on chain %s", c.Chain.Reputation.Hex(), c.Chain.ChainID)
	}
	if _, err := fmt.Fprintf(c.DryRun, "dry-run: %s%s  # %s, band %s, publication %s\n", f, note, cand.Server, cand.Band, cand.PublicationID); err != nil {
		return "", fmt.Errorf("erc8004: dry run output: %w", err)
	}
	c.mined[h] = Event{}
	c.advance(cand, h)
	return DryRun, nil
}

// send checks, signs, logs and delivers one feedback; one already signed
// (an earlier attempt whose broadcast failed) is delivered, not signed
// again.
func (c *Committer) send(ctx context.Context, a Agent, cand Candidate, h string, f Feedback) (string, error) {
	if p, ok := c.pending[h]; ok {
		return c.deliver(ctx, h, p)
	}
	if err := c.Chain.CheckRater(ctx, a.AgentID); err != nil {
		return "", err
	}
	// Ours on chain already (a lost log, another data dir): never twice.
	if err := c.scan(ctx); err != nil {
		return "", err
	}
	if _, ok := c.mined[h]; ok {
		c.advance(cand, h)
		return Already, nil
	}
	data := c.Chain.Pack(f)
	gas, err := c.Chain.Estimate(ctx, data)
	if err != nil {
		return "", err
	}
	nonce, err := c.Chain.B.PendingNonceAt(ctx, c.Chain.From)
	if err != nil {
		return "", fmt.Errorf("erc8004: nonce: %w", err)
	}
	tip, feeCap, err := c.Chain.Fees(ctx)
	if err != nil {
		return "", err
	}
	tx, err := c.Chain.Sign(data, nonce, gas, tip, feeCap)
	if err != nil {
		return "", err
	}
	e := Entry{Kind: KindSent, Hash: h, Server: cand.Server, PublicationID: cand.PublicationID, ComputedAt: cand.ComputedAt,
		AgentID: a.AgentID.String(), Score: f.Score, Band: cand.Band}
	p := &pending{entry: e}
	if err := c.logSent(p, tx); err != nil {
		return "", err
	}
	c.pending[h] = p
	c.order = append(c.order, h)
	return c.deliver(ctx, h, p)
}

// logSent appends a signed attempt to the log before it is broadcast.
func (c *Committer) logSent(p *pending, tx *types.Transaction) error {
	raw, err := tx.MarshalBinary()
	if err != nil {
		return fmt.Errorf("erc8004: encode transaction: %w", err)
	}
	e := p.entry
	e.Kind, e.Tx, e.Nonce, e.Raw, e.At = KindSent, tx.Hash().Hex(), tx.Nonce(), hexutil.Encode(raw), time.Time{}
	if err := c.Log.Append(e); err != nil {
		return err
	}
	p.attempts = append(p.attempts, tx)
	if c.afterLog != nil {
		c.afterLog(tx)
	}
	return nil
}

// errNonceTaken: another transaction of the account took the nonce of a
// pending feedback that is not on chain.
var errNonceTaken = errors.New("erc8004: the nonce went to another transaction")

// deliver broadcasts a pending feedback's latest attempt and waits for one
// of its attempts to be mined, bumping fees when it waits too long. A
// feedback whose nonce went elsewhere is abandoned (sent again by the next
// Commit); one reverted on chain is logged failed and retried.
func (c *Committer) deliver(ctx context.Context, h string, p *pending) (string, error) {
	for {
		tx := p.attempts[len(p.attempts)-1]
		if r, err := c.receiptOf(ctx, p); err != nil {
			return "", err
		} else if r != nil {
			return c.settled(h, p, r)
		}
		err := c.Chain.B.SendTransaction(ctx, tx)
		switch {
		case err == nil, isKnown(err):
		case isNonceLow(err):
			// Mined meanwhile, or the nonce went to another transaction.
			if r, rerr := c.receiptOf(ctx, p); rerr != nil {
				return "", rerr
			} else if r != nil {
				return c.settled(h, p, r)
			}
			return "", c.abandon(h, p, "nonce used by another transaction")
		default:
			return "", fmt.Errorf("erc8004: broadcast %s: %w", tx.Hash().Hex(), err)
		}
		if c.afterSend != nil {
			c.afterSend(tx)
		}
		r, err := c.waitMined(ctx, p)
		if err != nil {
			return "", err
		}
		if r != nil {
			return c.settled(h, p, r)
		}
		// The bumps of a feedback are counted over its whole life (its
		// attempts), not per call: retries never push fees past MaxBumps.
		if bumps := len(p.attempts) - 1; bumps >= c.MaxBumps {
			return "", fmt.Errorf("erc8004: %s not mined after %d fee bumps", tx.Hash().Hex(), bumps)
		}
		next, err := c.bump(ctx, tx)
		if err != nil {
			return "", err
		}
		c.log().Info("erc8004: transaction not mined in time; replacing it with higher fees", zap.String("tx", tx.Hash().Hex()), zap.String("by", next.Hash().Hex()))
		if err := c.logSent(p, next); err != nil {
			return "", err
		}
	}
}

func isKnown(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "already known") || strings.Contains(s, "known transaction")
}

func isNonceLow(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "nonce too low")
}

// receiptOf returns the receipt of whichever attempt was mined (nil: none).
func (c *Committer) receiptOf(ctx context.Context, p *pending) (*types.Receipt, error) {
	for _, tx := range p.attempts {
		r, err := c.Chain.B.TransactionReceipt(ctx, tx.Hash())
		if err == nil && r != nil {
			return r, nil
		}
		if err != nil && !isNotFound(err) {
			return nil, fmt.Errorf("erc8004: receipt of %s: %w", tx.Hash().Hex(), err)
		}
	}
	return nil, nil
}

func isNotFound(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "not found") || errors.Is(err, errNotFound))
}

var errNotFound = errors.New("not found")

// waitMined polls receipts for ReceiptTimeout (nil receipt: still not mined).
func (c *Committer) waitMined(ctx context.Context, p *pending) (*types.Receipt, error) {
	deadline := time.Now().Add(c.ReceiptTimeout)
	for {
		r, err := c.receiptOf(ctx, p)
		if err != nil || r != nil {
			return r, err
		}
		if time.Now().After(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(c.Poll):
		}
	}
}

// bump re-signs a transaction with the same nonce and fees raised by a
// quarter (nodes replace a pending transaction for ≥ 10 % more).
func (c *Committer) bump(ctx context.Context, tx *types.Transaction) (*types.Transaction, error) {
	tip, feeCap, err := c.Chain.Fees(ctx)
	if err != nil {
		return nil, err
	}
	up := func(old, now *big.Int) *big.Int {
		b := new(big.Int).Div(new(big.Int).Mul(old, big.NewInt(125)), big.NewInt(100))
		if now.Cmp(b) > 0 {
			return now
		}
		return b
	}
	tip, feeCap = up(tx.GasTipCap(), tip), up(tx.GasFeeCap(), feeCap)
	if feeCap.Cmp(tip) < 0 {
		feeCap = new(big.Int).Set(tip)
	}
	if c.Chain.MaxFeeCap != nil && feeCap.Cmp(c.Chain.MaxFeeCap) > 0 {
		return nil, fmt.Errorf("%w: a replacement would offer %s wei per gas", ErrFeeCap, feeCap)
	}
	return c.Chain.Sign(tx.Data(), tx.Nonce(), tx.Gas(), tip, feeCap)
}

// settled records a mined attempt: its NewFeedback event, or, for a
// transaction that reverted on chain, a failure (the record may be sent
// again: the next try re-estimates, and a call that would revert is
// refused then).
func (c *Committer) settled(h string, p *pending, r *types.Receipt) (string, error) {
	if r.Status != types.ReceiptStatusSuccessful {
		return "", c.abandon(h, p, "reverted on chain in "+r.TxHash.Hex())
	}
	var ev *Event
	for _, e := range c.Chain.ReceiptEvents(r) {
		if SameHash(e.FeedbackHash, h) {
			e := e
			ev = &e
			break
		}
	}
	if ev == nil {
		return "", fmt.Errorf("erc8004: %s was mined without a NewFeedback for %s", r.TxHash.Hex(), h)
	}
	e := p.entry
	e.Kind, e.Tx, e.Nonce, e.Raw, e.Event, e.At = KindMined, r.TxHash.Hex(), 0, "", ev, time.Time{}
	if err := c.Log.Append(e); err != nil {
		return "", err
	}
	c.mined[h] = *ev
	c.chainBy[ev.AgentID] = *ev
	c.dropPending(h)
	c.remember(e.Server, Last{Score: e.Score, Band: e.Band, At: e.ComputedAt, Hash: h})
	c.log().Info("erc8004: feedback on chain", zap.String("server", e.Server), zap.String("agent_id", ev.AgentID),
		zap.Uint8("score", ev.Score), zap.String("content_sha256", h), zap.String("tx", ev.Tx), zap.Uint64("block", ev.Block))
	return Sent, nil
}

// errAbandoned: a pending feedback that will not land (its nonce went
// elsewhere, or it reverted); the record may be sent again.
var errAbandoned = errors.New("erc8004: transaction abandoned")

func (c *Committer) abandon(h string, p *pending, why string) error {
	e := p.entry
	e.Kind, e.Reason, e.Raw, e.At = KindAbandoned, why, "", time.Time{}
	if err := c.Log.Append(e); err != nil {
		return err
	}
	c.dropPending(h)
	return fmt.Errorf("%w: %s: %s", errAbandoned, why, e.Hash)
}

// LastOf returns the last feedback given for a server.
func (c *Committer) LastOf(server string) (Last, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.last[server]
	return l, ok
}

// address parses a hex address, refusing anything else.
func address(s string) (common.Address, error) {
	if !common.IsHexAddress(s) {
		return common.Address{}, fmt.Errorf("erc8004: %q is not an address", s)
	}
	return common.HexToAddress(s), nil
}
