package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.json")
	var got map[string]int
	if found, err := Load(path, &got); found || err != nil {
		t.Fatalf("missing file: found=%v err=%v", found, err)
	}
	if err := Save(path, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if err := Save(path, map[string]int{"a": 2}); err != nil {
		t.Fatal(err)
	}
	if found, err := Load(path, &got); !found || err != nil || got["a"] != 2 {
		t.Fatalf("found=%v err=%v got=%v", found, err, got)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
	os.WriteFile(path, []byte("{torn"), 0o644)
	if _, err := Load(path, &got); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("a corrupt checkpoint must say how to recover, got %v", err)
	}
}
