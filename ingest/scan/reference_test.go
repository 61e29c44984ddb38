package scan

// The static scanner as it was before the fast path (literal prefilters,
// one lower-casing per text, no per-sentence allocations): every rule
// is one regexp run over every text or sentence. Frozen here, renamed with a
// "ref" prefix, so TestScanMatchesReference and FuzzScanMatchesReference pin
// that Scan's findings are byte-identical to it, and BenchmarkScan compares
// the two in the same run. Do not edit it to follow changes in Scan: a
// deliberate change of findings updates this copy in the same commit, with
// the reason.

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
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
	refReIgnorePrev = regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+|my\s+)?(previous|prior|above|earlier|preceding|former|original|system)\s+(instructions?|prompts?|rules|directions|directives|guidelines|messages|context)\b`)
	refReHiddenTag  = regexp.MustCompile(`(?i)<\s*/?\s*(important|system|instructions?|secret|hidden|admin|sudo|override)\s*>|\[/?INST\]|<\|im_start\|>|<\|system\|>`)
	refReConceal    = regexp.MustCompile(`(?i)\b(do\s+not|don'?t|never|must\s+not)\s+(tell|inform|mention|reveal|disclose|notify|alert|show|let)\b[^.!?\n]{0,40}\b(the\s+)?users?\b|\bwithout\s+(telling|informing|notifying|alerting)\s+(the\s+)?users?\b|\b(the\s+)?users?\s+(must|should)\s+not\s+(know|see|be\s+told)\b`)
	refReStrongPath = regexp.MustCompile(`(?i)(~/|\$home/|/home/[^/\s]+/|/root/|%userprofile%\\)?\.ssh\b|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b|\.git-credentials\b|\.netrc\b|\.docker/config\.json\b|\.kube/config\b|/etc/shadow\b|\.gnupg\b|login\.keychain|\bkeychain\b|\.config/gcloud\b|wallet\.dat\b`)
	refReReadVerb   = regexp.MustCompile(`(?i)\b(read|cat|open|load|access|include|send|upload|copy|exfiltrate|attach|retrieve|fetch|grab|collect|pass|print|dump|get)\b`)
	refReEnvFile    = regexp.MustCompile(`(?i)(^|[\s'"\x60(/])\.env(\s|$|[.,;:'"\x60)!?])|\bcredentials\.json\b|\bsecrets?\.(json|ya?ml|toml)\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b`)
	refReExfilVerb  = regexp.MustCompile(`(?i)\b(send|pass|include|upload|post|attach|append|forward|transmit|exfiltrate|put)\b[^.!?\n]{0,60}\b(contents?|it|them|its|values?|keys?|secrets?|parameter|argument|sidenote|notes?|body)\b`)
	refReEnvExample = regexp.MustCompile(`(?i)\.env\.(example|sample|template|dist|defaults?)\b`)

	// shadowing
	refReToolSubject = regexp.MustCompile(`(?i)\b(?:the\s+)?[\x60'"]?([a-z0-9_.:-]{2,64})[\x60'"]?\s+tool\s+(must|should|shall|has\s+to|needs\s+to|will\s+need\s+to|is\s+required\s+to)\s+([^.!?\n]{0,100})`)
	refReModifyVerb  = regexp.MustCompile(`(?i)\b(send|forward|bcc|cc|include|add|redirect|route|replace|change|set|use|always|also|instead|copy|attach|append|prepend)\b`)
	refReOtherTools  = regexp.MustCompile(`(?i)\b(before|after|when(ever)?|prior\s+to)\s+(using|calling|invoking|running|executing)\s+(any|all|every|each)\s+(other\s+)?tools?\b[^.!?\n]{0,100}\b(must|always|first|never|should|need\s+to|have\s+to)\b|\b(all|any|every)\s+other\s+tools?\s+(must|should|shall)\b`)
	refReForbidTool  = regexp.MustCompile(`(?i)\b(never|do\s+not|don'?t|must\s+not)\s+(use|call|invoke|run)\s+(the\s+|any\s+)?[\x60'"]?([a-z0-9_.:-]{2,64})[\x60'"]?\s+tool\b|\b(overrides?|supersedes?|takes\s+precedence\s+over)\s+(the\s+)?[\x60'"]?([a-z0-9_.:-]{2,64})[\x60'"]?\s+tools?\b`)

	// secrets
	refReAWS       = regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)
	refReGitHub    = regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,251}\b|\bgithub_pat_[A-Za-z0-9_]{60,255}\b`)
	refReSlack     = regexp.MustCompile(`\bxox[abprs]-[0-9A-Za-z-]{10,250}\b`)
	refReSlackHook = regexp.MustCompile(`https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}`)
	refReStripe    = regexp.MustCompile(`\b(sk|rk)_(live|test)_[0-9A-Za-z]{20,247}\b`)
	refRePEM       = regexp.MustCompile(`-----BEGIN ((RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`)
	refReLLMKey    = regexp.MustCompile(`\bsk-ant-(api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}\b|\bsk-proj-[A-Za-z0-9_-]{40,}\b|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b`)

	// command injection (text)
	refReShellPass = regexp.MustCompile(`(?i)\b(passed|piped|sent|forwarded|handed)\s+(directly\s+|straight\s+|verbatim\s+|as[- ]is\s+)?(to|into)\s+(a\s+|the\s+)?(system\s+)?(shell|bash|sh|zsh|cmd(\.exe)?|powershell|terminal|os\.system|subprocess|exec\(?|eval\(?|child_process)|\b(execute|executes|run|runs)\s+(any\s+|arbitrary\s+)(shell\s+|system\s+|os\s+|bash\s+|terminal\s+)?commands?\b|\bsh\s+-c\b|\bshell\s*=\s*true\b`)

	// suspicious description
	refReBase64   = regexp.MustCompile(`[A-Za-z0-9+/]{40,}={0,2}`)
	refReURL      = regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>\x60)\]}]+`)
	refReHTMLComm = regexp.MustCompile(`(?s)<!--.{1,1000}?-->`)
)

// exfilHosts are request catchers, OAST collaborators and anonymous tunnels:
// a URL to one of these in a tool description is an exfiltration pattern.
var refExfilHosts = []string{
	"webhook.site", "requestbin.com", "requestbin.net", "pipedream.net", "pipedream.com", "m.pipedream.net",
	"hookbin.com", "beeceptor.com", "postb.in", "requestcatcher.com", "webhook.cool", "requestinspector.com",
	"burpcollaborator.net", "oastify.com", "interact.sh", "interactsh.com", "oast.fun", "oast.pro", "oast.live",
	"oast.site", "oast.online", "oast.me", "canarytokens.com", "dnslog.cn", "ceye.io", "ngrok.io", "ngrok-free.app",
	"ngrok.app", "trycloudflare.com", "loca.lt", "serveo.net", "localhost.run", "bore.pub", "pastebin.com",
	"transfer.sh", "0x0.st", "discord.com/api/webhooks", "discordapp.com/api/webhooks",
}

// scanText applies every text rule. tool is the tool the text belongs to
// ("" for registry text); siblings are all tool names of the server.
func refScanText(text, tool string, siblings []string) []Finding {
	var out []Finding
	add := func(class, sev, rule string, loc []int) {
		out = append(out, Finding{Class: class, Severity: sev, RuleID: rule, Evidence: refSnippet(text, loc[0], loc[1])})
	}
	if m := refReIgnorePrev.FindStringIndex(text); m != nil {
		add(ClassToolPoisoning, High, "TP-001", m)
	}
	if m := refReHiddenTag.FindStringIndex(text); m != nil {
		add(ClassToolPoisoning, High, "TP-002", m)
	}
	if m := refReConceal.FindStringIndex(text); m != nil {
		add(ClassToolPoisoning, High, "TP-003", m)
	}
	for _, sent := range refSentences(text) {
		if m := refReStrongPath.FindStringIndex(sent.s); m != nil && refReReadVerb.MatchString(sent.s) {
			add(ClassToolPoisoning, High, "TP-004", []int{sent.off + m[0], sent.off + m[1]})
		}
		clean := refReEnvExample.ReplaceAllString(sent.s, "")
		if m := refReEnvFile.FindStringIndex(clean); m != nil && refReReadVerb.MatchString(clean) && refReExfilVerb.MatchString(clean) {
			add(ClassToolPoisoning, High, "TP-005", []int{sent.off, sent.off + len(sent.s)})
		}
		// shadowing
		for _, m := range refReToolSubject.FindAllStringSubmatchIndex(sent.s, -1) {
			subj := strings.ToLower(sent.s[m[2]:m[3]])
			if refIsSelf(subj, tool) {
				continue
			}
			rest := sent.s[m[6]:m[7]]
			if refReModifyVerb.MatchString(rest) {
				add(ClassShadowing, High, "SH-001", []int{sent.off + m[0], sent.off + m[1]})
				break
			}
		}
		if m := refReOtherTools.FindStringIndex(sent.s); m != nil {
			add(ClassShadowing, Medium, "SH-002", []int{sent.off + m[0], sent.off + m[1]})
		}
		for _, m := range refReForbidTool.FindAllStringSubmatchIndex(sent.s, -1) {
			var subj string
			if m[8] >= 0 {
				subj = sent.s[m[8]:m[9]]
			} else if m[14] >= 0 {
				subj = sent.s[m[14]:m[15]]
			}
			if refIsSelf(strings.ToLower(subj), tool) {
				continue
			}
			add(ClassShadowing, Medium, "SH-003", []int{sent.off + m[0], sent.off + m[1]})
			break
		}
	}
	out = append(out, refSecrets(text)...)
	if m := refReShellPass.FindStringIndex(text); m != nil {
		add(ClassCommandInject, High, "CI-003", m)
	}
	out = append(out, refSuspicious(text)...)
	return out
}

// isSelf reports whether a tool reference points at the tool itself or is
// generic ("this tool", "the tool", "a tool").
func refIsSelf(subj, tool string) bool {
	switch subj {
	case "this", "the", "a", "an", "that", "same", "current", "above", "below", "mcp", "each", "every", "any", "which", "one":
		return true
	}
	return tool != "" && strings.EqualFold(subj, tool)
}

type refSentence struct {
	s   string
	off int
}

// sentences splits on . ! ? and newlines, keeping byte offsets. A '.' inside
// a word (file names, domains, versions) does not end a sentence.
func refSentences(text string) []refSentence {
	var out []refSentence
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := c == '\n' || c == '!' || c == '?'
		if c == '.' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\t') {
			end = true
		}
		if end {
			if i > start {
				out = append(out, refSentence{text[start:i], start})
			}
			start = i + 1
		}
	}
	if start < len(text) {
		out = append(out, refSentence{text[start:], start})
	}
	return out
}

