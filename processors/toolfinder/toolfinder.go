// Package toolfinder computes the Toolfinder score v0.3 (SPEC §3, seed 000):
// a public 0–100 quality score from seven components, minus anti-junk
// penalties, plus the display rules that never change the score (leaderboard,
// sponsored slot, search multipliers, and SPEC §3's safety hold: a server
// whose FORUM record is band D/F or has an open strong-negative signal is
// displayed as flagged — Ranked.Held).
//
// In: one Input per server — registry fields, the last health check summary,
// a GitHub summary, the GitHub coverage-gate state, and the registry-wide
// Context computed by Population from all latest entries — and the scoring
// time `now` (event time). Out: a Result with every component as a list of
// findings carrying evidence pointers (OpenSSF-Scorecard style), the rounded
// total, penalties and flags. Score is pure.
//
// Neutrality: Input has no sponsorship field anywhere in its type graph
// (TestInputCannotReadSponsorship walks it), so the scorer cannot read one.
// Sponsored placement is a separate selection over already-computed results.
//
// Readings of the SPEC where it is silent (each pinned by a test):
//   - An entry with neither remotes nor packages gets auth ease "unknown" (4)
//     and no security points for transport or auth.
//   - Security "+3 public source repo listed and resolved" needs the GitHub
//     gate open (resolution is a GitHub observation); with the gate closed,
//     a listed, well-formed repository URL earns it for everyone alike — the
//     same registry-only fallback the gate prescribes for maintenance.
//     The OSI-license points need GitHub and are 0 with the gate closed.
//   - Empty descriptions are not counted for cloned_description (they are
//     already `placeholder`).
//   - Several siblings whose last name segment equals the repo name: the
//     lexicographically first name is canonical.
//   - Borrowed stars compare the io.github namespace with GitHub's
//     owner.login when resolved, else with the owner in the repo URL.
package toolfinder

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/forum-mcp/forum/schema"
)

//go:embed flags.json
var flagsJSON []byte

type flagData struct {
	PlaceholderExact    []string `json:"placeholder_exact"`
	PlaceholderPrefixes []string `json:"placeholder_prefixes"`
	RetiredPrefixes     []string `json:"retired_prefixes"`
	RetiredUseInstead   string   `json:"retired_use_instead"`
	TestSegments        []string `json:"test_segments"`
	OSILicenses         []string `json:"osi_licenses"`
	useInstead          *regexp.Regexp
	osi                 map[string]bool
}

var flagsData = sync.OnceValue(func() *flagData {
	var d flagData
	if err := json.Unmarshal(flagsJSON, &d); err != nil {
		panic(fmt.Sprintf("toolfinder: flags.json: %v", err))
	}
	d.useInstead = regexp.MustCompile("(?i)" + d.RetiredUseInstead)
	d.osi = map[string]bool{}
	for _, l := range d.OSILicenses {
		d.osi[strings.ToLower(l)] = true
	}
	return &d
})

// Version of the Toolfinder method.
const Version = "0.3"

// Health outcomes (SPEC §1.3).
const (
	OutcomeOK              = "ok"
	OutcomeAuthRequired    = "auth_required"
	OutcomeHandshakeFailed = "handshake_failed"
	OutcomeUnreachable     = "unreachable"
	OutcomeNotChecked      = "not_checked"
)

// The record parts are wire types (schema/record.go): they are sealed in
// the published record.
type (
	Evidence  = schema.Evidence
	Finding   = schema.ToolfinderFinding
	Component = schema.ToolfinderComponent
	Penalty   = schema.ToolfinderPenalty
)

// Input is everything the Toolfinder scorer reads for one server.
type Input struct {
	Name        string
	Title       string
	Description string
	Remotes     []Remote
	Packages    []Package
	RepoURL     string
	UpdatedAt   time.Time // registry updatedAt of the latest version
	Registry    *Evidence // the registry observation (optional)

	Health   Health
	GitHub   GitHub
	GateOpen bool // SPEC §1.2 coverage gate: GitHub signals count only while open

	Context Context // registry-wide facts from Population.Context
}

