package api

// IndexInfoPath is the router admin path that serves IndexInfo as JSON.
const IndexInfoPath = "/debug/index"

// IndexInfo is the router's prefix-index identity as configured, so a tool
// measuring prefix reuse (warmroute ttl validate) can check that the block
// size it assumes is the router's and that it did not change mid-experiment.
type IndexInfo struct {
	// BlockSize is the KV block size in tokens the router keys prompts by.
	BlockSize int `json:"blockSize"`
	// Grace is how long an expired prediction waits for a late confirmation.
	Grace Duration `json:"grace"`
}
