// Package flightsql serves the store read-only over Arrow Flight SQL, beside
// the HTTP API, so analysts reach a running system: in embedded mode the
// forum process owns the DuckDB file and no other process can open it
// (ARCHITECTURE, "Analysts on a live system").
//
// In: SQL statements from Flight SQL clients (ADBC's adbc-driver-flightsql,
// `forum sql --server`, any Flight SQL JDBC/ODBC driver), each with an
// "authorization: Bearer <token>" header. Out: Arrow record batches of the
// rows, from store.Querier — the same engine path as `forum sql`: a READ
// ONLY transaction on DuckDB, readonly=1 on ClickHouse.
//
// Every statement passes CheckSQL first (store.CheckReadOnlySQL's single
// read statement, plus no file/URL/remote table function, no write or
// session keyword, no FROM 'file'). Statements and prepared statements
// carry the checked SQL text as their handle, so the server holds no state
// between calls (any replica answers any ticket; nothing to expire);
// parameters are not supported (the analysts' files use named placeholders
// that `forum sql -f` substitutes). Results are capped at MaxRows rows.
//
// Types: the Querier returns the driver's Go values, so the Arrow schema is
// read off them (the first non-NULL value of each column): integers keep
// their width and sign, floats float32/64, strings utf8, []byte binary,
// time.Time timestamp[us, UTC] (a DATE column too: the driver returns
// time.Time for both), *big.Int (DuckDB HUGEINT, e.g. sum of integers)
// decimal128(38, 0), a column with no non-NULL value the null type, and
// anything else (decimals, lists, maps, UUIDs) its JSON text as utf8.
// Decode turns the batches back into the same Go values for `forum sql`.
package flightsql

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/forum-mcp/forum/sql/store"
)

// Defaults.
const (
	DefaultMaxRows = 1_000_000
	DefaultTimeout = 5 * time.Minute
	// BatchRows is the rows per record batch sent.
	BatchRows = 65_536
)

// Options configure the server.
type Options struct {
	Querier store.Querier
	// Token is the bearer token every call must carry; required.
	Token   string
	MaxRows int           // default DefaultMaxRows
	Timeout time.Duration // per statement; default DefaultTimeout
	Log     *zap.Logger
}

// Server is the Flight SQL service over a store.
type Server struct {
	flightsql.BaseServer
	o   Options
	log *zap.Logger
}

// ErrNoToken is returned by New without a token.
var ErrNoToken = errors.New("flight sql: a bearer token is required (--flight-token or FORUM_FLIGHT_TOKEN)")

// New returns the service.
func New(o Options) (*Server, error) {
	if o.Token == "" {
		return nil, ErrNoToken
	}
	if o.Querier == nil {
		return nil, errors.New("flight sql: the store does not answer ad-hoc SQL")
	}
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	s := &Server{o: o, log: o.Log}
	s.Alloc = memory.DefaultAllocator
	for id, v := range map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:         "forum",
		flightsql.SqlInfoFlightSqlServerVersion:      "0.1.0",
		flightsql.SqlInfoFlightSqlServerArrowVersion: "18",
		flightsql.SqlInfoFlightSqlServerReadOnly:     true,
		flightsql.SqlInfoFlightSqlServerSql:          true,
		flightsql.SqlInfoFlightSqlServerSubstrait:    false,
		flightsql.SqlInfoFlightSqlServerTransaction:  int32(0), // SqlSupportedTransaction_NONE
		flightsql.SqlInfoTransactionsSupported:       false,
	} {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return nil, fmt.Errorf("flight sql: sql info %v: %w", id, err)
		}
	}
	return s, nil
}

// Serve answers on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	auth := flight.ServerMiddleware{
		Unary: func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := s.authorize(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := s.authorize(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		},
	}
	fs := flight.NewServerWithMiddleware([]flight.ServerMiddleware{auth}, grpc.MaxRecvMsgSize(1<<20))
	fs.RegisterFlightService(flightsql.NewFlightServer(s))
	fs.InitListener(ln)
	errc := make(chan error, 1)
	go func() { errc <- fs.Serve() }()
	select {
	case <-ctx.Done():
		fs.Shutdown()
		<-errc
		return nil
	case err := <-errc:
		if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return fmt.Errorf("flight sql: %w", err)
		}
		return nil
	}
}

