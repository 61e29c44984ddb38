package search

import "context"

// SearchReference is the first Search (one FTS5 OR query ranked by bm25 per
// request), which Search must equal.
func (s *Snapshot) SearchReference(ctx context.Context, q string, limit int, sponsors []string) (Response, error) {
	return s.searchSQL(ctx, q, limit, sponsors)
}

// SearchUncached is Search ranking the query afresh, neither reading nor
// filling the result cache.
func (s *Snapshot) SearchUncached(ctx context.Context, q string, limit int, sponsors []string) (Response, error) {
	return s.search(ctx, q, limit, sponsors, false)
}

// CandidatesSQL returns the names of the first n rows of q's OR query in
// bm25 order (ties by rowid), as FTS5 ranks them: the reference's
// candidates are the first MaxCandidates.
func (s *Snapshot) CandidatesSQL(ctx context.Context, q string, n int) ([]string, error) {
	terms, err := ParseQuery(q)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 6.0, 6.0, 2.0, 1.0, 2.0), rowid LIMIT ?`, matchExpr(terms, ""), n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, s.docs[id-1].Name)
	}
	return out, rows.Err()
}

// SetGather forces rank's candidate path: 1 reads the rows above the
// thresholds whenever a floor is known, 2 the terms' best rows and the
// smaller terms' rows, -1 sums every posting, 0 chooses by cost.
func (s *Snapshot) SetGather(mode int) { s.gatherMode = mode }
