package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"
)

// NewDLQ builds a dead letter with a deterministic ID, so the same bad input
// delivered twice is stored once. The payload is cut to MaxDLQPayload bytes
// (on a UTF-8 boundary, invalid bytes replaced) and described by its length
// and hash; detail is cut to 1 KiB.
func NewDLQ(stage, source, reason, detail, key string, payload []byte, observedAt time.Time) DLQMessage {
	sum := sha256.Sum256(payload)
	ph := hex.EncodeToString(sum[:])
	id := sha256.Sum256([]byte(stage + "\x00" + source + "\x00" + reason + "\x00" + key + "\x00" + ph))
	return DLQMessage{
		ID:            hex.EncodeToString(id[:16]),
		Stage:         stage,
		Source:        Bound(source, 1024),
		Reason:        reason,
		Detail:        Bound(detail, 1024),
		Key:           Bound(key, 512),
		ObservedAt:    observedAt.UTC(),
		Payload:       Bound(string(payload), MaxDLQPayload),
		PayloadBytes:  len(payload),
		PayloadSHA256: ph,
	}
}

// Bound returns s cut to at most n bytes on a rune boundary, with invalid
// UTF-8 replaced, so bounded text is always valid UTF-8.
func Bound(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
