package scan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Ramparts intake. Ramparts (an external MCP scanner) prints log lines
// ("WARN …") before its JSON document; parsing starts at the first '{'.
// The document is one ScanResult or an object with a "results" array of them:
//
//	{"url", "status", "tools":[{"name","description","input_schema"}],
//	 "security_issues":{"tool_issues":[…], "prompt_issues":[…], "resource_issues":[…]},
//	 "yara_results":[{"target_type","target_name","rule_name","matched_text","context","rule_metadata":{…}}],
//	 "errors":[…]}
//
// Mapping onto the SPEC §1.4 classes (rule id "RAMPARTS:<issue_type>" for
// the LLM-judged issues, "RAMPARTS-YARA:<rule_name>" for YARA matches):
//
//	ToolPoisoning, PromptInjection, Jailbreak → tool_poisoning   (severity as given)
//	CommandInjection                           → command_injection (severity as given)
//	SQLInjection, PathTraversal                → command_injection, at most medium (an
//	                                             "allows injection" opinion, not a raw shell string)
//	SecretsLeakage                             → suspicious_description, at most medium
//	                                             ("processes credentials" is not a hardcoded secret)
//	AuthBypass                                 → suspicious_description, at most medium
//	PIILeakage                                 → hygiene, low
//	anything else                              → suspicious_description, low
//	YARA: by rule category/name keywords — secret|credential|token|apikey|api_key → hardcoded_secret;
//	      shadow|cross_origin|cross-origin → shadowing; command|shell|exec|rce → command_injection;
//	      poison|injection|jailbreak|hidden_instruction → tool_poisoning;
//	      unicode|invisible|obfusc|base64|exfil|url → suspicious_description; else suspicious_description.
//	      target_type "summary" rows are execution reports, not findings.
//
// Severities CRITICAL/HIGH → high, MEDIUM → medium, LOW/INFO/unknown → low.

// RampartsReport is the parsed intake.
type RampartsReport struct {
	URL      string
	Status   string // "Success", or the variant name of a failed status
	Tools    []Tool
	Findings []Finding
	Errors   []string
}

// ErrRampartsNoJSON is returned when the output holds no JSON object.
var ErrRampartsNoJSON = errors.New("scan: ramparts output has no JSON object")

type rIssue struct {
	IssueType   string  `json:"issue_type"`
	ToolName    *string `json:"tool_name"`
	PromptName  *string `json:"prompt_name"`
	ResourceURI *string `json:"resource_uri"`
	Description string  `json:"description"`
	Details     *string `json:"details"`
	Severity    string  `json:"severity"`
	Message     string  `json:"message"`
}

type rYara struct {
	TargetType   string  `json:"target_type"`
	TargetName   string  `json:"target_name"`
	RuleName     string  `json:"rule_name"`
	MatchedText  *string `json:"matched_text"`
	Context      string  `json:"context"`
	RuleMetadata *struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
		Severity    *string `json:"severity"`
		Category    *string `json:"category"`
	} `json:"rule_metadata"`
}

