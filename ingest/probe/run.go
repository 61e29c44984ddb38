package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// run is the state of one probe.
type run struct {
	p      *Prober
	c      *Check
	url    *url.URL
	nextID int64
	// initialized is set once initialize got a valid MCP answer: the
	// transport in use speaks MCP.
	initialized bool
}

// rpcConn is one MCP transport as the handshake sees it.
type rpcConn interface {
	// call sends a request and returns its result (or *RPCError).
	call(ctx context.Context, method string, params any) (json.RawMessage, error)
	notify(ctx context.Context, method string, params any) error
}

func (r *run) id() int64 { r.nextID++; return r.nextID }

func (r *run) initializeParams() map[string]any {
	return map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "forum-prober", "version": "0.1"},
	}
}

// handshake runs initialize → notifications/initialized → tools/list over
// conn. A tools/list failure other than an auth refusal or a refusal for
// load leaves the outcome ok: the handshake itself succeeded (Tool quality
// then scores 0).
func (r *run) handshake(ctx context.Context, conn rpcConn, onInit func()) error {
	t0 := time.Now()
	raw, err := conn.call(ctx, "initialize", r.initializeParams())
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	r.c.InitializeLatencyMS = ms(time.Since(t0))
	init, err := parseInitializeResult(raw)
	if err != nil {
		return err
	}
	r.c.ProtocolVersion = clip(init.ProtocolVersion, 64)
	if init.ServerInfo != nil {
		si := *init.ServerInfo
		si.Name, si.Title, si.Version = clip(si.Name, 256), clip(si.Title, 256), clip(si.Version, 128)
		r.c.ServerInfo = &si
	}
	r.c.Instructions = clip(init.Instructions, MaxTextBytes)
	r.initialized = true
	if onInit != nil {
		onInit()
	}
	if err := conn.notify(ctx, "notifications/initialized", nil); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	if err := r.listTools(ctx, conn); err != nil {
		// Refusals keep their outcome: an auth wall is auth_required, and a
		// refusal for load says nothing about the tools (recording ok with no
		// tools would score the server's tools 0 for our load).
		switch classify(ctx, err) {
		case ClassAuth, ClassJSONRPCAuth, ClassAuthMessage, ClassRateLimited, ClassCanceled:
			return err
		}
		r.c.ToolsListed = false
		r.c.Tools = []Tool{}
		r.c.ErrorClass = ClassToolsList
		r.c.ErrorMessage = clip("tools/list: "+err.Error(), MaxErrorMessage)
		r.c.Outcome = OutcomeOK
	}
	return nil
}

func (r *run) listTools(ctx context.Context, conn rpcConn) error {
	var cursor *string
	seen := map[string]bool{}
	for page := 0; page < r.p.opts.MaxToolPages; page++ {
		var params any
		if cursor != nil {
			params = map[string]any{"cursor": *cursor}
		}
		raw, err := conn.call(ctx, "tools/list", params)
		if err != nil {
			return fmt.Errorf("tools/list page %d: %w", page+1, err)
		}
		tp, err := parseToolsPage(raw)
		if err != nil {
			return err
		}
		r.c.ToolsPages++
		for _, t := range tp.Tools {
			tool, err := toolFromJSON(t)
			if err != nil {
				return err
			}
			r.c.Tools = append(r.c.Tools, tool)
		}
		if tp.NextCursor == nil || *tp.NextCursor == "" {
			r.c.ToolsListed = true
			return nil
		}
		if seen[*tp.NextCursor] { // a cursor loop would only repeat pages
			r.c.ToolsListed, r.c.ToolsTruncated = true, true
			return nil
		}
		seen[*tp.NextCursor] = true
		cursor = tp.NextCursor
	}
	r.c.ToolsListed, r.c.ToolsTruncated = true, true
	return nil
}

