package erc8004

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/forum-mcp/forum/processors/publish"
)

// Errors of VerifyRecord.
var (
	ErrRecordHash       = errors.New("erc8004: the record's content_sha256 is not the hash of its content")
	ErrNotOnChain       = errors.New("erc8004: no NewFeedback carries the record's hash")
	ErrFeedbackMismatch = errors.New("erc8004: the feedback does not match the record")
)

// Match is a record found on chain.
type Match struct {
	Server        string
	PublicationID string
	ContentSHA256 string
	Event         Event
}

// VerifyRecord checks a sealed record against NewFeedback events: its
// content_sha256 is the SHA-256 of its RFC 8785 canonical JSON (without
// the hash), a feedback carries that hash as feedbackHash (from client,
// when given), and that feedback's score, tag2 and feedbackURI are the
// record's rounded score, method version and publication.
func VerifyRecord(record []byte, events []Event, client string) (Match, error) {
	c, server, err := publish.Canonical(bytes.TrimSpace(record))
	if err != nil {
		return Match{}, fmt.Errorf("erc8004: record: %w", err)
	}
	var r struct {
		Hash          string   `json:"content_sha256"`
		PublicationID string   `json:"publication_id"`
		MethodVersion string   `json:"method_version"`
		Score         *float64 `json:"score"`
	}
	if err := json.Unmarshal(record, &r); err != nil {
		return Match{}, fmt.Errorf("erc8004: record: %w", err)
	}
	sum := sha256.Sum256(c)
	got := hex.EncodeToString(sum[:])
	if !SameHash(got, r.Hash) {
		return Match{}, fmt.Errorf("%w: %s states %s, its content hashes to %s", ErrRecordHash, server, r.Hash, got)
	}
	m := Match{Server: server, PublicationID: r.PublicationID, ContentSHA256: got}
	var found []Event
	for _, ev := range events {
		if SameHash(ev.FeedbackHash, got) && (client == "" || strings.EqualFold(ev.Client, client)) {
			found = append(found, ev)
		}
	}
	if len(found) == 0 {
		who := ""
		if client != "" {
			who = " from " + client
		}
		return m, fmt.Errorf("%w%s: %s (%s in %s)", ErrNotOnChain, who, got, server, r.PublicationID)
	}
	ev := found[0]
	m.Event = ev
	var bad []string
	if r.Score == nil {
		bad = append(bad, "the record has no score")
	} else if s, err := OnChainScore(*r.Score); err != nil || s != ev.Score {
		bad = append(bad, fmt.Sprintf("score %d on chain, the record's is %v", ev.Score, *r.Score))
	}
	if ev.Tag2 != r.MethodVersion {
		bad = append(bad, fmt.Sprintf("tag2 %q, the record's method version is %q", ev.Tag2, r.MethodVersion))
	}
	if want := FeedbackURI("", server, r.PublicationID); !strings.HasSuffix(ev.FeedbackURI, want) {
		bad = append(bad, fmt.Sprintf("feedbackURI %q does not name %s in %s", ev.FeedbackURI, server, r.PublicationID))
	}
	if len(bad) > 0 {
		return m, fmt.Errorf("%w: %s", ErrFeedbackMismatch, strings.Join(bad, "; "))
	}
	return m, nil
}

// ReadEvents reads a recorded event log: the committer's local log (its
// mined entries carry their NewFeedback event) or JSON lines of events.
func ReadEvents(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var line struct {
			Event
			Kind string `json:"kind"`
			Ev   *Event `json:"event"`
		}
		if err := json.Unmarshal(b, &line); err != nil {
			if b[len(b)-1] != '}' {
				continue // a torn last line of the committer's log
			}
			return nil, fmt.Errorf("erc8004: event log line %d: %w", n, err)
		}
		switch {
		case line.Ev != nil:
			out = append(out, *line.Ev)
		case line.Kind == "" && line.FeedbackHash != "":
			out = append(out, line.Event)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("erc8004: event log: %w", err)
	}
	return out, nil
}
