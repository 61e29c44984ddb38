package api

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/toolfinder"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// TrustReader is what the trust routes read from the store.
type TrustReader interface {
	Publications(ctx context.Context, limit int) ([]store.Publication, error)
	GetPublication(ctx context.Context, id string) (store.Publication, error)
	PublicationRecords(ctx context.Context, id string) ([]store.TrustRecord, error)
	LatestTrustRecord(ctx context.Context, server string) (store.TrustRecord, error)
	HealthCheckByID(ctx context.Context, id string) (store.HealthCheck, error)
	EventByID(ctx context.Context, id string) (schema.DriftEvent, error)
	// PublicationLeaves returns a publication's servers and leaf hashes in
	// leaf order (store.ResultStore): proofs without re-canonicalising.
	PublicationLeaves(ctx context.Context, publicationID string) (servers, leaves []string, err error)
}

// EvidenceReader resolves the evidence kinds kept outside the trust tables
// (the stores implement it).
type EvidenceReader interface {
	GetIncident(ctx context.Context, id string) (store.Incident, error)
	ProvenanceObservations(ctx context.Context, q store.ProvenanceQuery) ([]store.Provenance, error)
}

// TrustOptions configure TrustRoutes. Every field may be zero: the routes are
// still registered (so the OpenAPI document is complete) and the ones that
// need a store answer 503.
type TrustOptions struct {
	Store TrustReader
	// Method is the method the records are scored with (GET /v1/method).
	Method    *method.Method
	PublicKey ed25519.PublicKey // the publication signing key's public half
	Now       func() time.Time  // wall clock for review holds (default time.Now)
	// Reviews keeps admin approvals of popular-server review holds: an
	// approved held record is served as the current record. Nil: holds
	// last their 24 h and the approve route answers 503.
	Reviews store.ReviewStore
	// Tokens maps each accepted admin bearer token to its label (the "who"
	// of an approval), as IncidentOptions.Tokens (FORUM_ADMIN_TOKEN).
	// Empty: the approve route answers 503.
	Tokens map[string]string
	Log    *zap.Logger
	// Model is the read model GET /v1/servers/{name}/trust answers from.
	// Nil: TrustRoutes makes one that loads on the first request and
	// follows the newest publication (TrustModel). Pass one to load it
	// before serving.
	Model *TrustModel
	// NoReadModel reads the store on every trust lookup, as before the
	// read model (a kill switch; the benchmark's comparison arm).
	NoReadModel bool
}

// TrustRoutes registers the trust-record API (SPEC §5): records, inclusion
// proofs, publications, the method, evidence resolution and the public key.
func TrustRoutes(o TrustOptions) func(huma.API) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NoReadModel {
		o.Model = nil
	} else if o.Model == nil && o.Store != nil {
		o.Model = NewTrustModel(o.Store, o.Log)
	}
	if o.Method == nil {
		o.Method = method.Embedded()
	}
	t := &trustHandlers{o: o, trees: newTreeCache(4)}
	return t.register
}

type trustHandlers struct {
	o     TrustOptions
	trees *treeCache
}

// TrustModel is the in-memory read model of GET /v1/servers/{name}/trust:
// the newest publication's records by server, each with its review hold
// parsed and, when held, the previous publication's record it falls back
// to. It follows the newest publication id (one cheap query per
// DefaultModelPoll at most, from a request, in the background) and is
// swapped whole. A server the newest publication does not hold is read from
// the store (LatestTrustRecord: it may be in an older one). Approvals of
// held records are still read per request (they are rare and change at any
// time); the hold's end is still checked against the clock per request.
// Memory: one publication's records (and the held ones' previous records);
// a publication of more than MaxModelServers records is not modelled.
type TrustModel struct{ m readModel[trustModel] }

type trustModel struct {
	publicationID string
	byServer      map[string]*trustEntry
}

// trustEntry is what the route needs of one server's record.
type trustEntry struct {
	rec    store.TrustRecord
	review *schema.ReviewPending // the hold, nil when none
	prev   *store.TrustRecord    // held: the previous publication's record, nil when it holds none
}

