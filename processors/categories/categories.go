// Package categories assigns Toolfinder categories (SPEC §6): 19 categories
// plus "other", from a weighted keyword classifier whose keywords live in the
// embedded categories.json.
//
// In: a server's name, title, description and its tools' names and
// descriptions. Out: a Result with the primary category, up to 3 stored
// categories (each >= 1/3 of the top weight, primary first) and the weight of
// every category that scored.
//
// Only the part of the name after "/" is read: the namespace names the
// publisher, not the topic.
//
// Matching: text is lower-cased and split into words on anything that is not
// a letter or digit (so "postgres-mcp" and "io.github.x/postgres" both yield
// "postgres"); a keyword matches a word exactly or with a trailing "s"/"es";
// a multi-word keyword matches consecutive words. Each keyword counts at most
// once per text unit (the name, the title, the description, each tool name,
// each tool description), so repeating a word does not buy weight. Name,
// title and description hits weigh 3; tool hits weigh 1. Ties go to the
// category listed first in the data file.
//
// Implementation (why it is hand-written rather than a regexp or a general
// Aho–Corasick library): the scorer classifies every server of a 50k
// publication, and the first version (a nested loop over every keyword of
// every category, concatenating k+"s" per comparison) was most of the
// publication's CPU. The matcher here is compiled once from the data file:
// every distinct keyword word gets an id in a map, so a text word costs at
// most three map lookups (the word, the word minus "s", minus "es" — exactly
// the plural rule above) with no allocation (the lookups index the map with
// a reused lower-case buffer); a keyword of one word is then a hit by its id,
// and the few multi-word keywords are checked at the positions where their
// first word occurs (a token n-gram check). A keyword hit adds its weight to
// every category that lists it, once per listing, as the nested loop did.
// The old classifier is kept in reference_test.go and a fuzz test and the
// real corpus prove both give the same Result.
package categories

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/forum-mcp/forum/schema"
)

//go:embed categories.json
var dataJSON []byte

// Other is the category of a server with no keyword hit.
const Other = "other"

// Weights of hits (SPEC §6).
const (
	ServerTextWeight = 3
	ToolTextWeight   = 1
	MaxStored        = 3
)

type category struct {
	ID       string   `json:"id"`
	Keywords []string `json:"keywords"`
}

// matcher is the compiled keyword data.
type matcher struct {
	cats []category
	// word is every distinct word of every keyword → its id.
	word map[string]int32
	// phrases are the distinct keywords, as word ids; cats lists, for each
	// phrase, the category index of every listing (a keyword listed twice,
	// or by two categories, counts for each listing).
	phrases [][]int32
	cats1   [][]int
	// single[w] is the phrase made of word w alone (-1: none); multi[w] are
	// the multi-word phrases whose first word is w.
	single []int32
	multi  [][]int32
}

var compiled = sync.OnceValue(func() *matcher {
	var f struct {
		Categories []category `json:"categories"`
	}
	if err := json.Unmarshal(dataJSON, &f); err != nil {
		panic(fmt.Sprintf("categories: categories.json: %v", err))
	}
	m := &matcher{cats: f.Categories, word: map[string]int32{}}
	phraseID := map[string]int32{}
	for ci, c := range f.Categories {
		for _, k := range c.Keywords {
			ws := words(k)
			if len(ws) == 0 {
				continue // matches nothing (as before)
			}
			key := strings.Join(ws, " ")
			pid, ok := phraseID[key]
			if !ok {
				pid = int32(len(m.phrases))
				phraseID[key] = pid
				ids := make([]int32, len(ws))
				for i, w := range ws {
					id, ok := m.word[w]
					if !ok {
						id = int32(len(m.word))
						m.word[w] = id
					}
					ids[i] = id
				}
				m.phrases = append(m.phrases, ids)
				m.cats1 = append(m.cats1, nil)
			}
			m.cats1[pid] = append(m.cats1[pid], ci)
		}
	}
	m.single = make([]int32, len(m.word))
	m.multi = make([][]int32, len(m.word))
	for i := range m.single {
		m.single[i] = -1
	}
	for pid, ids := range m.phrases {
		if len(ids) == 1 {
			m.single[ids[0]] = int32(pid)
		} else {
			m.multi[ids[0]] = append(m.multi[ids[0]], int32(pid))
		}
	}
	return m
})

// IDs returns the category ids in data-file order, then "other".
func IDs() []string {
	var out []string
	for _, c := range compiled().cats {
		out = append(out, c.ID)
	}
	return append(out, Other)
}

// Tool is a tool's name and description.
type Tool struct {
	Name        string
	Description string
}

// Input is what the classifier reads.
type Input struct {
	Name        string
	Title       string
	Description string
	Tools       []Tool
}

// Result is the classification of one server (schema.Categories: it is
// sealed in the published record).
type Result = schema.Categories

// maxIDs is how many keyword words one text word can match: itself, minus
// "s", minus "es".
const maxIDs = 3