// newRequest builds a request with the prober's fixed headers.
func (r *run) newRequest(ctx context.Context, method, target string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, withClass(ClassInvalidURL, "%v", err)
	}
	req.Header.Set("User-Agent", r.p.opts.UserAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (r *run) do(req *http.Request) (*http.Response, error) {
	resp, err := r.p.client.Do(req)
	if err != nil {
		return nil, &doError{err}
	}
	return resp, nil
}

func encodeRPC(id *int64, method string, params any) []byte {
	b, _ := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	return b
}

// authEvidence records the WWW-Authenticate challenges of a refusal and
// fetches protected-resource metadata when pointed at, or, for a 401
// without any challenge, from the well-known location.
func (r *run) authEvidence(ctx context.Context, resp *http.Response) {
	challenges := parseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	authEvidenceFrom(&r.c.Auth, challenges)
	ev := &r.c.Auth
	switch {
	case ev.ResourceMetadataURL != "":
		md, err := r.fetchPRM(ctx, ev.ResourceMetadataURL)
		if err != nil {
			ev.ResourceMetadataError = clip(err.Error(), MaxErrorMessage)
			return
		}
		ev.ResourceMetadata = md
	case len(challenges) == 0 && resp.StatusCode == http.StatusUnauthorized:
		var errs []error
		for _, u := range wellKnownPRM(r.url) {
			md, err := r.fetchPRM(ctx, u)
			if err == nil {
				ev.ResourceMetadata, ev.ResourceMetadataURL, ev.ResourceMetadataSource = md, u, "well_known"
				return
			}
			errs = append(errs, err)
		}
		ev.ResourceMetadataError = clip(errors.Join(errs...).Error(), MaxErrorMessage)
	}
}

// readRefusal reads what a non-2xx answer says, up to the body cap, and
// closes it. What arrived before a cap, a timeout or a broken connection is
// kept: the status decides when the body cannot.
func (r *run) readRefusal(resp *http.Response) []byte {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, r.p.opts.MaxBodyBytes))
	return b
}

// refusal judges a non-2xx answer that carried no valid JSON-RPC answer;
// body is what it said (nil when unread) and answerErr why it was no answer.
// In order: refused for load (429, or 503 with Retry-After) → rate_limited;
// 401/403 → auth_required; another 4xx whose JSON-RPC error or text says a
// credential is missing or invalid → auth_required; else the status stands.
func (r *run) refusal(ctx context.Context, resp *http.Response, step string, body []byte, answerErr error) error {
	if rl := rateLimited(resp, step, r.p.opts.Now()); rl != nil {
		return rl
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		r.authEvidence(ctx, resp)
		return &statusError{Status: resp.StatusCode, Step: step, Detail: bodyDetail(body, resp.Header)}
	}
	var re *RPCError
	isRPC := errors.As(answerErr, &re)
	if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusTooManyRequests {
		if isRPC && (re.isAuth() || authMessage([]byte(re.Message), "")) {
			r.authEvidence(ctx, resp)
			return &classError{Class: ClassJSONRPCAuth, Err: fmt.Errorf("%s: HTTP %d: %w", step, resp.StatusCode, re)}
		}
		if authMessage(body, resp.Header.Get("Content-Type")) {
			r.authEvidence(ctx, resp)
			return &classError{Class: ClassAuthMessage, Err: &statusError{Status: resp.StatusCode, Step: step, Detail: bodyDetail(body, resp.Header)}}
		}
	}
	detail := bodyDetail(body, resp.Header)
	if isRPC {
		detail = re.Error()
	}
	return &statusError{Status: resp.StatusCode, Step: step, Detail: detail}
}

// bodyDetail is the start of a refusal's text for the error message; HTML
// and binary say nothing useful there.
func bodyDetail(body []byte, h http.Header) string {
	if len(body) == 0 || looksLikeHTML(h.Get("Content-Type"), body) {
		return ""
	}
	s := strings.ToValidUTF8(string(body[:min(len(body), 512)]), "")
	return clip(strings.Join(strings.Fields(s), " "), 200)
}

// note adds a note to the check once.
func (r *run) note(n string) {
	if !slices.Contains(r.c.Notes, n) {
		r.c.Notes = append(r.c.Notes, n)
	}
}

// readJSONBody reads a capped body; the read error is classed read_error
// unless it is a cap, a timeout or a cancellation.
func (r *run) readBody(body io.Reader, declared int64) ([]byte, error) {
	max := r.p.opts.MaxBodyBytes
	if declared > max {
		return nil, fmt.Errorf("content-length %d over %d: %w", declared, max, ErrBodyTooLarge)
	}
	b, err := io.ReadAll(&cappedReader{r: body, left: max})
	if err != nil {
		return nil, readErr(err)
	}
	return b, nil
}

func readErr(err error) error {
	if errors.Is(err, ErrBodyTooLarge) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) || isTimeout(err) {
		return err
	}
	return &classError{Class: ClassRead, Err: fmt.Errorf("read body: %w", err)}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// cappedReader returns ErrBodyTooLarge once more than left bytes arrive.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("body over the cap: %w", ErrBodyTooLarge)
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// drainClose reads a little of what is left so the connection can be
// reused, then closes.
func drainClose(b io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, b, 4<<10)
	_ = b.Close()
}

func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

func isJSONType(mt string) bool {
	return mt == "application/json" || (len(mt) > 5 && mt[len(mt)-5:] == "+json")
}