// NewTrustModel returns a model of st's newest publication, built on first
// use (or by Refresh).
func NewTrustModel(st TrustReader, log *zap.Logger) *TrustModel {
	if log == nil {
		log = zap.NewNop()
	}
	tm := &TrustModel{}
	tm.m = readModel[trustModel]{what: "trust", poll: DefaultModelPoll, log: log,
		mark: func(ctx context.Context) (string, error) {
			ps, err := st.Publications(ctx, 1)
			if err != nil || len(ps) == 0 {
				return "", err
			}
			return ps[0].ID, nil
		},
		build: func(ctx context.Context) (*trustModel, error) { return buildTrustModel(ctx, st) }}
	return tm
}

// Refresh builds the model now when a newer publication landed.
func (tm *TrustModel) Refresh(ctx context.Context) error {
	if tm == nil {
		return nil
	}
	return tm.m.refresh(ctx)
}

// Len is the number of records in the current model.
func (tm *TrustModel) Len() int {
	if tm == nil {
		return 0
	}
	if v := tm.m.cur.Load(); v != nil {
		return len(v.byServer)
	}
	return 0
}

func (tm *TrustModel) lookup(server string) *trustEntry {
	if tm == nil {
		return nil
	}
	v := tm.m.get()
	if v == nil {
		return nil
	}
	return v.byServer[server]
}

// reviewOf parses a record's review hold; records without the key are not
// decoded at all (the common case, and a record is kilobytes).
func reviewOf(record string) *schema.ReviewPending {
	if !strings.Contains(record, `"review_pending"`) {
		return nil
	}
	var held struct {
		Review *schema.ReviewPending `json:"review_pending"`
	}
	if json.Unmarshal([]byte(record), &held) != nil {
		return nil
	}
	return held.Review
}

func buildTrustModel(ctx context.Context, st TrustReader) (*trustModel, error) {
	ps, err := st.Publications(ctx, 1)
	if err != nil {
		return nil, err
	}
	m := &trustModel{byServer: map[string]*trustEntry{}}
	if len(ps) == 0 {
		return m, nil
	}
	m.publicationID = ps[0].ID
	if ps[0].RecordCount > MaxModelServers {
		return nil, fmt.Errorf("publication %s: %d records, over MaxModelServers (%d); lookups read the store", ps[0].ID, ps[0].RecordCount, MaxModelServers)
	}
	recs, err := st.PublicationRecords(ctx, m.publicationID)
	if err != nil {
		return nil, err
	}
	prevOf := map[string][]*trustEntry{} // previous publication id → held entries
	for _, r := range recs {
		e := &trustEntry{rec: r, review: reviewOf(r.Record)}
		m.byServer[r.Server] = e
		if e.review != nil {
			prevOf[e.review.PreviousPublicationID] = append(prevOf[e.review.PreviousPublicationID], e)
		}
	}
	for id, held := range prevOf {
		prevs, err := st.PublicationRecords(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("previous records: %w", err)
		}
		by := make(map[string]int, len(prevs))
		for i, p := range prevs {
			if _, dup := by[p.Server]; !dup {
				by[p.Server] = i
			}
		}
		for _, e := range held {
			if i, ok := by[e.rec.Server]; ok {
				p := prevs[i]
				e.prev = &p
			}
		}
	}
	return m, nil
}

func (t *trustHandlers) internal(what string, err error) error {
	t.o.Log.Error("api: trust read failed", zap.String("what", what), zap.Error(err))
	return huma.Error500InternalServerError(what + " failed; see the server log")
}

func (t *trustHandlers) noStore() error {
	return huma.Error503ServiceUnavailable("no trust store is configured in this process (run the scorer stage: forum run, replay or process)")
}

