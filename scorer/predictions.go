package scorer

import "github.com/warmroute/warmroute/index"

// PredictionSink receives the prediction of every committed decision that
// inserted or refreshed speculative entries, so that it can be shared with
// the other router replicas (predictions.Share publishes it over NATS).
//
// Predicted is called on the request path: it must not block or do I/O. An
// implementation queues p and drops (and counts) what does not fit. p.Keys
// is the decision's own slice, which the scorer never modifies after Commit
// (nor recycles: Decision.Done leaves a decision whose keys a sink was given
// to the garbage collector), so the sink may keep it without copying but
// must not modify it.
type PredictionSink interface {
	Predicted(p index.Prediction)
}
