package docs

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The page and everything it loads come from the binary: no absolute URL
// in the page or the initializer, every asset answers 200.
func TestDocsServesEmbeddedViewer(t *testing.T) {
	mux := http.NewServeMux()
	Register(mux, Options{})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path string) (string, *http.Response) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", path, resp.StatusCode)
		}
		return string(b), resp
	}
	page, resp := get("/docs")
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if m := regexp.MustCompile(`(src|href)="(https?:)?//`).FindString(page); m != "" {
		t.Errorf("the page loads from elsewhere: %s", m)
	}
	refs := regexp.MustCompile(`(?:src|href)="(/docs/assets/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 3 {
		t.Fatalf("page references %v", refs)
	}
	for _, r := range refs {
		body, _ := get(r[1])
		if len(body) == 0 {
			t.Errorf("%s is empty", r[1])
		}
	}
	init, _ := get("/docs/assets/init.js")
	if !strings.Contains(init, "validatorUrl: null") || strings.Contains(init, "http") {
		t.Errorf("init.js must disable the validator and name no URL:\n%s", init)
	}
	if !strings.Contains(page, `data-spec="/openapi.json"`) {
		t.Errorf("page does not point at the document:\n%s", page)
	}
}