// PublicationHeader is a publication as the API serves it.
type PublicationHeader struct {
	PublicationID string         `json:"publication_id"`
	MethodVersion string         `json:"method_version"`
	WeightsSHA256 string         `json:"weights_sha256"`
	RecordCount   int            `json:"record_count"`
	MerkleRoot    string         `json:"merkle_root" doc:"RFC 6962 Merkle root (hex) over the records' canonical JSON, leaves sorted by server name."`
	ComputedAt    time.Time      `json:"computed_at"`
	Signature     string         `json:"signature" doc:"Ed25519 signature (base64) over \"forum-publication-v1\\n\" + RFC 8785 JSON of the header."`
	KeyID         string         `json:"key_id" doc:"Hex SHA-256 of the signing public key (see /v1/keys)."`
	SignedHeader  publish.Header `json:"signed_header" doc:"The exact header object the signature covers."`
}

func headerOf(p store.Publication) PublicationHeader {
	return PublicationHeader{PublicationID: p.ID, MethodVersion: p.MethodVersion, WeightsSHA256: p.WeightsSHA256, RecordCount: p.RecordCount,
		MerkleRoot: p.MerkleRoot, ComputedAt: p.ComputedAt, Signature: p.Signature, KeyID: p.KeyID,
		SignedHeader: publish.Header{PublicationID: p.ID, MethodVersion: p.MethodVersion, WeightsSHA256: p.WeightsSHA256,
			RecordCount: p.RecordCount, MerkleRoot: p.MerkleRoot, ComputedAt: p.ComputedAt.UTC().Format(time.RFC3339)}}
}

type trustOutput struct {
	Body struct {
		Server        string          `json:"server"`
		PublicationID string          `json:"publication_id"`
		Record        json.RawMessage `json:"record" doc:"The published record (SPEC §5) exactly as sealed: RFC 8785 canonical JSON with content_sha256."`
		Held          bool            `json:"held" doc:"The newest record is held for popular-server review; record is the previous one until the hold ends or an admin approves it."`
		Pending       json.RawMessage `json:"pending,omitempty" doc:"The held record, when held."`
		Approval      *ReviewApproval `json:"approval,omitempty" doc:"Set when the newest record was held for popular-server review and an admin approved it: the record is served as current before its hold ends."`
	}
}

// ReviewApproval is an admin approval of a record held for popular-server
// review (SPEC §4).
type ReviewApproval struct {
	Server        string    `json:"server"`
	PublicationID string    `json:"publication_id" doc:"The publication of the approved (held) record."`
	Who           string    `json:"who" doc:"The label of the admin token that approved it."`
	Reason        string    `json:"reason"`
	ApprovedAt    time.Time `json:"approved_at"`
}

func approvalOf(a store.ReviewApproval) *ReviewApproval {
	return &ReviewApproval{Server: a.Server, PublicationID: a.PublicationID, Who: a.Who, Reason: a.Reason, ApprovedAt: a.ApprovedAt.UTC()}
}

type reviewApproveInput struct {
	Authorization string `header:"Authorization" doc:"Bearer <admin token> (FORUM_ADMIN_TOKEN)."`
	Name          string `path:"name" minLength:"3" maxLength:"200" doc:"Server name, URL-encoded (io.github.owner%2Frepo)."`
	Body          struct {
		PublicationID string `json:"publication_id,omitempty" maxLength:"100" doc:"The publication of the held record; default: the newest publication holding the server."`
		Reason        string `json:"reason" minLength:"1" maxLength:"2000" doc:"Why the drop is approved (kept with the approval)."`
	}
}

type reviewApproveOutput struct {
	Body struct {
		Server        string                `json:"server"`
		PublicationID string                `json:"publication_id"`
		ReviewPending *schema.ReviewPending `json:"review_pending" doc:"The hold that the approval ends."`
		Approval      ReviewApproval        `json:"approval"`
		Note          string                `json:"note"`
	}
}

type proofInput struct {
	Name        string `path:"name" minLength:"3" maxLength:"200" doc:"Server name, URL-encoded (io.github.owner%2Frepo)."`
	Publication string `query:"publication" maxLength:"100" doc:"A publication id; default: the newest one holding the server."`
}

