package index

import (
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsGolden(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 1 << 20})
	f.store(t, "a", 0, 1, 0, 3, MediumGPU)
	f.store(t, "a", 0, 2, 2, 1, MediumGPU) // unknown parent
	f.ix.Remove("a", 0, hashes(1, 2, 1), MediumGPU)
	f.ix.Remove("a", 0, hashes(9, 0, 1), MediumGPU)
	f.ix.Speculate("b", keysOf(t, 1, 2), 1, time.Second)
	f.ix.Speculate("a", keysOf(t, 3, 1), 2, time.Second)
	now := f.clock.Now()
	f.ix.SpeculateRemote(Prediction{Endpoint: "c", Keys: keysOf(t, 4, 1), Decision: 3,
		DecidedAt: now, ExpiresAt: now.Add(time.Second)})
	f.store(t, "b", 0, 1, 0, 1, MediumGPU)
	f.clock.Advance(time.Second)
	f.ix.Sweep()

	reg := prometheus.NewPedanticRegistry()
	if err := RegisterMetrics(reg, f.ix); err != nil {
		t.Fatal(err)
	}
	golden, err := os.Open("testdata/metrics.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer golden.Close()
	if err := testutil.GatherAndCompare(reg, golden); err != nil {
		t.Error(err)
	}
}

func TestRegisterMetricsTwiceFails(t *testing.T) {
	f := newFixture(t, Options{})
	reg := prometheus.NewRegistry()
	if err := RegisterMetrics(reg, f.ix); err != nil {
		t.Fatal(err)
	}
	if err := RegisterMetrics(reg, f.ix); err == nil {
		t.Error("registering the same metrics twice must fail")
	}
}
