package probe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Type string // "" means "message"
	Data string
	ID   string
}

// sseReader parses a text/event-stream (WHATWG HTML §9.2.6) from outside
// input: lines end in CRLF, LF or CR; "data" lines join with LF; a line
// starting with ':' is a comment; one leading space after the colon is
// dropped; an event is dispatched on a blank line, and one with no data is
// ignored. maxEvent bounds the bytes buffered for one event (line included),
// so a stream without newlines cannot grow memory without bound.
type sseReader struct {
	r        *bufio.Reader
	maxEvent int
	first    bool
	line     []byte
	typ      []byte
	data     []byte
	hasData  bool
	lastID   string
	afterCR  bool
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 4096), maxEvent: maxEvent, first: true}
}

// Next returns the next event, io.EOF at a clean end of stream (an event not
// terminated by a blank line is discarded, as the standard says), or an error
// wrapping ErrBodyTooLarge when one event is over the cap.
func (s *sseReader) Next() (sseEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if !s.hasData {
				s.typ = s.typ[:0]
				continue
			}
			ev := sseEvent{Type: string(s.typ), Data: string(s.data), ID: s.lastID}
			s.typ, s.data, s.hasData = s.typ[:0], s.data[:0], false
			return ev, nil
		}
		s.field(line)
		if len(s.data)+len(s.typ) > s.maxEvent {
			return sseEvent{}, fmt.Errorf("sse event over %d bytes: %w", s.maxEvent, ErrBodyTooLarge)
		}
	}
}

func (s *sseReader) field(line []byte) {
	if line[0] == ':' {
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		s.typ = append(s.typ[:0], value...)
	case "data":
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.lastID = string(value)
		}
	}
	// "retry" and unknown fields are ignored: the prober never reconnects.
}

// readLine returns the next line without its terminator. A line longer than
// maxEvent is an error; EOF in the middle of a line ends the stream.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		if s.first {
			s.first = false
			if b == 0xEF { // a UTF-8 BOM may open the stream
				if p, _ := s.r.Peek(2); len(p) == 2 && p[0] == 0xBB && p[1] == 0xBF {
					s.r.Discard(2)
					continue
				}
			}
		}
		if s.afterCR {
			s.afterCR = false
			if b == '\n' { // second half of a CRLF already returned
				continue
			}
		}
		switch b {
		case '\n':
			return s.line, nil
		case '\r':
			// Do not peek for the LF: that would block on a live stream
			// whose last line ends in a bare CR.
			s.afterCR = true
			return s.line, nil
		}
		s.line = append(s.line, b)
		if len(s.line) > s.maxEvent {
			return nil, fmt.Errorf("sse line over %d bytes: %w", s.maxEvent, ErrBodyTooLarge)
		}
	}
}
