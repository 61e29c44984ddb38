package scorer

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/forum-mcp/forum/processors/publish"
	"github.com/gowebpki/jcs"
)

// jcsCanon is the record's canonical JSON the generic way (encoding/json,
// drop content_sha256, jcs), as publish.Canonical computed it before the
// canonical encoder.
func jcsCanon(r *Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, publish.HashField)
	if b, err = json.Marshal(m); err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

func jcsCanonical(t *testing.T, r *Record) []byte {
	t.Helper()
	c, err := jcsCanon(r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCanonicalEncoderOnRecords: the canonical encoder accepts the Record
// type (no silent fallback) and writes exactly what jcs writes, on every
// record of the real-snapshot golden publication and of a generated one
// (sealed records too: content_sha256 is left out).
func TestCanonicalEncoderOnRecords(t *testing.T) {
	_, recs := goldenPublication(t)
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	g := Generate(300, 3, at)
	recs = append(recs, Compute(g.Inputs, g.Sources, Meta{PublicationID: PublicationID(at), ComputedAt: at}, nil)...)
	for i := range recs {
		got, srv, err := publish.EncodeCanonical(nil, &recs[i])
		if err != nil {
			t.Fatalf("%s: the encoder refused a Record: %v", recs[i].Server, err)
		}
		if want := jcsCanonical(t, &recs[i]); !bytes.Equal(got, want) || srv != recs[i].Server {
			t.Fatalf("%s: canonical differs from jcs:\n got  %s\n want %s", recs[i].Server, got, want)
		}
	}
}