// scratch is the per-call working memory (pooled: Classify runs on every
// server of a publication, from several goroutines).
type scratch struct {
	w    []int
	low  []byte
	ids  [][maxIDs]int32 // keyword-word ids of each text word (-1 = none)
	seen []uint32        // phrase → generation of the last text unit that hit it
	gen  uint32
}

var pool = sync.Pool{New: func() any {
	m := compiled()
	return &scratch{w: make([]int, len(m.cats)), seen: make([]uint32, len(m.phrases))}
}}

// Classify assigns categories.
func Classify(in Input) Result {
	m := compiled()
	s := pool.Get().(*scratch)
	defer pool.Put(s)
	clear(s.w)
	// The namespace names the publisher, not the topic ("io.github.x" would
	// otherwise put every GitHub-namespaced server in version-control).
	name := in.Name
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	m.score(s, name, ServerTextWeight)
	m.score(s, in.Title, ServerTextWeight)
	m.score(s, in.Description, ServerTextWeight)
	for _, t := range in.Tools {
		m.score(s, t.Name, ToolTextWeight)
		m.score(s, t.Description, ToolTextWeight)
	}
	w := s.w
	var idxBuf [32]int
	idx := idxBuf[:0]
	for i := range m.cats {
		if w[i] > 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return Result{Primary: Other, Categories: []string{Other}, Weights: map[string]int{}}
	}
	r := Result{Weights: make(map[string]int, len(idx))}
	for _, i := range idx {
		r.Weights[m.cats[i].ID] = w[i]
	}
	// Stable by weight descending: ties keep data-file order.
	sort.SliceStable(idx, func(a, b int) bool { return w[idx[a]] > w[idx[b]] })
	top := w[idx[0]]
	r.Primary = m.cats[idx[0]].ID
	n := 0
	for _, i := range idx {
		if n == MaxStored {
			break
		}
		if 3*w[i] >= top { // >= 1/3 of the top weight, in integers
			n++
		}
	}
	r.Categories = make([]string, 0, n)
	for _, i := range idx {
		if len(r.Categories) == n {
			break
		}
		if 3*w[i] >= top {
			r.Categories = append(r.Categories, m.cats[i].ID)
		}
	}
	return r
}

// score adds weight to every category with a keyword in text (each keyword
// once per text).
func (m *matcher) score(s *scratch, text string, weight int) {
	s.ids = s.ids[:0]
	m.tokenize(s, text)
	if len(s.ids) == 0 {
		return
	}
	s.gen++
	if s.gen == 0 { // wrapped: forget every stamp
		clear(s.seen)
		s.gen = 1
	}
	hit := func(pid int32) {
		if s.seen[pid] == s.gen {
			return
		}
		s.seen[pid] = s.gen
		for _, ci := range m.cats1[pid] {
			s.w[ci] += weight
		}
	}
	for i, ids := range s.ids {
		for _, id := range ids {
			if id < 0 {
				continue
			}
			if p := m.single[id]; p >= 0 {
				hit(p)
			}
			for _, p := range m.multi[id] {
				if s.seen[p] != s.gen && m.phraseAt(s.ids, i, m.phrases[p]) {
					hit(p)
				}
			}
		}
	}
}

// phraseAt reports whether phrase's words match the text words from i on.
func (m *matcher) phraseAt(ids [][maxIDs]int32, i int, phrase []int32) bool {
	if i+len(phrase) > len(ids) {
		return false
	}
	for j, p := range phrase {
		w := ids[i+j]
		if w[0] != p && w[1] != p && w[2] != p {
			return false
		}
	}
	return true
}

// tokenize appends the keyword-word ids of every word of text to s.ids. A
// word is a maximal run of runes that are letters or digits after
// unicode.ToLower, which is what strings.FieldsFunc over strings.ToLower
// gives (an invalid byte decodes to U+FFFD, a separator either way).
func (m *matcher) tokenize(s *scratch, text string) {
	low := s.low[:0]
	flush := func() {
		if len(low) == 0 {
			return
		}
		e := [maxIDs]int32{-1, -1, -1}
		if id, ok := m.word[string(low)]; ok {
			e[0] = id
		}
		if n := len(low); n > 1 && low[n-1] == 's' {
			if id, ok := m.word[string(low[:n-1])]; ok {
				e[1] = id
			}
			if n > 2 && low[n-2] == 'e' {
				if id, ok := m.word[string(low[:n-2])]; ok {
					e[2] = id
				}
			}
		}
		s.ids = append(s.ids, e)
		low = low[:0]
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				low = append(low, c)
			case 'A' <= c && c <= 'Z':
				low = append(low, c+('a'-'A'))
			default:
				flush()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			flush()
			continue
		}
		l := unicode.ToLower(r)
		if unicode.IsLetter(l) || unicode.IsDigit(l) {
			low = utf8.AppendRune(low, l)
		} else {
			flush()
		}
	}
	flush()
	s.low = low
}

// words lower-cases and splits on anything not a letter or digit.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
