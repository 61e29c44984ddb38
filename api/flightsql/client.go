package flightsql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// Files a running forum keeps in its data dir so `forum sql` on the same
// machine finds its Flight SQL server: the address it listens on (written
// once listening, removed on shutdown) and, when no token was configured,
// the token it generated (mode 0600: whoever may read the data dir may
// query the store).
const (
	AddrFile  = "flightsql.addr"
	TokenFile = "flightsql.token"
)

// EnvToken names the token's environment variable.
const EnvToken = "FORUM_FLIGHT_TOKEN"

// LoadOrCreateToken returns the token in dataDir/TokenFile, creating one
// (32 random bytes, hex) when there is none.
func LoadOrCreateToken(dataDir string) (string, error) {
	path := filepath.Join(dataDir, TokenFile)
	b, err := os.ReadFile(path)
	if err == nil {
		if tok := strings.TrimSpace(string(b)); tok != "" {
			return tok, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("flight sql token %s: %w", path, err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("flight sql token: %w", err)
	}
	tok := hex.EncodeToString(raw[:])
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", fmt.Errorf("flight sql token: %w", err)
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("flight sql token %s: %w", path, err)
	}
	return tok, nil
}

// ReadToken returns the token in dataDir/TokenFile ("" when none).
func ReadToken(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, TokenFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("flight sql token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// WriteAddr records where the server listens; the returned func removes it.
func WriteAddr(dataDir, addr string) (func(), error) {
	path := filepath.Join(dataDir, AddrFile)
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return func() {}, fmt.Errorf("flight sql address file: %w", err)
	}
	if err := os.WriteFile(path, []byte(addr+"\n"), 0o644); err != nil {
		return func() {}, fmt.Errorf("flight sql address file: %w", err)
	}
	return func() { _ = os.Remove(path) }, nil
}

// ReadAddr returns the address a running forum recorded ("" when none).
func ReadAddr(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, AddrFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("flight sql address file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Query runs one statement on the Flight SQL server at addr (host:port,
// plaintext gRPC) and returns its columns and rows as Decode gives them.
func Query(ctx context.Context, addr, token, query string) ([]string, [][]any, error) {
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, fmt.Errorf("flight sql %s: %w", addr, err)
	}
	defer cl.Close()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	info, err := cl.Execute(ctx, query)
	if err != nil {
		return nil, nil, fmt.Errorf("flight sql %s: %w", addr, err)
	}
	var recs []arrow.RecordBatch
	var schema *arrow.Schema
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.GetTicket())
		if err != nil {
			return nil, nil, fmt.Errorf("flight sql %s: %w", addr, err)
		}
		if schema == nil {
			schema = rdr.Schema()
		}
		for rdr.Next() {
			r := rdr.RecordBatch()
			r.Retain()
			recs = append(recs, r)
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return nil, nil, fmt.Errorf("flight sql %s: %w", addr, err)
		}
	}
	if schema == nil {
		return nil, nil, fmt.Errorf("flight sql %s: the answer has no endpoint", addr)
	}
	return Decode(schema, recs)
}
