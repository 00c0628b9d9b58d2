package subscriber

import (
	"testing"

	"github.com/warmroute/warmroute/events/relay"
)

// TestAssumedIntervalIsTheRelayDefault: a source heard only through batches
// is judged by the heartbeat interval a relay uses by default.
func TestAssumedIntervalIsTheRelayDefault(t *testing.T) {
	if assumedInterval != relay.DefaultHeartbeatInterval {
		t.Fatalf("assumedInterval %v, relay.DefaultHeartbeatInterval %v", assumedInterval, relay.DefaultHeartbeatInterval)
	}
	var f Freshness
	if got := f.interval(); got != relay.DefaultHeartbeatInterval {
		t.Fatalf("interval before any heartbeat %v", got)
	}
}
