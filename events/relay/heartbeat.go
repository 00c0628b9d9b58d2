package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/warmroute/warmroute/api"
)

// heartbeatLoop publishes a heartbeat every interval, scraping the engine's
// gauges first when MetricsURL is set. Heartbeats are not buffered: a missed
// one is simply superseded by the next.
func (r *Relay) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.HeartbeatInterval)
	defer t.Stop()
	scraper := newScraper(r.cfg.MetricsURL, r.cfg.HeartbeatInterval)
	health := &http.Client{}
	for {
		if r.cfg.HealthURL != "" {
			r.checkHealth(ctx, health)
		}
		r.recheckLost()
		if scraper != nil {
			r.scrape(ctx, scraper)
		}
		select {
		case <-r.beatNow: // this heartbeat carries the change
		default:
		}
		r.sendHeartbeat(false)
		if !r.waitBeat(ctx, t.C) {
			return
		}
	}
}

// waitBeat waits for the next tick, sending a heartbeat at once whenever the
// engine's state changes meanwhile; false when ctx ends.
func (r *Relay) waitBeat(ctx context.Context, tick <-chan time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-r.beatNow:
			r.sendHeartbeat(false)
		}
	}
}

func (r *Relay) scrape(ctx context.Context, s *scraper) {
	load, err := s.scrape(ctx)
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if err != nil {
		r.metrics.scrapeErrors.Inc()
		r.log.Debug("scraping engine metrics", "err", err)
		r.load = nil // stale gauges are worse than none
		return
	}
	r.load = &load
}

// heartbeat describes the relay's current state.
func (r *Relay) heartbeat(leaving bool) api.Heartbeat {
	connected, unknown := r.engineReport()
	h := api.Heartbeat{Endpoint: r.cfg.Endpoint, Model: r.cfg.Model, DPRank: int(r.rank.Load()),
		BlockSize: r.cfg.BlockSize, Relay: r.cfg.RelayID, EngineConnected: connected, EngineUnknown: unknown,
		Interval: api.Duration(r.cfg.HeartbeatInterval), SentAt: time.Now(), Leaving: leaving}
	if r.mirror != nil {
		h.Epoch = r.mirror.Epoch()
	}
	if r.haveSeq.Load() {
		seq := r.lastSeq.Load()
		h.Seq = &seq
	}
	r.loadMu.Lock()
	h.Load = r.load
	r.loadMu.Unlock()
	return h
}

func (r *Relay) sendHeartbeat(leaving bool) {
	body, err := json.Marshal(r.heartbeat(leaving))
	if err == nil {
		err = r.nc.Publish(r.hbSubj, body)
	}
	if err != nil {
		r.metrics.heartbeats.WithLabelValues("failed").Inc()
		return
	}
	r.metrics.heartbeats.WithLabelValues("sent").Inc()
}
