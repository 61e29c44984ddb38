// Package scan is the built-in static scanner (SPEC §1.4) and the intake of
// Ramparts JSON output.
//
// In: a Target — registry text (name, title, description, declared header /
// environment defaults) and what the probe captured (tool names, descriptions,
// input schemas). Out: []Finding, each {class, severity, tool, field, rule
// id, evidence snippet <= 200 bytes}. Scan is pure and never panics on any
// input (FuzzScan). Coverage (scanned / auth_required / unreachable /
// no_endpoint) is decided by the caller from the probe outcome; a server
// that was not scanned has no findings and a null static score, never 100.
//
// Rules are code with stable ids (see rules.go); every rule has a
// true-positive test and look-alike benign text that must not fire.
//
// Decisions:
//   - AWS's documentation key AKIAIOSFODNN7EXAMPLE (and any key id ending in
//     EXAMPLE, and the documented secret ending in EXAMPLEKEY) is NOT a
//     secret: it is published by AWS, cannot authenticate, and is copied into
//     countless READMEs; flagging it would punish servers for quoting docs.
//     Placeholders (xxxx…, <your-token>, low-variety strings) are not secrets
//     either.
//   - Evidence never republishes a secret: hardcoded_secret snippets show the
//     first 8 characters and the length only.
//   - Invisible characters are shown escaped (\u200b) in snippets.
//
// Hand-written where a benchmark shows why: the input-schema decoder
// (schema.go) reads each tool's schema once from its bytes instead of
// decoding it into generic maps with encoding/json, and gives the same texts
// and parameters (pinned against that code, kept in schema_ref_test.go, on
// the corpus and by fuzzing). BenchmarkSchemaDecode on its seed schemas:
// 6.4x less time and 18x fewer allocations (214 against 3,858); it was half
// of a 50k publication's allocations (bench/RESULTS.md §2).
package scan

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/forum-mcp/forum/schema"
)

// Classes (SPEC §1.4).
const (
	ClassToolPoisoning  = "tool_poisoning"
	ClassShadowing      = "shadowing"
	ClassHardcodedSec   = "hardcoded_secret"
	ClassCommandInject  = "command_injection"
	ClassSuspiciousDesc = "suspicious_description"
	ClassHygiene        = "hygiene"
)

// Severities.
const (
	High   = "high"
	Medium = "medium"
	Low    = "low"
)

// MaxSnippet bounds a finding's evidence snippet in bytes.
const MaxSnippet = 200

// Finding is one scanner finding (schema.ScanFinding: it is sealed in the
// published record).
type Finding = schema.ScanFinding

// Tool is a captured tool definition.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage // nil when the tool has none
}

// Text is a piece of registry text with where it came from.
type Text struct {
	Field string // e.g. "registry.env.API_KEY.default", "registry.header.Authorization.value"
	Value string
}

// Target is what is scanned for one server.
type Target struct {
	Name        string
	Title       string
	Description string
	Extra       []Text // declared defaults/values/descriptions of env vars and headers
	ToolsListed bool   // tools/list succeeded (hygiene rules only apply then)
	Tools       []Tool
}

// Scan runs every built-in rule over the target. Findings are sorted by
// (tool, field, rule id, evidence) and deduplicated.
func Scan(t Target) []Finding {
	var out []Finding
	// Texts are scanned in a fixed order: registry text, then per tool its
	// description and its schema's texts.
	text := func(tool, field, text string) {
		if text == "" {
			return
		}
		for _, f := range scanText(text, tool) {
			f.Tool, f.Field, f.Source = tool, field, "builtin"
			out = append(out, f)
		}
	}
	text("", "registry.description", t.Description)
	text("", "registry.title", t.Title)
	for _, x := range t.Extra {
		text("", x.Field, x.Value)
	}
	// Each input schema is decoded once, for its texts and its parameters;
	// the parameters' findings come after every text's.
	var params []Finding
	d := decoders.Get().(*schemaDecoder)
	for _, tl := range t.Tools {
		sv := d.decode(tl.InputSchema)
		text(tl.Name, "tool.description", tl.Description)
		for _, sd := range sv.texts {
			text(tl.Name, "tool.input_schema", sd)
		}
		for _, f := range scanSchema(tl, &sv) {
			f.Tool, f.Field, f.Source = tl.Name, "tool.input_schema", "builtin"
			params = append(params, f)
		}
	}
	d.release()
	out = append(out, params...)
	out = append(out, hygiene(t)...)
	return dedupe(out)
}

func dedupe(in []Finding) []Finding {
	slices.SortStableFunc(in, func(a, b Finding) int {
		if c := strings.Compare(a.Tool, b.Tool); c != 0 {
			return c
		}
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		if c := strings.Compare(a.RuleID, b.RuleID); c != 0 {
			return c
		}
		return strings.Compare(a.Evidence, b.Evidence)
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

func hygiene(t Target) []Finding {
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
				Evidence: "tool " + snippetOf(tl.Name) + " has no description", Source: "builtin"})
		}
		if !hasSchema(tl.InputSchema) {
			out = append(out, Finding{Class: ClassHygiene, Severity: Low, Tool: tl.Name, Field: "tool.input_schema", RuleID: "HY-002",
				Evidence: "tool " + snippetOf(tl.Name) + " has no input schema", Source: "builtin"})
		}
	}
	return out
}

// snippet returns a window of at most MaxSnippet bytes around text[start:end],
// with invisible and control characters escaped, cut on rune boundaries.
func snippet(text string, start, end int) string {
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
	return snippetOf(text[lo:hi])
}

// snippetOf escapes and bounds s to MaxSnippet bytes.
func snippetOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		var piece string
		switch {
		case r == utf8.RuneError:
			piece = `\ufffd`
		case isInvisible(r) || r < 0x20 || r == 0x7f:
			piece = escapeRune(r)
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

func escapeRune(r rune) string {
	const hex = "0123456789abcdef"
	if r > 0xffff {
		return `\U` + string([]byte{hex[r>>28&15], hex[r>>24&15], hex[r>>20&15], hex[r>>16&15], hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15]})
	}
	return `\u` + string([]byte{hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15]})
}
