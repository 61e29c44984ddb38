package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Caps on what a check carries per tool, so one server cannot make a
// health.checks message huge. Hashes are over the full definition.
const (
	MaxTextBytes   = 8 << 10  // description, instructions
	MaxSchemaBytes = 16 << 10 // canonical input schema
)

// toolFromJSON turns one raw tools/list entry into a Tool. A tool without a
// string name is a protocol error: it cannot be called or tracked.
func toolFromJSON(raw json.RawMessage) (Tool, error) {
	var t struct {
		Name        *string         `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return Tool{}, withClass(ClassProtocol, "tool: %v", err)
	}
	if t.Name == nil || *t.Name == "" {
		return Tool{}, withClass(ClassProtocol, "tool without a name")
	}
	canon, err := canonicalJSON(raw)
	if err != nil {
		return Tool{}, withClass(ClassProtocol, "tool: %v", err)
	}
	sum := sha256.Sum256(canon)
	out := Tool{SHA256: hex.EncodeToString(sum[:])}
	out.Name, _ = truncate(*t.Name, 256)
	out.Title, _ = truncate(t.Title, 512)
	out.Description, out.DescriptionTruncated = truncate(t.Description, MaxTextBytes)
	s := bytes.TrimSpace(t.InputSchema)
	if len(s) > 0 && s[0] == '{' {
		out.InputSchemaPresent = true
		cs, err := canonicalJSON(s)
		if err == nil && len(cs) <= MaxSchemaBytes {
			out.InputSchema = cs
		} else {
			out.InputSchemaTruncated = true
		}
	}
	return out, nil
}

// canonicalJSON re-encodes JSON with object keys sorted and no insignificant
// whitespace or HTML escaping; numbers keep their literal text. Close to
// RFC 8785 and stable for the same input, which is what a drift hash needs.
func canonicalJSON(raw []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
