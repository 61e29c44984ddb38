package erc8004

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Entry kinds of the local log.
const (
	// KindSent: a signed transaction, written (and fsynced) before it is
	// broadcast, so a crash after the broadcast finds it again. A fee bump
	// is another sent entry with the same nonce.
	KindSent = "sent"
	// KindMined: the feedback is on chain (its NewFeedback event), from our
	// receipt or found among the chain's events.
	KindMined = "mined"
	// KindRefused: not sent, and not to be tried again for this record
	// (score out of range, self-rating, an agent that does not exist, a call
	// the registry would revert).
	KindRefused = "refused"
	// KindAbandoned: a sent transaction whose nonce another transaction
	// took (not ours on chain): the record may be sent again.
	KindAbandoned = "abandoned"
)

// Entry is one line of the local log (JSON lines, append-only). Every
// entry names the record it is about by its content_sha256 (Hash).
type Entry struct {
	Kind          string    `json:"kind"`
	Hash          string    `json:"content_sha256"`
	Server        string    `json:"server,omitempty"`
	PublicationID string    `json:"publication_id,omitempty"`
	ComputedAt    time.Time `json:"computed_at,omitzero"`
	AgentID       string    `json:"agent_id,omitempty"`
	Score         uint8     `json:"score"`
	Band          string    `json:"band,omitempty"`
	Tx            string    `json:"tx,omitempty"`
	Nonce         uint64    `json:"nonce,omitempty"`
	Raw           string    `json:"raw,omitempty"` // the signed transaction (hex), KindSent only
	Reason        string    `json:"reason,omitempty"`
	// Event is the NewFeedback event, KindMined only: a recorded event log
	// that `forum verify --feedback-log` checks records against.
	Event *Event    `json:"event,omitempty"`
	At    time.Time `json:"logged_at"`
}

// Log is the committer's local, append-only log (DATA_DIR/erc8004.log):
// one fsynced JSON line per step. It is the committer's memory across
// restarts — what was signed, what is on chain, what was refused — and
// its mined entries are a recorded event log of the feedback given.
type Log struct {
	Path string
	mu   sync.Mutex
}

// Append writes entries, each on its own line, and fsyncs.
func (l *Log) Append(es ...Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var buf bytes.Buffer
	for _, e := range es {
		if e.At.IsZero() {
			e.At = time.Now().UTC()
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("erc8004 log: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("erc8004 log: %w", err)
	}
	// A crash mid-append leaves a torn last line: start on a fresh one.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if r, err := os.Open(l.Path); err == nil {
			if _, err := r.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
				buf = *bytes.NewBuffer(append([]byte{'\n'}, buf.Bytes()...))
			}
			r.Close()
		}
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("erc8004 log: append: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("erc8004 log: sync: %w", err)
	}
	return f.Close()
}

// Entries reads the whole log, oldest first (none when it does not exist).
func (l *Log) Entries() ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.Open(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("erc8004 log: %w", err)
	}
	defer f.Close()
	return ReadEntries(f)
}

// ReadEntries reads log lines. A torn line (a crash mid-append never ends
// with '}') is skipped; any other bad line is an error, not skipped.
func ReadEntries(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			if b[len(b)-1] != '}' {
				continue
			}
			return nil, fmt.Errorf("erc8004 log: line %d: %w", n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("erc8004 log: %w", err)
	}
	return out, nil
}
