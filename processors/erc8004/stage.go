// Package erc8004 commits published trust records into the ERC-8004
// Reputation Registry (seed §1: each signed record "is served free via API
// and hash-committed into the ERC-8004 Reputation Registry").
//
// In: trust.publications, in its own consumer group (forum-erc8004), so a
// slow or unreachable chain holds nothing but itself; for each publication,
// the records of the servers that have an agent, read from the store once
// the publication is visible there, and the remotes of the registry entry
// each record scored.
// Out: at most one giveFeedback(agentId, score, tag1 = the method, tag2 =
// its version, endpoint = the server's remote, feedbackURI = the record's
// API URL, feedbackHash = its content_sha256) per server whose on-chain
// score or band changed, at most once a day (event time) per server; and
// the local log DATA_DIR/erc8004.log of every step (committer.go).
//
// Agents come from a config file (server → agentId) and, optionally, from
// the Identity Registry: an agent whose registration file lists an MCP
// service endpoint equal to one of a server's remotes (discover.go). A
// score outside 0–100 and a self-rating (the committer's account owns or
// operates the agent) are refused before anything is signed.
//
// The Go bindings of the registries are generated (contracts/gen.sh: solc
// from npm, go-ethereum's abigen); testchain/ holds the test registries and
// a simulated chain.
package erc8004

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Name is the stage's name; Group its consumer group; LogFile the local
// log under the data dir.
const (
	Name    = "erc8004"
	Group   = "forum-erc8004"
	LogFile = "erc8004.log"
)

// Topics the stage consumes.
var Topics = []string{schema.TopicTrustPublications}

// Store is what the stage reads of the store.
type Store interface {
	GetPublication(ctx context.Context, id string) (store.Publication, error)
	TrustRecordIn(ctx context.Context, server, publicationID string) (store.TrustRecord, error)
	Versions(ctx context.Context, name string, limit int) ([]store.Record, error)
	ListServers(ctx context.Context, q store.ListQuery) ([]store.ServerRow, error)
}

// Stage commits each publication's records of the servers with an agent.
type Stage struct {
	Store     Store
	Committer *Committer
	Agents    map[string]Agent // from the config file (they win over discovered ones)
	Discovery *Discovery       // nil: the config file only
	// MaxAge skips publications computed longer ago than this at the wall
	// clock (0: none): a lagging committer or a replay of history spends
	// no gas on records nobody serves any more.
	MaxAge time.Duration
	// VisibleWait bounds the wait for a publication to be visible in the
	// store (the publications sink writes it; default 2 min); the batch
	// then fails and comes again.
	VisibleWait time.Duration
	Now         func() time.Time
	Log         *zap.Logger
}

func (s *Stage) log() *zap.Logger {
	if s.Log == nil {
		return zap.NewNop()
	}
	return s.Log
}

// Decode reads a publication header.
func Decode(m kafka.Message) (schema.PublicationMsg, error) {
	return schema.Decode[schema.PublicationMsg](m.Value)
}

// Config returns the stage's shape for bus/stage.
func (s *Stage) Config(brokers []string, metrics *stage.Metrics) stage.Config[schema.PublicationMsg] {
	return stage.Config[schema.PublicationMsg]{Name: Name, Group: Group, Topics: Topics, Brokers: brokers, Decode: Decode,
		Apply: s.Apply, MaxBatch: 10, MaxWait: time.Second, Metrics: metrics, Log: s.log()}
}

// Apply commits every publication of the batch, in order.
func (s *Stage) Apply(ctx context.Context, batch []stage.Item[schema.PublicationMsg]) error {
	for _, it := range batch {
		if err := s.Publication(ctx, it.Value); err != nil {
			return err
		}
	}
	return nil
}