// Remote is a hosted endpoint as listed in the registry.
type Remote struct {
	Type    string
	URL     string
	Headers []Header
}

// Header is a declared remote header. Pointers: absent differs from false.
type Header struct {
	Name       string
	IsRequired *bool
	IsSecret   *bool
}

// Package is a local distribution.
type Package struct {
	RegistryType string
	Identifier   string
	Env          []EnvVar
}

// EnvVar is a declared environment variable.
type EnvVar struct {
	Name       string
	IsRequired *bool
	IsSecret   *bool
}

// Health is the summary of the server's last health check.
type Health struct {
	Outcome             string // ok|auth_required|handshake_failed|unreachable|not_checked ("" = not_checked)
	InitializeLatencyMS int
	HTTPStatus          int
	ChallengeScheme     string // WWW-Authenticate scheme, e.g. "Bearer"
	ResourceMetadataURL string // RFC 9728 resource_metadata pointer from the challenge
	ProtectedResource   bool   // /.well-known/oauth-protected-resource found and parsed
	ToolsListed         bool   // tools/list succeeded
	Tools               []Tool
	Check               *Evidence
}

// Tool is one listed tool, as far as tool quality needs it.
type Tool struct {
	Name           string
	Description    string
	HasInputSchema bool
}

// GitHub is the summary of the repository observation.
type GitHub struct {
	Resolved    bool
	Stars       int
	PushedAt    time.Time
	Archived    bool
	LicenseSPDX string
	OwnerLogin  string
	Private     bool // visibility != public
	Observation *Evidence
}

// Finding outcomes.
const (
	Positive      = "positive"
	Negative      = "negative"
	Neutral       = "neutral"
	NotApplicable = "not_applicable"
)

// Result is the Toolfinder block of a record.
type Result struct {
	Name       string      `json:"name"`
	Version    string      `json:"version"`
	Score      int         `json:"score"`
	RawSum     float64     `json:"raw_sum"`
	Rounded    int         `json:"rounded"`
	Components []Component `json:"components"`
	Penalties  []Penalty   `json:"penalties"`
	Flags      []string    `json:"flags"`
	GitHubGate bool        `json:"github_gate"`
}

// Flagged reports whether any anti-junk flag is set.
func (r Result) Flagged() bool { return len(r.Flags) > 0 }

// Component names, in record order.
const (
	CompHealth      = "health"
	CompAuthEase    = "auth_ease"
	CompToolQuality = "tool_quality"
	CompMaintenance = "maintenance"
	CompAdoption    = "adoption"
	CompUsage       = "usage"
	CompSecurity    = "security"
)

// Penalty flags.
const (
	FlagPlaceholder       = "placeholder"
	FlagRetired           = "retired"
	FlagTestOrDemo        = "test_or_demo"
	FlagClonedDescription = "cloned_description"
	FlagSharedEndpoint    = "shared_endpoint"
	FlagBulkPublisher     = "bulk_publisher"
)

// Score computes the Toolfinder v0.3 score of one server.
func Score(in Input, now time.Time) Result {
	r := Result{Name: in.Name, Version: Version, GitHubGate: in.GateOpen}
	auth := authEase(in)
	r.Components = []Component{
		health(in),
		auth,
		toolQuality(in),
		maintenance(in, now),
		adoption(in),
		{Name: CompUsage, Max: 10, Score: 0, Findings: []Finding{{Probe: "usage.placeholder", Outcome: NotApplicable,
			Message: "usage data is not collected yet: 0 for every server"}}},
		security(in, auth.Score),
	}
	sum := 0.0
	for _, c := range r.Components {
		sum += c.Score
	}
	r.RawSum = math.Round(sum*1e6) / 1e6
	r.Rounded = RoundHalfUp(sum)
	r.Penalties = penalties(in)
	r.Flags = []string{}
	total := r.Rounded
	for _, p := range r.Penalties {
		total -= p.Points
		r.Flags = append(r.Flags, p.Flag)
	}
	r.Score = max(0, total)
	return r
}

