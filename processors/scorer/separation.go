package scorer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// The three-arm separation test of SPEC §7 (seed 002 §7.3): each arm ranks
// the servers labelled for it by that arm's own sub-score against the
// population that has one, so an arm's result speaks only for the scores
// derived from it.
//
//	STATIC      hand-verified true positives must rank in the bottom decile
//	            of the static-scored population;
//	PROVENANCE  each copycat class's median percentile is reported against
//	            the population's (50); a class separates when its median is
//	            in the bottom decile;
//	DRIFT       servers whose endpoint moved to a suspect destination must
//	            rank in the bottom decile by drift.
//
// Percentiles are mid-rank: 100 × (below + equal/2) / N over the servers
// with a known value, so ties neither help nor hurt a labelled server.
// Bottom decile = percentile <= 10. A labelled server whose sub-score is
// unknown is reported as unscored; it does not count for or against the arm.

// Arms.
const (
	ArmStatic     = "static"
	ArmProvenance = "provenance"
	ArmDrift      = "drift"
)

// Arms in report order.
var Arms = []string{ArmStatic, ArmProvenance, ArmDrift}

// BottomDecile is the percentile a labelled server must not exceed.
const BottomDecile = 10.0

// ArmOf maps a label class to its arm: "arm:class" names it explicitly;
// otherwise the scanner classes are STATIC, copycat/late-repo classes are
// PROVENANCE, suspect-endpoint classes are DRIFT; anything else ("benign",
// …) is in no arm.
func ArmOf(class string) string {
	c := strings.ToLower(strings.TrimSpace(class))
	if arm, _, ok := strings.Cut(c, ":"); ok {
		for _, a := range Arms {
			if arm == a {
				return a
			}
		}
		return ""
	}
	switch {
	case c == "static_tp" || c == "tool_poisoning" || c == "shadowing" || c == "hardcoded_secret" || c == "command_injection" || c == "suspicious_description":
		return ArmStatic
	case strings.HasPrefix(c, "copycat") || strings.HasPrefix(c, "class_a") || strings.HasPrefix(c, "class_b") || c == "late_repo":
		return ArmProvenance
	case strings.Contains(c, "endpoint") || strings.Contains(c, "tunnel"):
		return ArmDrift
	}
	return ""
}

// ReadLabels reads a labels file: a JSON object {"server": "class", …}, a
// JSON array or JSON lines of {"server", "class"}, or lines "server<TAB>class"
// (blank lines and # comments skipped).
func ReadLabels(r io.Reader) (map[string]string, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	t := bytes.TrimSpace(b)
	out := map[string]string{}
	type pair struct {
		Server string `json:"server"`
		Class  string `json:"class"`
	}
	switch {
	case len(t) > 0 && t[0] == '{' && json.Valid(t):
		var m map[string]string
		if err := json.Unmarshal(t, &m); err == nil {
			return m, nil
		}
		var p pair
		if err := json.Unmarshal(t, &p); err != nil || p.Server == "" {
			return nil, fmt.Errorf("labels: a JSON object must map server names to classes")
		}
		out[p.Server] = p.Class
		return out, nil
	case len(t) > 0 && t[0] == '[':
		var ps []pair
		if err := json.Unmarshal(t, &ps); err != nil {
			return nil, fmt.Errorf("labels: %w", err)
		}
		for _, p := range ps {
			out[p.Server] = p.Class
		}
		return out, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(t))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if line[0] == '{' {
			var p pair
			if err := json.Unmarshal([]byte(line), &p); err != nil || p.Server == "" {
				return nil, fmt.Errorf("labels: line %d: want {\"server\",\"class\"}", n)
			}
			out[p.Server] = p.Class
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("labels: line %d: want \"server<TAB>class\"", n)
		}
		out[f[0]] = f[1]
	}
	if len(out) == 0 {
		return nil, errors.New("labels: no labels")
	}
	return out, sc.Err()
}

// Scored is the part of a record the separation test ranks.
type Scored struct {
	Server     string   `json:"server"`
	Score      *float64 `json:"score"`
	Provenance *float64 `json:"provenance"`
	Static     *float64 `json:"static"`
	Drift      *float64 `json:"drift"`
}

