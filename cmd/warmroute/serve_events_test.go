package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
)

func TestEventsFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want api.EventsConfig
	}{
		{"none", nil, api.EventsConfig{}},
		{"external", []string{"--nats", "nats://n:4222", "--nats-creds", "u.creds", "--nats-ca", "ca.pem"},
			api.EventsConfig{URL: "nats://n:4222", CredsFile: "u.creds", TLS: api.NATSTLSConfig{CAFile: "ca.pem"}}},
		{"embedded jetstream", []string{"--nats-listen", "0.0.0.0:4222", "--jetstream", "--jetstream-max-age", "90s",
			"--jetstream-dir", "/var/lib/wr", "--jetstream-stream", "S"},
			api.EventsConfig{Listen: "0.0.0.0:4222", JetStream: api.JetStreamConfig{Enabled: true, Stream: "S",
				MaxAge: api.Duration(90 * time.Second), StoreDir: "/var/lib/wr"}}},
		{"tuning", []string{"--events-queue", "10", "--heartbeat-misses", "5", "--no-events"},
			api.EventsConfig{QueueSize: 10, HeartbeatMisses: 5, Disabled: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			var e eventsFlags
			e.register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var got api.EventsConfig
			fs.Visit(func(f *flag.Flag) {
				if !e.apply(&got, f.Name) {
					t.Errorf("flag %s not applied", f.Name)
				}
			})
			if got != tc.want {
				t.Fatalf("config = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestEventsConfigKeepsEveryField: every leaf of the file's events section,
// set to a non-zero value, survives the conversion into subscriber.Config
// under the same JSON name, so the schema and its owner cannot drift apart.
func TestEventsConfigKeepsEveryField(t *testing.T) {
	var in api.EventsConfig
	fillLeaves(t, reflect.ValueOf(&in).Elem())
	out, err := eventsConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(in)
	got, _ := json.Marshal(out)
	var w, g map[string]any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w, g) {
		t.Fatalf("converted events section\n%s\nwant\n%s", got, want)
	}
}

// fillLeaves sets every bool, int, string and duration under v to a
// non-zero value.
func fillLeaves(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fillLeaves(t, v.Field(i))
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(time.Second) + 7)
	case reflect.String:
		v.SetString("x")
	default:
		t.Fatalf("unexpected field kind %s", v.Kind())
	}
}

// TestRouterWithoutEvents: with events disabled serve builds no NATS, no
// subscriber and no share (even when sharing is asked for), and the router
// is ready at once.
func TestRouterWithoutEvents(t *testing.T) {
	cfg := api.ServeConfig{Events: api.EventsConfig{Disabled: true, Predictions: api.PredictionsConfig{Share: true}}}
	r, err := newRouter(cfg.WithDefaults(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if r.bus != nil || r.sub != nil || r.share != nil || r.natsURL() != "" {
		t.Fatalf("events disabled, yet bus %v, subscriber %v, share %v, url %q", r.bus, r.sub, r.share, r.natsURL())
	}
	ready, err := r.startEvents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	default:
		t.Fatal("router without events is not ready at once")
	}
	r.closeEvents()
}
