package scorer

import (
	"net/url"
	"testing"
)

func TestEvidenceURIMatchesPathEscape(t *testing.T) {
	for _, id := range []string{"", "abc", "scan:io.github.x/y:abcd", "a b;c,d?e/f%g+h&i=j@k$l!m*n(o)p'q", "héllo\x00\xff~._-", "chk:https://x.y/z?q=1#f"} {
		if got, want := EvidenceURI(id), "/v1/evidence/"+url.PathEscape(id); got != want {
			t.Fatalf("%q: %q != %q", id, got, want)
		}
	}
	for c := 0; c < 256; c++ {
		id := string([]byte{'a', byte(c), 'z'})
		if EvidenceURI(id) != "/v1/evidence/"+url.PathEscape(id) {
			t.Fatal(c)
		}
	}
}
