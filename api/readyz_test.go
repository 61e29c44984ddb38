package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/api"
)

// TestReadyzWaitsForTheSearchIndex pins that the whole API (NewServer) is
// not ready until search can answer: /readyz is 503 while the search index
// is not built, even with the store up and a publication stored, and 200
// once the index's refresher has built it, when /v1/search answers 200.
func TestReadyzWaitsForTheSearchIndex(t *testing.T) {
	s := emptyStore(t)
	srv := api.NewServer(api.Config{Store: s})
	ts := httptest.NewServer(srv.Handler)
	defer ts.Close()

	get(t, ts, "/readyz", http.StatusServiceUnavailable, nil)
	get(t, ts, "/v1/search?q=weather", http.StatusServiceUnavailable, nil)
	publishGenerated(t, s)
	if b := get(t, ts, "/readyz", http.StatusServiceUnavailable, nil); !strings.Contains(b, "search index") {
		t.Errorf("/readyz does not say what it waits for: %s", b)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(ts.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d 30 s after the refresher started", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var b api.SearchBody
	get(t, ts, "/v1/search?q=weather", http.StatusOK, &b)
	if len(b.Results) == 0 || b.PublicationID == "" {
		t.Errorf("ready, but search answers %+v", b)
	}
}
