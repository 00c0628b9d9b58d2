package extproc

import (
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/scorer"
)

// prefillerMutation names a disaggregated decision's prefiller to the
// decoder's sidecar (x-prefiller-host-port) and otherwise removes the
// header: a client's own copy would make the sidecar send its prompt
// wherever the client liked.
func prefillerMutation(m *extprocv3.HeaderMutation, d *scorer.Decision) *extprocv3.HeaderMutation {
	if d.Prefiller == "" {
		return removeHeader(m, api.PrefillerHeader)
	}
	m.SetHeaders = append(m.SetHeaders, headerOption(api.PrefillerHeader, d.Prefiller))
	return m
}