// ScoredOf extracts the ranked values of a record.
func ScoredOf(r Record) Scored {
	return Scored{Server: r.Server, Score: r.Score, Provenance: r.Provenance.Value, Static: r.Static.Value, Drift: r.Drift.Value}
}

// ScoredFromJSON reads a sealed record line.
func ScoredFromJSON(b []byte) (Scored, error) {
	var r struct {
		Server     string   `json:"server"`
		Score      *float64 `json:"score"`
		Provenance struct {
			Value *float64 `json:"value"`
		} `json:"provenance"`
		Static struct {
			Value *float64 `json:"value"`
		} `json:"static"`
		Drift struct {
			Value *float64 `json:"value"`
		} `json:"drift"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Server == "" {
		return Scored{}, fmt.Errorf("not a trust record: %v", err)
	}
	return Scored{Server: r.Server, Score: r.Score, Provenance: r.Provenance.Value, Static: r.Static.Value, Drift: r.Drift.Value}, nil
}

// ServerRank is one labelled server in an arm.
type ServerRank struct {
	Server       string   `json:"server"`
	Class        string   `json:"class"`
	Value        *float64 `json:"value"`
	Percentile   *float64 `json:"percentile"`
	BottomDecile bool     `json:"bottom_decile"`
}

// ClassReport summarizes one label class within an arm.
type ClassReport struct {
	Class            string  `json:"class"`
	N                int     `json:"n"`
	MedianPercentile float64 `json:"median_percentile"`
	MedianValue      float64 `json:"median_value"`
	Separates        bool    `json:"separates"`
}

// ArmReport is one arm's result.
type ArmReport struct {
	Arm                   string        `json:"arm"`
	SubScore              string        `json:"sub_score"`
	Criterion             string        `json:"criterion"`
	Population            int           `json:"population"` // servers with a known sub-score
	PopulationMedianValue float64       `json:"population_median_value"`
	Labelled              int           `json:"labelled"`
	Scored                int           `json:"scored"`
	Unscored              []string      `json:"unscored"`
	InBottomDecile        int           `json:"in_bottom_decile"`
	Classes               []ClassReport `json:"classes"`
	Servers               []ServerRank  `json:"servers"`
	Passed                bool          `json:"passed"`
}

// SeparationReport is the whole test.
type SeparationReport struct {
	Records  int         `json:"records"`
	Labels   int         `json:"labels"`
	NoArm    []string    `json:"labels_in_no_arm"`  // e.g. benign controls
	Missing  []string    `json:"labels_not_scored"` // labelled servers with no record
	Arms     []ArmReport `json:"arms"`
	AllPass  bool        `json:"all_passed"`
	Failures []string    `json:"failed_arms"`
}

func armValue(arm string, s Scored) *float64 {
	switch arm {
	case ArmStatic:
		return s.Static
	case ArmProvenance:
		return s.Provenance
	default:
		return s.Drift
	}
}

// Separation runs the three arms over the scored population and labels.
func Separation(pop []Scored, labels map[string]string) SeparationReport {
	rep := SeparationReport{Records: len(pop), Labels: len(labels), NoArm: []string{}, Missing: []string{}, Failures: []string{}}
	byName := make(map[string]Scored, len(pop))
	for _, s := range pop {
		byName[s.Server] = s
	}
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if ArmOf(labels[n]) == "" {
			rep.NoArm = append(rep.NoArm, n)
		} else if _, ok := byName[n]; !ok {
			rep.Missing = append(rep.Missing, n)
		}
	}
	rep.AllPass = true
	for _, arm := range Arms {
		var vals []float64
		for _, s := range pop {
			if v := armValue(arm, s); v != nil {
				vals = append(vals, *v)
			}
		}
		sort.Float64s(vals)
		ar := ArmReport{Arm: arm, SubScore: arm, Population: len(vals), PopulationMedianValue: median(vals),
			Unscored: []string{}, Classes: []ClassReport{}, Servers: []ServerRank{}}
		switch arm {
		case ArmProvenance:
			ar.Criterion = "each labelled class's median percentile <= 10 (population median is 50)"
		default:
			ar.Criterion = "every scored labelled server at percentile <= 10"
		}
		classPct := map[string][]float64{}
		classVal := map[string][]float64{}
		for _, n := range names {
			cls := labels[n]
			if ArmOf(cls) != arm {
				continue
			}
			s, ok := byName[n]
			if !ok {
				continue
			}
			ar.Labelled++
			sr := ServerRank{Server: n, Class: cls}
			v := armValue(arm, s)
			if v == nil {
				ar.Unscored = append(ar.Unscored, n)
				ar.Servers = append(ar.Servers, sr)
				continue
			}
			ar.Scored++
			p := percentile(vals, *v)
			sr.Value, sr.Percentile, sr.BottomDecile = v, &p, p <= BottomDecile
			if sr.BottomDecile {
				ar.InBottomDecile++
			}
			classPct[cls] = append(classPct[cls], p)
			classVal[cls] = append(classVal[cls], *v)
			ar.Servers = append(ar.Servers, sr)
		}
		classes := make([]string, 0, len(classPct))
		for c := range classPct {
			classes = append(classes, c)
		}
		sort.Strings(classes)
		allSep := true
		for _, c := range classes {
			ps, vs := append([]float64(nil), classPct[c]...), append([]float64(nil), classVal[c]...)
			sort.Float64s(ps)
			sort.Float64s(vs)
			cr := ClassReport{Class: c, N: len(ps), MedianPercentile: round2(median(ps)), MedianValue: round2(median(vs))}
			cr.Separates = cr.MedianPercentile <= BottomDecile
			allSep = allSep && cr.Separates
			ar.Classes = append(ar.Classes, cr)
		}
		switch arm {
		case ArmProvenance:
			ar.Passed = ar.Scored > 0 && allSep
		default:
			ar.Passed = ar.Scored > 0 && ar.InBottomDecile == ar.Scored
		}
		if !ar.Passed {
			rep.AllPass = false
			rep.Failures = append(rep.Failures, arm)
		}
		rep.Arms = append(rep.Arms, ar)
	}
	return rep
}

// percentile is the mid-rank percentile of v in sorted vals.
func percentile(sorted []float64, v float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	below := sort.SearchFloat64s(sorted, v)
	upto := sort.Search(len(sorted), func(i int) bool { return sorted[i] > v })
	return round2(100 * (float64(below) + float64(upto-below)/2) / float64(len(sorted)))
}

func median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// Summary renders a report for people.
func (r SeparationReport) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "three-arm separation test over %d records, %d labels (%d in no arm, %d without a record)\n",
		r.Records, r.Labels, len(r.NoArm), len(r.Missing))
	for _, a := range r.Arms {
		mark := "PASS"
		if !a.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s %-10s population %d (median %s %.2f): labelled %d, scored %d, unscored %d, in bottom decile %d/%d\n",
			mark, strings.ToUpper(a.Arm), a.Population, a.SubScore, a.PopulationMedianValue, a.Labelled, a.Scored, len(a.Unscored), a.InBottomDecile, a.Scored)
		for _, c := range a.Classes {
			fmt.Fprintf(&b, "     class %-28s n=%d median percentile %.2f (population 50), median value %.2f\n", c.Class, c.N, c.MedianPercentile, c.MedianValue)
		}
		for _, s := range a.Servers {
			if s.Percentile == nil {
				fmt.Fprintf(&b, "     %-50s %-28s unscored\n", s.Server, s.Class)
				continue
			}
			fmt.Fprintf(&b, "     %-50s %-28s %s %.2f at percentile %.2f\n", s.Server, s.Class, a.SubScore, *s.Value, *s.Percentile)
		}
	}
	if r.AllPass {
		b.WriteString("all arms pass\n")
	} else {
		fmt.Fprintf(&b, "failed arms: %s (each blocks only the scores derived from its own sub-score)\n", strings.Join(r.Failures, ", "))
	}
	return b.String()
}
