package extproc_test

import (
	"context"
	"fmt"
	"log"
	"net"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

func ExampleParseRequest() {
	req, err := extproc.ParseRequest("/v1/chat/completions?trace=1", []byte(`{
		"model": "llama",
		"messages": [
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "there"}]}
		],
		"cache_salt": "tenant-7"
	}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(req.Kind, req.Path, req.Model, req.CacheSalt)
	for _, m := range req.Messages {
		fmt.Printf("%s: %q\n", m.Role, m.Content)
	}

	_, err = extproc.ParseRequest("/v1/completions", []byte(`{"model": "llama", "prompt": []}`))
	fmt.Println(err)
	// Output:
	// chat /v1/chat/completions llama tenant-7
	// system: "Be brief."
	// user: "Hi\nthere"
	// prompt must not be empty
}

// ExampleServer serves the ext_proc service over gRPC and plays Envoy sending
// a buffered completion request.
func ExampleServer() {
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: "llama", Endpoints: []string{"10.0.0.7:8000"}}}, "")
	srv, err := extproc.New(scorer.New(pools, &scorer.Load{}, scorer.Options{}),
		extproc.Options{Config: extproc.Config{DecisionHeader: extproc.DecisionHeaderOff}}, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	extprocv3.RegisterExternalProcessorServer(gs, srv)
	go gs.Serve(lis)
	defer gs.Stop()

	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	stream, err := extprocv3.NewExternalProcessorClient(conn).Process(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	stream.Send(&extprocv3.ProcessingRequest{
		ProtocolConfig: &extprocv3.ProtocolConfiguration{RequestBodyMode: filterv3.ProcessingMode_BUFFERED},
		Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: &extprocv3.HttpHeaders{
			Headers: &corev3.HeaderMap{Headers: []*corev3.HeaderValue{{Key: ":path", RawValue: []byte("/v1/completions")}}}}},
	})
	stream.Recv() // CONTINUE: the destination comes with the body
	stream.Send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{RequestBody: &extprocv3.HttpBody{
		Body: []byte(`{"model":"llama","prompt":"Once upon a time"}`), EndOfStream: true}}})
	r, err := stream.Recv()
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range r.GetRequestBody().GetResponse().GetHeaderMutation().GetSetHeaders() {
		fmt.Printf("%s: %s\n", h.GetHeader().GetKey(), h.GetHeader().GetRawValue())
	}
	fmt.Println(r.GetDynamicMetadata().GetFields()["envoy.lb"].GetStructValue().GetFields()["x-gateway-destination-endpoint"].GetStringValue())
	// Output:
	// x-gateway-destination-endpoint: 10.0.0.7:8000
	// 10.0.0.7:8000
}

// A chat request that continues the assistant's last message turns the
// generation prompt off, which changes the tokens the engine will see.
func ExampleParseRequest_generationPrompt() {
	req, err := extproc.ParseRequest("/v1/chat/completions", []byte(`{
		"model": "llama",
		"messages": [{"role": "user", "content": "Count"}, {"role": "assistant", "content": "1, 2,"}],
		"add_generation_prompt": false,
		"stream": true,
		"stream_options": {"include_usage": true}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(req.NoGenerationPrompt, req.Stream)
	// Output: true true
}
