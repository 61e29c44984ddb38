package probe

import (
	"sort"
	"strings"
)

// Challenge is one WWW-Authenticate challenge (RFC 9110 §11.6.1).
type Challenge struct {
	Scheme  string            // as sent; compare case-insensitively
	Token68 string            // the token68 form, when used instead of params
	Params  map[string]string // keys lower-cased; quoted-string values unescaped
}

// Bounds on outside input: a header can be large and hostile.
const (
	maxAuthHeader     = 8 << 10
	maxChallenges     = 16
	maxChallengeParam = 32
)

// parseWWWAuthenticate parses every WWW-Authenticate field value into its
// challenges. It never fails: junk is skipped up to the next comma, and what
// parses is kept, because evidence from a sloppy server is still evidence.
func parseWWWAuthenticate(values []string) []Challenge {
	var out []Challenge
	for _, v := range values {
		if len(v) > maxAuthHeader {
			v = v[:maxAuthHeader]
		}
		p := authParser{s: v}
		out = append(out, p.challenges(maxChallenges-len(out))...)
		if len(out) >= maxChallenges {
			break
		}
	}
	return out
}

type authParser struct {
	s string
	i int
}

func (p *authParser) challenges(limit int) []Challenge {
	var out []Challenge
	for len(out) < limit {
		p.skipListSep()
		if p.i >= len(p.s) {
			break
		}
		scheme := p.token()
		if scheme == "" {
			p.skipJunk()
			continue
		}
		c := Challenge{Scheme: scheme}
		if p.sp() {
			p.body(&c)
		}
		out = append(out, c)
	}
	return out
}

// body parses what follows a scheme and its space: a token68 or a list of
// params. It stops before the token that starts the next challenge.
func (p *authParser) body(c *Challenge) {
	if t, ok := p.token68(); ok {
		c.Token68 = t
		return
	}
	for {
		start := p.i
		p.ows()
		name := p.token()
		if name == "" {
			p.i = start
			return
		}
		p.ows()
		if p.i >= len(p.s) || p.s[p.i] != '=' {
			// A bare token after a comma is the next challenge's scheme.
			p.i = start
			return
		}
		p.i++
		p.ows()
		var val string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			val = p.quoted()
		} else {
			val = p.token()
		}
		key := strings.ToLower(name)
		if c.Params == nil {
			c.Params = map[string]string{}
		}
		if _, dup := c.Params[key]; !dup && len(c.Params) < maxChallengeParam {
			c.Params[key] = val
		}
		p.ows()
		if p.i >= len(p.s) {
			return
		}
		if p.s[p.i] != ',' {
			p.skipJunk()
		}
		// Past the comma(s): a param or the next challenge follows.
		p.skipListSep()
		if p.i >= len(p.s) {
			return
		}
	}
}

// token68 matches 1*(ALPHA/DIGIT/"-._~+/") *"=" followed by the end or a comma.
func (p *authParser) token68() (string, bool) {
	j := p.i
	for j < len(p.s) && isToken68(p.s[j]) {
		j++
	}
	if j == p.i {
		return "", false
	}
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	k := j
	for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
		k++
	}
	if k < len(p.s) && p.s[k] != ',' {
		return "", false
	}
	t := p.s[p.i:j]
	p.i = k
	return t, true
}

func (p *authParser) token() string {
	j := p.i
	for j < len(p.s) && isTchar(p.s[j]) {
		j++
	}
	t := p.s[p.i:j]
	p.i = j
	return t
}

// quoted reads a quoted-string at p.i (which is '"'); an unterminated one
// runs to the end of the input.
func (p *authParser) quoted() string {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		ch := p.s[p.i]
		switch {
		case ch == '"':
			p.i++
			return b.String()
		case ch == '\\' && p.i+1 < len(p.s):
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		default:
			b.WriteByte(ch)
			p.i++
		}
	}
	return b.String()
}

// sp consumes at least one space/tab; false when there is none.
func (p *authParser) sp() bool {
	j := p.i
	p.ows()
	return p.i > j
}

func (p *authParser) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *authParser) skipListSep() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

// skipJunk moves past bytes that fit no rule, up to the next comma
// (respecting quotes), so parsing always makes progress.
func (p *authParser) skipJunk() {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ',' {
		if p.s[p.i] == '"' {
			p.quoted()
			continue
		}
		p.i++
	}
	if p.i == start && p.i < len(p.s) {
		p.i++
	}
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

// formatChallenges renders challenges back to a header value (params sorted,
// values quoted). Used by the fuzz test's round trip and by test servers.
func formatChallenges(cs []Challenge) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Scheme)
		if c.Token68 != "" {
			b.WriteByte(' ')
			b.WriteString(c.Token68)
			continue
		}
		keys := make([]string, 0, len(c.Params))
		for k := range c.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for j, k := range keys {
			if j == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteString(`="`)
			v := c.Params[k]
			for x := 0; x < len(v); x++ {
				if v[x] == '"' || v[x] == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(v[x])
			}
			b.WriteByte('"')
		}
	}
	return b.String()
}

// authEvidenceFrom fills the challenge part of the evidence.
func authEvidenceFrom(ev *AuthEvidence, cs []Challenge) {
	var pick *Challenge
	for i := range cs {
		ev.Schemes = append(ev.Schemes, cs[i].Scheme)
		if pick == nil && strings.EqualFold(cs[i].Scheme, "bearer") {
			pick = &cs[i]
		}
	}
	if pick == nil && len(cs) > 0 {
		pick = &cs[0]
	}
	if pick == nil {
		return
	}
	ev.ChallengeScheme = pick.Scheme
	ev.Realm, _ = truncate(pick.Params["realm"], 256)
	ev.Scope, _ = truncate(pick.Params["scope"], 1024)
	ev.Error, _ = truncate(pick.Params["error"], 256)
	// resource_metadata may sit on any challenge; take the first one seen.
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; u != "" {
			ev.ResourceMetadataURL, _ = truncate(u, 2048)
			ev.ResourceMetadataSource = "challenge"
			break
		}
	}
}
