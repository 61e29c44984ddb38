package api

import (
	"container/list"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/sql/store"
)

// Inclusion proofs are read off a publication's whole Merkle tree, built
// once from the leaf hashes the store keeps beside the records (one query,
// 32 bytes a record, no canonical JSON at request time) and cached for the
// few publications that are asked about: a proof is then O(log n).

// publicationTree is one publication's tree and its leaf order.
type publicationTree struct {
	servers []string // sorted: the leaf order
	tree    *publish.Tree
	header  store.Publication // immutable once stored, like the leaves
}

func (p *publicationTree) index(server string) (int, bool) {
	i := sort.SearchStrings(p.servers, server)
	return i, i < len(p.servers) && p.servers[i] == server
}

// treeCache keeps the trees of the n publications asked about last.
type treeCache struct {
	mu    sync.Mutex
	n     int
	order *list.List // of string, most recent first
	trees map[string]*publicationTree
	// building de-duplicates concurrent builds of one publication.
	building map[string]chan struct{}
}

func newTreeCache(n int) *treeCache {
	return &treeCache{n: n, order: list.New(), trees: map[string]*publicationTree{}, building: map[string]chan struct{}{}}
}

type leafReader interface {
	PublicationLeaves(ctx context.Context, publicationID string) (servers, leaves []string, err error)
	GetPublication(ctx context.Context, id string) (store.Publication, error)
}

func (c *treeCache) get(ctx context.Context, r leafReader, id string) (*publicationTree, error) {
	for {
		c.mu.Lock()
		if t, ok := c.trees[id]; ok {
			c.touch(id)
			c.mu.Unlock()
			return t, nil
		}
		wait, busy := c.building[id]
		if !busy {
			c.building[id] = make(chan struct{})
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	t, err := buildTree(ctx, r, id)
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.building[id])
	delete(c.building, id)
	if err != nil {
		return nil, err
	}
	c.trees[id] = t
	c.order.PushFront(id)
	for c.order.Len() > c.n {
		old := c.order.Remove(c.order.Back()).(string)
		delete(c.trees, old)
	}
	return t, nil
}

// touch moves id to the front (c.mu held).
func (c *treeCache) touch(id string) {
	for e := c.order.Front(); e != nil; e = e.Next() {
		if e.Value.(string) == id {
			c.order.MoveToFront(e)
			return
		}
	}
}

func buildTree(ctx context.Context, r leafReader, id string) (*publicationTree, error) {
	header, err := r.GetPublication(ctx, id)
	if err != nil {
		return nil, err
	}
	servers, hexLeaves, err := r.PublicationLeaves(ctx, id)
	if err != nil {
		return nil, err
	}
	if !sort.StringsAreSorted(servers) {
		return nil, fmt.Errorf("publication %s: leaves not in server order", id)
	}
	leaves := make([][]byte, len(hexLeaves))
	for i, h := range hexLeaves {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 32 {
			return nil, fmt.Errorf("publication %s: leaf of %s is not a SHA-256 hash", id, servers[i])
		}
		leaves[i] = b
	}
	return &publicationTree{servers: servers, tree: publish.NewTree(leaves), header: header}, nil
}

// recordIn returns the sealed record of server in publication pubID.
func (t *trustHandlers) recordIn(ctx context.Context, pubID, server string) (string, error) {
	if r, ok := t.o.Store.(interface {
		TrustRecordIn(ctx context.Context, server, publicationID string) (store.TrustRecord, error)
	}); ok {
		rec, err := r.TrustRecordIn(ctx, server, pubID)
		if errors.Is(err, store.ErrNotFound) {
			return "", huma.Error404NotFound("publication " + pubID + " holds no record for " + server)
		}
		if err != nil {
			return "", t.internal("trust record", err)
		}
		return rec.Record, nil
	}
	recs, err := t.o.Store.PublicationRecords(ctx, pubID)
	if err != nil {
		return "", t.internal("publication records", err)
	}
	for _, r := range recs {
		if r.Server == server {
			return r.Record, nil
		}
	}
	return "", huma.Error404NotFound("publication " + pubID + " holds no record for " + server)
}
