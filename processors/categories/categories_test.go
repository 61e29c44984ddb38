package categories

import (
	"reflect"
	"testing"
)

func TestTaxonomy(t *testing.T) {
	ids := IDs()
	if len(ids) != 20 || ids[len(ids)-1] != Other {
		t.Fatalf("want 19 categories + other, got %d: %v", len(ids), ids)
	}
	want := []string{"developer-tools", "version-control", "databases", "data-analytics", "search-web", "browser-automation",
		"cloud-infrastructure", "devops-monitoring", "security", "communication", "productivity", "knowledge-memory",
		"file-systems", "finance-payments", "commerce-marketing", "media-design", "ai-ml", "location-travel", "science-health"}
	if !reflect.DeepEqual(ids[:19], want) {
		t.Fatalf("ids %v", ids)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name    string
		in      Input
		primary string
		cats    []string
		weights map[string]int
	}{
		{"no hits → other", Input{Name: "com.acme/zzz", Description: "Does things"}, Other, []string{Other}, map[string]int{}},
		// postgres (name) 3 + postgres (desc) 3 + database (desc) 3 = 9 databases; tools: "query" 1 each name/desc
		{"server text weighs 3", Input{Name: "io.github.x/postgres-mcp", Description: "Postgres database access",
			Tools: []Tool{{Name: "run_query", Description: "Run a read-only query"}}},
			"databases", []string{"databases"}, map[string]int{"databases": 11}},
		// weather + forecast (desc) 6 → location-travel; tools: "email" in name 1 + desc 1 → communication 2 (3·2 ≥ 6);
		// "report" 1 → data-analytics (3·1 < 6: not stored)
		{"secondary at >= 1/3 of top", Input{Name: "com.acme/wx", Description: "Weather forecasts",
			Tools: []Tool{{Name: "send_email", Description: "Email a report"}}},
			"location-travel", []string{"location-travel", "communication"}, map[string]int{"location-travel": 6, "communication": 2, "data-analytics": 1}},
		{"repeating a word does not buy weight", Input{Description: "slack slack slack slack"}, "communication", []string{"communication"}, map[string]int{"communication": 3}},
		{"plural matches", Input{Description: "Manage databases and emails"}, "databases", []string{"databases", "communication"}, nil},
		// "knowledge" and "knowledge graph" are two keywords: 3 + 3
		{"phrase", Input{Description: "A knowledge graph"}, "knowledge-memory", []string{"knowledge-memory"}, map[string]int{"knowledge-memory": 6}},
		{"namespace is not topic", Input{Name: "io.github.someone/zzz"}, Other, []string{Other}, map[string]int{}},
		{"tie goes to data-file order", Input{Description: "git postgres"}, "version-control", []string{"version-control", "databases"}, nil},
	}
	for _, c := range cases {
		r := Classify(c.in)
		if r.Primary != c.primary || !reflect.DeepEqual(r.Categories, c.cats) {
			t.Errorf("%s: %s %v (weights %v), want %s %v", c.name, r.Primary, r.Categories, r.Weights, c.primary, c.cats)
		}
		if c.weights != nil && !reflect.DeepEqual(r.Weights, c.weights) {
			t.Errorf("%s: weights %v, want %v", c.name, r.Weights, c.weights)
		}
	}
}

func TestAtMostThreeAndThreshold(t *testing.T) {
	// databases 3+3 (sql, postgres), four singles at 3 → top 6, singles 3 ≥ 2: only 3 stored
	r := Classify(Input{Description: "sql postgres slack stripe figma weather"})
	if r.Primary != "databases" || len(r.Categories) != 3 {
		t.Fatalf("%+v", r)
	}
	// top 9, a tool-only hit of 1 (< 3) is not stored
	r = Classify(Input{Name: "redis", Title: "Redis", Description: "Redis cache", Tools: []Tool{{Name: "notify"}}})
	if !reflect.DeepEqual(r.Categories, []string{"databases"}) {
		t.Fatalf("%+v", r)
	}
}
