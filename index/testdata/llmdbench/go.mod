// The peer side of the README's llm-d ratios: llm-d-kv-cache's kvblock and
// kvevents packages doing the work of this repository's index and ingestion
// benchmarks. A module of its own under testdata, so the router never
// depends on llm-d. Run with
// `go mod tidy && GOMAXPROCS=1 go test -run '^$' -bench . -benchtime=100x`
// (BenchmarkIngestSteady takes -benchtime=20000x). When the Go module proxy
// refuses llm-d-kv-cache at this commit, point the requirement at a clone:
// `go mod edit -replace github.com/llm-d/llm-d-kv-cache=<clone at 7be76e1>`.
module llmdbench

go 1.25.0

require (
	github.com/llm-d/llm-d-kv-cache v0.0.0-20260612120104-7be76e119ca5
	github.com/vmihailenco/msgpack/v5 v5.4.1
	k8s.io/apimachinery v0.33.11
)