type proofOutput struct {
	Body struct {
		Server        string            `json:"server"`
		PublicationID string            `json:"publication_id"`
		LeafIndex     int               `json:"leaf_index"`
		TreeSize      int               `json:"tree_size"`
		LeafHash      string            `json:"leaf_hash" doc:"SHA-256(0x00 || canonical record without content_sha256), hex."`
		AuditPath     []string          `json:"audit_path" doc:"RFC 6962 audit path, hex, leaf to root."`
		Publication   PublicationHeader `json:"publication"`
		Record        json.RawMessage   `json:"record"`
	}
}

type publicationsInput struct {
	Limit int `query:"limit" minimum:"1" maximum:"1000" default:"100"`
}

type publicationsOutput struct {
	Body struct {
		Publications []PublicationHeader `json:"publications"`
	}
}

type publicationInput struct {
	ID string `path:"id" minLength:"1" maxLength:"100" doc:"A publication id, or latest."`
}

type publicationOutput struct {
	Body PublicationHeader
}

type methodOutput struct {
	Body struct {
		MethodVersion     string             `json:"method_version"`
		WeightsFile       string             `json:"weights_file"`
		WeightsSHA256     string             `json:"weights_sha256" doc:"SHA-256 of the weights file bytes, as every record references it."`
		Weights           json.RawMessage    `json:"weights" doc:"The weights file, verbatim."`
		Changelog         []method.ChangeRow `json:"changelog"`
		ToolfinderVersion string             `json:"toolfinder_version"`
	}
}

type evidenceInput struct {
	ID string `path:"id" minLength:"1" maxLength:"400" doc:"An evidence id from a record, URL-encoded."`
}

type evidenceOutput struct {
	Body struct {
		ID         string          `json:"id"`
		Kind       string          `json:"kind" enum:"health_check,registry_event,scan_finding,incident,github_repo"`
		Server     string          `json:"server"`
		ObservedAt *time.Time      `json:"observed_at,omitempty"`
		Data       json.RawMessage `json:"data" doc:"The stored observation: the whole check, the drift event, the scan finding, or the incident."`
	}
}

// Key is a publication signing key.
type Key struct {
	KeyID     string `json:"key_id"`
	Algorithm string `json:"algorithm" enum:"Ed25519"`
	PublicKey string `json:"public_key" doc:"The raw 32-byte public key, base64."`
	PEM       string `json:"pem" doc:"The public key as PKIX PEM (what forum verify --key reads)."`
}

type keysOutput struct {
	Body struct {
		Keys []Key `json:"keys"`
	}
}

