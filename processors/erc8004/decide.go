package erc8004

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Candidate is a published record of a server that has an agent: what a
// feedback would carry.
type Candidate struct {
	Server        string
	PublicationID string
	ComputedAt    time.Time // the publication's event time
	Score         *float64  // the record's FORUM score (nil: every sub-score unknown)
	Band          string
	ContentSHA256 string // hex: the feedbackHash
	MethodVersion string
	Remotes       []string // the scored registry entry's remote URLs
}

// Last is what was last committed (or refused) for a server: the state the
// change rule compares a new record with.
type Last struct {
	Score uint8
	Band  string // "" when only known from the chain (the band is not on chain)
	At    time.Time
	Hash  string
}

// Decisions.
const (
	Send      = "send"
	Unchanged = "unchanged" // same on-chain score and band as the last feedback
	TooSoon   = "too_soon"  // changed, but the last feedback is less than MinInterval old: a later record sends it
	NoScore   = "no_score"  // the record has no score (every sub-score unknown)
	Stale     = "stale"     // computed before the server's last feedback (a rerun of old publications)
)

// Refusal reasons: a feedback never sent, checked before anything is signed.
const (
	ReasonScoreRange   = "score_out_of_range"
	ReasonSelfRating   = "self_rating"
	ReasonNoAgent      = "agent_missing"
	ReasonWouldRevert  = "would_revert"
	ReasonChainMissing = "no_chain"
)

// ErrRefused is wrapped by every refusal (errors.As a *Refusal for its reason).
var ErrRefused = errors.New("erc8004: feedback refused")

// Refusal is a feedback that must not be sent.
type Refusal struct {
	Reason string
	Detail string
}

func (r *Refusal) Error() string { return fmt.Sprintf("%s: %s: %s", ErrRefused, r.Reason, r.Detail) }

// Unwrap lets errors.Is find ErrRefused.
func (r *Refusal) Unwrap() error { return ErrRefused }

func refuse(reason, format string, args ...any) error {
	return &Refusal{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// OnChainScore is the uint8 a record's score becomes: rounded half away
// from zero, refused (never clamped) outside 0–100, so a bug upstream
// cannot write a score the registry would reject or, worse, accept wrong.
func OnChainScore(score float64) (uint8, error) {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return 0, refuse(ReasonScoreRange, "score %v is not a number", score)
	}
	r := math.Round(score)
	if r < 0 || r > 100 {
		return 0, refuse(ReasonScoreRange, "score %v is outside 0-100", score)
	}
	return uint8(r), nil
}

// Decide applies the change rule to a candidate: send when its on-chain
// score or its band differs from the last feedback of the server (or there
// is none), at most once per minInterval of event time, never for a record
// older than the last feedback; a band unknown
// (state rebuilt from the chain alone) compares the score only. A score
// outside 0–100 is refused.
func Decide(prev *Last, c Candidate, minInterval time.Duration) (string, uint8, error) {
	if c.Score == nil {
		return NoScore, 0, nil
	}
	score, err := OnChainScore(*c.Score)
	if err != nil {
		return "", 0, err
	}
	if prev == nil {
		return Send, score, nil
	}
	if c.ComputedAt.Before(prev.At) {
		return Stale, score, nil
	}
	if score == prev.Score && (prev.Band == "" || prev.Band == c.Band) {
		return Unchanged, score, nil
	}
	if !prev.At.IsZero() && c.ComputedAt.Sub(prev.At) < minInterval {
		return TooSoon, score, nil
	}
	return Send, score, nil
}
