package scan

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// Rule ids. Stable: stored findings and the static score key on them.
//
//	TP-001 high   "ignore/disregard/forget (all) previous|prior|above instructions"
//	TP-002 high   hidden-instruction tags: <IMPORTANT>, <SYSTEM>, <instructions>, <secret>, <hidden>, [INST], <|im_start|>
//	TP-003 high   concealment from the user: "do not tell/mention/reveal … the user", "without telling the user"
//	TP-004 high   instruction to read SSH keys / cloud credentials / keychains (~/.ssh, id_rsa, .aws/credentials, …)
//	TP-005 high   instruction to read .env / credentials files and pass them on (send/include/pass/upload…)
//	SH-001 high   another tool as subject of a directive that changes what it does ("the send_email tool must send … to")
//	SH-002 medium directive over all/any other tools ("before using any other tool, always call this")
//	SH-003 medium forbids another tool ("never use the X tool", "overrides the X tool")
//	HS-AWS  high  AWS access key id (AKIA/ASIA + 16), documentation keys excluded
//	HS-GH   high  GitHub token (ghp_/gho_/ghu_/ghs_/ghr_ + 36, github_pat_)
//	HS-SLACK high Slack token (xoxb-/xoxp-/xoxa-/xoxr-/xoxs-); medium for a Slack webhook URL
//	HS-STRIPE high Stripe live secret/restricted key; low for a test key
//	HS-PK   high  PEM private key block
//	HS-LLM  high  OpenAI (sk-proj-/sk-…T3BlbkFJ) and Anthropic (sk-ant-) keys
//	CI-001 high   schema: raw shell/command string parameter on a tool that runs it in a shell
//	CI-002 medium schema: free-form command/script string parameter without shell context
//	CI-003 high   text: input is passed to a shell / executes arbitrary commands
//	SD-001 high   Unicode tag characters (ASCII smuggling) or bidi overrides
//	SD-002 medium zero-width characters
//	SD-003 medium base64 blob (>= 40 chars, mixed case and digits, not hex, not inside a URL)
//	SD-004 high   base64 blob that decodes to instruction-like or URL text
//	SD-005 medium URL to an exfil-style host (request bins, webhook catchers, OAST, tunnels)
//	SD-006 medium hidden HTML comment in a description
//	HY-001 low    tool without description
//	HY-002 low    tool without input schema
//	HY-003 low    empty registry description

