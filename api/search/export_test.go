package search

import "context"

// SearchReference is the first Search (one FTS5 OR query ranked by bm25 per
// request), which Search must equal.
func (s *Snapshot) SearchReference(ctx context.Context, q string, limit int, sponsors []string) (Response, error) {
	return s.searchSQL(ctx, q, limit, sponsors)
}
