package affinity_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
)

// BenchmarkReplay100k: a starting replica replays 100,000 retained ids (one
// pool's full table) from a real embedded nats-server; one op is one replay,
// from Start to the replay's count; cpu-ns/op is the process's CPU (the
// embedded server's included) per replay.
func BenchmarkReplay100k(b *testing.B) {
	const n = 100_000
	ns, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", JetStreamDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ns.Close)
	nc, err := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	_, regA := replayReplica(b, ns.ClientURL(), "a-1", time.Hour)
	waitReplay(b, regA, "partial")
	subj, _ := api.AffinitySubject("p", "a-1")
	at := time.Now().UnixNano()
	for i := range n {
		m := api.AffinityMessage{V: 1, Replica: "a-1", Pool: "p", ID: fmt.Sprintf("resp_%032x", i), Endpoint: "10.0.0.1:8000", At: at}
		data, _ := m.Marshal()
		if err := nc.Publish(subj, data); err != nil {
			b.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
	eventstest.WaitStored(b, nc, affinity.DefaultStream, n)
	cpu0 := processCPU(b)
	b.ResetTimer()
	for range b.N {
		c, err := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
		if err != nil {
			b.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		m, _ := affinity.NewMetrics(reg)
		s := affinity.New(affinity.Config{MaxAge: api.Duration(time.Hour)}, affinity.Options{Metrics: m})
		sh, _ := affinity.NewShare(s, c, "b-1", nil)
		sh.EnableReplay(affinity.Replay{})
		if err := sh.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		waitReplay(b, reg, "partial")
		if s.Len() != n {
			b.Fatalf("replayed %d ids, want %d", s.Len(), n)
		}
		sh.Close()
		c.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// processCPU is this process's user and system CPU time (the embedded
// server's included).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