var (
	reIgnorePrev = regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+|my\s+)?(previous|prior|above|earlier|preceding|former|original|system)\s+(instructions?|prompts?|rules|directions|directives|guidelines|messages|context)\b`)
	reHiddenTag  = regexp.MustCompile(`(?i)<\s*/?\s*(important|system|instructions?|secret|hidden|admin|sudo|override)\s*>|\[/?INST\]|<\|im_start\|>|<\|system\|>`)
	reConceal    = regexp.MustCompile(`(?i)\b(do\s+not|don'?t|never|must\s+not)\s+(tell|inform|mention|reveal|disclose|notify|alert|show|let)\b[^.!?\n]{0,40}\b(the\s+)?users?\b|\bwithout\s+(telling|informing|notifying|alerting)\s+(the\s+)?users?\b|\b(the\s+)?users?\s+(must|should)\s+not\s+(know|see|be\s+told)\b`)
	reStrongPath = regexp.MustCompile(`(?i)(~/|\$home/|/home/[^/\s]+/|/root/|%userprofile%\\)?\.ssh\b|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b|\.git-credentials\b|\.netrc\b|\.docker/config\.json\b|\.kube/config\b|/etc/shadow\b|\.gnupg\b|login\.keychain|\bkeychain\b|\.config/gcloud\b|wallet\.dat\b`)
	reReadVerb   = regexp.MustCompile(`(?i)\b(read|cat|open|load|access|include|send|upload|copy|exfiltrate|attach|retrieve|fetch|grab|collect|pass|print|dump|get)\b`)
	reEnvFile    = regexp.MustCompile(`(?i)(^|[\s'"\x60(/])\.env(\s|$|[.,;:'"\x60)!?])|\bcredentials\.json\b|\bsecrets?\.(json|ya?ml|toml)\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b`)
	reExfilVerb  = regexp.MustCompile(`(?i)\b(send|pass|include|upload|post|attach|append|forward|transmit|exfiltrate|put)\b[^.!?\n]{0,60}\b(contents?|it|them|its|values?|keys?|secrets?|parameter|argument|sidenote|notes?|body)\b`)
	reEnvExample = regexp.MustCompile(`(?i)\.env\.(example|sample|template|dist|defaults?)\b`)

	// shadowing
	reToolSubject = regexp.MustCompile(`(?i)\b(?:the\s+)?[\x60'"]?([a-z0-9_.:-]{2,64})[\x60'"]?\s+tool\s+(must|should|shall|has\s+to|needs\s+to|will\s+need\s+to|is\s+required\s+to)\s+([^.!?\n]{0,100})`)
	reModifyVerb  = regexp.MustCompile(`(?i)\b(send|forward|bcc|cc|include|add|redirect|route|replace|change|set|use|always|also|instead|copy|attach|append|prepend)\b`)
	reOtherTools  = regexp.MustCompile(`(?i)\b(before|after|when(ever)?|prior\s+to)\s+(using|calling|invoking|running|executing)\s+(any|all|every|each)\s+(other\s+)?tools?\b[^.!?\n]{0,100}\b(must|always|first|never|should|need\s+to|have\s+to)\b|\b(all|any|every)\s+other\s+tools?\s+(must|should|shall)\b`)
	reForbidTool  = regexp.MustCompile(`(?i)\b(never|do\s+not|don'?t|must\s+not)\s+(use|call|invoke|run)\s+(the\s+|any\s+)?[\x60'"]?([a-z0-9_.:-]{2,64})[\x60'"]?\s+tool\b|\b(overrides?|supersedes?|takes\s+precedence\s+over)\s+(the\s+)?[\x60'"]?([a-z0-9_.:-]{2,64})[\x60'"]?\s+tools?\b`)

	// secrets
	reAWS       = regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)
	reGitHub    = regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,251}\b|\bgithub_pat_[A-Za-z0-9_]{60,255}\b`)
	reSlack     = regexp.MustCompile(`\bxox[abprs]-[0-9A-Za-z-]{10,250}\b`)
	reSlackHook = regexp.MustCompile(`https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}`)
	reStripe    = regexp.MustCompile(`\b(sk|rk)_(live|test)_[0-9A-Za-z]{20,247}\b`)
	rePEM       = regexp.MustCompile(`-----BEGIN ((RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`)
	reLLMKey    = regexp.MustCompile(`\bsk-ant-(api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}\b|\bsk-proj-[A-Za-z0-9_-]{40,}\b|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b`)

	// command injection (text)
	reShellPass = regexp.MustCompile(`(?i)\b(passed|piped|sent|forwarded|handed)\s+(directly\s+|straight\s+|verbatim\s+|as[- ]is\s+)?(to|into)\s+(a\s+|the\s+)?(system\s+)?(shell|bash|sh|zsh|cmd(\.exe)?|powershell|terminal|os\.system|subprocess|exec\(?|eval\(?|child_process)|\b(execute|executes|run|runs)\s+(any\s+|arbitrary\s+)(shell\s+|system\s+|os\s+|bash\s+|terminal\s+)?commands?\b|\bsh\s+-c\b|\bshell\s*=\s*true\b`)

	// suspicious description
	reBase64   = regexp.MustCompile(`[A-Za-z0-9+/]{40,}={0,2}`)
	reURL      = regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>\x60)\]}]+`)
	reHTMLComm = regexp.MustCompile(`(?s)<!--.{1,1000}?-->`)
)

// exfilHosts are request catchers, OAST collaborators and anonymous tunnels:
// a URL to one of these in a tool description is an exfiltration pattern.
var exfilHosts = []string{
	"webhook.site", "requestbin.com", "requestbin.net", "pipedream.net", "pipedream.com", "m.pipedream.net",
	"hookbin.com", "beeceptor.com", "postb.in", "requestcatcher.com", "webhook.cool", "requestinspector.com",
	"burpcollaborator.net", "oastify.com", "interact.sh", "interactsh.com", "oast.fun", "oast.pro", "oast.live",
	"oast.site", "oast.online", "oast.me", "canarytokens.com", "dnslog.cn", "ceye.io", "ngrok.io", "ngrok-free.app",
	"ngrok.app", "trycloudflare.com", "loca.lt", "serveo.net", "localhost.run", "bore.pub", "pastebin.com",
	"transfer.sh", "0x0.st", "discord.com/api/webhooks", "discordapp.com/api/webhooks",
}

// scanText applies every text rule. tool is the tool the text belongs to
// ("" for registry text).
//
// Each rule's regexp runs only when the text (or sentence) holds the
// literal words every match of that regexp must contain (see prefilter.go);
// a regexp that runs sees the same input as before, so the findings are the
// same — TestScanMatchesReference and FuzzScanMatchesReference pin them
// against the plain per-regexp scanner kept in reference_test.go.
func scanText(text, tool string) []Finding {
	var out []Finding
	add := func(class, sev, rule string, start, end int) {
		out = append(out, Finding{Class: class, Severity: sev, RuleID: rule, Evidence: snippet(text, start, end)})
	}
	v := newView(text)
	kw := v.present(text)
	if kw.has(setIgnoreVerb | setIgnoreObject) {
		if m := reIgnorePrev.FindStringIndex(text); m != nil {
			add(ClassToolPoisoning, High, "TP-001", m[0], m[1])
		}
	}
	if kw.has(setHiddenTag) {
		if m := reHiddenTag.FindStringIndex(text); m != nil {
			add(ClassToolPoisoning, High, "TP-002", m[0], m[1])
		}
	}
	if kw.has(setUser | setConcealVerb) {
		if m := reConceal.FindStringIndex(text); m != nil {
			add(ClassToolPoisoning, High, "TP-003", m[0], m[1])
		}
	}
	for next := 0; kw&(setStrongPath|setEnvFile|setTool) != 0 && next < len(text); {
		s, off, n := nextSentence(text, next)
		if off < 0 {
			break
		}
		next = n
		sm := v.present(s)
		if sm.has(setStrongPath) {
			if m := reStrongPath.FindStringIndex(s); m != nil && reReadVerb.MatchString(s) {
				add(ClassToolPoisoning, High, "TP-004", off+m[0], off+m[1])
			}
		}
		if sm.has(setEnvFile) {
			clean := s
			if sm.has(setEnvDotEnv) {
				clean = reEnvExample.ReplaceAllString(s, "")
			}
			if m := reEnvFile.FindStringIndex(clean); m != nil && reReadVerb.MatchString(clean) && reExfilVerb.MatchString(clean) {
				add(ClassToolPoisoning, High, "TP-005", off, off+len(s))
			}
		}
		if !sm.has(setTool) {
			continue
		}
		// shadowing
		if sm.has(setToolModal) {
			for _, m := range reToolSubject.FindAllStringSubmatchIndex(s, -1) {
				subj := strings.ToLower(s[m[2]:m[3]])
				if isSelf(subj, tool) {
					continue
				}
				rest := s[m[6]:m[7]]
				if reModifyVerb.MatchString(rest) {
					add(ClassShadowing, High, "SH-001", off+m[0], off+m[1])
					break
				}
			}
		}
		if sm.has(setOtherTools) {
			if m := reOtherTools.FindStringIndex(s); m != nil {
				add(ClassShadowing, Medium, "SH-002", off+m[0], off+m[1])
			}
		}
		if sm.has(setForbid) {
			for _, m := range reForbidTool.FindAllStringSubmatchIndex(s, -1) {
				var subj string
				if m[8] >= 0 {
					subj = s[m[8]:m[9]]
				} else if m[14] >= 0 {
					subj = s[m[14]:m[15]]
				}
				if isSelf(strings.ToLower(subj), tool) {
					continue
				}
				add(ClassShadowing, Medium, "SH-003", off+m[0], off+m[1])
				break
			}
		}
	}
	out = append(out, secrets(text, kw)...)
	if kw.has(setShellPass) {
		if m := reShellPass.FindStringIndex(text); m != nil {
			add(ClassCommandInject, High, "CI-003", m[0], m[1])
		}
	}
	out = append(out, suspicious(text, &v)...)
	return out
}

// isSelf reports whether a tool reference points at the tool itself or is
// generic ("this tool", "the tool", "a tool").
func isSelf(subj, tool string) bool {
	switch subj {
	case "this", "the", "a", "an", "that", "same", "current", "above", "below", "mcp", "each", "every", "any", "which", "one":
		return true
	}
	return tool != "" && strings.EqualFold(subj, tool)
}

// nextSentence returns the first sentence of text at or after start, its
// byte offset and where the next one starts; off is -1 when none is left.
// Sentences end at . ! ? and newlines; a '.' inside a word (file names,
// domains, versions) does not end a sentence; empty sentences are skipped.
func nextSentence(text string, start int) (s string, off, next int) {
	for i := start; i < len(text); i++ {
		c := text[i]
		end := c == '\n' || c == '!' || c == '?'
		if c == '.' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\t') {
			end = true
		}
		if end {
			if i > start {
				return text[start:i], start, i + 1
			}
			start = i + 1
		}
	}
	if start < len(text) {
		return text[start:], start, len(text)
	}
	return "", -1, len(text)
}

// placeholderSecret reports whether a token is a documented example or a
// template rather than a credential.
func placeholderSecret(tok string) bool {
	u := strings.ToUpper(tok)
	if strings.HasSuffix(u, "EXAMPLE") || strings.Contains(u, "EXAMPLEKEY") || strings.Contains(u, "XXXX") ||
		strings.Contains(u, "YOUR") || strings.Contains(u, "REDACTED") || strings.Contains(u, "PLACEHOLDER") || strings.Contains(u, "DUMMY") || strings.Contains(u, "FAKE") {
		return true
	}
	// low character variety: "ghp_000000…", "sk_live_aaaaaaaa…", "…1234567890abcdef…" sequences
	distinct := map[rune]bool{}
	for _, r := range tok {
		distinct[r] = true
	}
	return len(distinct) < 8
}

// redact shows a secret's first 8 characters and its length only.
func redact(kind, tok string) string {
	p := tok
	if len(p) > 8 {
		p = p[:8]
	}
	return kind + " " + p + "… (" + itoa(len(tok)) + " chars)"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// tokenRules are the secret rules with one finding per token, in order; lits
// are the case-sensitive literals every match holds (one of them), set their
// folded keyword set (prefilter.go).
var tokenRules = []struct {
	re   *regexp.Regexp
	rule string
	kind string
	lits []string
	set  kwSet
}{
	{reAWS, "HS-AWS", "AWS access key id", []string{"AKIA", "ASIA"}, setAWS},
	{reGitHub, "HS-GH", "GitHub token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, setGitHub},
	{reSlack, "HS-SLACK", "Slack token", []string{"xox"}, setSlack},
	{reLLMKey, "HS-LLM", "LLM API key", []string{"sk-"}, setLLM},
}

// secrets applies the secret rules; kw is the text's keyword sets (view.present).
func secrets(text string, kw kwSet) []Finding {
	var out []Finding
	for _, r := range tokenRules {
		if !kw.has(r.set) || !containsAny(text, r.lits...) {
			continue
		}
		for _, tok := range r.re.FindAllString(text, 4) {
			if placeholderSecret(tok) {
				continue
			}
			out = append(out, Finding{Class: ClassHardcodedSec, Severity: High, RuleID: r.rule, Evidence: redact(r.kind, tok)})
		}
	}
	if !kw.has(setKeyBlocks) || !containsAny(text, "_live_", "_test_", "https://hooks.slack.com/services/", "-----BEGIN ") {
		return out
	}
	for _, tok := range reStripe.FindAllString(text, 4) {
		if placeholderSecret(tok) {
			continue
		}
		sev := High
		if strings.Contains(tok, "_test_") {
			sev = Low // test-mode keys move no money, but are still credentials
		}
		out = append(out, Finding{Class: ClassHardcodedSec, Severity: sev, RuleID: "HS-STRIPE", Evidence: redact("Stripe key", tok)})
	}
	for _, tok := range reSlackHook.FindAllString(text, 2) {
		if placeholderSecret(tok[len("https://hooks.slack.com/services/"):]) {
			continue
		}
		out = append(out, Finding{Class: ClassHardcodedSec, Severity: Medium, RuleID: "HS-SLACK", Evidence: redact("Slack webhook", tok)})
	}
	if m := rePEM.FindStringIndex(text); m != nil {
		// Only a block with key material is a secret; a bare header in docs is not.
		rest := text[m[1]:]
		if len(rest) > 200 {
			rest = rest[:200]
		}
		body := strings.Join(strings.Fields(rest), "")
		if len(body) >= 64 && !strings.HasPrefix(body, "...") && !strings.Contains(strings.ToUpper(body), "XXXX") {
			out = append(out, Finding{Class: ClassHardcodedSec, Severity: High, RuleID: "HS-PK", Evidence: "PEM private key block (" + itoa(len(body)) + "+ chars)"})
		}
	}
	return out
}

func isInvisible(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2064,
		r >= 0x2066 && r <= 0x2069, r == 0xfeff, r == 0x00ad, r == 0x180e, r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

func suspicious(text string, v *view) []Finding {
	var out []Finding
	tagOrBidi, zw := -1, -1
	for i, r := range text {
		if v.ascii {
			break // every rune below is >= 0x80
		}
		switch {
		case (r >= 0xe0000 && r <= 0xe007f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			if tagOrBidi < 0 {
				tagOrBidi = i
			}
		case r >= 0x200b && r <= 0x200f, r >= 0x2060 && r <= 0x2064, r == 0x180e:
			if zw < 0 {
				zw = i
			}
		case r == 0xfeff && i > 0:
			if zw < 0 {
				zw = i
			}
		}
	}
	if tagOrBidi >= 0 {
		out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: High, RuleID: "SD-001", Evidence: snippet(text, tagOrBidi, tagOrBidi+4)})
	}
	if zw >= 0 {
		out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: Medium, RuleID: "SD-002", Evidence: snippet(text, zw, zw+3)})
	}
	// base64 blobs outside URLs (blanking URLs only shortens alphabet runs)
	var noURL string
	if v.b64 {
		noURL = reURL.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
	}
	for _, m := range reBase64.FindAllStringIndex(noURL, 8) {
		blob := noURL[m[0]:m[1]]
		if !looksBase64(blob) || placeholderSecret(blob) {
			continue
		}
		if dec, ok := decodeB64(blob); ok && instructionLike(dec) {
			out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: High, RuleID: "SD-004", Evidence: snippet(text, m[0], m[0]+40)})
		} else {
			out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: Medium, RuleID: "SD-003", Evidence: snippet(text, m[0], m[0]+40)})
		}
		break
	}
	for _, u := range urls(text) {
		if exfilURL(text[u[0]:u[1]]) {
			out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: Medium, RuleID: "SD-005", Evidence: snippet(text, u[0], u[1])})
			break
		}
	}
	if !strings.Contains(text, "<!--") {
		return out
	}
	if m := reHTMLComm.FindStringIndex(text); m != nil {
		out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: Medium, RuleID: "SD-006", Evidence: snippet(text, m[0], m[1])})
	}
	return out
}