func (t *trustHandlers) register(api huma.API) {
	huma.Register(api, huma.Operation{OperationID: "get-server-trust", Method: http.MethodGet, Path: "/v1/servers/{name}/trust", Summary: "Trust record of a server",
		Description: "The server's record from the newest publication: FORUM trust score, band, the four sub-scores with signals and evidence, visibility, the Toolfinder score and categories.",
		Tags:        []string{"trust"}},
		func(ctx context.Context, in *nameInput) (*trustOutput, error) {
			if t.o.Store == nil {
				return nil, t.noStore()
			}
			e := t.o.Model.lookup(in.Name)
			fromStore := e == nil
			if fromStore {
				// Not in the newest publication (or no model yet): the
				// store finds the newest publication holding it.
				rec, err := t.o.Store.LatestTrustRecord(ctx, in.Name)
				if errors.Is(err, store.ErrNotFound) {
					return nil, huma.Error404NotFound("no published record for " + in.Name + " (names are URL-encoded: io.github.owner%2Frepo)")
				}
				if err != nil {
					return nil, t.internal("trust record", err)
				}
				e = &trustEntry{rec: rec, review: reviewOf(rec.Record)}
			}
			rec := e.rec
			out := &trustOutput{}
			out.Body.Server, out.Body.PublicationID, out.Body.Record = rec.Server, rec.PublicationID, json.RawMessage(rec.Record)
			if e.review != nil && e.review.Until.After(t.o.Now()) {
				if t.o.Reviews != nil {
					a, err := t.o.Reviews.ReviewApproval(ctx, rec.Server, rec.PublicationID)
					if err == nil {
						// Approved: the hold is over, the new record is current.
						out.Body.Approval = approvalOf(a)
						return out, nil
					}
					if !errors.Is(err, store.ErrNotFound) {
						return nil, t.internal("review approval", err)
					}
				}
				prev := e.prev
				if fromStore {
					prevs, err := t.o.Store.PublicationRecords(ctx, e.review.PreviousPublicationID)
					if err != nil {
						return nil, t.internal("previous record", err)
					}
					for i := range prevs {
						if prevs[i].Server == rec.Server {
							prev = &prevs[i]
							break
						}
					}
				}
				if prev != nil {
					out.Body.Held, out.Body.Pending = true, out.Body.Record
					out.Body.PublicationID, out.Body.Record = prev.PublicationID, json.RawMessage(prev.Record)
				}
			}
			return out, nil
		})

	huma.Register(api, huma.Operation{OperationID: "get-server-proof", Method: http.MethodGet, Path: "/v1/servers/{name}/proof", Summary: "Inclusion proof of a server's record",
		Description: "The RFC 6962 audit path from the record's leaf to the publication's signed Merkle root.", Tags: []string{"trust"}},
		func(ctx context.Context, in *proofInput) (*proofOutput, error) {
			if t.o.Store == nil {
				return nil, t.noStore()
			}
			// The newest record: from the trust read model when it holds
			// the server (no store query), else the store.
			pubID, record := in.Publication, ""
			if pubID == "" {
				if e := t.o.Model.lookup(in.Name); e != nil {
					pubID, record = e.rec.PublicationID, e.rec.Record
				} else {
					rec, err := t.o.Store.LatestTrustRecord(ctx, in.Name)
					if errors.Is(err, store.ErrNotFound) {
						return nil, huma.Error404NotFound("no published record for " + in.Name)
					}
					if err != nil {
						return nil, t.internal("trust record", err)
					}
					pubID, record = rec.PublicationID, rec.Record
				}
			}
			// The tree and header of a publication are built once and
			// cached (both are immutable once stored).
			tr, err := t.trees.get(ctx, t.o.Store, pubID)
			if errors.Is(err, store.ErrNotFound) {
				return nil, huma.Error404NotFound("no publication " + pubID)
			}
			if err != nil {
				return nil, t.internal("publication", err)
			}
			row := tr.header
			idx, ok := tr.index(in.Name)
			if !ok {
				return nil, huma.Error404NotFound("publication " + pubID + " holds no record for " + in.Name)
			}
			path, err := tr.tree.Proof(idx)
			if err != nil {
				return nil, t.internal("proof", err)
			}
			rec := record
			if rec == "" {
				if rec, err = t.recordIn(ctx, pubID, in.Name); err != nil {
					return nil, err
				}
			}
			out := &proofOutput{}
			b := &out.Body
			b.Server, b.PublicationID, b.LeafIndex, b.TreeSize = in.Name, pubID, idx, tr.tree.Size()
			b.LeafHash = hex.EncodeToString(tr.tree.Leaf(idx))
			b.AuditPath = make([]string, len(path))
			for i, h := range path {
				b.AuditPath[i] = hex.EncodeToString(h)
			}
			b.Publication, b.Record = headerOf(row), json.RawMessage(rec)
			return out, nil
		})

	huma.Register(api, huma.Operation{OperationID: "list-publications", Method: http.MethodGet, Path: "/v1/publications", Summary: "Publications",
		Description: "Signed publication headers, newest first.", Tags: []string{"trust"}},
		func(ctx context.Context, in *publicationsInput) (*publicationsOutput, error) {
			if t.o.Store == nil {
				return nil, t.noStore()
			}
			ps, err := t.o.Store.Publications(ctx, in.Limit)
			if err != nil {
				return nil, t.internal("publications", err)
			}
			out := &publicationsOutput{}
			out.Body.Publications = make([]PublicationHeader, 0, len(ps))
			for _, p := range ps {
				out.Body.Publications = append(out.Body.Publications, headerOf(p))
			}
			return out, nil
		})

	huma.Register(api, huma.Operation{OperationID: "get-publication", Method: http.MethodGet, Path: "/v1/publications/{id}", Summary: "A publication",
		Description: "One signed publication header (id, or latest). Export the whole publication with forum export-publication.", Tags: []string{"trust"}},
		func(ctx context.Context, in *publicationInput) (*publicationOutput, error) {
			if t.o.Store == nil {
				return nil, t.noStore()
			}
			var p store.Publication
			var err error
			if in.ID == "latest" {
				var ps []store.Publication
				if ps, err = t.o.Store.Publications(ctx, 1); err == nil {
					if len(ps) == 0 {
						err = store.ErrNotFound
					} else {
						p = ps[0]
					}
				}
			} else {
				p, err = t.o.Store.GetPublication(ctx, in.ID)
			}
			if errors.Is(err, store.ErrNotFound) {
				return nil, huma.Error404NotFound("no publication " + in.ID)
			}
			if err != nil {
				return nil, t.internal("publication", err)
			}
			return &publicationOutput{Body: headerOf(p)}, nil
		})

	huma.Register(api, huma.Operation{OperationID: "get-method", Method: http.MethodGet, Path: "/v1/method", Summary: "The scoring method",
		Description: "The FORUM method version, its weights file verbatim with its SHA-256 (referenced by every record), and the change log.", Tags: []string{"trust"}},
		func(ctx context.Context, _ *struct{}) (*methodOutput, error) {
			m := t.o.Method
			out := &methodOutput{}
			b := &out.Body
			b.MethodVersion, b.WeightsFile, b.WeightsSHA256 = m.Version(), m.File, m.SHA256
			b.Weights, b.Changelog, b.ToolfinderVersion = json.RawMessage(m.Raw), m.Changelog, toolfinder.Version
			return out, nil
		})

	huma.Register(api, huma.Operation{OperationID: "get-evidence", Method: http.MethodGet, Path: "/v1/evidence/{id}", Summary: "Resolve an evidence pointer",
		Description: "The stored observation behind an evidence id of a record: a health check, a registry drift event, or a static-scan finding.", Tags: []string{"trust"}},
		func(ctx context.Context, in *evidenceInput) (*evidenceOutput, error) {
			if t.o.Store == nil {
				return nil, t.noStore()
			}
			out := &evidenceOutput{}
			b := &out.Body
			b.ID = in.ID
			if server, ok := schema.ParseScanFindingID(in.ID); ok {
				return t.scanFinding(ctx, out, server, in.ID)
			}
			if repo, ok := strings.CutPrefix(in.ID, "github:"); ok {
				return t.githubObservation(ctx, out, repo, in.ID)
			}
			if c, err := t.o.Store.HealthCheckByID(ctx, in.ID); err == nil {
				b.Kind, b.Server, b.ObservedAt, b.Data = trust.EvHealthCheck, c.Server, &c.ObservedAt, json.RawMessage(c.Check)
				if !json.Valid(b.Data) {
					b.Data, _ = json.Marshal(c.Check)
				}
				return out, nil
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, t.internal("health check", err)
			}
			if e, err := t.o.Store.EventByID(ctx, in.ID); err == nil {
				b.Kind, b.Server, b.ObservedAt = trust.EvRegistryEvent, e.Server, &e.ObservedAt
				b.Data, _ = json.Marshal(e)
				return out, nil
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, t.internal("drift event", err)
			}
			if ev, ok := t.o.Store.(EvidenceReader); ok {
				if inc, err := ev.GetIncident(ctx, in.ID); err == nil {
					at := inc.Date
					b.Kind, b.Server, b.ObservedAt = trust.EvIncident, inc.Server, &at
					b.Data, _ = json.Marshal(incidents.FromRow(inc))
					return out, nil
				} else if !errors.Is(err, store.ErrNotFound) {
					return nil, t.internal("incident", err)
				}
			}
			return nil, huma.Error404NotFound("no stored observation with id " + in.ID)
		})

	huma.Register(api, huma.Operation{OperationID: "list-keys", Method: http.MethodGet, Path: "/v1/keys", Summary: "Publication signing keys",
		Description: "The Ed25519 public key that signs publication headers; key_id is the hex SHA-256 of the raw key.", Tags: []string{"trust"}},
		func(ctx context.Context, _ *struct{}) (*keysOutput, error) {
			out := &keysOutput{}
			out.Body.Keys = []Key{}
			if len(t.o.PublicKey) == ed25519.PublicKeySize {
				out.Body.Keys = append(out.Body.Keys, Key{KeyID: publish.KeyID(t.o.PublicKey), Algorithm: "Ed25519",
					PublicKey: base64.StdEncoding.EncodeToString(t.o.PublicKey), PEM: publish.PublicKeyPEM(t.o.PublicKey)})
			}
			return out, nil
		})

	huma.Register(api, adminOperation(huma.Operation{OperationID: "approve-review", Method: http.MethodPost, Path: "/v1/admin/reviews/{name}/approve",
		Summary: "Approve a held record (admin)", Tags: []string{"trust", "admin"},
		Description: "Ends a popular-server review hold (SPEC §4) early: the held record of the publication (default: the server's newest record) is served as current by GET /v1/servers/{name}/trust, and the scorer compares the next publication with its band. A reason is required; the approval keeps who (the token's label) and why. Approving an approved record again returns the stored approval unchanged."},
		t.o.Tokens, "review approval"),
		func(ctx context.Context, in *reviewApproveInput) (*reviewApproveOutput, error) {
			who, err := authorizeAdmin(t.o.Tokens, in.Authorization, "review approval")
			if err != nil {
				return nil, err
			}
			if t.o.Store == nil {
				return nil, t.noStore()
			}
			if t.o.Reviews == nil {
				return nil, huma.Error503ServiceUnavailable("review approval is not available in this process (no review store)")
			}
			reason := strings.TrimSpace(in.Body.Reason)
			if reason == "" {
				return nil, huma.Error422UnprocessableEntity("a reason is required", &huma.ErrorDetail{Location: "body.reason", Message: "a reason is required", Value: in.Body.Reason})
			}
			rec, err := t.heldCandidate(ctx, in.Name, in.Body.PublicationID)
			if err != nil {
				return nil, err
			}
			var held struct {
				Review *schema.ReviewPending `json:"review_pending"`
			}
			if err := json.Unmarshal([]byte(rec.Record), &held); err != nil {
				return nil, t.internal("decode record", err)
			}
			now := t.o.Now().UTC()
			where := rec.Server + " in publication " + rec.PublicationID
			if held.Review == nil {
				return nil, huma.Error409Conflict("the record of " + where + " is not held for review; there is nothing to approve")
			}
			out := &reviewApproveOutput{}
			b := &out.Body
			b.Server, b.PublicationID, b.ReviewPending = rec.Server, rec.PublicationID, held.Review
			if a, err := t.o.Reviews.ReviewApproval(ctx, rec.Server, rec.PublicationID); err == nil {
				b.Approval, b.Note = *approvalOf(a), "already approved: the stored approval is unchanged"
				return out, nil
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, t.internal("review approval", err)
			}
			if !held.Review.Until.After(now) {
				return nil, huma.Error409Conflict("the review hold of " + where + " already ended at " + held.Review.Until.UTC().Format(time.RFC3339) + "; the record is served as current")
			}
			a := store.ReviewApproval{Server: rec.Server, PublicationID: rec.PublicationID, Who: who, Reason: reason, ApprovedAt: store.Millis(now)}
			if err := t.o.Reviews.InsertReviewApproval(ctx, a); err != nil {
				return nil, t.internal("store review approval", err)
			}
			t.o.Log.Info("review hold approved", zap.String("server", a.Server), zap.String("publication", a.PublicationID), zap.String("who", who))
			b.Approval, b.Note = *approvalOf(a), "approved: the record is served as current; the next publication compares with its band"
			return out, nil
		})
}