type rResult struct {
	URL    string          `json:"url"`
	Status json.RawMessage `json:"status"`
	Tools  []struct {
		Name        string          `json:"name"`
		Description *string         `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	SecurityIssues *struct {
		ToolIssues     []rIssue `json:"tool_issues"`
		PromptIssues   []rIssue `json:"prompt_issues"`
		ResourceIssues []rIssue `json:"resource_issues"`
	} `json:"security_issues"`
	YaraResults []rYara         `json:"yara_results"`
	Errors      []string        `json:"errors"`
	Results     json.RawMessage `json:"results"`
}

// MaxRampartsInput bounds the intake.
const MaxRampartsInput = 64 << 20

// ParseRamparts parses Ramparts output (log lines, then JSON). Several
// results (a "results" array) are merged into one report.
func ParseRamparts(out []byte) (RampartsReport, error) {
	if len(out) > MaxRampartsInput {
		return RampartsReport{}, fmt.Errorf("scan: ramparts output over %d bytes", MaxRampartsInput)
	}
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return RampartsReport{}, ErrRampartsNoJSON
	}
	dec := json.NewDecoder(bytes.NewReader(out[i:]))
	var top rResult
	if err := dec.Decode(&top); err != nil {
		return RampartsReport{}, fmt.Errorf("scan: ramparts JSON: %w", err)
	}
	results := []rResult{top}
	if len(top.Results) > 0 && top.Results[0] == '[' {
		var many []rResult
		if err := json.Unmarshal(top.Results, &many); err != nil {
			return RampartsReport{}, fmt.Errorf("scan: ramparts results: %w", err)
		}
		results = many
	}
	var rep RampartsReport
	for _, r := range results {
		if rep.URL == "" {
			rep.URL = r.URL
		}
		if rep.Status == "" {
			rep.Status = statusName(r.Status)
		}
		rep.Errors = append(rep.Errors, r.Errors...)
		for _, t := range r.Tools {
			d := ""
			if t.Description != nil {
				d = *t.Description
			}
			rep.Tools = append(rep.Tools, Tool{Name: t.Name, Description: d, InputSchema: t.InputSchema})
		}
		if r.SecurityIssues != nil {
			for _, list := range [][]rIssue{r.SecurityIssues.ToolIssues, r.SecurityIssues.PromptIssues, r.SecurityIssues.ResourceIssues} {
				for _, is := range list {
					rep.Findings = append(rep.Findings, mapIssue(is))
				}
			}
		}
		for _, y := range r.YaraResults {
			if strings.EqualFold(y.TargetType, "summary") {
				continue
			}
			rep.Findings = append(rep.Findings, mapYara(y))
		}
	}
	rep.Findings = dedupe(rep.Findings)
	return rep, nil
}

func statusName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		for k := range m {
			return k
		}
	}
	return ""
}

func sevOf(s string) string {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "CRITICAL", "HIGH":
		return High
	case "MEDIUM", "MODERATE":
		return Medium
	}
	return Low
}

func capSev(s, cap string) string {
	rank := map[string]int{Low: 0, Medium: 1, High: 2}
	if rank[s] > rank[cap] {
		return cap
	}
	return s
}

func mapIssue(is rIssue) Finding {
	sev := sevOf(is.Severity)
	var class string
	switch is.IssueType {
	case "ToolPoisoning", "PromptInjection", "Jailbreak":
		class = ClassToolPoisoning
	case "CommandInjection":
		class = ClassCommandInject
	case "SQLInjection", "PathTraversal":
		class, sev = ClassCommandInject, capSev(sev, Medium)
	case "SecretsLeakage", "AuthBypass":
		class, sev = ClassSuspiciousDesc, capSev(sev, Medium)
	case "PIILeakage":
		class, sev = ClassHygiene, Low
	default:
		class, sev = ClassSuspiciousDesc, Low
	}
	tool := ""
	switch {
	case is.ToolName != nil:
		tool = *is.ToolName
	case is.PromptName != nil:
		tool = "prompt:" + *is.PromptName
	case is.ResourceURI != nil:
		tool = "resource:" + *is.ResourceURI
	}
	msg := is.Message
	if msg == "" {
		msg = is.Description
	}
	return Finding{Class: class, Severity: sev, Tool: snippetOf(tool), Field: "ramparts.security_issues",
		RuleID: snippetOf("RAMPARTS:" + is.IssueType), Evidence: snippetOf(msg), Source: "ramparts"}
}

func mapYara(y rYara) Finding {
	var cat, sev, desc string
	if y.RuleMetadata != nil {
		if y.RuleMetadata.Category != nil {
			cat = *y.RuleMetadata.Category
		}
		if y.RuleMetadata.Severity != nil {
			sev = *y.RuleMetadata.Severity
		}
		if y.RuleMetadata.Description != nil {
			desc = *y.RuleMetadata.Description
		}
	}
	key := strings.ToLower(cat + " " + y.RuleName)
	class := ClassSuspiciousDesc
	switch {
	case containsAny(key, "secret", "credential", "token", "apikey", "api_key"):
		class = ClassHardcodedSec
	case containsAny(key, "shadow", "cross_origin", "cross-origin"):
		class = ClassShadowing
	case containsAny(key, "command", "shell", "exec", "rce"):
		class = ClassCommandInject
	case containsAny(key, "poison", "injection", "jailbreak", "hidden_instruction"):
		class = ClassToolPoisoning
	}
	ev := desc
	if y.MatchedText != nil && *y.MatchedText != "" {
		ev = *y.MatchedText
		if class == ClassHardcodedSec {
			ev = redact("matched secret", ev)
		}
	}
	if ev == "" {
		ev = y.Context
	}
	tool := y.TargetName
	if y.TargetType != "" && !strings.EqualFold(y.TargetType, "tool") {
		tool = strings.ToLower(y.TargetType) + ":" + y.TargetName
	}
	return Finding{Class: class, Severity: sevOf(sev), Tool: snippetOf(tool), Field: "ramparts.yara",
		RuleID: snippetOf("RAMPARTS-YARA:" + y.RuleName), Evidence: snippetOf(ev), Source: "ramparts"}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