// looksBase64 rejects hex digests, identifiers and paths: a blob must mix
// upper case, lower case and digits and not be pure hex.
func looksBase64(s string) bool {
	var up, low, dig, hex bool
	hex = true
	for _, r := range strings.TrimRight(s, "=") {
		switch {
		case unicode.IsUpper(r):
			up = true
		case unicode.IsLower(r):
			low = true
		case unicode.IsDigit(r):
			dig = true
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			hex = false
		}
	}
	if strings.Count(s, "/") > 3 { // a path, not a blob
		return false
	}
	return up && low && dig && !hex
}

func decodeB64(s string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

func instructionLike(s string) bool {
	l := strings.ToLower(s)
	printable := 0
	for _, r := range s {
		if unicode.IsPrint(r) || unicode.IsSpace(r) {
			printable++
		}
	}
	if len(s) == 0 || printable*10 < len([]rune(s))*9 {
		return false
	}
	for _, w := range []string{"ignore", "instruction", "http://", "https://", "curl ", "password", "secret", "token", ".ssh", "do not tell", "<important>", "system prompt"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func exfilURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	hp := h + strings.ToLower(u.EscapedPath())
	for _, d := range exfilHosts {
		if strings.Contains(d, "/") {
			if strings.HasPrefix(hp, d) || strings.Contains(hp, "."+d) {
				return true
			}
			continue
		}
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

var commandParam = map[string]bool{
	"command": true, "cmd": true, "shell_command": true, "shellcommand": true, "bash_command": true, "bashcommand": true,
	"script": true, "shell": true, "commandline": true, "command_line": true, "exec": true, "bash": true, "powershell": true,
	"shell_script": true, "run": true, "code_to_run": true,
}

var reShellContext = regexp.MustCompile(`(?i)\b(shell|bash|zsh|sh|terminal|console|powershell|cmd\.exe|subprocess|system\s+command|command[- ]line|cli\s+command|execute[sd]?|exec|run\s+(a\s+|the\s+|any\s+)?command)\b`)

// scanSchema finds parameters that carry raw shell/command strings. schema
// is t.InputSchema decoded (decodeSchemaView): the command-like properties
// of its top-level object, by name.
func scanSchema(t Tool, schema *schemaView) []Finding {
	var out []Finding
	for _, p := range schema.params {
		if p.constrained {
			continue // a typed, enumerated or constant parameter is not a raw string
		}
		ctx := t.Name + " " + t.Description + " " + p.desc
		ev := snippetOf("parameter " + p.name + ": " + p.desc)
		if reShellContext.MatchString(ctx) {
			out = append(out, Finding{Class: ClassCommandInject, Severity: High, RuleID: "CI-001", Evidence: ev})
		} else {
			out = append(out, Finding{Class: ClassCommandInject, Severity: Medium, RuleID: "CI-002", Evidence: ev})
		}
	}
	return out
}
