package scan

// The input-schema reading as it was before schemaView: encoding/json into
// generic maps, a walk over them for the texts, map lookups for the
// parameters. Frozen here with a "map" prefix so that
// TestSchemaViewMatchesMaps and FuzzSchemaViewMatchesMaps pin the decoder
// to it (texts in the same order, the same CI findings), and
// BenchmarkSchemaDecode compares the two. Do not edit it to follow changes
// in schema.go.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// mapHasSchema is hasSchema as it was (a string conversion).
func mapHasSchema(s json.RawMessage) bool {
	t := strings.TrimSpace(string(s))
	return t != "" && t != "null"
}

// mapDecodeSchema decodes an input schema; nil when there is none or it is
// not JSON.
func mapDecodeSchema(raw json.RawMessage) any {
	if !mapHasSchema(raw) {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// mapSchemaTexts collects the description/title/default/examples strings
// of a decoded JSON schema, bounded in depth and count.
func mapSchemaTexts(v any) []string {
	if v == nil {
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

// mapScanSchema finds parameters that carry raw shell/command strings.
// schema is t.InputSchema decoded (mapDecodeSchema); only an object has
// parameters.
func mapScanSchema(t Tool, schema any) []Finding {
	s, ok := schema.(map[string]any)
	if !ok {
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
		if !commandParam[norm] && !commandParam[strings.ReplaceAll(norm, "_", "")] {
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
		ev := snippetOf("parameter " + name + ": " + desc)
		if reShellContext.MatchString(ctx) {
			out = append(out, Finding{Class: ClassCommandInject, Severity: High, RuleID: "CI-001", Evidence: ev})
		} else {
			out = append(out, Finding{Class: ClassCommandInject, Severity: Medium, RuleID: "CI-002", Evidence: ev})
		}
	}
	return out
}

// SchemaViewDiff compares schemaView with the map-based reading on one
// tool: "" when the texts (same order) and the CI findings are the same,
// else what differs.
func SchemaViewDiff(t Tool) string {
	if hasSchema(t.InputSchema) != mapHasSchema(t.InputSchema) {
		return fmt.Sprintf("hasSchema %v, map reading %v", hasSchema(t.InputSchema), mapHasSchema(t.InputSchema))
	}
	v := decodeSchemaView(t.InputSchema)
	m := mapDecodeSchema(t.InputSchema)
	if got, want := v.texts, mapSchemaTexts(m); !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
		return fmt.Sprintf("texts %q, map reading %q", got, want)
	}
	if got, want := scanSchema(t, &v), mapScanSchema(t, m); !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("findings %+v, map reading %+v", got, want)
	}
	return ""
}

// schemaSeeds are realistic input schemas (as MCP servers and the go-sdk
// write them) and the corners of decoding into maps.
var schemaSeeds = []string{
	`{"type":"object","properties":{"query":{"type":"string","description":"What to look up"}},"required":["query"]}`,
	`{"type":"object","properties":{"command":{"type":"string","description":"Shell command to run in bash"},"cwd":{"type":"string","default":"/tmp"},"timeout":{"type":"integer","default":30,"minimum":1}},"required":["command"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
	`{"type":"object","properties":{"owner":{"type":"string","description":"Repository owner"},"repo":{"type":"string"},"state":{"type":"string","enum":["open","closed","all"],"description":"Filter by state"},"labels":{"type":"array","items":{"type":"string"},"description":"Labels"},"sort":{"type":"string","enum":["created","updated","comments"]},"perPage":{"type":"number","minimum":1,"maximum":100}},"required":["owner","repo"]}`,
	`{"type":"object","properties":{"script":{"type":"string","enum":["build","test"]},"cmd":{"const":"ls"},"shell":{"type":["string","null"]},"run":{"type":"boolean"},"exec":null,"Shell-Command":{"description":"passed to sh -c"},"bash_command":{}}}`,
	`{"$defs":{"Filter":{"type":"object","properties":{"field":{"type":"string","title":"Field"},"op":{"anyOf":[{"const":"eq"},{"const":"ne"}]}}}},"type":"object","properties":{"filters":{"type":"array","items":{"$ref":"#/$defs/Filter"}},"examples":["a","b"]},"examples":[{"filters":[]}]}`,
	`{"properties":{"command":{"description":"first"},"command":{"type":"integer"}},"properties":{"script":{"description":"the last properties wins"}},"description":"one","description":"two"}`,
	`{"desc\u0072iption":"escaped key","properties":{"comm\u0061nd":{"description":"tab\there \ud83d\ude00 lone \ud800 end"}},"title":"\u00e9t\u00e9"}`,
	"{\"description\":\"bad \xff utf8 \xed\xa0\x80 surrogate\",\"properties\":{\"cmd\":{\"description\":\"\xc3\"}}}",
	`{"properties":{"command":{"type":"string"}},"maximum":1e400}`,
	`{"properties":{"command":{"type":"string"}},"minimum":-1e-400,"x":-0.0e+5}`,
	`["top","level",{"description":"array"}]`, `"just a string"`, `42`, `null`, ` null `, ``, `   `, `{}`, `[]`, `true`,
	`{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":{"k":{"l":{"m":{"n":{"o":{"p":{"q":{"r":{"s":{"t":{"u":{"v":{"description":"deep"}}}}}}}}}}}}}}}}}}}}}},"description":"shallow"}`,
	`[[[[[[[[[[[[[[[[[[[[[["deep in arrays"]]]]]]]]]]]]]]]]]]]]]]`,
	`{"properties":{"command":{"type":"string"}}} trailing`, `{"properties":`, `{"a":tru}`, `{'a':1}`,
	`{"properties":{"COMMAND":{"type":"STRING"},"scr\u0130pt":{"description":"dotted capital I"},"s_h_e_l_l_c_o_m_m_a_n_d":{},"shell______________________command":{}}}`,
	"{\"properties\":{\"scr\u0130pt\":{\"description\":\"raw dotted capital I\"},\"shell______________________command\":{\"enum\":null}}}",
}

// grammarSeeds are the grammar corners encoding/json refuses (or takes),
// which the decoder checks itself: each fragment is the value of a member
// beside a text and a command parameter, so accepting what encoding/json
// refuses (or the reverse) changes the texts and the findings.
var grammarSeeds = func() []string {
	frags := []string{
		`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `-0`, `1E-2`, `0e5`, `-1.5e-3`, `[1,]`, `{"a":1,}`, `{,}`, `[,1]`, `{"a" 1}`,
		`tru`, `nul`, `falsey`, `true false`, `"\u12G4"`, `"\x"`, `"\u00e9\/\b\f\n\r\t"`, "\"tab\tinside\"", "\"nl\ninside\"",
		"\"del\x7finside\"", `"\ud83d"`, `NaN`, `Infinity`, `"unterminated`, `"\`, `[`, `{`, `"`, `{"":{"":""}}`, `1 2`, `[] []`,
		"\ufeff1", `{"a":1}}`, `[1]]`, `'x'`,
		strings.Repeat("[", 9999) + strings.Repeat("]", 9999), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat(`{"a":`, 9999) + "1" + strings.Repeat("}", 9999), strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	}
	var out []string
	for _, f := range frags {
		out = append(out, `{"description":"d","properties":{"command":{}},"x":`+f+`}`)
	}
	return append(out, `{"description":"ok"} {}`, `{"description":"ok"}`+"\n\t\r ", "\ufeff{\"description\":\"bom\"}", `["ok"]x`)
}()

func init() {
	schemaSeeds = append(schemaSeeds, grammarSeeds...)
	// Past the count bound: 600 examples.
	var b strings.Builder
	b.WriteString(`{"properties":{"cmd":{"examples":[`)
	for i := range 600 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"description":"example %d"}`, i)
	}
	b.WriteString(`]}}}`)
	schemaSeeds = append(schemaSeeds, b.String())
}

// TestSchemaViewMatchesMaps pins schemaView to the map-based reading on
// the seeds, each also as a tool with shell context in its description.
func TestSchemaViewMatchesMaps(t *testing.T) {
	nonEmpty := 0
	for _, s := range schemaSeeds {
		for _, tl := range []Tool{{Name: "t", InputSchema: json.RawMessage(s)}, {Name: "run_shell", Description: "Executes it in a terminal", InputSchema: json.RawMessage(s)}} {
			if d := SchemaViewDiff(tl); d != "" {
				t.Errorf("%.80s: %s", s, d)
			}
			if len(scanSchema(tl, ptr(decodeSchemaView(tl.InputSchema)))) > 0 {
				nonEmpty++
			}
		}
	}
	if nonEmpty == 0 {
		t.Fatal("no seed has a CI finding: the comparison is vacuous")
	}
}

func ptr[T any](v T) *T { return &v }

// FuzzSchemaViewMatchesMaps: for any bytes as an input schema, the texts
// and CI findings are those of the map-based reading.
func FuzzSchemaViewMatchesMaps(f *testing.F) {
	for _, s := range schemaSeeds {
		f.Add([]byte(s), "run", "")
	}
	f.Add([]byte(`{"properties":{"command":{"description":"x"}}}`), "shell_exec", "Runs a bash command")
	f.Fuzz(func(t *testing.T, raw []byte, name, desc string) {
		if d := SchemaViewDiff(Tool{Name: name, Description: desc, InputSchema: raw}); d != "" {
			t.Fatalf("%q: %s", raw, d)
		}
	})
}

// BenchmarkSchemaDecode reads the seeds' schemas with the map-based code
// and with schemaView.
func BenchmarkSchemaDecode(b *testing.B) {
	tools := make([]Tool, len(schemaSeeds))
	for i, s := range schemaSeeds {
		tools[i] = Tool{Name: "t", InputSchema: json.RawMessage(s)}
	}
	b.Run("maps", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, tl := range tools {
				m := mapDecodeSchema(tl.InputSchema)
				_, _ = mapSchemaTexts(m), mapScanSchema(tl, m)
			}
		}
	})
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, tl := range tools {
				v := decodeSchemaView(tl.InputSchema)
				_ = scanSchema(tl, &v)
			}
		}
	})
}
