package extproc_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/warmroute/warmroute/internal/testwait"
)

// serveBufconn serves srv over an in-memory listener and returns a client.
func serveBufconn(t testing.TB, srv extprocv3.ExternalProcessorServer) extprocv3.ExternalProcessorClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(16 << 20))
	extprocv3.RegisterExternalProcessorServer(gs, srv)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gs.Serve(lis)
	}()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		gs.Stop()
		<-served
	})
	return extprocv3.NewExternalProcessorClient(conn)
}

// TestGRPCRoundTrip plays Envoy over a real gRPC connection: a duplex body
// is routed and re-emitted, the response ends and the count returns to zero.
func TestGRPCRoundTrip(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	client := serveBufconn(t, h.srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := client.Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body := duplexBody(300_000)
	sendAll(t, stream, first(reqHeaders("/v1/completions", false), duplex, duplex),
		reqBody(body[:150_000], false), reqBody(body[150_000:], true))
	hr := recvOne(t, stream)
	dest := routing(t, hr, hr.GetRequestHeaders().GetResponse())
	var got []byte
	for {
		sr := recvOne(t, stream).GetRequestBody().GetResponse().GetBodyMutation().GetStreamedResponse()
		got = append(got, sr.GetBody()...)
		if sr.GetEndOfStream() {
			break
		}
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("re-emitted %d bytes, want %d identical bytes", len(got), len(body))
	}
	if n := h.load.InFlight(dest); n != 1 {
		t.Errorf("in flight = %d, want 1", n)
	}
	sendAll(t, stream, respHeaders(true))
	recvOne(t, stream)
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Fatalf("Recv after close = %v, want io.EOF", err)
	}
	if n := h.inflight(); n != 0 {
		t.Errorf("in flight = %d after the response, want 0", n)
	}
}

// TestGRPCClientCancel checks that a routed request stops counting when its
// gRPC client goes away.
func TestGRPCClientCancel(t *testing.T) {
	h := newHarness(t, harnessConfig{defaultPool: "m"})
	client := serveBufconn(t, h.srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := client.Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sendAll(t, stream, first(reqHeaders("/v1/completions", true), buffered, none))
	r := recvOne(t, stream)
	routing(t, r, r.GetRequestHeaders().GetResponse())
	if n := h.inflight(); n != 1 {
		t.Fatalf("in flight = %d after routing, want 1", n)
	}
	cancel()
	// The server learns about the cancellation asynchronously.
	testwait.Until(t, 5*time.Second, func() string {
		if n := h.inflight(); n != 0 {
			return fmt.Sprintf("in flight = %d after the client cancelled", n)
		}
		return ""
	})
}

func sendAll(t *testing.T, stream extprocv3.ExternalProcessor_ProcessClient, reqs ...*extprocv3.ProcessingRequest) {
	t.Helper()
	for _, r := range reqs {
		if err := stream.Send(r); err != nil {
			t.Fatal(err)
		}
	}
}

func recvOne(t *testing.T, stream extprocv3.ExternalProcessor_ProcessClient) *extprocv3.ProcessingResponse {
	t.Helper()
	r, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
