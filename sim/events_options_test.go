package sim

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestNewRejectsBadCacheAndEventOptions(t *testing.T) {
	taken, _ := eventServer(t, Options{})
	tests := []struct {
		name string
		opts Options
	}{
		{"drop rate above 1", Options{EventDropRate: 1.5}},
		{"negative block size", Options{BlockSize: -1}},
		{"unknown format", Options{KVEventsFormat: "tuple"}},
		{"replay without events", Options{KVReplayEndpoint: "tcp://127.0.0.1:0"}},
		{"events endpoint in use", Options{KVEventsEndpoint: taken.Engine().EventsAddr()}},
		{"replay endpoint in use", Options{KVEventsEndpoint: "tcp://127.0.0.1:0", KVReplayEndpoint: taken.Engine().ReplayAddr()}},
		{"bad endpoint", Options{KVEventsEndpoint: "nonsense"}},
		{"missing tokenizer dir", Options{TokenizerDir: t.TempDir()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.opts)
			if err == nil {
				s.Close()
				t.Fatal("New succeeded")
			}
		})
	}
}

func TestReplayIgnoresMalformedRequests(t *testing.T) {
	m := newEventMetrics()
	rs := &replayServer{buf: newReplayBuffer(4), metrics: m}
	for _, frames := range [][][]byte{nil, {[]byte("id")}, {[]byte("id"), {}, []byte("short")}} {
		rs.answer(frames)
	}
	if got := testutil.ToFloat64(m.replays.WithLabelValues("malformed")); got != 3 {
		t.Fatalf("malformed = %v, want 3", got)
	}
}

func TestReplayBufferKeepsLast(t *testing.T) {
	b := newReplayBuffer(3)
	for seq := range uint64(5) {
		b.add(seq, nil)
	}
	got := b.since(0)
	if len(got) != 3 || got[0].seq != 2 || got[2].seq != 4 {
		t.Fatalf("since(0) = %+v", got)
	}
	if got := b.since(4); len(got) != 1 {
		t.Fatalf("since(4) = %+v", got)
	}
	if got := newReplayBuffer(0); len(got.since(0)) != 0 {
		t.Fatal("empty buffer replays something")
	}
}
