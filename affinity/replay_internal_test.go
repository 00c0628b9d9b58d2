package affinity

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestCoveredFrom: the stream covers back to its creation, its age limit or,
// when at a bound, its oldest message, whichever is latest.
func TestCoveredFrom(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	info := func(created time.Duration, maxAge time.Duration, msgs, bytes uint64, first time.Duration) *jetstream.StreamInfo {
		return &jetstream.StreamInfo{Created: now.Add(-created),
			Config: jetstream.StreamConfig{MaxAge: maxAge, MaxMsgs: 1000, MaxBytes: 1 << 20},
			State:  jetstream.StreamState{Msgs: msgs, Bytes: bytes, FirstTime: now.Add(-first)}}
	}
	for _, c := range []struct {
		name string
		info *jetstream.StreamInfo
		want time.Duration // back from now
	}{
		{"old stream below bounds", info(3*day, day, 10, 1000, time.Hour), day},
		{"young stream", info(time.Hour, day, 10, 1000, time.Minute), time.Hour},
		{"no age limit", info(3*day, 0, 10, 1000, time.Hour), 3 * day},
		{"shorter age limit", info(3*day, time.Hour, 10, 1000, time.Minute), time.Hour},
		{"at the message bound", info(3*day, day, 990, 1000, 2*time.Hour), 2 * time.Hour},
		{"at the byte bound", info(3*day, day, 10, 1<<20-100, 3*time.Hour), 3 * time.Hour},
		{"at a bound, oldest before the window", info(3*day, day, 1000, 1000, 2*day), day},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := now.Sub(coveredFrom(c.info, now)); got != c.want {
				t.Fatalf("covers %v back, want %v", got, c.want)
			}
		})
	}
}
