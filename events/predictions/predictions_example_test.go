package predictions_test

import (
	"context"
	"fmt"
	"time"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/index"
)

// Two router replicas share predictions over one NATS server: a prediction
// made on A is matched speculatively on B.
func ExampleShare() {
	ns, _ := bus.StartEmbedded("127.0.0.1", 0)
	defer ns.Close()
	nc, _ := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
	defer nc.Close()
	ixA, _ := index.New(index.Options{})
	ixB, _ := index.New(index.Options{})
	a, _ := predictions.New(predictions.Options{Replica: predictions.NewReplicaID("a")}, nc, nil, nil)
	b, _ := predictions.New(predictions.Options{Replica: predictions.NewReplicaID("b")}, nc, nil, nil)
	ctx := context.Background()
	for _, p := range []struct {
		share *predictions.Share
		ix    *index.Index
	}{{a, ixA}, {b, ixB}} {
		_ = p.share.Start(ctx, p.ix)
		defer p.share.Close()
		<-p.share.Ready()
	}
	keys := []index.Key{1, 2, 3}
	now := time.Now()
	a.Predicted(index.Prediction{Endpoint: "10.0.0.1:8000", Model: "m", Keys: keys, Decision: 1,
		DecidedAt: now, ExpiresAt: now.Add(2 * time.Second)}) // the scorer calls this on Commit
	for ixB.Stats().RemoteSpeculated < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("%+v\n", ixB.Lookup(keys, []string{"10.0.0.1:8000"}, nil)[0])
	// Output: {Confirmed:0 Speculative:3 Weighted:0}
}
