package corpus

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestCalibration(t *testing.T) {
	r := New(Config{Servers: 5000, Seed: 3})
	if len(r.Servers) != 5000 || r.Records() != 17000 {
		t.Fatalf("%d servers, %d records; want 5000, 17000", len(r.Servers), r.Records())
	}
	var remotes, pkgs, long int
	ns := map[string]int{}
	for _, s := range r.Servers {
		v := s.Versions[len(s.Versions)-1]
		if len(v.Remotes) > 0 {
			remotes++
		}
		if len(v.Packages) > 0 {
			pkgs++
		}
		if len(v.Description) > 100 {
			long++
		}
		ns[s.Name[:bytes.IndexByte([]byte(s.Name), '/')]]++
	}
	if remotes < 2100 || remotes > 2500 || pkgs < 2500 || pkgs > 2850 || long > 0 {
		t.Errorf("remotes %d, packages %d, descriptions over 100 chars %d", remotes, pkgs, long)
	}
	if ns["ai.smithery"] != 1150 {
		t.Errorf("giant namespace holds %d, want 23 %%", ns["ai.smithery"])
	}
}

func TestDeterministicAndValid(t *testing.T) {
	write := func() []byte {
		r := New(Config{Servers: 300, Seed: 9})
		r.Advance()
		var b bytes.Buffer
		if _, err := r.WriteSnapshot(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := write(), write()
	if !bytes.Equal(a, b) {
		t.Fatal("same seed, different bytes")
	}
	var doc []json.RawMessage
	if err := json.Unmarshal(a, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) < 1000 {
		t.Fatalf("%d entries", len(doc))
	}
}
