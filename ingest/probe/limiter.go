package probe

import (
	"context"
	"sync"
)

// hostLimiter is a per-host semaphore: many registry entries share one host
// (SaaS gateways), and the prober must not hammer it. Slots are created on
// demand and dropped when idle so the map stays as small as the in-flight set.
type hostLimiter struct {
	n  int
	mu sync.Mutex
	m  map[string]*hostSlot
}

type hostSlot struct {
	ch   chan struct{}
	refs int
}

func newHostLimiter(n int) *hostLimiter {
	return &hostLimiter{n: n, m: map[string]*hostSlot{}}
}

// acquire blocks until host has a free slot or ctx ends.
func (l *hostLimiter) acquire(ctx context.Context, host string) (release func(), err error) {
	l.mu.Lock()
	s := l.m[host]
	if s == nil {
		s = &hostSlot{ch: make(chan struct{}, l.n)}
		l.m[host] = s
	}
	s.refs++
	l.mu.Unlock()

	drop := func() {
		l.mu.Lock()
		s.refs--
		if s.refs == 0 {
			delete(l.m, host)
		}
		l.mu.Unlock()
	}
	select {
	case s.ch <- struct{}{}:
		return func() { <-s.ch; drop() }, nil
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
}
