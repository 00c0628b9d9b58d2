package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	prose := jsonSafe(strings.Repeat("A \"quoted\" naïve café\nline\\ 東京 prose. ", 4000))
	for _, size := range []int{64, 100, 8192, 65536} {
		b := newBodies(size, prose)
		first, second := b.get(), b.get()
		if len(first) != size || len(second) != size {
			t.Fatalf("size %d: bodies of %d and %d bytes", size, len(first), len(second))
		}
		if bytes.Equal(first, second) {
			t.Fatalf("size %d: two bodies are identical", size)
		}
		for _, body := range [][]byte{first, second} {
			var req struct {
				Model  string `json:"model"`
				Prompt string `json:"prompt"`
			}
			if !utf8.Valid(body) {
				t.Fatalf("size %d: body is not UTF-8", size)
			}
			if err := json.Unmarshal(body, &req); err != nil || req.Model != model || req.Prompt == "" {
				t.Fatalf("size %d: body %.100q is not a completion request: %v", size, body, err)
			}
		}
	}
}

func TestJSONSafe(t *testing.T) {
	if got, want := jsonSafe("a\"b\\c\nd\x01é"), "a'b/c d é"; got != want {
		t.Fatalf("jsonSafe = %q, want %q", got, want)
	}
}

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250, stime 50 ticks.
	line := []byte("4242 (warm route)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 0 0")
	got, err := parseStatCPU(line)
	if err != nil || got != 3*time.Second {
		t.Fatalf("parseStatCPU = %v, %v; want 3s", got, err)
	}
	if _, err := parseStatCPU([]byte("garbage")); err == nil {
		t.Fatal("parseStatCPU of garbage: no error")
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
			return len(c.levels) == 2 && c.levels[1] == 8 && len(c.sizes) == 2 && c.sizes[1] == 102400 &&
				c.rounds == 3 && c.mode == envoy.FullDuplex && c.simBlocks == 1<<20 && c.pprofDir == ""
		}},
		{name: "profile and small caches", args: []string{"-pprof", "/tmp/p", "-pprof-seconds", "3", "-sim-blocks", "65536"}, check: func(c config) bool {
			return c.pprofDir == "/tmp/p" && c.pprofSecs == 3 && c.simBlocks == 65536
		}},
		{name: "no profile seconds", args: []string{"-pprof-seconds", "0"}, wantErr: true},
		{name: "no sim blocks", args: []string{"-sim-blocks", "0"}, wantErr: true},
		{name: "levels and mode", args: []string{"-concurrency", "2, 4", "-mode", "buffered"}, check: func(c config) bool {
			return len(c.levels) == 2 && c.levels[1] == 4 && c.mode == envoy.Buffered
		}},
		{name: "bad level", args: []string{"-concurrency", "1,x"}, wantErr: true},
		{name: "zero level", args: []string{"-concurrency", "0"}, wantErr: true},
		{name: "bad mode", args: []string{"-mode", "streamed"}, wantErr: true},
		{name: "tiny body", args: []string{"-body-bytes", "10"}, wantErr: true},
		{name: "bad body list", args: []string{"-body-bytes", "8192,x"}, wantErr: true},
		{name: "no rounds", args: []string{"-rounds", "0"}, wantErr: true},
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
	run := func(p50, p99, cpu time.Duration) stats { return stats{n: 10, p50: p50, p99: p99, routerCPU: 10 * cpu} }
	ms := time.Millisecond
	cells := []cell{{size: 8192, concurrency: 8,
		direct: []stats{run(1*ms, 2*ms, 0), run(2*ms, 3*ms, 0), run(3*ms, 4*ms, 0)},
		routed: []stats{run(2*ms, 4*ms, 10*ms), run(4*ms, 5*ms, 20*ms), run(5*ms, 8*ms, 40*ms)}}}
	var b strings.Builder
	printReport(&b, c, cells, 2)
	want := "| 8192 B | 8 | 1.00 / 2.00 / 3.00 | 2.00 / 3.00 / 4.00 | 2.00 / 4.00 / 5.00 | 4.00 / 5.00 / 8.00 | " +
		"1.00 / 2.00 / 2.00 | 2.00 / 2.00 / 4.00 | 10.00 / 20.00 / 40.00 | 25 / 50 / 100 | 0.00 / 0.00 / 0.00 |"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("report lacks row %q:\n%s", want, b.String())
	}
}
