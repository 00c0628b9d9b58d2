package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/cmd/warmroute/serveconfig"
	"github.com/warmroute/warmroute/events"
	"github.com/warmroute/warmroute/index"
)

// predictionLink is the scorer's PredictionSink, built with the pipeline
// before the events runtime (and so the share) exists. Until linked, and
// when sharing is off, predictions stay local.
type predictionLink struct {
	p atomic.Pointer[events.Predictions]
}

// Predicted implements scorer.PredictionSink.
func (l *predictionLink) Predicted(pr index.Prediction) {
	if p := l.p.Load(); p != nil {
		p.Predicted(pr)
	}
}

// predictionsRuntime runs the prediction share of `warmroute serve` on the
// events runtime's NATS connection. Close stops it and waits; it is safe
// for concurrent use.
type predictionsRuntime struct {
	share  *events.Predictions
	ready  <-chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	close  sync.Once
}

// startPredictions shares ix's predictions with the other replicas when
// events.predictions.share is set (and events are on), replaying the
// prediction stream when JetStream is enabled too.
func startPredictions(ctx context.Context, cfg serveconfig.Config, ev *eventsRuntime, ix *index.Index,
	link *predictionLink, reg prometheus.Registerer, log *slog.Logger) (*predictionsRuntime, error) {
	pc := cfg.Events.Predictions.WithDefaults()
	rt := &predictionsRuntime{done: make(chan struct{})}
	if !pc.Share || ev.nc == nil {
		if pc.Share {
			log.Warn("events.predictions.share needs events; predictions stay local")
		}
		close(rt.done)
		rt.ready = rt.done
		return rt, nil
	}
	tc := cfg.TTL.WithDefaults()
	sc := events.PredictionsConfig{Replica: events.NewReplicaID(replicaName()), QueueSize: pc.QueueSize,
		MaxTTL: tc.MaxStale.D()}
	if cfg.Events.JetStream.Enabled {
		sc.Stream = pc.Stream
		ensurePredictionStream(ctx, ev, pc.Stream, sc.MaxTTL, log)
	}
	share, err := events.NewPredictions(sc, ev.nc, ix, reg, log)
	if err != nil {
		return nil, fmt.Errorf("starting prediction share: %w", err)
	}
	rt.share, rt.ready = share, share.Ready()
	runCtx, cancel := context.WithCancel(ctx)
	rt.cancel = cancel
	go func() {
		defer close(rt.done)
		if err := share.Run(runCtx); err != nil {
			log.Error("prediction share stopped", "err", err)
		}
	}()
	link.p.Store(share)
	log.Info("sharing speculative predictions with other replicas", "replica", sc.Replica, "stream", sc.Stream)
	return rt, nil
}

// ensurePredictionStream creates the stream that a restarting replica
// replays. A failure is logged, not fatal: predictions are still shared live.
func ensurePredictionStream(ctx context.Context, ev *eventsRuntime, name string, maxAge time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := events.EnsurePredictionStream(ctx, ev.nc, events.PredictionStreamConfig{Name: name, MaxAge: maxAge})
	if err != nil {
		log.Warn("prediction stream unavailable; sharing live predictions only", "stream", name, "err", err)
	}
}

// waitReady waits until the start-up replay is done (at once without
// sharing or a stream) or ctx ends; the replay is bounded by its timeout.
func (rt *predictionsRuntime) waitReady(ctx context.Context) {
	select {
	case <-rt.ready:
	case <-ctx.Done():
	}
}

// Close stops the share and waits for it. It is idempotent.
func (rt *predictionsRuntime) Close() {
	rt.close.Do(func() {
		if rt.cancel != nil {
			rt.cancel()
		}
		<-rt.done
	})
}