// RoundHalfUp rounds x to the nearest integer, halves upward, after snapping
// float noise (72.4999999999 for an exact 72.5 rounds to 73).
func RoundHalfUp(x float64) int {
	x = math.Round(x*1e9) / 1e9
	return int(math.Floor(x + 0.5))
}

func ev(e *Evidence) []Evidence {
	if e == nil {
		return nil
	}
	return []Evidence{*e}
}

func outcome(in Input) string {
	if in.Health.Outcome == "" {
		return OutcomeNotChecked
	}
	return in.Health.Outcome
}

// health [25] from the last check.
func health(in Input) Component {
	c := Component{Name: CompHealth, Max: 25}
	f := Finding{Probe: "health.last_check", Evidence: ev(in.Health.Check)}
	switch o := outcome(in); {
	case len(in.Remotes) == 0:
		f.Outcome, f.Message = NotApplicable, "local-only server: no endpoint to check"
	case o == OutcomeOK:
		l := in.Health.InitializeLatencyMS
		f.Points = float64(max(17, 25-max(0, l-250)/250))
		f.Outcome, f.Message = Positive, "handshake ok"
		f.Values = map[string]float64{"initialize_latency_ms": float64(l)}
	case o == OutcomeAuthRequired:
		f.Points, f.Outcome, f.Message = 18, Positive, "up, needs credentials"
	case o == OutcomeHandshakeFailed:
		f.Points, f.Outcome, f.Message = 5, Negative, "responds but the MCP handshake fails"
	case o == OutcomeUnreachable:
		f.Outcome, f.Message = Negative, "unreachable"
	default:
		f.Outcome, f.Message = NotApplicable, "not checked yet"
	}
	c.Score = f.Points
	c.Findings = []Finding{f}
	return c
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

// AuthKind classifies remote auth: "none", "oauth", "static", "unknown".
func AuthKind(in Input) string {
	h := in.Health
	if outcome(in) == OutcomeOK {
		return "none"
	}
	if strings.EqualFold(h.ChallengeScheme, "bearer") || h.ResourceMetadataURL != "" || h.ProtectedResource {
		return "oauth"
	}
	if outcome(in) == OutcomeAuthRequired && (h.HTTPStatus == 401 || h.HTTPStatus == 403) {
		return "static"
	}
	for _, r := range in.Remotes {
		for _, hd := range r.Headers {
			if isTrue(hd.IsRequired) || isTrue(hd.IsSecret) {
				return "static"
			}
		}
	}
	return "unknown"
}

// authEase [15].
func authEase(in Input) Component {
	c := Component{Name: CompAuthEase, Max: 15}
	f := Finding{Probe: "auth_ease.kind", Evidence: ev(in.Health.Check)}
	switch {
	case len(in.Remotes) > 0:
		switch k := AuthKind(in); k {
		case "none":
			f.Points, f.Outcome, f.Message = 15, Positive, "handshake ok without credentials"
		case "oauth":
			f.Points, f.Outcome, f.Message = 12, Positive, "OAuth (Bearer challenge or protected-resource metadata): one-click capable"
		case "static":
			f.Points, f.Outcome, f.Message = 6, Neutral, "static header or API key"
		default:
			f.Points, f.Outcome, f.Message = 4, Neutral, "auth unknown"
		}
	case len(in.Packages) > 0:
		secret := false
		for _, p := range in.Packages {
			for _, e := range p.Env {
				// isSecret and not explicitly optional
				if isTrue(e.IsSecret) && !isFalse(e.IsRequired) {
					secret = true
				}
			}
		}
		if secret {
			f.Points, f.Outcome, f.Message = 5, Neutral, "local package that needs a secret environment variable"
		} else {
			f.Points, f.Outcome, f.Message = 9, Positive, "local package, no secret needed"
		}
	default:
		f.Points, f.Outcome, f.Message = 4, Neutral, "no remote and no package: auth unknown"
	}
	c.Score = f.Points
	c.Findings = []Finding{f}
	return c
}

// toolQuality [15].
func toolQuality(in Input) Component {
	c := Component{Name: CompToolQuality, Max: 15}
	f := Finding{Probe: "tool_quality.tools_list", Evidence: ev(in.Health.Check)}
	switch {
	case outcome(in) == OutcomeAuthRequired:
		f.Points, f.Outcome, f.Message = 7.5, Neutral, "auth-gated: neutral score"
	case outcome(in) == OutcomeOK && in.Health.ToolsListed:
		n := len(in.Health.Tools)
		d, s := 0.0, 0.0
		for _, t := range in.Health.Tools {
			if utf8.RuneCountInString(strings.TrimSpace(t.Description)) >= 20 {
				d++
			}
			if t.HasInputSchema {
				s++
			}
		}
		if n > 0 {
			d, s = d/float64(n), s/float64(n)
		}
		bloat := 0.0
		switch {
		case n <= 40:
			bloat = 3
		case n <= 80:
			bloat = 1.5
		}
		f.Points = 4 + 5*d + 3*s + bloat
		f.Outcome, f.Message = Positive, "tools/list succeeded"
		f.Values = map[string]float64{"tools": float64(n), "described_share": round6(d), "schema_share": round6(s), "size_points": bloat}
	default:
		f.Outcome, f.Message = NotApplicable, "no tool list"
	}
	c.Score = round6(f.Points)
	f.Points = c.Score
	c.Findings = []Finding{f}
	return c
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func ageDays(now, t time.Time) float64 { return now.Sub(t).Hours() / 24 }

// maintenance [15].
func maintenance(in Input, now time.Time) Component {
	c := Component{Name: CompMaintenance, Max: 15}
	var f Finding
	if in.GateOpen && in.GitHub.Resolved {
		f = Finding{Probe: "maintenance.github_push", Evidence: ev(in.GitHub.Observation)}
		age := ageDays(now, in.GitHub.PushedAt)
		f.Values = map[string]float64{"pushed_age_days": round6(age)}
		switch {
		case in.GitHub.Archived:
			f.Points, f.Outcome, f.Message = 0, Negative, "archived repository"
		case in.GitHub.PushedAt.IsZero():
			f.Points, f.Outcome, f.Message = 1, Negative, "no push date"
		case age < 30:
			f.Points, f.Outcome, f.Message = 15, Positive, "pushed within 30 days"
		case age < 90:
			f.Points, f.Outcome, f.Message = 12, Positive, "pushed within 90 days"
		case age < 180:
			f.Points, f.Outcome, f.Message = 8, Neutral, "pushed within 180 days"
		case age < 365:
			f.Points, f.Outcome, f.Message = 4, Neutral, "pushed within a year"
		default:
			f.Points, f.Outcome, f.Message = 1, Negative, "no push for over a year"
		}
	} else {
		f = Finding{Probe: "maintenance.registry_updated", Evidence: ev(in.Registry)}
		age := ageDays(now, in.UpdatedAt)
		f.Values = map[string]float64{"updated_age_days": round6(age)}
		why := "GitHub gate closed"
		if in.GateOpen {
			why = "no GitHub data"
		}
		switch {
		case in.UpdatedAt.IsZero():
			f.Points, f.Outcome = 1, Negative
		case age < 30:
			f.Points, f.Outcome = 7, Positive
		case age < 90:
			f.Points, f.Outcome = 5, Neutral
		case age < 180:
			f.Points, f.Outcome = 3, Neutral
		default:
			f.Points, f.Outcome = 1, Negative
		}
		f.Message = why + ": half credit from registry updatedAt"
	}
	c.Score = f.Points
	c.Findings = []Finding{f}
	return c
}

// FullStars is the adoption credit of a repository's stars before sibling
// splitting: min(10, 10·log10(stars+1)/4).
func FullStars(stars int) float64 {
	if stars < 0 {
		stars = 0
	}
	return math.Min(10, 10*math.Log10(float64(stars)+1)/4)
}

// BorrowedStars reports whether an io.github.<owner>/… server lists a repo
// owned by someone else (case-insensitive): it gets 0 adoption.
func BorrowedStars(name, repoOwner string) bool {
	ns, _, _ := strings.Cut(strings.ToLower(name), "/")
	if !strings.HasPrefix(ns, "io.github.") || repoOwner == "" {
		return false
	}
	return strings.TrimPrefix(ns, "io.github.") != strings.ToLower(repoOwner)
}

// adoption [10].
func adoption(in Input) Component {
	c := Component{Name: CompAdoption, Max: 10}
	f := Finding{Probe: "adoption.stars", Evidence: ev(in.GitHub.Observation)}
	owner := in.GitHub.OwnerLogin
	if owner == "" {
		owner, _ = schema.RepoOwnerName(in.RepoURL)
	}
	switch {
	case !in.GateOpen:
		f.Outcome, f.Message = NotApplicable, "GitHub gate closed: 0 for everyone"
	case !in.GitHub.Resolved:
		f.Outcome, f.Message = NotApplicable, "no resolved repository"
	case BorrowedStars(in.Name, owner):
		f.Outcome, f.Message = Negative, "io.github namespace on someone else's repository: borrowed stars count 0"
		f.Values = map[string]float64{"stars": float64(in.GitHub.Stars)}
	default:
		full := FullStars(in.GitHub.Stars)
		sib := in.Context.Siblings
		f.Values = map[string]float64{"stars": float64(in.GitHub.Stars), "full": round6(full), "siblings": float64(max(1, sib.N))}
		switch {
		case sib.N <= 1 || sib.Canonical:
			f.Points, f.Outcome, f.Message = full, Positive, "stars of the repository"
			if sib.N > 1 {
				f.Message = "canonical sibling (name matches the repository): full credit"
			}
		default:
			f.Points = math.Min(3, full/float64(sib.N))
			f.Outcome = Neutral
			f.Message = fmt.Sprintf("one of %d servers on the repository: min(3, full/N)", sib.N)
			if !sib.HasCanonical {
				f.Message += "; no canonical sibling"
			}
		}
	}
	c.Score = round6(f.Points)
	f.Points = c.Score
	c.Findings = []Finding{f}
	return c
}

// security [10].
func security(in Input, authPoints float64) Component {
	c := Component{Name: CompSecurity, Max: 10}
	d := flagsData()
	// transport
	t := Finding{Probe: "security.https"}
	switch {
	case len(in.Remotes) > 0:
		all := true
		for _, r := range in.Remotes {
			if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(r.URL)), "https://") {
				all = false
			}
		}
		if all {
			t.Points, t.Outcome, t.Message = 3, Positive, "all remotes use HTTPS"
		} else {
			t.Outcome, t.Message = Negative, "a remote is not HTTPS"
		}
	case len(in.Packages) > 0:
		t.Points, t.Outcome, t.Message = 1, Neutral, "local-only package"
	default:
		t.Outcome, t.Message = NotApplicable, "no remote and no package"
	}
	// source repository
	s := Finding{Probe: "security.source_repo", Evidence: ev(in.GitHub.Observation)}
	listed := schema.NormalizeRepoURL(in.RepoURL) != ""
	switch {
	case !listed:
		s.Outcome, s.Message = Negative, "no source repository listed"
	case in.GateOpen && in.GitHub.Resolved && !in.GitHub.Private:
		s.Points, s.Outcome, s.Message = 3, Positive, "public source repository listed and resolved"
	case in.GateOpen:
		s.Outcome, s.Message = Negative, "source repository listed but not resolved"
	default:
		s.Points, s.Outcome, s.Message = 3, Positive, "source repository listed (GitHub gate closed: listing counts for everyone)"
	}
	// license
	l := Finding{Probe: "security.osi_license", Evidence: ev(in.GitHub.Observation)}
	switch {
	case !in.GateOpen:
		l.Outcome, l.Message = NotApplicable, "GitHub gate closed"
	case in.GitHub.Resolved && d.osi[strings.ToLower(in.GitHub.LicenseSPDX)]:
		l.Points, l.Outcome, l.Message = 2, Positive, "OSI license "+in.GitHub.LicenseSPDX
	default:
		l.Outcome, l.Message = Negative, "no OSI license detected"
	}
	// auth
	a := Finding{Probe: "security.auth"}
	switch {
	case len(in.Remotes) > 0 && authPoints >= 12:
		a.Points, a.Outcome, a.Message = 2, Positive, "OAuth or no-credential auth"
	case len(in.Remotes) == 0 && len(in.Packages) > 0:
		a.Points, a.Outcome, a.Message = 2, Positive, "local package"
	default:
		a.Outcome, a.Message = Negative, "static credentials or unknown auth"
	}
	c.Findings = []Finding{t, s, l, a}
	for _, f := range c.Findings {
		c.Score += f.Points
	}
	return c
}

