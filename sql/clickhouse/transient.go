package clickhouse

import (
	"context"
	"errors"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

// ErrConfig marks an Open failure no retry can fix: the DSN does not
// parse, names another protocol, or an invalid database.
var ErrConfig = errors.New("clickhouse: bad configuration")

// transientCodes are server exceptions that pass: overload, timeouts,
// network trouble between the server and its own disks or replicas.
var transientCodes = map[int32]bool{
	159: true, // TIMEOUT_EXCEEDED
	160: true, // TOO_SLOW
	164: true, // READONLY (a replica that lost its coordinator)
	202: true, // TOO_MANY_SIMULTANEOUS_QUERIES
	203: true, // NO_FREE_CONNECTION
	209: true, // SOCKET_TIMEOUT
	210: true, // NETWORK_ERROR
	236: true, // ABORTED
	241: true, // MEMORY_LIMIT_EXCEEDED
	242: true, // TABLE_IS_READ_ONLY
	252: true, // TOO_MANY_PARTS
	394: true, // QUERY_WAS_CANCELLED
	999: true, // KEEPER_EXCEPTION
}

// Transient reports whether err is the server being unreachable or briefly
// unable (connection refused or reset, a timeout, overload) rather than a
// bad configuration or a statement the server refuses (wrong password, no
// such table, a syntax error): the first is waited out, the second is
// reported. Errors that are neither a server exception nor ErrConfig —
// network errors, a closed connection, io.EOF mid-read — are transient.
func Transient(err error) bool {
	if err == nil || errors.Is(err, ErrConfig) || errors.Is(err, context.Canceled) {
		return false
	}
	var ex *ch.Exception
	if errors.As(err, &ex) {
		return transientCodes[ex.Code]
	}
	return true
}
