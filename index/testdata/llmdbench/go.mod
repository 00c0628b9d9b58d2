// The peer side of the index README's llm-d ratios: llm-d-kv-cache's kvblock
// package doing the work of this repository's index benchmarks. A module of
// its own under testdata, so the router never depends on llm-d. Run with
// `go mod tidy && GOMAXPROCS=1 go test -run '^$' -bench . -benchtime=100x`.
module llmdbench

go 1.25.0

require (
	github.com/llm-d/llm-d-kv-cache v0.0.0-20260612120104-7be76e119ca5
	k8s.io/apimachinery v0.33.11
)