// authorize checks the bearer token in constant time.
func (s *Server) authorize(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		tok, ok := strings.CutPrefix(v, "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(tok), []byte(s.o.Token)) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "flight sql: missing or wrong bearer token (header authorization: Bearer <token>)")
}

// check runs CheckSQL and maps its refusal to InvalidArgument.
func (s *Server) check(query string) (string, error) {
	q, err := CheckSQL(query)
	if err != nil {
		return "", status.Error(codes.InvalidArgument, err.Error())
	}
	return q, nil
}

func ticketInfo(desc *flight.FlightDescriptor, query string) (*flight.FlightInfo, error) {
	tkt, err := flightsql.CreateStatementQueryTicket([]byte(query))
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{Endpoint: []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: tkt}}}, FlightDescriptor: desc,
		TotalRecords: -1, TotalBytes: -1}, nil
}

// GetFlightInfoStatement checks the statement and returns a ticket that
// holds it.
func (s *Server) GetFlightInfoStatement(_ context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, status.Error(codes.InvalidArgument, "flight sql: transactions are not supported (every statement is read-only)")
	}
	q, err := s.check(cmd.GetQuery())
	if err != nil {
		return nil, err
	}
	return ticketInfo(desc, q)
}

// DoGetStatement runs the ticket's statement (checked again: a ticket is
// client input).
func (s *Server) DoGetStatement(ctx context.Context, cmd flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.run(ctx, string(cmd.GetStatementHandle()))
}

// CreatePreparedStatement checks the statement; the handle is its text.
func (s *Server) CreatePreparedStatement(_ context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var res flightsql.ActionCreatePreparedStatementResult
	if len(req.GetTransactionId()) > 0 {
		return res, status.Error(codes.InvalidArgument, "flight sql: transactions are not supported (every statement is read-only)")
	}
	q, err := s.check(req.GetQuery())
	if err != nil {
		return res, err
	}
	res.Handle = []byte(q)
	return res, nil
}

// ClosePreparedStatement has nothing to release (the handle is the text).
func (s *Server) ClosePreparedStatement(context.Context, flightsql.ActionClosePreparedStatementRequest) error {
	return nil
}

// GetFlightInfoPreparedStatement returns a ticket holding the statement.
func (s *Server) GetFlightInfoPreparedStatement(_ context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	q, err := s.check(string(cmd.GetPreparedStatementHandle()))
	if err != nil {
		return nil, err
	}
	return ticketInfo(desc, q)
}

// DoGetPreparedStatement runs a prepared statement.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.run(ctx, string(cmd.GetPreparedStatementHandle()))
}

// run executes a statement and streams its rows as record batches.
func (s *Server) run(ctx context.Context, query string) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q, err := s.check(query)
	if err != nil {
		return nil, nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	start := time.Now()
	cols, rows, err := s.o.Querier.Query(qctx, q)
	if err != nil {
		if errors.Is(err, store.ErrNotReadOnly) {
			return nil, nil, status.Error(codes.InvalidArgument, err.Error())
		}
		// The engine's message (a syntax error, an unknown column) is what
		// the analyst needs; it carries no secret of the process.
		return nil, nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if len(rows) > s.o.MaxRows {
		return nil, nil, status.Errorf(codes.ResourceExhausted, "flight sql: %d rows, over the limit of %d: add a LIMIT or aggregate", len(rows), s.o.MaxRows)
	}
	schema, batches, err := Encode(s.Alloc, cols, rows, BatchRows)
	if err != nil {
		return nil, nil, status.Error(codes.Internal, err.Error())
	}
	s.log.Debug("flight sql statement", zap.Int("rows", len(rows)), zap.Duration("took", time.Since(start)))
	ch := make(chan flight.StreamChunk, len(batches))
	for _, b := range batches {
		ch <- flight.StreamChunk{Data: b}
	}
	close(ch)
	return schema, ch, nil
}
