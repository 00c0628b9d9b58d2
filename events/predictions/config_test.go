package predictions_test

import (
	"testing"

	"github.com/warmroute/warmroute/events/predictions"
)

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		c       predictions.Config
		wantErr bool
	}{
		{"zero", predictions.Config{}, false},
		{"share", predictions.Config{Share: true, QueueSize: 10, Stream: "P"}, false},
		{"negative queue", predictions.Config{QueueSize: -1}, true},
		{"dotted stream", predictions.Config{Stream: "a.b"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.c.Validate(); (err != nil) != tt.wantErr {
				t.Fatalf("Validate = %v, want error %v", err, tt.wantErr)
			}
		})
	}
	d := predictions.Config{}.WithDefaults()
	if d.QueueSize != predictions.DefaultQueueSize || d.Stream != predictions.DefaultStream {
		t.Errorf("defaults = %+v", d)
	}
}
