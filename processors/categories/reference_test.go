package categories

// The classifier as it was before the compiled matcher (issue 8), kept
// verbatim (identifiers renamed) as the reference for equivalence tests.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
)

type refCategory struct {
	ID       string   `json:"id"`
	Keywords []string `json:"keywords"`
	phrases  [][]string
}

var refData = sync.OnceValue(func() []refCategory {
	var f struct {
		Categories []refCategory `json:"categories"`
	}
	if err := json.Unmarshal(dataJSON, &f); err != nil {
		panic(fmt.Sprintf("categories: reference: categories.json: %v", err))
	}
	for i := range f.Categories {
		for _, k := range f.Categories[i].Keywords {
			f.Categories[i].phrases = append(f.Categories[i].phrases, refWords(k))
		}
	}
	return f.Categories
})

// refClassify is the classifier as first written (nested loops over every
// keyword): the reference the compiled matcher must equal.
func refClassify(in Input) Result {
	cats := refData()
	w := make([]int, len(cats))
	score := func(text string, weight int) {
		ws := refWords(text)
		if len(ws) == 0 {
			return
		}
		for i, c := range cats {
			for _, p := range c.phrases {
				if refMatches(ws, p) {
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
func refWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func refWordMatch(w, k string) bool {
	return w == k || w == k+"s" || w == k+"es"
}

// matches reports whether phrase occurs in ws (once is enough).
func refMatches(ws, phrase []string) bool {
	if len(phrase) == 0 {
		return false
	}
	for i := 0; i+len(phrase) <= len(ws); i++ {
		ok := true
		for j, p := range phrase {
			if !refWordMatch(ws[i+j], p) {
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