// Publication commits the records of one publication.
func (s *Stage) Publication(ctx context.Context, p schema.PublicationMsg) error {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	if s.MaxAge > 0 && now().Sub(p.ComputedAt) > s.MaxAge {
		s.log().Debug("erc8004: publication older than --erc8004-max-age; not committed", zap.String("publication", p.ID))
		return nil
	}
	if err := s.waitVisible(ctx, p.ID); err != nil {
		return err
	}
	agents, err := s.agents(ctx)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for _, a := range sortedAgents(agents) {
		rec, err := s.Store.TrustRecordIn(ctx, a.Server, p.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue // not in this publication
		}
		if err != nil {
			return fmt.Errorf("erc8004: record of %s in %s: %w", a.Server, p.ID, err)
		}
		cand, err := s.candidate(ctx, rec, p)
		if err != nil {
			// A record whose hash is not its content is never committed;
			// the stage moves on (the scorer's own verify catches it too).
			s.log().Error("erc8004: record not committed", zap.String("server", a.Server), zap.String("publication", p.ID), zap.Error(err))
			counts["bad_record"]++
			continue
		}
		out, err := s.Committer.Commit(ctx, a, cand)
		var r *Refusal
		if errors.As(err, &r) {
			counts[Refused]++
			continue
		}
		if err != nil {
			return err
		}
		counts[out]++
	}
	s.log().Info("erc8004: publication committed", zap.String("publication", p.ID), zap.Int("agents", len(agents)), zap.Any("outcomes", counts))
	return nil
}

func (s *Stage) waitVisible(ctx context.Context, id string) error {
	wait := s.VisibleWait
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		_, err := s.Store.GetPublication(ctx, id)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("erc8004: publication %s: %w", id, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("erc8004: publication %s not in the store after %s", id, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Stage) agents(ctx context.Context) (map[string]Agent, error) {
	out := map[string]Agent{}
	if s.Discovery != nil {
		found, err := s.Discovery.Agents(ctx, s.Store)
		if err != nil {
			return nil, err
		}
		for k, v := range found {
			out[k] = v
		}
	}
	for k, v := range s.Agents {
		out[k] = v
	}
	return out, nil
}

// recordFields are what the stage reads of a sealed record.
type recordFields struct {
	MethodVersion string `json:"method_version"`
	Registry      struct {
		ContentSHA256 string `json:"content_sha256"`
	} `json:"registry"`
}

// candidate reads a stored record: its hash checked against its content,
// and the remotes of the registry entry it scored.
func (s *Stage) candidate(ctx context.Context, rec store.TrustRecord, p schema.PublicationMsg) (Candidate, error) {
	c, _, err := publish.Canonical([]byte(rec.Record))
	if err != nil {
		return Candidate{}, fmt.Errorf("record of %s: %w", rec.Server, err)
	}
	sum := sha256.Sum256(c)
	if got := hex.EncodeToString(sum[:]); !SameHash(got, rec.ContentSHA256) {
		return Candidate{}, fmt.Errorf("record of %s: content_sha256 %s, but its content hashes to %s", rec.Server, rec.ContentSHA256, got)
	}
	var f recordFields
	if err := json.Unmarshal([]byte(rec.Record), &f); err != nil {
		return Candidate{}, fmt.Errorf("record of %s: %w", rec.Server, err)
	}
	mv := f.MethodVersion
	if mv == "" {
		mv = p.MethodVersion
	}
	remotes, err := s.remotes(ctx, rec.Server, f.Registry.ContentSHA256)
	if err != nil {
		return Candidate{}, err
	}
	return Candidate{Server: rec.Server, PublicationID: rec.PublicationID, ComputedAt: p.ComputedAt, Score: rec.Score, Band: rec.Band,
		ContentSHA256: rec.ContentSHA256, MethodVersion: mv, Remotes: remotes}, nil
}

// remotes returns the remote URLs of the server's registry entry with the
// given content hash (the one the record scored), or of its newest entry.
func (s *Stage) remotes(ctx context.Context, server, contentSHA string) ([]string, error) {
	vers, err := s.Store.Versions(ctx, server, store.MaxEventLimit)
	if err != nil {
		return nil, fmt.Errorf("erc8004: versions of %s: %w", server, err)
	}
	var pick *store.Record
	for i := range vers {
		if contentSHA != "" && vers[i].ContentSHA256 == contentSHA {
			pick = &vers[i]
			break
		}
		if pick == nil || vers[i].ObservedAt.After(pick.ObservedAt) {
			pick = &vers[i]
		}
	}
	if pick == nil {
		return nil, nil
	}
	return remotesOf(pick.Server), nil
}

// remotesOf returns the remote URLs of a registry server object.
func remotesOf(serverJSON string) []string {
	var d schema.ServerDetail
	if json.Unmarshal([]byte(serverJSON), &d) != nil {
		return nil
	}
	var out []string
	for _, r := range d.Remotes {
		if r.URL != "" {
			out = append(out, r.URL)
		}
	}
	return out
}
