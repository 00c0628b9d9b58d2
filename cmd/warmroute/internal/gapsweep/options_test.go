package gapsweep

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestFlagsRefuseMixedIdentity(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want error
	}{
		{"one model", []string{"--model", "a", "--model", "a"}, nil},
		{"two models", []string{"--model", "a", "--model", "b"}, ErrIdentity},
		{"model list", []string{"--model", "a,b"}, ErrIdentity},
		{"two loras", []string{"--model", "a", "--lora", "x", "--lora", "y"}, ErrIdentity},
		{"two salts", []string{"--model", "a", "--cache-salt", "s1", "--cache-salt", "s2"}, ErrIdentity},
		{"bad fault", []string{"--first-request-fault", "explode"}, ErrOptions},
		{"bad gaps", []string{"--gaps", "1s,later"}, ErrOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var o Options
			o.BindFlags(fs)
			// flag.FlagSet formats Set's error with %v, so the sentinel
			// survives only as text.
			err := fs.Parse(tt.args)
			if (err == nil) != (tt.want == nil) || err != nil && !strings.Contains(err.Error(), tt.want.Error()) {
				t.Errorf("parse error %v, want %v", err, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := Options{Target: "http://envoy:8080", Debug: "http://127.0.0.1:9095", Model: "m"}
	tests := []struct {
		name   string
		change func(*Options)
		valid  bool
	}{
		{"complete", func(*Options) {}, true},
		{"flags instead of admin", func(o *Options) { o.Debug, o.BlockSize, o.Gaps = "", 16, []Gap{{LabelGiven, 0}} }, true},
		{"no target", func(o *Options) { o.Target = "" }, false},
		{"target without scheme", func(o *Options) { o.Target = "envoy:8080" }, false},
		{"no model", func(o *Options) { o.Model = "" }, false},
		{"no admin, no block size", func(o *Options) { o.Debug, o.Gaps = "", []Gap{{LabelGiven, 0}} }, false},
		{"no admin, no gaps", func(o *Options) { o.Debug, o.BlockSize = "", 16 }, false},
		{"negative pairs", func(o *Options) { o.PairsPerGap = -1 }, false},
		{"negative deadline", func(o *Options) { o.Deadline = -1 }, false},
		{"negative gap", func(o *Options) { o.Gaps = []Gap{{LabelGiven, -1}} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok
			tt.change(&o)
			err := o.WithDefaults().Validate()
			if (err == nil) != tt.valid {
				t.Fatalf("Validate() = %v, want valid %v", err, tt.valid)
			}
			if err != nil && !errors.Is(err, ErrOptions) {
				t.Errorf("error %v is not ErrOptions", err)
			}
		})
	}
}

func TestPromptsPair(t *testing.T) {
	p := NewPrompts(50, 4, 7)
	a1, b1 := p.Pair()
	a2, _ := p.Pair()
	prefix := func(s string) string { return s[:len(s)-len(" Question first:")-30] }
	if a1 == b1 || prefix(a1) != b1[:len(prefix(a1))] {
		t.Errorf("pair does not share a prefix:\n%q\n%q", a1, b1)
	}
	if a1[:24] == a2[:24] {
		t.Errorf("two pairs open alike (nonce reused): %q %q", a1[:24], a2[:24])
	}
}