// heldCandidate returns the record an approval is about: the server's record
// in publication pubID, or its newest one.
func (t *trustHandlers) heldCandidate(ctx context.Context, name, pubID string) (store.TrustRecord, error) {
	if pubID == "" {
		rec, err := t.o.Store.LatestTrustRecord(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return rec, huma.Error404NotFound("no published record for " + name + " (names are URL-encoded: io.github.owner%2Frepo)")
		}
		if err != nil {
			return rec, t.internal("trust record", err)
		}
		return rec, nil
	}
	if _, err := t.o.Store.GetPublication(ctx, pubID); errors.Is(err, store.ErrNotFound) {
		return store.TrustRecord{}, huma.Error404NotFound("no publication " + pubID)
	} else if err != nil {
		return store.TrustRecord{}, t.internal("publication", err)
	}
	recs, err := t.o.Store.PublicationRecords(ctx, pubID)
	if err != nil {
		return store.TrustRecord{}, t.internal("publication records", err)
	}
	for _, r := range recs {
		if r.Server == name {
			return r, nil
		}
	}
	return store.TrustRecord{}, huma.Error404NotFound("publication " + pubID + " holds no record for " + name)
}

// scanFinding resolves a scan-finding id from the records that carry it:
// the server's records of every stored publication, newest first, so a
// pointer of an older signed publication resolves as long as it is stored.
func (t *trustHandlers) scanFinding(ctx context.Context, out *evidenceOutput, server, id string) (*evidenceOutput, error) {
	var recs []store.TrustRecord
	if h, ok := t.o.Store.(interface {
		TrustRecordsOf(ctx context.Context, server string, limit int) ([]store.TrustRecord, error)
	}); ok {
		var err error
		if recs, err = h.TrustRecordsOf(ctx, server, store.MaxEventLimit); err != nil {
			return nil, t.internal("trust records", err)
		}
	} else if rec, err := t.o.Store.LatestTrustRecord(ctx, server); err == nil {
		recs = []store.TrustRecord{rec}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, t.internal("trust record", err)
	}
	for _, rec := range recs {
		if !strings.Contains(rec.Record, id) {
			continue
		}
		var r struct {
			Static struct {
				Check    *trust.Evidence         `json:"check"`
				Findings []schema.ScannedFinding `json:"findings"`
			} `json:"static_scan"`
		}
		if json.Unmarshal([]byte(rec.Record), &r) != nil {
			continue
		}
		for _, f := range r.Static.Findings {
			if f.ID != id {
				continue
			}
			b := &out.Body
			b.Kind, b.Server = trust.EvScanFinding, server
			if r.Static.Check != nil {
				at := r.Static.Check.ObservedAt
				b.ObservedAt = &at
			}
			b.Data, _ = json.Marshal(f)
			return out, nil
		}
	}
	return nil, huma.Error404NotFound("no stored record of " + server + " holds scan finding " + id)
}

// githubObservation resolves a GitHub observation id ("github:<repo>@<time>")
// from the provenance table.
func (t *trustHandlers) githubObservation(ctx context.Context, out *evidenceOutput, rest, id string) (*evidenceOutput, error) {
	repo, _, _ := strings.Cut(rest, "@")
	ev, ok := t.o.Store.(EvidenceReader)
	if !ok || repo == "" {
		return nil, huma.Error404NotFound("no stored observation with id " + id)
	}
	rows, err := ev.ProvenanceObservations(ctx, store.ProvenanceQuery{Repo: repo, Limit: store.MaxEventLimit})
	if err != nil {
		return nil, t.internal("provenance", err)
	}
	for _, p := range rows {
		if p.ID == id {
			b := &out.Body
			at := p.ObservedAt
			b.Kind, b.Server, b.ObservedAt = trust.EvGitHubRepo, p.Repo, &at
			b.Data, _ = json.Marshal(p)
			return out, nil
		}
	}
	return nil, huma.Error404NotFound("no stored observation with id " + id)
}
