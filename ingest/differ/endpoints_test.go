package differ

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/forum-mcp/forum/schema"
)

// endpointsRef is Endpoints as it was first written (json.Marshal of the
// sorted pairs): the spec the hand-written encoding is checked against.
func endpointsRef(rs []schema.Remote) string {
	if len(rs) == 0 {
		return ""
	}
	pairs := make([][2]string, len(rs))
	for i, r := range rs {
		pairs[i] = [2]string{r.Type, r.URL}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	b, _ := json.Marshal(pairs)
	return string(b)
}

func FuzzEndpoints(f *testing.F) {
	f.Add("streamable-http", "https://x.example/mcp", "sse", "https://x.example/sse", uint8(2))
	f.Add("sse", "https://x/<a>&\"\\\u2028é\x7f", "", "\xff", uint8(3))
	f.Fuzz(func(t *testing.T, t1, u1, t2, u2 string, n uint8) {
		var rs []schema.Remote
		for i := range int(n % 4) {
			if i%2 == 0 {
				rs = append(rs, schema.Remote{Type: t1, URL: u1})
			} else {
				rs = append(rs, schema.Remote{Type: t2, URL: u2})
			}
		}
		if got, want := Endpoints(rs), endpointsRef(rs); got != want {
			t.Fatalf("Endpoints %q, json.Marshal %q", got, want)
		}
	})
}
