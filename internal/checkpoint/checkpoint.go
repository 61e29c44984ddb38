// Package checkpoint writes and reads the small JSON state files that make
// every stateful stage restartable: the differ's known state and input
// offset, the drift/owner-burst/incident processors' states, the crawl
// watermark, replay progress and the probe scheduler's window.
//
// It lives in internal/ because ingest/ and processors/ both need it and it
// is no stage of its own. The one rule it enforces: a crash at any instant
// leaves either the old or the new file, never a torn one (temp file in the
// same directory, fsync, rename, fsync of the directory).
package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes b to path atomically (see the package doc).
func WriteFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing checkpoint %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing checkpoint %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing checkpoint %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("installing checkpoint %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: some file systems refuse directory fsync
		d.Close()
	}
	return nil
}

// Save writes v as JSON to path atomically.
func Save(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding checkpoint %s: %w", path, err)
	}
	return WriteFile(path, b)
}

// Load reads the JSON at path into v. A missing file is no error: v is left
// as it is and found is false. A file that does not decode is an error that
// says how to recover.
func Load(path string, v any) (found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading checkpoint: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("checkpoint %s is corrupt (delete it to rebuild from the bus): %w", path, err)
	}
	return true, nil
}
