package router

import (
	"fmt"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/events/predictions"
)

// openAffinity builds the response-id table and, when predictions are
// shared (the replicas behind one Envoy), its share on the events
// connection: a follow-up may reach any replica, so ids must be shared
// exactly when predictions are, and no setting of its own says so. With
// JetStream on, the share replays the affinity stream at start-up.
func (r *Router) openAffinity() error {
	m, err := affinity.NewMetrics(r.reg)
	if err != nil {
		return err
	}
	r.affinity = affinity.New(r.cfg.Affinity, affinity.Options{Metrics: m})
	if r.bus == nil || !r.cfg.Events.Predictions.Share {
		return nil
	}
	if r.affinityShare, err = affinity.NewShare(r.affinity, r.bus.Conn(),
		predictions.NewReplicaID(replicaName()), r.log); err != nil {
		return fmt.Errorf("creating affinity share: %w", err)
	}
	if r.cfg.Events.JetStream.Enabled {
		// The same server retains the ids, so a restarted replica
		// replays them instead of being unsure for maxAge.
		r.affinityShare.EnableReplay(affinity.Replay{})
	}
	return nil
}
