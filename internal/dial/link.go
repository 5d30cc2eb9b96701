package dial

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// Link watches a client's connections to Temporal: Up says whether one is open now. A finished
// attempt asks it before it reports, instead of asking the server (a health check: a round trip
// on the way to every answer). A server that was killed or restarted closes its connections, and
// the attempt then waits for it as before; a host cut off without a word keeps its connection
// until gRPC's keepalive gives up, and its report is retried by the SDK, then, if it is lost, the
// attempt run again returns its kept outcome.
type Link struct{ open atomic.Int64 }

// DialOption makes a client's connections known to l.
func (l *Link) DialOption() grpc.DialOption { return grpc.WithStatsHandler(l) }

// Up reports whether a connection to the server is open (false for a nil Link).
func (l *Link) Up() bool { return l != nil && l.open.Load() > 0 }

// TagRPC is part of stats.Handler.
func (l *Link) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

// HandleRPC is part of stats.Handler.
func (l *Link) HandleRPC(context.Context, stats.RPCStats) {}

// TagConn is part of stats.Handler.
func (l *Link) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

// HandleConn counts the open connections.
func (l *Link) HandleConn(_ context.Context, s stats.ConnStats) {
	switch s.(type) {
	case *stats.ConnBegin:
		l.open.Add(1)
	case *stats.ConnEnd:
		l.open.Add(-1)
	}
}