// placeholderSecret reports whether a token is a documented example or a
// template rather than a credential.
func refPlaceholderSecret(tok string) bool {
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
func refRedact(kind, tok string) string {
	p := tok
	if len(p) > 8 {
		p = p[:8]
	}
	return kind + " " + p + "… (" + refItoa(len(tok)) + " chars)"
}

func refItoa(n int) string {
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

func refSecrets(text string) []Finding {
	var out []Finding
	for _, r := range []struct {
		re   *regexp.Regexp
		rule string
		kind string
	}{
		{refReAWS, "HS-AWS", "AWS access key id"}, {refReGitHub, "HS-GH", "GitHub token"}, {refReSlack, "HS-SLACK", "Slack token"},
		{refReLLMKey, "HS-LLM", "LLM API key"},
	} {
		for _, tok := range r.re.FindAllString(text, 4) {
			if refPlaceholderSecret(tok) {
				continue
			}
			out = append(out, Finding{Class: ClassHardcodedSec, Severity: High, RuleID: r.rule, Evidence: refRedact(r.kind, tok)})
		}
	}
	for _, tok := range refReStripe.FindAllString(text, 4) {
		if refPlaceholderSecret(tok) {
			continue
		}
		sev := High
		if strings.Contains(tok, "_test_") {
			sev = Low // test-mode keys move no money, but are still credentials
		}
		out = append(out, Finding{Class: ClassHardcodedSec, Severity: sev, RuleID: "HS-STRIPE", Evidence: refRedact("Stripe key", tok)})
	}
	for _, tok := range refReSlackHook.FindAllString(text, 2) {
		if refPlaceholderSecret(tok[len("https://hooks.slack.com/services/"):]) {
			continue
		}
		out = append(out, Finding{Class: ClassHardcodedSec, Severity: Medium, RuleID: "HS-SLACK", Evidence: refRedact("Slack webhook", tok)})
	}
	if m := refRePEM.FindStringIndex(text); m != nil {
		// Only a block with key material is a secret; a bare header in docs is not.
		rest := text[m[1]:]
		if len(rest) > 200 {
			rest = rest[:200]
		}
		body := strings.Join(strings.Fields(rest), "")
		if len(body) >= 64 && !strings.HasPrefix(body, "...") && !strings.Contains(strings.ToUpper(body), "XXXX") {
			out = append(out, Finding{Class: ClassHardcodedSec, Severity: High, RuleID: "HS-PK", Evidence: "PEM private key block (" + refItoa(len(body)) + "+ chars)"})
		}
	}
	return out
}

func refIsInvisible(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2064,
		r >= 0x2066 && r <= 0x2069, r == 0xfeff, r == 0x00ad, r == 0x180e, r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

func refSuspicious(text string) []Finding {
	var out []Finding
	tagOrBidi, zw := -1, -1
	for i, r := range text {
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
		out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: High, RuleID: "SD-001", Evidence: refSnippet(text, tagOrBidi, tagOrBidi+4)})
	}
	if zw >= 0 {
		out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: Medium, RuleID: "SD-002", Evidence: refSnippet(text, zw, zw+3)})
	}
	// base64 blobs outside URLs
	noURL := refReURL.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
	for _, m := range refReBase64.FindAllStringIndex(noURL, 8) {
		blob := noURL[m[0]:m[1]]
		if !refLooksBase64(blob) || refPlaceholderSecret(blob) {
			continue
		}
		if dec, ok := refDecodeB64(blob); ok && refInstructionLike(dec) {
			out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: High, RuleID: "SD-004", Evidence: refSnippet(text, m[0], m[0]+40)})
		} else {
			out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: Medium, RuleID: "SD-003", Evidence: refSnippet(text, m[0], m[0]+40)})
		}
		break
	}
	for _, u := range refReURL.FindAllStringIndex(text, 20) {
		if refExfilURL(text[u[0]:u[1]]) {
			out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: Medium, RuleID: "SD-005", Evidence: refSnippet(text, u[0], u[1])})
			break
		}
	}
	if m := refReHTMLComm.FindStringIndex(text); m != nil {
		out = append(out, Finding{Class: ClassSuspiciousDesc, Severity: Medium, RuleID: "SD-006", Evidence: refSnippet(text, m[0], m[1])})
	}
	return out
}

