package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/envoy"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one sample", ms(7), 0.99, 7 * time.Millisecond},
		{"median of four is the second", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p100 is the max", ms(hundred...), 1, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("percentile(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestBodies(t *testing.T) {
	for _, size := range []int{64, 100, 8192, 65536} {
		b := newBodies(size)
		first, second := b.get(), b.get()
		if len(first) != size || len(second) != size {
			t.Fatalf("size %d: bodies of %d and %d bytes", size, len(first), len(second))
		}
		if bytes.Equal(first, second) {
			t.Fatalf("size %d: two bodies are identical", size)
		}
		var req struct {
			Model  string `json:"model"`
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal(first, &req); err != nil || req.Model != model || req.Prompt == "" {
			t.Fatalf("size %d: body %q is not a completion request: %v", size, first, err)
		}
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		check   func(config) bool
	}{
		{name: "defaults", check: func(c config) bool {
			return len(c.levels) == 3 && c.levels[2] == 32 && c.bodyBytes == 8192 && c.mode == envoy.FullDuplex
		}},
		{name: "levels and mode", args: []string{"-concurrency", "2, 4", "-mode", "buffered"}, check: func(c config) bool {
			return len(c.levels) == 2 && c.levels[1] == 4 && c.mode == envoy.Buffered
		}},
		{name: "bad level", args: []string{"-concurrency", "1,x"}, wantErr: true},
		{name: "zero level", args: []string{"-concurrency", "0"}, wantErr: true},
		{name: "bad mode", args: []string{"-mode", "streamed"}, wantErr: true},
		{name: "tiny body", args: []string{"-body-bytes", "10"}, wantErr: true},
		{name: "no requests", args: []string{"-requests", "0"}, wantErr: true},
		{name: "unknown flag", args: []string{"-nope"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if tt.check != nil && !tt.check(c) {
				t.Fatalf("parseFlags(%q) = %+v", tt.args, c)
			}
		})
	}
}

func TestPrintReport(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rows := []row{{concurrency: 8,
		direct: stats{n: 10, p50: time.Millisecond, p99: 2 * time.Millisecond, rps: 100},
		routed: stats{n: 10, p50: 1500 * time.Microsecond, p99: 4 * time.Millisecond, rps: 80}}}
	var b strings.Builder
	printReport(&b, c, rows, 2)
	want := "| 8 | 1.00 ms | 2.00 ms | 1.50 ms | 4.00 ms | 0.50 ms | 2.00 ms | 1.50x | 2.00x | 100 / 80 |"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("report lacks row %q:\n%s", want, b.String())
	}
}
