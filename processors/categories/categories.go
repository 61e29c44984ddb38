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
package categories

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
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
	phrases  [][]string
}

var data = sync.OnceValue(func() []category {
	var f struct {
		Categories []category `json:"categories"`
	}
	if err := json.Unmarshal(dataJSON, &f); err != nil {
		panic(fmt.Sprintf("categories: categories.json: %v", err))
	}
	for i := range f.Categories {
		for _, k := range f.Categories[i].Keywords {
			f.Categories[i].phrases = append(f.Categories[i].phrases, words(k))
		}
	}
	return f.Categories
})

// IDs returns the category ids in data-file order, then "other".
func IDs() []string {
	var out []string
	for _, c := range data() {
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

// Result is the classification of one server.
type Result struct {
	Primary    string         `json:"primary"`
	Categories []string       `json:"categories"` // primary first, at most 3
	Weights    map[string]int `json:"weights"`
}

// Classify assigns categories.
func Classify(in Input) Result {
	cats := data()
	w := make([]int, len(cats))
	score := func(text string, weight int) {
		ws := words(text)
		if len(ws) == 0 {
			return
		}
		for i, c := range cats {
			for _, p := range c.phrases {
				if matches(ws, p) {
					w[i] += weight
				}
			}
		}
	}
	// The namespace names the publisher, not the topic ("io.github.x" would
	// otherwise put every GitHub-namespaced server in version-control).
	name := in.Name
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	score(name, ServerTextWeight)
	score(in.Title, ServerTextWeight)
	score(in.Description, ServerTextWeight)
	for _, t := range in.Tools {
		score(t.Name, ToolTextWeight)
		score(t.Description, ToolTextWeight)
	}
	r := Result{Weights: map[string]int{}}
	idx := make([]int, 0, len(cats))
	for i := range cats {
		if w[i] > 0 {
			idx = append(idx, i)
			r.Weights[cats[i].ID] = w[i]
		}
	}
	if len(idx) == 0 {
		return Result{Primary: Other, Categories: []string{Other}, Weights: map[string]int{}}
	}
	sort.SliceStable(idx, func(a, b int) bool { return w[idx[a]] > w[idx[b]] })
	top := w[idx[0]]
	r.Primary = cats[idx[0]].ID
	for _, i := range idx {
		if len(r.Categories) == MaxStored {
			break
		}
		if 3*w[i] >= top { // >= 1/3 of the top weight, in integers
			r.Categories = append(r.Categories, cats[i].ID)
		}
	}
	return r
}

// words lower-cases and splits on anything not a letter or digit.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func wordMatch(w, k string) bool {
	return w == k || w == k+"s" || w == k+"es"
}

// matches reports whether phrase occurs in ws (once is enough).
func matches(ws, phrase []string) bool {
	if len(phrase) == 0 {
		return false
	}
	for i := 0; i+len(phrase) <= len(ws); i++ {
		ok := true
		for j, p := range phrase {
			if !wordMatch(ws[i+j], p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
