package probe

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// streamableConn speaks Streamable HTTP (MCP 2025-06-18 §transports): every
// message is a POST; an answer comes back as JSON or as an SSE stream.
type streamableConn struct {
	r         *run
	endpoint  string
	sessionID string
	protocol  string // negotiated; sent as MCP-Protocol-Version after initialize
	first     bool
}

func (r *run) streamable(ctx context.Context) error {
	conn := &streamableConn{r: r, endpoint: r.url.String(), first: true}
	defer conn.terminate()
	return r.handshake(ctx, conn, func() { conn.protocol = r.c.ProtocolVersion })
}

func (s *streamableConn) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := s.r.newRequest(ctx, http.MethodPost, s.endpoint, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", s.sessionID)
	}
	if s.protocol != "" {
		req.Header.Set("MCP-Protocol-Version", s.protocol)
	}
	return s.r.do(req)
}

func (s *streamableConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := s.r.id()
	resp, err := s.post(ctx, encodeRPC(&id, method, params))
	if err != nil {
		return nil, err
	}
	if s.first { // the initialize answer is the check's HTTP status
		s.first = false
		s.r.c.HTTPStatus = resp.StatusCode
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			s.sessionID = clip(sid, 1024)
		}
	}
	return s.r.readAnswer(ctx, resp, id, method)
}

func (s *streamableConn) notify(ctx context.Context, method string, params any) error {
	resp, err := s.post(ctx, encodeRPC(nil, method, params))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return s.r.refusal(ctx, resp, method, s.r.readRefusal(resp), nil)
	}
	drainClose(resp.Body)
	return nil
}

// terminate DELETEs the session, as clients should; best effort with its
// own short budget so a slow server cannot stretch the probe.
func (s *streamableConn) terminate() {
	if s.sessionID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, err := s.r.newRequest(ctx, http.MethodDelete, s.endpoint, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", s.sessionID)
	if s.protocol != "" {
		req.Header.Set("MCP-Protocol-Version", s.protocol)
	}
	if resp, err := s.r.do(req); err == nil {
		drainClose(resp.Body)
	}
}

// readAnswer reads the JSON-RPC answer to id from a POST response. The body
// is read before the status is judged (SPEC §1.3, "an honest instrument"):
// a valid answer counts whatever the status (noted off_spec_status), and a
// refusal is judged by what its body says as well as by its status.
func (r *run) readAnswer(ctx context.Context, resp *http.Response, id int64, step string) (json.RawMessage, error) {
	success := resp.StatusCode/100 == 2
	if success && (resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent) {
		drainClose(resp.Body)
		return nil, withClass(ClassProtocol, "%s: HTTP %d without an answer", step, resp.StatusCode)
	}
	res, body, err := r.readRPCBody(resp, id, step)
	if success {
		return res, err
	}
	if err == nil {
		r.note(NoteOffSpecStatus)
		return res, nil
	}
	return nil, r.refusal(ctx, resp, step, body, err)
}

// readRPCBody reads a JSON body or an SSE stream (size- and time-capped)
// and finds the answer to id in it; it closes the body. body is the raw
// bytes when they were read whole (JSON and other non-stream types), for
// the refusal rules to read.
func (r *run) readRPCBody(resp *http.Response, id int64, step string) (res json.RawMessage, body []byte, err error) {
	defer resp.Body.Close()
	mt := mediaType(resp.Header)
	switch {
	case isJSONType(mt):
		body, err := r.readBody(resp.Body, resp.ContentLength)
		if err != nil {
			return nil, nil, err
		}
		res, ok, err := parseRPCResponse(body, id)
		if err != nil {
			return nil, body, err
		}
		if !ok {
			return nil, body, errNoResponse
		}
		return res, body, nil
	case mt == "text/event-stream":
		res, err := r.readSSEAnswer(resp.Body, id)
		return res, nil, err
	default:
		err := withClass(ClassContentType, "%s: content type %q, want JSON or an event stream", step, clip(resp.Header.Get("Content-Type"), 64))
		if resp.StatusCode/100 == 2 {
			return nil, nil, err // not read: nothing in it can change the verdict
		}
		return nil, r.readRefusal(resp), err
	}
}

// errSSETimeout means an SSE stream did not deliver the answer within
// Options.SSEReadTimeout.
var errSSETimeout = withClass(ClassTimeout, "no answer on the event stream within the SSE read cap")

func (r *run) readSSEAnswer(body io.ReadCloser, id int64) (json.RawMessage, error) {
	// Close the body when the SSE read cap passes: that unblocks Next.
	var timedOut atomic.Bool
	t := time.AfterFunc(r.p.opts.SSEReadTimeout, func() { timedOut.Store(true); body.Close() })
	defer t.Stop()
	sr := newSSEReader(&cappedReader{r: body, left: r.p.opts.MaxBodyBytes}, int(r.p.opts.MaxBodyBytes))
	for {
		ev, err := sr.Next()
		if err != nil {
			if timedOut.Load() {
				return nil, errSSETimeout
			}
			if errors.Is(err, io.EOF) {
				return nil, withClass(ClassProtocol, "event stream ended without the answer")
			}
			return nil, readErr(err)
		}
		if ev.Type != "" && ev.Type != "message" {
			continue
		}
		res, ok, err := parseRPCResponse([]byte(ev.Data), id)
		if err != nil {
			return nil, err
		}
		if ok {
			return res, nil
		}
	}
}
