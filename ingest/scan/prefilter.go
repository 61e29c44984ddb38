package scan

import "strings"

// Literal prefilters. Each text rule's regexp runs only when the text (and,
// for the sentence rules, the sentence) holds at least one word of every
// keyword set below that is required of it: a set lists, lower-cased, words
// one of which every match of the regexp contains. Skipping a regexp that
// cannot match changes no finding; a regexp that runs gets the same input
// as before. Sets are derived alternative by alternative from the patterns
// in rules.go — edit them together (FuzzScanMatchesReference checks).
//
// Case: the regexps are (?i), which folds with Unicode simple folding, so
// "ſ" (U+017F) matches s and "K" (U+212A) matches k; and exfilURL lower-cases
// with unicode.ToLower, which maps "İ" (U+0130) to i. A text holding one of
// those four runes (with "ı", U+0131) is scanned with every prefilter off;
// otherwise ASCII lower-casing is the whole story.
var (
	// TP-001: (ignore|disregard|forget|override) … (instructions?|prompts?|rules|directions|directives|guidelines|messages|context)
	kwIgnoreVerb   = []string{"ignore", "disregard", "forget", "override"}
	kwIgnoreObject = []string{"instruction", "prompt", "rules", "direct", "guideline", "message", "context"}
	// TP-002: <tag>, [INST], <|im_start|>, <|system|>
	kwHiddenTag = []string{"important", "system", "instruction", "secret", "hidden", "admin", "sudo", "override", "inst]", "im_start"}
	// TP-003: every alternative names the user(s); and (do not|don't|never|must not) / without / (must|should) not
	kwUser        = []string{"user"}
	kwConcealVerb = []string{"not", "don", "never", "without"}
	// TP-004
	kwStrongPath = []string{".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".aws/credentials", ".git-credentials", ".netrc",
		".docker/config.json", ".kube/config", "/etc/shadow", ".gnupg", "keychain", ".config/gcloud", "wallet.dat"}
	// TP-005: reEnvFile. Removing .env.example & co. only ever happens in a
	// sentence holding ".env.", which passes this set anyway.
	kwEnvFile   = []string{".env", "credentials.json", "secret", "mcp.json", "claude_desktop_config.json"}
	kwEnvDotEnv = []string{".env."}
	// SH-001..003 all need the word tool.
	kwTool       = []string{"tool"}
	kwToolModal  = []string{"must", "should", "shall", "has", "need", "required"}
	kwOtherTools = []string{"other", "before", "after", "when", "prior"}
	kwForbid     = []string{"never", "not", "don", "override", "supersede", "precedence"}
	// CI-003: (passed|piped|sent|forwarded|handed) … | (execute|run)… commands? | sh -c | shell=true
	kwShellPass = []string{"passed", "piped", "sent", "forwarded", "handed", "command", "-c", "true"}
	// Secrets: the case-sensitive literals every token of a rule holds
	// (tokenRules' lits, and those of the Stripe, Slack webhook and PEM
	// rules), lower-cased: a text without one folded cannot hold it as is.
	kwAWS       = []string{"akia", "asia"}
	kwGitHub    = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}
	kwSlack     = []string{"xox"}
	kwLLM       = []string{"sk-"}
	kwKeyBlocks = []string{"_live_", "_test_", "https://hooks.slack.com/services/", "-----begin "}
)

// kwSet names keyword sets; a mask says which sets have a word present.
type kwSet uint32

const (
	setIgnoreVerb kwSet = 1 << iota
	setIgnoreObject
	setHiddenTag
	setUser
	setConcealVerb
	setStrongPath
	setEnvFile
	setEnvDotEnv
	setTool
	setToolModal
	setOtherTools
	setForbid
	setShellPass
	setAWS
	setGitHub
	setSlack
	setLLM
	setKeyBlocks
	setAll = 1<<iota - 1
)

type kwEntry struct {
	word string
	sets kwSet
}

// kwIndex lists the keywords by first byte, each with every set it is in.
var kwIndex = func() (idx [256][]kwEntry) {
	for _, x := range []struct {
		set   kwSet
		words []string
	}{
		{setIgnoreVerb, kwIgnoreVerb}, {setIgnoreObject, kwIgnoreObject}, {setHiddenTag, kwHiddenTag}, {setUser, kwUser},
		{setConcealVerb, kwConcealVerb}, {setStrongPath, kwStrongPath}, {setEnvFile, kwEnvFile}, {setEnvDotEnv, kwEnvDotEnv},
		{setTool, kwTool}, {setToolModal, kwToolModal}, {setOtherTools, kwOtherTools}, {setForbid, kwForbid}, {setShellPass, kwShellPass},
		{setAWS, kwAWS}, {setGitHub, kwGitHub}, {setSlack, kwSlack}, {setLLM, kwLLM}, {setKeyBlocks, kwKeyBlocks},
	} {
	words:
		for _, w := range x.words {
			l := idx[w[0]]
			for i := range l {
				if l[i].word == w {
					l[i].sets |= x.set
					continue words
				}
			}
			idx[w[0]] = append(l, kwEntry{w, x.set})
		}
	}
	return idx
}()

// present returns the sets with a word in text, compared with its ASCII
// letters lower-cased (the keywords are lower-case), in one pass without a
// lower-cased copy; all sets when prefilters are off.
func (v *view) present(text string) kwSet {
	if v.all {
		return setAll
	}
	var m kwSet
	for i := 0; i < len(text); i++ {
		for _, e := range kwIndex[lowerASCII(text[i])] {
			if m&e.sets != e.sets && hasPrefixFold(text[i:], e.word) {
				m |= e.sets
			}
		}
	}
	return m
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold: s starts with word (lower-case) once s's ASCII letters are
// lower-cased.
func hasPrefixFold(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for k := 1; k < len(word); k++ { // the first byte is the index's
		if lowerASCII(s[k]) != word[k] {
			return false
		}
	}
	return true
}

// has reports whether m has a word of every set in req.
func (m kwSet) has(req kwSet) bool { return m&req == req }

// view is what the prefilters read of one text, computed in one pass.
type view struct {
	all   bool // prefilters off (see above)
	ascii bool // no byte >= 0x80: no invisible or bidi character
	b64   bool // a run of >= 40 bytes of the base64 alphabet (reBase64 can match)
}

func newView(text string) view {
	v := view{ascii: true}
	run := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/':
			run++
		default:
			run = 0
			if c >= 0x80 {
				v.ascii = false
			}
		}
		if run >= 40 {
			v.b64 = true
		}
	}
	if !v.ascii {
		v.all = strings.Contains(text, "\u0130") || strings.Contains(text, "\u0131") ||
			strings.Contains(text, "\u017f") || strings.Contains(text, "\u212a")
	}
	return v
}

// urls returns the reURL matches of text (at most 20).
func urls(text string) [][]int {
	if !strings.Contains(text, "://") {
		return nil
	}
	return reURL.FindAllStringIndex(text, 20)
}
