package router

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/scorer"
)

// maxLookupBytes bounds a debug lookup body: 4 MiB is about 400k token ids,
// far past any context window, so a real prompt always fits.
const maxLookupBytes = 4 << 20

// debugMux serves the debug address: the TTL report, the index endpoints and,
// with DebugPprof, net/http/pprof. None of it is on the admin address, which
// Kubernetes probes and Prometheus scrape and which is therefore reachable
// from the cluster: the index lookup tells whoever asks whether a prompt is
// cached, and profiles show the heap.
func (r *Router) debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /debug/ttl", r.ttl.Handler())
	r.mountDebug(mux)
	if r.cfg.DebugPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// listenDebug opens the debug address, warning when it is not loopback
// only: an operator may choose that, behind a network policy.
func (r *Router) listenDebug() (net.Listener, error) {
	ln, err := net.Listen("tcp", r.cfg.DebugAddr)
	if err != nil {
		return nil, fmt.Errorf("listening for debug: %w", err)
	}
	if !isLoopback(ln.Addr()) {
		r.log.Warn("debug endpoints reachable beyond loopback: /debug/index/lookup tells any caller whether a prompt is cached",
			"debug", ln.Addr().String())
	}
	return ln, nil
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// indexDebug serves the prefix index's debug endpoints, which report
// counts only. They expose no prompt text, token ids or block hashes (a lookup
// takes token ids in but answers with block counts), and they log nothing
// above debug, so that keys never reach logs. Safe for concurrent use: the
// index and pools are.
type indexDebug struct {
	index *index.Index
	pools *scorer.Pools
	info  api.IndexInfo
}

// mountDebug adds the index debug endpoints to mux.
func (r *Router) mountDebug(mux *http.ServeMux) {
	d := indexDebug{index: r.pipe.index, pools: r.pipe.pools,
		info: api.IndexInfo{BlockSize: r.cfg.Index.BlockSize, Grace: r.cfg.Index.Grace}}
	mux.HandleFunc("GET "+api.IndexInfoPath, d.infoHandler)
	mux.HandleFunc("GET "+api.IndexEntriesPath, d.entries)
	mux.HandleFunc("POST "+api.IndexLookupPath, d.lookup)
}

// infoHandler reports the index's block size and grace, which clients such as
// `warmroute ttl validate` must keep fixed during a sweep.
func (d indexDebug) infoHandler(w http.ResponseWriter, _ *http.Request) { writeDebugJSON(w, d.info) }

// entries answers GET ?endpoint=IP:PORT with that endpoint's entry counts.
func (d indexDebug) entries(w http.ResponseWriter, req *http.Request) {
	ep := req.URL.Query().Get("endpoint")
	if ep == "" {
		http.Error(w, "missing ?endpoint=IP:PORT", http.StatusBadRequest)
		return
	}
	n := d.index.EndpointEntries(ep)
	writeDebugJSON(w, api.EndpointIndexEntries{Endpoint: ep, Confirmed: n.Confirmed, Speculative: n.Speculative})
}

// lookup keys the posted tokens as the scorer keys a request and reports,
// per endpoint of the pool, its leading confirmed and speculative blocks.
func (d indexDebug) lookup(w http.ResponseWriter, req *http.Request) {
	var in api.IndexLookupRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxLookupBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		http.Error(w, fmt.Sprintf("decoding index lookup: %v", err), http.StatusBadRequest)
		return
	}
	out, err := d.match(in)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, scorer.ErrUnknownModel) {
			status = http.StatusNotFound
		}
		http.Error(w, err.Error(), status)
		return
	}
	writeDebugJSON(w, out)
}

func (d indexDebug) match(in api.IndexLookupRequest) (api.IndexLookupResponse, error) {
	pool, endpoints, err := d.pools.Lookup(in.Model)
	if err != nil {
		return api.IndexLookupResponse{}, fmt.Errorf("looking up pool: %w", err)
	}
	id := index.Identity{Model: pool, LoRA: in.LoRA, CacheSalt: in.CacheSalt}
	keys, err := index.AppendKeys(nil, id, d.index.BlockSize(), in.Tokens)
	if err != nil {
		return api.IndexLookupResponse{}, fmt.Errorf("keying tokens: %w", err)
	}
	matches := d.index.Lookup(keys, endpoints, nil)
	out := api.IndexLookupResponse{Pool: pool, Blocks: len(keys), BlockSize: d.index.BlockSize(),
		Endpoints: make([]api.EndpointIndexLookup, len(endpoints))}
	for i, ep := range endpoints {
		out.Endpoints[i] = api.EndpointIndexLookup{Endpoint: ep, Confirmed: matches[i].Confirmed,
			Speculative: matches[i].Speculative, Weighted: matches[i].Weighted}
	}
	return out, nil
}

func writeDebugJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
