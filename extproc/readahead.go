package extproc

import (
	"fmt"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// A stream's receive goroutine reads the next message while the stream
// handles the current one, and gRPC reads bytes off the connection before
// either asks for them. Both are request memory the stream's own buffer does
// not hold, so both are bounded here:
//
//   - the one message the receive goroutine has read ahead (its hand-off
//     channel is unbuffered, so there is never more than one) has its body
//     bytes reserved from the budget from the moment Recv returns it until
//     the stream takes it over (the stream then reserves what it keeps, as
//     for any body). A read-ahead message may overdraw the budget by one
//     maximum gRPC message in total (MaxGRPCMessageBytes): a stream holding
//     the first part of its body while the rest is read ahead briefly holds
//     both, and a body of maxBodyBytes must still fit a budget of
//     maxBodyBytes. Beyond that the stream answers 503, as for any body
//     over the budget, and the message is dropped. While a stream's next
//     message is read ahead, the stream's own buffer growth may overdraw
//     the budget by those bytes (stream.readAhead): they are its own body,
//     reserved early, and counting them twice refused lone bodies
//     depending on goroutine timing;
//   - the bytes gRPC reads ahead of Recv are bounded by HTTP/2 flow control:
//     GRPCWindows sets fixed windows (which also turns off gRPC's
//     bandwidth-delay probing, whose windows grow to 16 MiB per stream and
//     per connection), so a connection holds at most its window of unread
//     bytes, whatever its streams announce.
//
// Flow control is what bounds bytes that have not been decoded yet: they
// cannot be reserved message by message, because their size is unknown
// until the message is complete.

// Flow-control windows. A stream window of 256 KiB keeps a large body moving
// with a window update every 64 KiB; the connection window is 1/64 of the
// body budget, between 1 MiB and 16 MiB (4 MiB by default), so the few
// connections Envoy opens (about one per worker) hold a small fraction of
// the budget in unread bytes.
const (
	streamWindow  = 256 << 10
	minConnWindow = 1 << 20
	maxConnWindow = 16 << 20
)

// GRPCWindows returns the HTTP/2 flow-control windows a gRPC server with c
// needs (grpc.InitialWindowSize and grpc.InitialConnWindowSize).
func (c Config) GRPCWindows() (stream, conn int32) {
	budget := c.WithDefaults().MaxBufferedBytes
	return streamWindow, int32(min(max(budget/64, minConnWindow), maxConnWindow))
}

// readAheadBytes is what a read-ahead message holds that can be large: its
// body.
func readAheadBytes(req *extprocv3.ProcessingRequest) int64 {
	switch v := req.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestBody:
		return int64(len(v.RequestBody.GetBody()))
	case *extprocv3.ProcessingRequest_ResponseBody:
		return int64(len(v.ResponseBody.GetBody()))
	}
	return 0
}

// reserveReadAhead reserves m's body bytes from the budget, or marks m
// refused when the budget cannot take them.
func (s *Server) reserveReadAhead(m *received) {
	if m.req == nil {
		return
	}
	n := readAheadBytes(m.req)
	if n == 0 {
		return
	}
	if !s.budget.acquireOver(n, int64(s.opts.MaxGRPCMessageBytes())) {
		m.refused = fmt.Errorf("%w: a %d-byte message read ahead would exceed the router's budget of %d",
			ErrOverloaded, n, s.opts.MaxBufferedBytes)
		m.req = nil // the bytes become garbage now, not when the stream ends
		return
	}
	m.held = n
}

// refuse answers a message the budget could not take with the same 503 as
// a body over the budget, and ends the stream.
func (st *stream) refuse(srv extprocv3.ExternalProcessor_ProcessServer, err error) error {
	for _, m := range st.fail(err).msgs {
		if err := srv.Send(m); err != nil {
			return fmt.Errorf("sending ext_proc response: %w", err)
		}
	}
	return nil
}
