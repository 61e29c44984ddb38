// Package docs serves the API's documentation page (/docs) from a viewer
// embedded in the binary, so it works without internet access: Huma's own
// docs page loads its viewer from a CDN and is a blank page offline.
//
// In: the OpenAPI document's URL (served by the API itself). Out: GET /docs
// (an HTML page) and GET /docs/assets/{file} (the viewer: Swagger UI
// 5.35.0, the standalone bundle of the npm package swagger-ui-dist,
// vendored under swagger-ui/ with its licence; swagger-ui/README.md says
// how it was fetched and how to update it).
//
// The page makes no request beyond loopback: the viewer is configured with
// no validator badge (its default calls validator.swagger.io) and reads the
// document from the same origin. The Content-Security-Policy says so too
// ('self' only), so a future viewer option that reaches out is blocked
// rather than silently leaking the reader's visit.
package docs

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed swagger-ui/swagger-ui-bundle.js swagger-ui/swagger-ui.css swagger-ui/favicon-32x32.png swagger-ui/LICENSE swagger-ui/NOTICE
var assets embed.FS

// Version is the vendored viewer's version.
const Version = "swagger-ui-dist 5.35.0"

// csp allows the page's own scripts and styles only. Swagger UI renders
// with inline styles (its syntax highlighter) and needs 'unsafe-inline'
// for style-src; scripts stay 'self'.
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

var page = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — API documentation</title>
<link rel="icon" type="image/png" href="{{.Base}}/assets/favicon-32x32.png">
<link rel="stylesheet" href="{{.Base}}/assets/swagger-ui.css">
</head>
<body>
<noscript><p>This page renders the OpenAPI document with JavaScript. The document itself is at <a href="{{.Spec}}">{{.Spec}}</a>; the server pages (<a href="/">/</a>) need no JavaScript.</p></noscript>
<div id="swagger-ui" data-spec="{{.Spec}}"></div>
<script src="{{.Base}}/assets/swagger-ui-bundle.js"></script>
<script src="{{.Base}}/assets/init.js"></script>
</body>
</html>
`))

// initJS starts the viewer on the document named by the page (kept out of
// the page so script-src can stay 'self').
const initJS = `window.addEventListener("load", function () {
  var el = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: el.getAttribute("data-spec"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
`

// Options configure the docs handler.
type Options struct {
	Path  string // the page's path; default "/docs"
	Spec  string // the OpenAPI document's URL; default "/openapi.json"
	Title string // default "forum"
}

// Register mounts the page and its assets on mux.
func Register(mux *http.ServeMux, o Options) {
	if o.Path == "" {
		o.Path = "/docs"
	}
	if o.Spec == "" {
		o.Spec = "/openapi.json"
	}
	if o.Title == "" {
		o.Title = "forum"
	}
	base := strings.TrimSuffix(o.Path, "/")
	sub, err := fs.Sub(assets, "swagger-ui")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix(base+"/assets/", http.FileServerFS(sub))
	mux.HandleFunc("GET "+base, func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", csp)
		_ = page.Execute(w, struct{ Title, Base, Spec string }{o.Title, base, o.Spec})
	})
	mux.HandleFunc("GET "+base+"/assets/init.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write([]byte(initJS))
	})
	mux.Handle("GET "+base+"/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The assets change only with the binary.
		w.Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	}))
}
