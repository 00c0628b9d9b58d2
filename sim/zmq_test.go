package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/warmroute/warmroute/events/wire"
)

// eventServer starts a simulator publishing KV events on loopback ports.
func eventServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	opts.KVEventsEndpoint = "tcp://127.0.0.1:0"
	opts.KVReplayEndpoint = "tcp://127.0.0.1:0"
	opts.BlockSize = 4
	s, ts := startServer(t, opts)
	t.Cleanup(s.Close)
	return s, ts.URL
}

// longPrompt has about n word tokens.
func longPrompt(word string, n int) string {
	return strings.TrimSpace(strings.Repeat(word+" ", n))
}

func complete(t *testing.T, url, prompt string, headers map[string]string) *http.Response {
	t.Helper()
	resp := post(t, url, "/v1/completions", fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":2}`, DefaultModel, prompt), headers)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// subscribe connects a SUB socket and waits until it receives: a ZMQ
// subscription takes effect asynchronously, so it pokes the engine with
// prefix-cache resets (one batch each) until one arrives.
func subscribe(t *testing.T, s *Server, url string) zmq4.Socket {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sub := zmq4.NewSub(ctx, zmq4.WithLogger(zmqLogger))
	t.Cleanup(func() { cancel(); sub.Close() })
	if err := sub.Dial(s.Engine().EventsAddr()); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		if _, err := sub.Recv(); err == nil {
			close(got)
		}
	}()
	for i := 0; ; i++ {
		post(t, url, "/reset_prefix_cache", "", nil).Body.Close()
		select {
		case <-got:
			return sub
		case <-time.After(20 * time.Millisecond):
		}
		if i > 250 {
			t.Fatal("subscription never took effect")
		}
	}
}

func recvBatch(t *testing.T, sub zmq4.Socket) (uint64, *wire.Batch) {
	t.Helper()
	msg, err := sub.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Frames) != 3 || len(msg.Frames[1]) != 8 {
		t.Fatalf("message has %d frames", len(msg.Frames))
	}
	var b wire.Batch
	if err := wire.DecodeBatch(msg.Frames[2], &b); err != nil {
		t.Fatalf("DecodeBatch: %v", err)
	}
	return binary.BigEndian.Uint64(msg.Frames[1]), &b
}

func TestLiveEventsMatchCache(t *testing.T) {
	for _, format := range []EventFormat{FormatMap, FormatArray} {
		t.Run(string(format), func(t *testing.T) {
			s, url := eventServer(t, Options{KVEventsFormat: format, KVEventsTopic: "kv@sim@m"})
			sub := subscribe(t, s, url)
			complete(t, url, longPrompt("alpha", 10), nil) // 10 tokens: 2 full blocks
			for {
				_, b := recvBatch(t, sub)
				if len(b.Events) == 1 && b.Events[0].Kind == wire.KindAllBlocksCleared {
					continue // leftovers of subscribe's pokes
				}
				ev := b.Events[0]
				st := s.Engine().CacheState()
				if ev.Kind != wire.KindBlockStored || !slices.Equal(ev.BlockHashes, st.Hashes()) || ev.HasParent {
					t.Fatalf("event %+v, cache %v", ev, st.Hashes())
				}
				if len(ev.TokenIDs) != 8 || int(ev.TokenIDs[4]) != st.Blocks[1].TokenIDs[0] {
					t.Fatalf("tokens %v, cache %+v", ev.TokenIDs, st.Blocks)
				}
				return
			}
		})
	}
}

func TestReplayExchange(t *testing.T) {
	s, url := eventServer(t, Options{KVEventsTopic: "topic"})
	for i := range 3 {
		complete(t, url, longPrompt(fmt.Sprint("w", i), 9), nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := zmq4.NewDealer(ctx, zmq4.WithLogger(zmqLogger))
	defer d.Close()
	if err := d.Dial(s.Engine().ReplayAddr()); err != nil {
		t.Fatal(err)
	}
	var req [8]byte
	binary.BigEndian.PutUint64(req[:], 1)
	if err := d.Send(zmq4.NewMsgFrom([]byte{}, req[:])); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for {
		msg, err := d.Recv()
		if err != nil {
			t.Fatal(err)
		}
		f := msg.Frames
		if len(f) != 4 || len(f[0]) != 0 || string(f[1]) != "topic" || len(f[2]) != 8 {
			t.Fatalf("reply frames %q", f)
		}
		seq := binary.BigEndian.Uint64(f[2])
		if seq == math.MaxUint64 {
			if len(f[3]) != 0 {
				t.Fatal("end marker has a payload")
			}
			break
		}
		var b wire.Batch
		if err := wire.DecodeBatch(f[3], &b); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	if !slices.Equal(seqs, []uint64{1, 2}) {
		t.Fatalf("replayed seqs %v, want [1 2]", seqs)
	}
}

func TestRestartStartsSeqAtZero(t *testing.T) {
	s, url := eventServer(t, Options{})
	sub := subscribe(t, s, url)
	complete(t, url, longPrompt("before", 9), nil)
	var last uint64
	for {
		seq, b := recvBatch(t, sub)
		last = seq
		if b.Events[0].Kind == wire.KindBlockStored {
			break
		}
	}
	if last == 0 {
		t.Fatal("subscribe's pokes should have used seq 0")
	}
	s.Engine().Restart()
	if n := len(s.Engine().CacheState().Blocks); n != 0 {
		t.Fatalf("%d blocks survived the restart", n)
	}
	complete(t, url, longPrompt("after", 9), nil)
	seq, b := recvBatch(t, sub)
	if seq != 0 || b.Events[0].Kind != wire.KindBlockStored {
		t.Fatalf("first batch after restart: seq %d kind %v, want 0 BlockStored (no AllBlocksCleared)", seq, b.Events[0].Kind)
	}
}