// NormalizeDescription lower-cases, folds whitespace and trims.
func NormalizeDescription(s string) string {
	l := strings.ToLower(s)
	if singleSpaced(l) {
		return l // what Join(Fields(l), " ") gives, without splitting
	}
	return strings.Join(strings.Fields(l), " ")
}

// singleSpaced reports whether s has no leading or trailing white space
// and no white space but single ' ' (unicode.IsSpace, as strings.Fields).
func singleSpaced(s string) bool {
	prevSpace := true // at the start, a space would be leading
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
			if space && c != ' ' {
				return false
			}
			i++
		} else {
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				return false
			}
			i += n
		}
		if space && prevSpace {
			return false
		}
		prevSpace = space
	}
	return !prevSpace || len(s) == 0
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// IsPlaceholder reports whether a description is empty or a template.
func IsPlaceholder(desc string) bool {
	d := NormalizeDescription(desc)
	d = strings.TrimRight(d, ".!")
	if d == "" {
		return true
	}
	fd := flagsData()
	if slices.Contains(fd.PlaceholderExact, d) {
		return true
	}
	for _, p := range fd.PlaceholderPrefixes {
		if strings.HasPrefix(d, p) {
			return true
		}
	}
	return false
}

// IsRetired reports whether a description starts with retired, deprecated,
// "moved to", or "use X instead" (case-insensitive). "Use X instead of Y" is
// not retired: it is an ordinary pitch ("use plain English instead of SQL").
func IsRetired(desc string) bool {
	d := NormalizeDescription(desc)
	d = strings.TrimLeft(d, "[(*_ :-")
	fd := flagsData()
	for _, p := range fd.RetiredPrefixes {
		if strings.HasPrefix(d, p) {
			return true
		}
	}
	return fd.useInstead.MatchString(d)
}

