package api

import (
	"crypto/subtle"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// authorizeAdmin checks an admin bearer token against tokens (label by
// token) and returns its label: 503 when no token is configured, 401 when
// the header is missing or the token unknown. Every token is compared in
// constant time.
func authorizeAdmin(tokens map[string]string, header, what string) (string, error) {
	if len(tokens) == 0 {
		return "", huma.Error503ServiceUnavailable(what + " is disabled: no admin token is configured (set FORUM_ADMIN_TOKEN to label:token pairs and restart)")
	}
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || tok == "" {
		return "", huma.Error401Unauthorized("an admin bearer token is required (Authorization: Bearer <token>)")
	}
	// Compare against every token in constant time, so timing says nothing
	// about which prefix matched.
	who := ""
	for k, label := range tokens {
		if subtle.ConstantTimeCompare([]byte(k), []byte(tok)) == 1 {
			who = label
		}
	}
	if who == "" {
		return "", huma.Error401Unauthorized("the admin token is not valid")
	}
	return who, nil
}
