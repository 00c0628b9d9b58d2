package relay

import (
	"context"
	"time"

	"github.com/warmroute/warmroute/events/bus"
)

// ensureStream creates the relay's stream, retrying with backoff while NATS
// is unreachable. Until it exists messages are still delivered live, just
// not retained.
func (r *Relay) ensureStream(ctx context.Context) {
	bo := newBackoff(r.cfg.BackoffMin, r.cfg.BackoffMax)
	for {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := bus.EnsureStream(tctx, r.nc, r.cfg.Stream)
		cancel()
		if err == nil {
			r.log.Info("event stream ready", "stream", r.cfg.Stream.Name)
			return
		}
		r.log.Warn("ensuring event stream; retrying", "stream", r.cfg.Stream.Name, "err", err)
		if !sleep(ctx, bo.next()) {
			return
		}
	}
}
