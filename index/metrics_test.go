package index

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/internal/metricdoc"
)

func TestMetricsGolden(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{MaxBytes: 1 << 20, Metrics: m})
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

	golden, err := os.Open("testdata/metrics.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer golden.Close()
	if err := testutil.GatherAndCompare(reg, golden); err != nil {
		t.Error(err)
	}
}

func TestMetricsREADME(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		m, err := NewMetrics(reg)
		if err != nil {
			return err
		}
		_, err = New(Options{Metrics: m})
		return err
	})
}

func TestNewMetricsTwiceFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering the index metrics twice must fail")
	}
}

func TestMetricsServeOneIndex(t *testing.T) {
	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Metrics: m}); !errors.Is(err, ErrMetricsInUse) {
		t.Errorf("second index on one Metrics: err = %v, want ErrMetricsInUse", err)
	}
}

func TestMetricsUnboundExportNothing(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Errorf("unbound metrics gathered %d series (err %v), want 0", n, err)
	}
}
