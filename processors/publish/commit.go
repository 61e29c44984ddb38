package publish

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Commitment is what a publication commits to an external log.
type Commitment struct {
	PublicationID string    `json:"publication_id"`
	Root          string    `json:"merkle_root"`
	MethodVersion string    `json:"method_version"`
	Time          time.Time `json:"time"`
}

// Committer records a publication's root somewhere append-only. The seed's
// on-chain commitment (ERC-8004) is one implementation; FileCommitter, the
// default, appends to a local log.
//
// Contract: Commit is idempotent — committing the same (publication_id, root)
// twice succeeds and does not duplicate; committing a known publication_id
// with a different root fails with ErrAlreadyCommits. Implementations must be
// safe for concurrent use.
type Committer interface {
	Commit(ctx context.Context, c Commitment) error
}

// FileCommitter appends commitments as JSON lines to a file (created 0644 if
// missing) and fsyncs each append. It never rewrites or truncates the file.
type FileCommitter struct {
	Path string
	mu   sync.Mutex
}

// NewFileCommitter returns a committer that appends to path.
func NewFileCommitter(path string) *FileCommitter { return &FileCommitter{Path: path} }

// Commit appends c unless the same publication is already committed.
func (f *FileCommitter) Commit(ctx context.Context, c Commitment) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	existing, err := f.entries()
	if err != nil {
		return err
	}
	for _, e := range existing {
		if e.PublicationID == c.PublicationID {
			if e.Root == c.Root {
				return nil
			}
			return fmt.Errorf("%w: %s has root %s, not %s", ErrAlreadyCommits, c.PublicationID, e.Root, c.Root)
		}
	}
	b, err := json.Marshal(Commitment{c.PublicationID, c.Root, c.MethodVersion, c.Time.UTC()})
	if err != nil {
		return err
	}
	fh, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("publish: open commitment log: %w", err)
	}
	line := append(b, '\n')
	if st, err := fh.Stat(); err == nil && st.Size() > 0 {
		// A torn last line (crash mid-append) must not swallow this one.
		last := make([]byte, 1)
		if r, err := os.Open(f.Path); err == nil {
			if _, err := r.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
				line = append([]byte{'\n'}, line...)
			}
			r.Close()
		}
	}
	if _, err := fh.Write(line); err != nil {
		fh.Close()
		return fmt.Errorf("publish: append commitment: %w", err)
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return fmt.Errorf("publish: sync commitment log: %w", err)
	}
	return fh.Close()
}

// Entries returns every commitment in the log, oldest first.
func (f *FileCommitter) Entries() ([]Commitment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.entries()
}

func (f *FileCommitter) entries() ([]Commitment, error) {
	fh, err := os.Open(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("publish: open commitment log: %w", err)
	}
	defer fh.Close()
	var out []Commitment
	sc := bufio.NewScanner(fh)
	n := 0
	for sc.Scan() {
		n++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c Commitment
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			// A torn line (a crash mid-append; Commit starts the next entry on
			// a fresh line) never ends with '}': skip it. Any other bad line
			// is a damaged log and must not be silently skipped.
			if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 && b[len(b)-1] != '}' {
				continue
			}
			return nil, fmt.Errorf("publish: commitment log line %d: %w", n, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}
