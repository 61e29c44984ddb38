package probe

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
)

// sseConn speaks the legacy HTTP+SSE transport (MCP 2024-11-05): one GET
// stream carries every server message; the client POSTs to the endpoint the
// stream's first "endpoint" event names.
type sseConn struct {
	r        *run
	endpoint string
	events   chan sseItem
}

type sseItem struct {
	ev  sseEvent
	err error
}

// sseReach is how far a legacy SSE attempt got; the fallbacks between the
// two transports decide on it.
type sseReach int

const (
	sseNoStream   sseReach = iota // the GET answered 404/405: no legacy SSE stream here
	sseRefused                    // the GET failed or answered another non-2xx, or not an event stream
	sseNoEndpoint                 // an event stream, but no endpoint event on it
	sseEndpoint                   // the endpoint event arrived: a legacy SSE server
)

// legacySSE runs the handshake over legacy SSE and says how far it got.
func (r *run) legacySSE(ctx context.Context) (sseReach, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the GET stream and the reader goroutine
	req, err := r.newRequest(sctx, http.MethodGet, r.url.String(), nil)
	if err != nil {
		return sseRefused, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := r.do(req)
	if err != nil {
		return sseRefused, err
	}
	r.c.HTTPStatus = resp.StatusCode
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		drainClose(resp.Body)
		return sseNoStream, nil
	case resp.StatusCode/100 != 2:
		return sseRefused, r.refusal(ctx, resp, "sse_get", r.readRefusal(resp), nil)
	}
	if mt := mediaType(resp.Header); mt != "text/event-stream" {
		drainClose(resp.Body)
		return sseRefused, withClass(ClassContentType, "sse GET: content type %q, want text/event-stream", clip(resp.Header.Get("Content-Type"), 64))
	}

	conn := &sseConn{r: r, events: make(chan sseItem, 8)}
	// The stream may carry an answer per request: bound the whole stream
	// to the body cap times the requests a handshake makes.
	streamCap := r.p.opts.MaxBodyBytes * int64(r.p.opts.MaxToolPages+3)
	go conn.read(sctx, resp.Body, streamCap)

	ev, err := conn.next(sctx, func(ev sseEvent) bool { return ev.Type == "endpoint" })
	if err != nil {
		return sseNoEndpoint, err
	}
	ep, err := r.url.Parse(ev.Data)
	if err != nil {
		return sseEndpoint, withClass(ClassProtocol, "endpoint event: %v", err)
	}
	// The endpoint must stay on the probed origin: a registry entry must not
	// be able to aim the prober's POSTs at some other host.
	if ep.Scheme != r.url.Scheme || ep.Host != r.url.Host {
		return sseEndpoint, withClass(ClassProtocol, "endpoint event points to another origin: %s", clip(ep.String(), 256))
	}
	conn.endpoint = ep.String()
	return sseEndpoint, r.handshake(sctx, conn, nil)
}

func (s *sseConn) read(ctx context.Context, body io.ReadCloser, limit int64) {
	defer body.Close()
	sr := newSSEReader(&cappedReader{r: body, left: limit}, int(s.r.p.opts.MaxBodyBytes))
	for {
		ev, err := sr.Next()
		select {
		case s.events <- sseItem{ev: ev, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// next waits for the first event that match accepts, within the SSE read cap.
func (s *sseConn) next(ctx context.Context, match func(sseEvent) bool) (sseEvent, error) {
	t := time.NewTimer(s.r.p.opts.SSEReadTimeout)
	defer t.Stop()
	for {
		select {
		case it := <-s.events:
			if it.err != nil {
				if errors.Is(it.err, io.EOF) {
					return sseEvent{}, withClass(ClassProtocol, "event stream ended early")
				}
				return sseEvent{}, readErr(it.err)
			}
			if match(it.ev) {
				return it.ev, nil
			}
		case <-t.C:
			return sseEvent{}, errSSETimeout
		case <-ctx.Done():
			return sseEvent{}, ctx.Err()
		}
	}
}

func (s *sseConn) post(ctx context.Context, body []byte, step string) error {
	req, err := s.r.newRequest(ctx, http.MethodPost, s.endpoint, body)
	if err != nil {
		return err
	}
	resp, err := s.r.do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		s.r.c.HTTPStatus = resp.StatusCode
		return s.r.refusal(ctx, resp, step, s.r.readRefusal(resp), nil)
	}
	// The answer travels on the stream; the POST body is not read.
	drainClose(resp.Body)
	return nil
}

func (s *sseConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := s.r.id()
	if err := s.post(ctx, encodeRPC(&id, method, params), method); err != nil {
		return nil, err
	}
	var (
		res json.RawMessage
		rpc error
	)
	_, err := s.next(ctx, func(ev sseEvent) bool {
		if ev.Type != "" && ev.Type != "message" {
			return false
		}
		r, ok, err := parseRPCResponse([]byte(ev.Data), id)
		if err != nil {
			rpc = err
			return true
		}
		res = r
		return ok
	})
	if err != nil {
		return nil, err
	}
	return res, rpc
}

func (s *sseConn) notify(ctx context.Context, method string, params any) error {
	return s.post(ctx, encodeRPC(nil, method, params), method)
}
