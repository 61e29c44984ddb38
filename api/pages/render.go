package pages

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/forum-mcp/forum/schema"
)

//go:embed templates/*.html
var templateFS embed.FS

// funcs are the templates' helpers. None returns template.HTML: whatever
// they format is escaped by the template like any other string.
var funcs = template.FuncMap{
	"num": num,
	"opt": func(f *float64) string {
		if f == nil {
			return ""
		}
		return num(*f)
	},
	"pct": func(f *float64) string {
		if f == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f %%", 100**f)
	},
	"pp": func(f *float64) string {
		if f == nil {
			return "—"
		}
		return fmt.Sprintf("%+.2f", *f)
	},
	"f1":   func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"date": func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"whenp": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"band": func(b string) string { // a CSS class; bands are A–F, anything else is "none"
		if len(b) == 1 && b[0] >= 'A' && b[0] <= 'F' {
			return "band-" + strings.ToLower(b)
		}
		return "band-none"
	},
	"evidence": func(e schema.Evidence) string {
		if e.URI != "" {
			return e.URI
		}
		return schema.EvidenceURI(e.ID)
	},
	"join":   strings.Join,
	"server": ServerPath,
	"sub":    func(a, b float64) float64 { return a - b },
	"add":    func(a, b int) int { return a + b },
}

var (
	templatesOnce sync.Once
	pageTemplates map[string]*template.Template
)

// templates parses each page with the layout (once; the set is fixed at
// build time, so a parse error is a bug and panics).
func templates() map[string]*template.Template {
	templatesOnce.Do(func() {
		pageTemplates = map[string]*template.Template{}
		for _, name := range []string{"home", "search", "server", "method", "error"} {
			t := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+name+".html"))
			pageTemplates[name] = t
		}
	})
	return pageTemplates
}

// csp: no script at all, styles inline (one <style> block), images and
// forms to this origin only.
const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// render executes the page into a buffer first, so a template error is a
// clean 500 rather than half a page.
func (p *Pages) render(w http.ResponseWriter, status int, name string, v any) {
	var buf bytes.Buffer
	if err := templates()[name].Execute(&buf, v); err != nil {
		p.o.Log.Error("pages: render failed", zap.String("page", name), zap.Error(err))
		http.Error(w, "rendering the page failed; see the server log", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
