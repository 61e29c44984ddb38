package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/sql/store"
)

func newExportPublicationCmd() *cobra.Command {
	cfg := &config{}
	var id, out string
	cmd := &cobra.Command{
		Use:   "export-publication --id ID|latest --out FILE",
		Short: "Write one publication as JSON lines: the signed header, then every record",
		Long: `export-publication writes a publication from the store in the export format of
processors/publish: line 1 is {"format":"forum-publication-export", "header":{…},
"signature", "key_id"}, then one sealed record per line, sorted by server name.
Anyone can check it offline with forum verify.

Examples:
  forum export-publication --id latest --out pub.jsonl
  forum export-publication --id pub-20251009T203003Z --out - | head -1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id == "" || out == "" {
				return usageError{errors.New("--id ID|latest and --out FILE are required")}
			}
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore)
			if err != nil {
				return err
			}
			defer a.close()
			ts, ok := a.store.(store.TrustStore)
			if !ok {
				return fmt.Errorf("the store %T keeps no trust records", a.store)
			}
			var row store.Publication
			if id == "latest" {
				ps, err := ts.Publications(ctx, 1)
				if err != nil {
					return err
				}
				if len(ps) == 0 {
					return errors.New("the store holds no publication yet")
				}
				row = ps[0]
			} else if row, err = ts.GetPublication(ctx, id); errors.Is(err, store.ErrNotFound) {
				return usageError{fmt.Errorf("no publication %q (forum sql \"SELECT id FROM publications\" lists them)", id)}
			} else if err != nil {
				return err
			}
			recs, err := ts.PublicationRecords(ctx, row.ID)
			if err != nil {
				return err
			}
			p, err := scorer.FromStore(row, recs)
			if err != nil {
				return err
			}
			if len(p.Records) != row.RecordCount {
				return fmt.Errorf("publication %s: header says %d records, the store holds %d", row.ID, row.RecordCount, len(p.Records))
			}
			w := cmd.OutOrStdout()
			var f *os.File
			if out != "-" {
				if f, err = os.Create(out); err != nil {
					return err
				}
				w = f
			}
			if err := publish.WriteExport(w, p); err != nil {
				if f != nil {
					f.Close()
				}
				return err
			}
			if f != nil {
				if err := f.Close(); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "exported %s: %d records, root %s\n", row.ID, len(p.Records), row.MerkleRoot)
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cmd.Flags().StringVar(&id, "id", "", "publication id, or latest")
	cmd.Flags().StringVar(&out, "out", "", "output file ('-' for stdout)")
	return cmd
}

func newVerifyCmd() *cobra.Command {
	var export, keyPath, from, dataDir string
	fv := &feedbackVerify{}
	cmd := &cobra.Command{
		Use:   "verify --export FILE [--key PUBKEY | --from URL] [--server NAME] | --record FILE  [--feedback-log FILE | --erc8004-rpc-url URL …]",
		Short: "Check a publication export offline: every record hash, the Merkle root, the signature",
		Long: `verify re-derives everything in a publication export without the store: each
record's content_sha256 over its RFC 8785 canonical JSON, the order and count
of records, the RFC 6962 Merkle root, and the Ed25519 signature over the
header. The first failure is named (line and server) and the exit status is 1.

The publisher's public key comes from, in this order:
  --key FILE   PKIX PEM (as served by GET /v1/keys), or the raw 32 bytes as
               hex or base64
  --from URL   a running forum: its GET /v1/keys (the key whose key_id the
               export names)
  otherwise    the public half of DATA_DIR/publication.key (or
               FORUM_SIGNING_KEY): this machine's own publications
The output says which key it used. When the export names a key other than
the one found (an export from another data dir or another publisher), verify
asks for the publisher's key instead of reporting a bad signature.

With --record FILE (a record, or the API's /trust or /proof answer), or
--export and --server NAME, it also checks that record on chain: its
content_sha256 is the feedbackHash of a NewFeedback event of the ERC-8004
Reputation Registry, whose score, tag2 and feedbackURI are the record's. The
events come from a recorded event log (--feedback-log: the committer's
DATA_DIR/erc8004.log, or JSON lines of events) or from the chain itself
(--erc8004-rpc-url, --erc8004-chain-id, --erc8004-reputation-registry).

Examples:
  forum verify --export pub.jsonl --from https://forum.example.org
  forum verify --export pub.jsonl --key forum.pub
  forum verify --export pub.jsonl --key forum.pub --server io.github.acme/weather --feedback-log data/erc8004.log
  forum verify --record weather.json --erc8004-rpc-url https://rpc.example --erc8004-chain-id 8453 --erc8004-reputation-registry 0x…`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if export == "" && fv.record != "" {
				return fv.run(cmd.Context(), cmd.OutOrStdout(), "")
			}
			if export == "" {
				return usageError{errors.New("--export FILE (or --record FILE) is required")}
			}
			if keyPath != "" && from != "" {
				return usageError{errors.New("give the key with --key or --from, not both")}
			}
			data, err := os.ReadFile(export)
			if err != nil {
				return usageError{fmt.Errorf("--export: %w", err)}
			}
			var eh publish.ExportHeader
			line, _, _ := bufio.NewReader(bytes.NewReader(data)).ReadLine()
			_ = json.Unmarshal(line, &eh)
			pub, source, err := verifyKey(cmd.Context(), keyPath, from, dataDir, eh.KeyID)
			if err != nil {
				return err
			}
			if err := verifyExport(data, pub); err != nil {
				return fmt.Errorf("%s does not verify with %s (key %s): %w", export, source, publish.KeyID(pub), err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s verifies: %d records, merkle root %s, signed by key %s (from %s)\n",
				eh.Header.PublicationID, eh.Header.RecordCount, eh.Header.MerkleRoot, publish.KeyID(pub), source)
			if fv.active() {
				return fv.run(cmd.Context(), cmd.OutOrStdout(), export)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&export, "export", "", "a publication export (see export-publication)")
	cmd.Flags().StringVar(&keyPath, "key", "", "the publisher's public key file (PEM, hex or base64)")
	cmd.Flags().StringVar(&from, "from", "", "a running forum's base URL: the key is fetched from its /v1/keys")
	cmd.Flags().StringVar(&dataDir, "data-dir", envOr("FORUM_DATA_DIR", "./data"), "where publication.key is looked for when neither --key nor --from is given (env FORUM_DATA_DIR)")
	fv.bind(cmd.Flags())
	return cmd
}

// verifyKey finds the publisher's key (see verify --help) and says where it
// came from. want is the key id the export names ("" when it names none).
func verifyKey(ctx context.Context, keyPath, from, dataDir, want string) (ed25519.PublicKey, string, error) {
	ask := "give the publisher's public key with --key FILE, or --from URL to fetch it from the publishing instance's /v1/keys"
	switch {
	case keyPath != "":
		kb, err := os.ReadFile(keyPath)
		if err != nil {
			return nil, "", usageError{fmt.Errorf("--key: %w", err)}
		}
		pub, err := scorer.ParsePublicKey(kb)
		if err != nil {
			return nil, "", usageError{fmt.Errorf("--key %s: %w", keyPath, err)}
		}
		return pub, "--key " + keyPath, nil
	case from != "":
		return fetchKey(ctx, from, want)
	}
	local := envOr(envSigningKey, filepath.Join(dataDir, scorer.KeyFile))
	kb, err := os.ReadFile(local)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", usageError{fmt.Errorf("no key to verify with: %s does not exist; %s", local, ask)}
	}
	if err != nil {
		return nil, "", usageError{fmt.Errorf("local key %s: %w", local, err)}
	}
	pub, err := scorer.ParsePublicKey(kb)
	if err != nil {
		return nil, "", usageError{fmt.Errorf("local key %s: %w", local, err)}
	}
	if want != "" && publish.KeyID(pub) != want {
		return nil, "", usageError{fmt.Errorf("the export is signed by key %s, not by this machine's key %s (%s): it comes from another data dir or publisher; %s",
			want, publish.KeyID(pub), local, ask)}
	}
	return pub, "the local key " + local, nil
}

// fetchKey reads base/v1/keys and returns the key the export names (the
// only one served, when the export names none).
func fetchKey(ctx context.Context, base, want string) (ed25519.PublicKey, string, error) {
	u := strings.TrimRight(base, "/") + "/v1/keys"
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", usageError{fmt.Errorf("--from %s: %w", base, err)}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("fetching the key from %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("fetching the key from %s: status %s", u, resp.Status)
	}
	var body struct {
		Keys []struct {
			KeyID string `json:"key_id"`
			PEM   string `json:"pem"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return nil, "", fmt.Errorf("fetching the key from %s: %w", u, err)
	}
	var ids []string
	for _, k := range body.Keys {
		ids = append(ids, k.KeyID)
		if want != "" && k.KeyID != want || want == "" && len(body.Keys) != 1 {
			continue
		}
		pub, err := scorer.ParsePublicKey([]byte(k.PEM))
		if err != nil {
			return nil, "", fmt.Errorf("key %s from %s: %w", k.KeyID, u, err)
		}
		// The id is the key's own hash: a served id that does not match
		// its key is not trusted.
		if publish.KeyID(pub) != k.KeyID {
			return nil, "", fmt.Errorf("%s serves key_id %s for a key whose id is %s", u, k.KeyID, publish.KeyID(pub))
		}
		return pub, u, nil
	}
	if len(ids) == 0 {
		return nil, "", fmt.Errorf("%s serves no key (the instance has no signing key yet)", u)
	}
	return nil, "", fmt.Errorf("the export is signed by key %s; %s serves %s: it is not that export's publisher (give its key with --key FILE)", want, u, strings.Join(ids, ", "))
}

// verifyExport is publish.Verify with the failure explained: which record,
// and for a bad signature whether the header or the key is at fault.
func verifyExport(data []byte, pub ed25519.PublicKey) error {
	err := publish.Verify(bytes.NewReader(data), pub)
	if err == nil {
		return nil
	}
	if extra := diagnose(data, pub, err) + nameRecord(data, err); extra != "" {
		return fmt.Errorf("%w%s", err, extra)
	}
	return err
}

// diagnose adds what a bad header signature most likely means: a key that
// did not sign this export, or a header (its Merkle root) changed after
// signing — the records then give another root than the header states.
func diagnose(data []byte, pub ed25519.PublicKey, err error) string {
	if !errors.Is(err, publish.ErrBadSignature) {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), publish.MaxExportLine)
	var eh publish.ExportHeader
	var leaves [][]byte
	for i := 0; sc.Scan(); i++ {
		if i == 0 {
			if json.Unmarshal(sc.Bytes(), &eh) != nil {
				return ""
			}
			continue
		}
		c, _, cerr := publish.Canonical(sc.Bytes())
		if cerr != nil {
			return ""
		}
		leaves = append(leaves, publish.LeafHash(c))
	}
	var msg string
	if eh.KeyID != "" && eh.KeyID != publish.KeyID(pub) {
		msg += fmt.Sprintf("; the export names signing key %s, but the given key is %s", eh.KeyID, publish.KeyID(pub))
	}
	if root := hex.EncodeToString(publish.RootFromLeaves(leaves)); root != eh.Header.MerkleRoot {
		msg += fmt.Sprintf("; the header's merkle_root %s is not the root of its records (%s): the header was altered", eh.Header.MerkleRoot, root)
	} else if msg == "" {
		msg = "; the records match the header's root, so the header fields or the signature were altered"
	}
	return msg
}

var failedRecord = regexp.MustCompile(`^line (\d+) \(record "(.*?)"\)`)

// nameRecord locates the record on a failing line: its neighbours in server
// order (the name it shows may be the tampered byte itself), and, when its
// "server" key was damaged (the verifier then says record "?"), the name
// still held by the key one byte away from "server".
func nameRecord(data []byte, err error) string {
	m := failedRecord.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	n, _ := strconv.Atoi(m[1])
	lines := bytes.Split(data, []byte("\n"))
	if n < 2 || n > len(lines) {
		return ""
	}
	serverOf := func(i int) string {
		if i < 1 || i >= len(lines) {
			return ""
		}
		var r struct {
			Server string `json:"server"`
		}
		_ = json.Unmarshal(lines[i], &r)
		return r.Server
	}
	msg := fmt.Sprintf("; the record is between %q and %q in server order", serverOf(n-2), serverOf(n))
	if m[2] != "?" {
		return msg
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(lines[n-1], &obj) == nil {
		for k, v := range obj {
			if len(k) != len(publish.ServerField) {
				continue
			}
			diff := 0
			for i := range k {
				if k[i] != publish.ServerField[i] {
					diff++
				}
			}
			var name string
			if diff == 1 && json.Unmarshal(v, &name) == nil && name != "" {
				return fmt.Sprintf("; its %q field was altered: this is the record of %q", k, name) + msg
			}
		}
	}
	return msg
}
