package schema

import (
	"net/url"
	"unsafe"
)

// EvidenceURI is where the API resolves an evidence id of a record
// (GET /v1/evidence/{id}): every pointer of every stored publication
// resolves there.
func EvidenceURI(id string) string {
	const prefix = "/v1/evidence/"
	n := len(prefix) + len(id)
	for i := 0; i < len(id); i++ {
		if pathEscaped[id[i]] {
			n += 2
		}
	}
	b := make([]byte, 0, n)
	b = append(b, prefix...)
	for i := 0; i < len(id); i++ { // url.PathEscape, byte by byte, in one allocation
		c := id[i]
		if pathEscaped[c] {
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
			continue
		}
		b = append(b, c)
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

const upperHex = "0123456789ABCDEF"

// pathEscaped[c] says whether url.PathEscape escapes byte c (it escapes
// byte by byte, so the table is exact).
var pathEscaped = func() (t [256]bool) {
	for c := range 256 {
		t[c] = url.PathEscape(string([]byte{byte(c)})) != string([]byte{byte(c)})
	}
	return t
}()
