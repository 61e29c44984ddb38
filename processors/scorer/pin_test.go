package scorer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGeneratedPublicationPinned pins the whole publication of generated
// populations (Compute then Seal) byte for byte: the Merkle root, the
// signature, a digest of every sealed record, of every store row and of the
// computed Record values, and a few content hashes. It was recorded before
// the publication path was optimized (issue 8), so any change in output of
// the faster path fails here. Rewrite with -update only for an intended
// change of the records.
func TestGeneratedPublicationPinned(t *testing.T) {
	var got strings.Builder
	for _, c := range []struct {
		n    int
		seed uint64
	}{{1500, 1}, {400, 7}} {
		at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
		g := Generate(c.n, c.seed, at)
		meta := Meta{PublicationID: PublicationID(at), ComputedAt: at}
		recs := Compute(g.Inputs, g.Sources, meta, nil)
		s, err := Seal(recs, meta, testKey)
		if err != nil {
			t.Fatal(err)
		}
		hRec, hRow := sha256.New(), sha256.New()
		for _, r := range s.Records {
			hRec.Write([]byte(r.Record))
			hRec.Write([]byte{'\n'})
			score := "null"
			if r.Score != nil {
				score = fmt.Sprint(*r.Score)
			}
			fmt.Fprintf(hRow, "%s|%s|%s|%s|%d|%s|%s\n", r.Server, r.PublicationID, r.ComputedAt.Format(time.RFC3339Nano), score, r.ToolfinderScore, r.Band, r.ContentSHA256)
		}
		j, err := json.Marshal(recs)
		if err != nil {
			t.Fatal(err)
		}
		hVal := sha256.Sum256(j)
		fmt.Fprintf(&got, "generate n=%d seed=%d: records=%d root=%s\n", c.n, c.seed, s.Row.RecordCount, s.Row.MerkleRoot)
		fmt.Fprintf(&got, "  signature=%s key=%s\n", s.Row.Signature, s.Row.KeyID)
		fmt.Fprintf(&got, "  sealed=%s rows=%s values=%s\n", hex.EncodeToString(hRec.Sum(nil)), hex.EncodeToString(hRow.Sum(nil)), hex.EncodeToString(hVal[:]))
		for _, i := range []int{0, 1, len(s.Records) / 2, len(s.Records) - 1} {
			fmt.Fprintf(&got, "  %s %s\n", s.Records[i].Server, s.Records[i].ContentSHA256)
		}
	}
	golden := filepath.Join("testdata", "generated.golden.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Fatalf("generated publication changed:\n got\n%s\n want\n%s", got.String(), want)
	}
}
