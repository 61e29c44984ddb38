package probe

import (
	"bytes"
	"regexp"
)

// authPhrase matches what servers write when they refuse a request for a
// missing or bad credential but answer 400 (or another 4xx) instead of 401:
// "Bearer token is required", "invalid api key", "missing authorization",
// "Unauthorized". A credential noun must sit next to a state word (within a
// short clause, either order), so "sessionid must be provided" or "missing
// required parameter" do not count. Input is normalised first (see
// authMessage): '_' and '-' are spaces, so invalid_token and x-api-key read
// as words.
var authPhrase = regexp.MustCompile(`(?i)` +
	// Words that say it on their own.
	`\b(?:unauthori[sz]ed|unauthenticated|not authenticated|not logged in|(?:login|sign ?in) required|access denied|forbidden)\b` +
	// A state word, then a credential noun. "no" and "without" are common
	// enough to need the noun right after them ("no valid token").
	`|\b(?:missing|invalid|expired|revoked|malformed|incorrect|wrong|requires?|need|needs)\b[^.;\n]{0,40}?` + authNoun +
	`|\b(?:no|without)\b[^.;\n]{0,16}?` + authNoun +
	// A credential noun, then a state word.
	`|` + authNoun + `[^.;\n]{0,40}?\b(?:required|missing|invalid|expired|revoked|malformed|incorrect|rejected|denied|failed|needed|not (?:provided|present|found|valid|set|supplied)|must be (?:provided|set|supplied|sent|included))\b`)

const authNoun = `\b(?:api ?key|access key|secret key|access token|bearer(?: token)?|auth(?:entication|orization)?(?: header| token)?|credentials?|token|jwt|client secret|password)\b`

// maxAuthScan bounds the bytes searched; the body cap is the same size, so
// this only guards callers that pass more.
const maxAuthScan = 1 << 20

// authMessage reports whether the text of a refusal says a credential is
// required or invalid. HTML is never read this way: a 4xx error page's
// navigation ("Sign in", "Authorization docs") says nothing about the
// request, and reading it as auth_required would excuse a broken endpoint.
func authMessage(body []byte, contentType string) bool {
	if len(body) > maxAuthScan {
		body = body[:maxAuthScan]
	}
	if looksLikeHTML(contentType, body) {
		return false
	}
	norm := bytes.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return ' '
		}
		return r
	}, body)
	return authPhrase.Match(norm)
}

func looksLikeHTML(contentType string, body []byte) bool {
	if bytes.Contains(bytes.ToLower([]byte(contentType)), []byte("html")) {
		return true
	}
	b := bytes.TrimLeft(body, " \t\r\n\xef\xbb\xbf")
	if len(b) > 16 {
		b = b[:16]
	}
	b = bytes.ToLower(b)
	return bytes.HasPrefix(b, []byte("<!doctype")) || bytes.HasPrefix(b, []byte("<html"))
}
