package subscriber

import (
	"io"
	"log/slog"

	"github.com/warmroute/warmroute/api"
)

// EndpointSet is the router's routable endpoints per model, which discovery
// keeps up to date; scorer.Pools implements it. Both methods report whether
// they changed anything and must return quickly.
type EndpointSet interface {
	AddEndpoint(model, endpoint string) bool
	RemoveEndpoint(model, endpoint string) bool
}

// Discovery is the Membership that turns event streams into routable
// endpoints: an endpoint joins its model's pool when the first of its
// streams (data-parallel ranks) comes up and leaves when the last goes down,
// and an endpoint with no stream left under any model is cleared from the
// index, predictions included, since nothing will confirm them.
//
// It is called only by the Subscriber's apply goroutine and is not safe for
// concurrent use. Build it with NewDiscovery; the zero value is not usable.
type Discovery struct {
	set       EndpointSet
	sink      *IndexSink
	log       *slog.Logger
	models    map[modelEndpoint]int // streams up per (model, endpoint)
	endpoints map[string]int        // streams up per endpoint
}

type modelEndpoint struct{ model, endpoint string }

// NewDiscovery returns a Discovery updating set and clearing departed
// endpoints from sink. sink may be nil; log may be nil.
func NewDiscovery(set EndpointSet, sink *IndexSink, log *slog.Logger) *Discovery {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Discovery{set: set, sink: sink, log: log, models: map[modelEndpoint]int{}, endpoints: map[string]int{}}
}

// SourceUp counts src and adds its endpoint on the first stream.
func (d *Discovery) SourceUp(src Source, _ api.Heartbeat) {
	k := modelEndpoint{src.Model, src.Endpoint}
	d.models[k]++
	d.endpoints[src.Endpoint]++
	if d.models[k] == 1 && d.set.AddEndpoint(src.Model, src.Endpoint) {
		d.log.Info("discovered endpoint", "model", src.Model, "endpoint", src.Endpoint)
	}
}

// SourceDown uncounts src and removes its endpoint after the last stream.
func (d *Discovery) SourceDown(src Source, reason string) {
	k := modelEndpoint{src.Model, src.Endpoint}
	if d.models[k] == 0 {
		return // never counted up: nothing to undo
	}
	if d.models[k]--; d.models[k] == 0 {
		delete(d.models, k)
		if d.set.RemoveEndpoint(src.Model, src.Endpoint) {
			d.log.Info("endpoint left", "model", src.Model, "endpoint", src.Endpoint, "reason", reason)
		}
	}
	if d.endpoints[src.Endpoint]--; d.endpoints[src.Endpoint] == 0 {
		delete(d.endpoints, src.Endpoint)
		if d.sink != nil {
			d.sink.ClearEndpoint(src.Endpoint)
		}
	}
}
