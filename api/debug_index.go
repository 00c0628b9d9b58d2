package api

// Router admin debug paths for the prefix index. They answer with counts
// only: no prompt text, token ids or block hashes ever leave the router
// through them, although a lookup's caller sends token ids in.
const (
	// IndexEntriesPath serves EndpointIndexEntries for ?endpoint=IP:PORT.
	IndexEntriesPath = "/debug/index/entries"
	// IndexLookupPath takes an IndexLookupRequest by POST and answers an
	// IndexLookupResponse.
	IndexLookupPath = "/debug/index/lookup"
)

// EndpointIndexEntries is what the router's index holds for one endpoint.
type EndpointIndexEntries struct {
	Endpoint string `json:"endpoint"`
	// Confirmed counts block keys the endpoint holds per its engine's events
	// (data-parallel ranks merged); Speculative counts live predictions.
	Confirmed   int `json:"confirmed"`
	Speculative int `json:"speculative"`
}

// IndexLookupRequest asks how many leading blocks of a token sequence each
// endpoint of a model's pool holds, keyed exactly as a request would be.
type IndexLookupRequest struct {
	// Model selects the pool (empty: the default pool); the pool's name
	// seeds the key chain, as for requests.
	Model string `json:"model"`
	// LoRA, when set, seeds the chain instead of the pool name, as for
	// blocks an engine stored under that adapter.
	LoRA      string   `json:"lora,omitempty"`
	CacheSalt string   `json:"cacheSalt,omitempty"`
	Tokens    []uint32 `json:"tokens"`
}

// IndexLookupResponse is the answer to an IndexLookupRequest.
type IndexLookupResponse struct {
	Pool string `json:"pool"`
	// Blocks is how many full blocks the tokens make.
	Blocks    int                   `json:"blocks"`
	BlockSize int                   `json:"blockSize"`
	Endpoints []EndpointIndexLookup `json:"endpoints"`
}

// EndpointIndexLookup is one endpoint's leading run of a lookup.
type EndpointIndexLookup struct {
	Endpoint    string `json:"endpoint"`
	Confirmed   int    `json:"confirmed"`
	Speculative int    `json:"speculative"`
	// Weighted sums, over the confirmed blocks, the weight of the fastest
	// storage tier holding each (GPU 1, CPU 0.8, storage 0.5 by default):
	// what the scorer values the confirmed run at.
	Weighted float64 `json:"weighted"`
}
