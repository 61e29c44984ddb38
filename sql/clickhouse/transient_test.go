package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{io.EOF, true},
		{fmt.Errorf("ping: %w", &ch.Exception{Code: 210, Message: "network error"}), true},
		{&ch.Exception{Code: 241, Message: "memory limit"}, true},
		{&ch.Exception{Code: 516, Message: "authentication failed"}, false},
		{&ch.Exception{Code: 62, Message: "syntax error"}, false},
		{&ch.Exception{Code: 60, Message: "no such table"}, false},
		{fmt.Errorf("%w: parse dsn", ErrConfig), false},
		{context.Canceled, false},
	} {
		if got := Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	// A bad DSN is configuration: Open says so without dialing.
	if _, err := Open(context.Background(), "http://127.0.0.1:1/forum", nil); !errors.Is(err, ErrConfig) {
		t.Errorf("Open with an HTTP DSN: %v, want ErrConfig", err)
	}
	if _, err := Open(context.Background(), "clickhouse://127.0.0.1:1/bad-name", nil); !errors.Is(err, ErrConfig) {
		t.Errorf("Open with an invalid database: %v, want ErrConfig", err)
	}
}
