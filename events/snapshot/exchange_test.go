package snapshot_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/snapshot"
)

const subj = "warmroute.snap.v1.m.e.0"

func chunk(index uint32, last bool, epoch uint64, hashes ...uint64) []byte {
	h := snapshot.Header{Epoch: epoch, Seq: 9, HasSeq: true, Index: index, Last: last, LoRAs: []string{""}}
	out := snapshot.AppendHeader(nil, &h, len(hashes))
	for _, x := range hashes {
		out = snapshot.AppendBlock(out, &snapshot.Block{Hash: x, Tokens: []uint32{1}})
	}
	return out
}

// serve answers each request on subj with f.
func serve(t *testing.T, nc *nats.Conn, f func(reply string)) {
	t.Helper()
	sub, err := nc.Subscribe(subj, func(m *nats.Msg) { f(m.Reply) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
}

func fetch(nc *nats.Conn) ([]uint64, snapshot.Header, error) {
	var got []uint64
	h, err := snapshot.Fetch(context.Background(), nc, subj, 300*time.Millisecond, func(c *snapshot.Chunk) error {
		for _, b := range c.Blocks {
			got = append(got, b.Hash)
		}
		return nil
	})
	return got, h, err
}

func TestFetch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(nc *nats.Conn, reply string)
		want   error
		hashes int
	}{
		{"complete", func(nc *nats.Conn, r string) {
			_ = snapshot.Reply(nc, r, [][]byte{chunk(0, false, 3, 1, 2), chunk(1, true, 3, 3)})
		}, nil, 3},
		{"no responders", nil, snapshot.ErrNoResponders, 0},
		{"refused", func(nc *nats.Conn, r string) { _ = snapshot.Refuse(nc, r, "not mine") }, snapshot.ErrRefused, 0},
		{"died mid-snapshot", func(nc *nats.Conn, r string) {
			_ = snapshot.Reply(nc, r, [][]byte{chunk(0, false, 3, 1)})
		}, snapshot.ErrTimeout, 0},
		{"chunk out of order", func(nc *nats.Conn, r string) {
			_ = snapshot.Reply(nc, r, [][]byte{chunk(0, false, 3, 1), chunk(2, true, 3, 2)})
		}, snapshot.ErrMalformed, 0},
		{"epoch changes between chunks", func(nc *nats.Conn, r string) {
			_ = snapshot.Reply(nc, r, [][]byte{chunk(0, false, 3, 1), chunk(1, true, 4, 2)})
		}, snapshot.ErrMalformed, 0},
		{"garbage", func(nc *nats.Conn, r string) { _ = nc.Publish(r, []byte("nope")) }, snapshot.ErrMalformed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := eventstest.Connect(t)
			if tc.answer != nil {
				serve(t, nc, func(r string) { tc.answer(nc, r) })
			}
			got, h, err := fetch(nc)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Fetch error %v, want %v", err, tc.want)
			}
			if err == nil && (len(got) != tc.hashes || h.Epoch != 3 || h.Seq != 9 || !h.Last) {
				t.Fatalf("Fetch = %v, header %+v", got, h)
			}
		})
	}
}
