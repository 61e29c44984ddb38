package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// fetchPRM fetches and parses an RFC 9728 protected-resource metadata
// document through the same guarded client and body cap as the handshake.
func (r *run) fetchPRM(ctx context.Context, target string) (*ProtectedResourceMetadata, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("resource metadata URL %q: not an absolute http(s) URL", clip(target, 256))
	}
	req, err := r.newRequest(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.do(req)
	if err != nil {
		return nil, fmt.Errorf("resource metadata: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("resource metadata %s: %w", clip(u.String(), 256), &statusError{Status: resp.StatusCode, Step: "resource_metadata"})
	}
	body, err := r.readBody(resp.Body, resp.ContentLength)
	if err != nil {
		return nil, fmt.Errorf("resource metadata: %w", err)
	}
	return parsePRM(body)
}

// parsePRM parses an RFC 9728 §2 document; resource is REQUIRED there.
func parsePRM(body []byte) (*ProtectedResourceMetadata, error) {
	var md ProtectedResourceMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		return nil, fmt.Errorf("resource metadata: %w", jsonErr(body, err))
	}
	if md.Resource == "" {
		return nil, fmt.Errorf("resource metadata without resource")
	}
	md.Resource = clip(md.Resource, 2048)
	md.ResourceName = clip(md.ResourceName, 256)
	md.AuthorizationServers = clipList(md.AuthorizationServers)
	md.ScopesSupported = clipList(md.ScopesSupported)
	md.BearerMethodsSupported = clipList(md.BearerMethodsSupported)
	return &md, nil
}

func clipList(xs []string) []string {
	if len(xs) > 32 {
		xs = xs[:32]
	}
	for i := range xs {
		xs[i] = clip(xs[i], 512)
	}
	return xs
}

// wellKnownPRM lists where RFC 9728 §3.1 puts the metadata of resource u:
// the well-known segment inserted before the path, then the origin root.
func wellKnownPRM(u *url.URL) []string {
	const wk = "/.well-known/oauth-protected-resource"
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{origin + wk}
	}
	return []string{origin + wk + path, origin + wk}
}
