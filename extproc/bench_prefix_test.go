package extproc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/benchcpu"
	"github.com/warmroute/warmroute/scorer"
)

// byteTokens tokenizes a completion's prompt into its bytes, enough for
// prefix decisions with keys, predictions and withdrawals; it appends into
// the scorer's buffer (scorer.TokenAppender), as the real tokenizers do.
type byteTokens struct{}

func (t byteTokens) Tokens(ctx context.Context, req *scorer.Request, eps []string) ([]uint32, error) {
	return t.AppendTokens(ctx, req, eps, nil)
}

func (byteTokens) AppendTokens(_ context.Context, req *scorer.Request, _ []string, dst []uint32) ([]uint32, error) {
	for _, p := range req.Prompts {
		for i := range len(p) {
			dst = append(dst, uint32(p[i]))
		}
	}
	return dst, nil
}

// BenchmarkPrefixExchange is one whole request over ext_proc as Envoy
// streams it (buffered request body, buffered JSON response with usage)
// routed on prefix: parse, tokenize (byteTokens, one id per byte, so the
// tokenizer's own cost is left out), key, look up, score, commit with
// speculative insert, response, usage, release and Done. Each request's
// prompt is new (a 4 KiB prefix shared by 64 prompts, then 4 KiB of its
// own), over 64 endpoints. allocs/op is the whole request path's
// allocations: the gRPC messages the server builds, the parse, and the
// decision's (none in steady state: Done recycles it).
func BenchmarkPrefixExchange(b *testing.B) {
	defer scorer.QuarantineDecisions(scorer.QuarantineDecisions(false))
	eps := make([]string, 64)
	for i := range eps {
		eps[i] = fmt.Sprintf("10.0.1.%d:8000", i+1)
	}
	ix, err := index.New(index.Options{BlockSize: 16})
	if err != nil {
		b.Fatal(err)
	}
	sc := scorer.New(scorer.NewPools([]scorer.PoolConfig{{Name: "m", Endpoints: eps}}, ""), &scorer.Load{},
		scorer.Options{Index: ix, Tokens: map[string]scorer.Tokens{"m": byteTokens{}}, Fallbacks: 2})
	srv, err := extproc.New(sc, extproc.Options{}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	const prompts = 4096
	scripts := make([][]*extprocv3.ProcessingRequest, prompts)
	for i := range scripts {
		prompt := fmt.Sprintf("%04d", i/64) + strings.Repeat("shared ", 585) + fmt.Sprintf("%08d", i) + strings.Repeat("own ", 1022)
		body := completion("m", prompt)
		scripts[i] = []*extprocv3.ProcessingRequest{
			first(reqHeaders("/v1/completions", false, "content-length", itoa(len(body))), buffered, buffered),
			reqBody(body, true),
			respHeadersWith("200", jsonType, false),
			respBody([]byte(jsonUsage), true),
		}
	}
	s := &scriptStream{}
	b.ReportAllocs()
	i := 0
	cpu := benchcpu.Start()
	for b.Loop() {
		*s = scriptStream{reqs: scripts[i%prompts]}
		if err := srv.Process(s); err != nil {
			b.Fatal(err)
		}
		i++
	}
	cpu.Report(b)
}