// looksBase64 rejects hex digests, identifiers and paths: a blob must mix
// upper case, lower case and digits and not be pure hex.
func refLooksBase64(s string) bool {
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

func refDecodeB64(s string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

func refInstructionLike(s string) bool {
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

func refExfilURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	hp := h + strings.ToLower(u.EscapedPath())
	for _, d := range refExfilHosts {
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

var refCommandParam = map[string]bool{
	"command": true, "cmd": true, "shell_command": true, "shellcommand": true, "bash_command": true, "bashcommand": true,
	"script": true, "shell": true, "commandline": true, "command_line": true, "exec": true, "bash": true, "powershell": true,
	"shell_script": true, "run": true, "code_to_run": true,
}

var refReShellContext = regexp.MustCompile(`(?i)\b(shell|bash|zsh|sh|terminal|console|powershell|cmd\.exe|subprocess|system\s+command|command[- ]line|cli\s+command|execute[sd]?|exec|run\s+(a\s+|the\s+|any\s+)?command)\b`)

// scanSchema finds parameters that carry raw shell/command strings.
func refScanSchema(t Tool) []Finding {
	if !refHasSchema(t.InputSchema) {
		return nil
	}
	var s map[string]any
	if json.Unmarshal(t.InputSchema, &s) != nil {
		return nil
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Finding
	for _, name := range names {
		p, _ := props[name].(map[string]any)
		norm := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
		if !refCommandParam[norm] && !refCommandParam[strings.ReplaceAll(norm, "_", "")] {
			continue
		}
		if p != nil {
			if typ, ok := p["type"].(string); ok && typ != "string" {
				continue
			}
			if _, ok := p["enum"]; ok {
				continue // a fixed set of commands is not a raw string
			}
			if _, ok := p["const"]; ok {
				continue
			}
		}
		desc, _ := p["description"].(string)
		ctx := t.Name + " " + t.Description + " " + desc
		ev := refSnippetOf("parameter " + name + ": " + desc)
		if refReShellContext.MatchString(ctx) {
			out = append(out, Finding{Class: ClassCommandInject, Severity: High, RuleID: "CI-001", Evidence: ev})
		} else {
			out = append(out, Finding{Class: ClassCommandInject, Severity: Medium, RuleID: "CI-002", Evidence: ev})
		}
	}
	return out
}

// Scan runs every built-in rule over the target. Findings are sorted by
// (tool, field, rule id, evidence) and deduplicated.
func refScan(t Target) []Finding {
	var out []Finding
	names := make([]string, 0, len(t.Tools))
	for _, tl := range t.Tools {
		names = append(names, tl.Name)
	}
	texts := []struct{ tool, field, text string }{
		{"", "registry.description", t.Description},
		{"", "registry.title", t.Title},
	}
	for _, x := range t.Extra {
		texts = append(texts, struct{ tool, field, text string }{"", x.Field, x.Value})
	}
	for _, tl := range t.Tools {
		texts = append(texts, struct{ tool, field, text string }{tl.Name, "tool.description", tl.Description})
		for _, sd := range refSchemaTexts(tl.InputSchema) {
			texts = append(texts, struct{ tool, field, text string }{tl.Name, "tool.input_schema", sd})
		}
	}
	for _, x := range texts {
		if x.text == "" {
			continue
		}
		for _, f := range refScanText(x.text, x.tool, names) {
			f.Tool, f.Field, f.Source = x.tool, x.field, "builtin"
			out = append(out, f)
		}
	}
	for _, tl := range t.Tools {
		for _, f := range refScanSchema(tl) {
			f.Tool, f.Field, f.Source = tl.Name, "tool.input_schema", "builtin"
			out = append(out, f)
		}
	}
	out = append(out, refHygiene(t)...)
	return refDedupe(out)
}

func refDedupe(in []Finding) []Finding {
	sort.SliceStable(in, func(i, j int) bool {
		a, b := in[i], in[j]
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		return a.Evidence < b.Evidence
	})
	out := in[:0]
	for i, f := range in {
		if i > 0 && f == in[i-1] {
			continue
		}
		out = append(out, f)
	}
	if out == nil {
		return []Finding{}
	}
	return out
}

func refHygiene(t Target) []Finding {
	var out []Finding
	if strings.TrimSpace(t.Description) == "" {
		out = append(out, Finding{Class: ClassHygiene, Severity: Low, Field: "registry.description", RuleID: "HY-003",
			Evidence: "registry description is empty", Source: "builtin"})
	}
	if !t.ToolsListed {
		return out
	}
	for _, tl := range t.Tools {
		if strings.TrimSpace(tl.Description) == "" {
			out = append(out, Finding{Class: ClassHygiene, Severity: Low, Tool: tl.Name, Field: "tool.description", RuleID: "HY-001",
				Evidence: "tool " + refSnippetOf(tl.Name) + " has no description", Source: "builtin"})
		}
		if !refHasSchema(tl.InputSchema) {
			out = append(out, Finding{Class: ClassHygiene, Severity: Low, Tool: tl.Name, Field: "tool.input_schema", RuleID: "HY-002",
				Evidence: "tool " + refSnippetOf(tl.Name) + " has no input schema", Source: "builtin"})
		}
	}
	return out
}

func refHasSchema(s json.RawMessage) bool {
	t := strings.TrimSpace(string(s))
	return t != "" && t != "null"
}

// snippet returns a window of at most MaxSnippet bytes around text[start:end],
// with invisible and control characters escaped, cut on rune boundaries.
func refSnippet(text string, start, end int) string {
	const ctx = 60
	lo, hi := start-ctx, end+ctx
	if lo < 0 {
		lo = 0
	}
	if hi > len(text) {
		hi = len(text)
	}
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	return refSnippetOf(text[lo:hi])
}

// snippetOf escapes and bounds s to MaxSnippet bytes.
func refSnippetOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		var piece string
		switch {
		case r == utf8.RuneError:
			piece = `\ufffd`
		case refIsInvisible(r) || r < 0x20 || r == 0x7f:
			piece = refEscapeRune(r)
		default:
			piece = string(r)
		}
		if b.Len()+len(piece) > MaxSnippet {
			break
		}
		b.WriteString(piece)
	}
	return b.String()
}

func refEscapeRune(r rune) string {
	const hex = "0123456789abcdef"
	if r > 0xffff {
		return `\U` + string([]byte{hex[r>>28&15], hex[r>>24&15], hex[r>>20&15], hex[r>>16&15], hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15]})
	}
	return `\u` + string([]byte{hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15]})
}

// schemaTexts collects the description/title/default/examples strings of a
// JSON schema, bounded in depth and count.
func refSchemaTexts(raw json.RawMessage) []string {
	if !refHasSchema(raw) {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any, int)
	walk = func(x any, depth int) {
		if depth > 20 || len(out) > 500 {
			return
		}
		switch t := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				switch val := t[k].(type) {
				case string:
					if k == "description" || k == "title" || k == "default" || k == "const" || k == "example" {
						out = append(out, val)
					}
				default:
					walk(val, depth+1)
				}
			}
		case []any:
			for _, e := range t {
				if s, ok := e.(string); ok {
					out = append(out, s)
					continue
				}
				walk(e, depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}

// RefScan exports the reference to the external tests (compare_test.go).
var RefScan = refScan