// IsTestOrDemo reports whether a segment of the name (split on '/' and '.')
// is one of the test/demo words.
func IsTestOrDemo(name string) bool {
	fd := flagsData()
	for _, seg := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '/' || r == '.' }) {
		if slices.Contains(fd.TestSegments, seg) {
			return true
		}
	}
	return false
}

func penalties(in Input) []Penalty {
	out := []Penalty{}
	if IsPlaceholder(in.Description) {
		out = append(out, Penalty{Flag: FlagPlaceholder, Points: 20, Reason: "empty or template description"})
	}
	if IsRetired(in.Description) {
		out = append(out, Penalty{Flag: FlagRetired, Points: 25, Reason: "description says the server is retired or moved"})
	}
	if IsTestOrDemo(in.Name) {
		out = append(out, Penalty{Flag: FlagTestOrDemo, Points: 15, Reason: "a name segment marks a test or demo"})
	}
	if in.Context.ClonedDescription {
		out = append(out, Penalty{Flag: FlagClonedDescription, Points: 10, Reason: fmt.Sprintf("same description on %d servers of the namespace", in.Context.ClonedCount)})
	}
	if in.Context.SharedEndpoint {
		out = append(out, Penalty{Flag: FlagSharedEndpoint, Points: 10, Reason: fmt.Sprintf("%d registry entries share a remote URL", in.Context.SharedEndpointCount)})
	}
	if in.Context.NamespaceSize > 100 {
		out = append(out, Penalty{Flag: FlagBulkPublisher, Points: 5, Reason: fmt.Sprintf("namespace has %d servers", in.Context.NamespaceSize)})
	}
	return out
}
