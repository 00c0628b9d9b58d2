package predictions

import (
	"context"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
)

// publisher is the publish loop's state: reused buffers and the subject of
// each model seen, owned by the loop's goroutine.
type publisher struct {
	msg      api.PredictionMessage
	buf      []byte
	subjects map[string]string
}

// publishLoop sends queued predictions until ctx is done. A failed publish
// (NATS away: the connection keeps no reconnect buffer, see ConnectOptions)
// drops the prediction and counts it; retrying would only deliver it closer
// to its expiry.
func (p *Share) publishLoop(ctx context.Context) {
	pub := &publisher{subjects: map[string]string{}}
	for {
		select {
		case <-ctx.Done():
			return
		case pr := <-p.out:
			p.publish(pub, pr)
		}
	}
}

func (p *Share) publish(pub *publisher, pr index.Prediction) {
	subj, ok := pub.subjects[pr.Model]
	if !ok {
		var err error
		if subj, err = api.PredictionSubject(pr.Model, p.cfg.Replica); err != nil {
			p.metrics.dropped.WithLabelValues("encode_error").Inc()
			p.log.Debug("prediction not shareable", "model", pr.Model, "err", err)
			return
		}
		pub.subjects[pr.Model] = subj
	}
	pub.msg = api.PredictionMessage{Replica: p.cfg.Replica, Endpoint: pr.Endpoint, Model: pr.Model,
		Decision: uint64(pr.Decision), DecidedAt: pr.DecidedAt, ExpiresAt: pr.ExpiresAt, Keys: pub.msg.Keys[:0]}
	for _, k := range pr.Keys {
		pub.msg.Keys = append(pub.msg.Keys, uint64(k))
	}
	var err error
	if pub.buf, err = pub.msg.AppendBinary(pub.buf[:0]); err != nil {
		p.metrics.dropped.WithLabelValues("encode_error").Inc()
		p.log.Debug("prediction not encodable", "endpoint", pr.Endpoint, "err", err)
		return
	}
	if int64(len(pub.buf)) > p.nc.MaxPayload() && p.nc.MaxPayload() > 0 {
		p.metrics.dropped.WithLabelValues("too_large").Inc()
		return
	}
	// Publish copies the payload into the connection's buffer, so pub.buf
	// is free for the next prediction when it returns.
	if err := p.nc.Publish(subj, pub.buf); err != nil {
		p.metrics.dropped.WithLabelValues("publish_error").Inc()
		p.log.Debug("publishing prediction failed", "err", err)
		return
	}
	p.metrics.published.Inc()
}
