package provenance_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/provenance"
)

// Handle applies decodable observations, skips bad ones, checkpoints before
// returning (so offsets are committed only after the state is on disk), and
// a redelivered batch changes nothing.
func TestStageHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "provenance-state.json")
	st, err := provenance.NewStage(nil, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := github.Observation{Repo: "github.com/o/r", ID: "github:github.com/o/r@1", ObservedAt: time.Unix(1e9, 0).UTC(), Status: github.StatusResolved}
	b, _ := json.Marshal(o)
	batch := []kafka.Message{{Topic: provenance.Topic, Value: b}, {Topic: provenance.Topic, Value: []byte("{not json")}, {Topic: provenance.Topic, Value: []byte(`{}`)}}
	for i := 0; i < 2; i++ {
		if err := st.Handle(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	re, err := provenance.Load(path)
	if err != nil || re.Len() != 1 {
		t.Fatalf("checkpoint: %v, %d observations", err, re.Len())
	}
}
