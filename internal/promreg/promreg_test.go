package promreg

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestBuilder(t *testing.T) {
	tests := []struct {
		name    string
		reg     func() prometheus.Registerer
		wantErr bool
	}{
		{"registers", func() prometheus.Registerer { return prometheus.NewRegistry() }, false},
		{"nil registers nothing", func() prometheus.Registerer { return nil }, false},
		{"a clash is kept", func() prometheus.Registerer {
			r := prometheus.NewRegistry()
			r.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "x_y_c"}))
			return r
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := tt.reg()
			b := &Builder{Reg: reg, Namespace: "x", Subsystem: "y"}
			c := b.Counter("c", "a counter")
			b.CounterVec("cv", "a vector", "l").WithLabelValues("v").Inc()
			b.Gauge("g", "a gauge").Set(2)
			b.Histogram("h", "a histogram", []float64{1}).Observe(0.5)
			c.Inc()
			if (b.Err() != nil) != tt.wantErr {
				t.Fatalf("Err = %v, want error %v", b.Err(), tt.wantErr)
			}
			if testutil.ToFloat64(c) != 1 {
				t.Fatal("counter does not count")
			}
			if g, ok := reg.(prometheus.Gatherer); ok && !tt.wantErr {
				if n, err := testutil.GatherAndCount(g, "x_y_c", "x_y_cv", "x_y_g", "x_y_h"); err != nil || n != 4 {
					t.Fatalf("gathered %d series, %v; want 4", n, err)
				}
			}
		})
	}
}
